// What a trial's launches add up to. With `replicates: N` a trial of a campaign is launched N
// times (separate processes); each launch is measured on its own (ComputeTrialMetrics) and
// this file decides, purely, the trial's status and its summary metrics. No I/O.
//
// Status: a running launch makes the trial running; else the first failed launch (oom,
// timeout, crashed, failed: by launch index) makes it fail with that launch's error; else an
// interrupted launch makes it interrupted; else (every recorded launch ok) it is ok, even when
// fewer launches than asked are recorded yet (resume runs the missing ones). A launch stored ok
// that timed nothing (no timed iteration, or a latency of 0) counts as failed: a trial is
// never ok on it, and its 0 ms never enters the median.
//
// Metrics over the ok launches (one ok launch: that launch's metrics, unchanged), each metric of
// the table as its row's LaunchReduction says (metrics/metric_table.h), the rest as follows:
//  * latency_ms: the median of the launch medians (every launch weighs the same, whatever its
//    number of iterations);
//  * ci_low_ms, ci_high_ms: 95% Student t interval of the launch medians on a log scale
//    (exp(mean log m +- t(0.975, N-1) s / sqrt(N))), widened to contain latency_ms. Each launch
//    median carries its own launch's noise, so the interval covers within- and between-launch
//    variation; with one launch the interval is the within-launch one (docs/measurement.md);
//  * mean, std, cov, p90, p99, min, max, outliers: of the pooled slowest-rank series;
//  * launch_cov: std / mean of the launch medians (between-launch spread);
//  * rank0_ms, skew_ms: medians over launches of each launch's value; iterations and warmup:
//    sums; memory: maxima (peak_mem_mb: its row's kMax); clocks: minimum and maximum, throttled if
//    any launch was;
//  * energy_j, joules_per_image: the median over the ok launches when every one has it, else
//    unset; energy_note of the newest launch;
//  * FLOPs, communication, the output error and quality and the output reference: of the
//    newest launch (they do not vary between launches); throughput and MFU rescaled to
//    latency_ms; a metric held by name (not a program's own): its row's reduction over the ok
//    launches that have it; a program's own numbers: their median over those launches.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "contract/measurement_records.h"
#include "experiments/trial.h"

namespace ditbench {

// One launch of a trial, as measured or as stored.
struct LaunchMeasurement {
  int launch = 0;  // 0-based replicate index
  TrialStatus status = TrialStatus::kPending;
  std::string error;
  // The launch's own metrics when ok. Stored launches keep latency, CI, iterations, warm-up,
  // memory and clocks; the launch just measured has all of them.
  std::optional<TrialMetrics> metrics;
  std::vector<Sample> samples;  // its timed samples of the "iteration" stage, every rank
};

struct TrialOutcome {
  TrialStatus status = TrialStatus::kPending;
  std::string error;
  std::optional<TrialMetrics> metrics;  // summary of the ok launches; unset when none is ok
};

// REQUIRES: `launches` non-empty, distinct launch indices; the last element is the launch just
// measured (its metrics supply what does not vary between launches). `replicates`: launches
// the sweep asks for (only used to word errors: "launch 2 of 3").
TrialOutcome SummarizeLaunches(const std::vector<LaunchMeasurement>& launches, int replicates);

}  // namespace ditbench
