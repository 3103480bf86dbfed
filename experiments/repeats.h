// How many timed iterations a trial runs: its own header, so that the measurement loop
// (metrics/measurement.h) and the worker's clocks do not depend on the whole trial
// (experiments/trial.h), and a change there does not rebuild them.
#pragma once

namespace ditbench {

// When to stop timing a trial: never before `min` timed iterations, never after `max`; in
// between, stop once the 95% confidence interval of the median is within `target_rel_ci` of
// the median, or once `max_seconds` of timed work have been spent.
struct Repeats {
  int min = 5;
  int max = 5;
  double target_rel_ci = 0.0;  // 0: no early stop, run `min` iterations... up to `max`.
  double max_seconds = 0.0;    // 0: no time budget.
  bool operator==(const Repeats&) const = default;
};

}  // namespace ditbench
