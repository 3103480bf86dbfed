#include "metrics/trial_kind_metrics.h"

#include <stdexcept>

#include "metrics/served_requests.h"

namespace ditbench {
namespace {

std::optional<RankProblem> TimedRecordsProblem(const TrialConfig& config, const RequestList&,
                                               const std::vector<RankResult>& ranks) {
  return TimedIterationsProblem(ranks, config.repeats.min);
}

void NoFigures(const TrialConfig&, const RequestList&, const std::vector<RankResult>&,
               const IntervalSet*, TrialMetrics&) {}

TrialConfig TheTrial(const TrialConfig& config, const RequestList&) { return config; }

TrialConfig FirstShape(const TrialConfig& config, const RequestList& requests) {
  if (requests.shapes.empty())
    throw std::invalid_argument("a served trial's records need its requests' shapes");
  return ShapeTrial(config, requests.shapes.front());
}

}  // namespace

const std::vector<KindMetrics>& KindMetricsTable() {
  static const std::vector<KindMetrics> table = {
      {TrialKind::kTimed, TimedRecordsProblem, NoFigures, TheTrial, false},
      {TrialKind::kServed, ServedRequestsProblem, AddServedMetrics, FirstShape, true},
  };
  return table;
}

const KindMetrics& MetricsOfKind(TrialKind kind) {
  for (const KindMetrics& row : KindMetricsTable())
    if (row.kind == kind) return row;
  throw std::logic_error("a trial kind without a row in KindMetricsTable()");
}

}  // namespace ditbench
