// `run --budget 8h`: which launches come first when the night may end before the sweep does.
// Pure: planned trials in, an order out. Within each replicate round: the 1-rank trials first
// (every speedup and output error of their group is measured against them), then the rest by
// estimated time, cheapest first (the most results per hour); ties keep the sweep's order. The
// run stops starting launches once the time spent plus the next launch's estimate would pass
// the budget (runner/sweep_loop.cc); the campaign stays open, and the next `run` resumes it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "plan/sweep_plan.h"

namespace ditbench {

// A permutation of 0..trials.size()-1: the order above.
std::vector<std::size_t> BudgetOrder(const std::vector<const PlannedTrial*>& trials);

// What `plan --budget` says: of the launches the plan would run (valid trials x replicates,
// round by round in BudgetOrder), how many start before the budget is spent by the plan's
// estimates, and the estimated seconds of those and of all.
struct BudgetFit {
  std::size_t launches = 0, fit = 0;
  double seconds = 0, fit_seconds = 0;
};
BudgetFit FitBudget(const SweepPlan& plan, int replicates, double budget_s);

// The seconds of a `--budget` option as `run` and `plan` take it: a duration such as 90s, 30m
// or 8h (experiments/trial_settings.h, ParseDuration). Throws UserError
// "--budget '<text>': expected a duration such as 90s, 30m or 8h".
double ParseBudgetOption(const std::string& text);

}  // namespace ditbench
