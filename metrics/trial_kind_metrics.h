// The metrics side of the trial kinds (experiments/trial_kind.h): for each kind, how its ranks'
// records are checked and summarized. One row per kind, keyed by TrialKind, like the kinds'
// own table below this layer; ingest and ComputeTrialMetrics ask the row, never `serve`.
// Pure, no I/O.
#pragma once

#include <optional>
#include <vector>

#include "contract/measurement_records.h"
#include "contract/worker_contract.h"
#include "experiments/trial.h"
#include "experiments/trial_kind.h"
#include "metrics/time_intervals.h"
#include "metrics/trial_metrics.h"

namespace ditbench {

struct KindMetrics {
  TrialKind kind;
  // Why the ranks' records of the trial's work cannot be summarized, or nothing: their timed
  // iterations (TimedIterationsProblem) or their served requests against `requests`, the
  // trial file's (metrics/served_requests.h). REQUIRES as those.
  std::optional<RankProblem> (*records_problem)(const TrialConfig& config,
                                                const RequestList& requests,
                                                const std::vector<RankResult>& ranks);
  // The kind's figures over ComputeTrialMetrics's common ones (timed: none; served:
  // AddServedMetrics).
  void (*summarize)(const TrialConfig& config, const RequestList& requests,
                    const std::vector<RankResult>& ranks, const IntervalSet* busy_s,
                    TrialMetrics& m);
  // The trial of the iteration the ranks' `steps` and `latent_shape` record (StepRecordsProblem,
  // LatentShapeProblem): the trial itself, or a served trial's first request shape alone.
  TrialConfig (*recorded_iteration)(const TrialConfig& config, const RequestList& requests);
  // Whether a rank may report ok without a timed sample: a serving replica may serve no request
  // past the warm-up ones.
  bool rank_may_time_nothing;
};

// Every kind's row, in TrialKind's order.
const std::vector<KindMetrics>& KindMetricsTable();
const KindMetrics& MetricsOfKind(TrialKind kind);

}  // namespace ditbench
