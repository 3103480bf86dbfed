// `ditbench advise`: which layout wins in each report group, with how sure we are, and what to
// measure next. Pure: a plan and a fitted model in, advice out.
//
// Every valid trial of the plan is scored by the objective: measured when the database holds
// an ok result of its key (an exact value), otherwise predicted by the cost model with its 95%
// interval (plan/cost_model.h), or, with too few trials for a fit, by the analytic estimate
// with a factor-of-3 interval. Within each group (HalvingGroup) the trials are ranked by their
// point value; the first is the recommendation. Its regret is how much worse it is than the
// best measured trial of the group (negative: predicted better than anything measured). The
// trials worth measuring next are those whose interval overlaps the leader's (and the leader
// itself while it is only predicted), most likely to beat it first. A group is decided once its
// leader is measured and no interval overlaps it. A measured trial that misses the plan's quality
// gates (`quality: {...}` of its sweep) or --max-output-error is never ranked: it is listed as
// excluded, with why.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/speedup.h"
#include "plan/cost_model.h"
#include "plan/fitted_model.h"
#include "plan/sweep_plan.h"
#include "storage/results_reader.h"

namespace ditbench {

enum class Objective {
  kLatency,     // ms per image batch (lower is better)
  kThroughput,  // images per second (higher is better)
  kEfficiency,  // images per second per rank (higher is better)
};
std::optional<Objective> ParseObjective(std::string_view name);
std::string_view ObjectiveName(Objective objective);
std::string_view ObjectiveUnit(Objective objective);

// The verdict's prefix for a trial whose quality must be known to pass before it is
// recommended, and is not.
inline constexpr std::string_view kQualityUnchecked = "unchecked";

struct AdvisedTrial {
  const PlannedTrial* trial = nullptr;  // borrowed from the plan
  bool measured = false;
  bool busy = false;          // measured, but only on a busy machine: "measured (busy)"
  CostPrediction latency_ms;  // measured: low = value = high
  CostPrediction objective;   // in ObjectiveUnit
  std::optional<double> output_error;
  // Measured: the verdict of the sweep's quality gates on it (experiments/quality_gate.h), "ok",
  // "below: ..." or empty (no gate, or not known); a step cache under gates without an "ok":
  // "unchecked: ..." (excluded: its quality is not known to pass).
  std::string quality;
  double p_beats_leader = 0;  // chance it is better than the leader (normal approximation)
  // Measured: its speedup against its 1-rank baseline as every output shows it
  // (analysis/speedup.h; AttachSpeedups), and that speedup's doubts ("" when none).
  std::optional<double> speedup;
  std::string speedup_trust;
  std::string speedup_reference;  // Speedup::ReferenceText: "1 rank", "1 rank without cache"
  std::int64_t campaign = 0;      // measured: the campaign of the measurement
};

struct GroupAdvice {
  std::string group;  // the group's key (HalvingGroup)
  std::string label;  // how outputs name it: the report's group label (ReportGroup::Label)
  std::vector<AdvisedTrial> ranked;   // best first
  // Trials never recommended: measured with output error above --max-output-error, or below
  // the sweep's quality gates (AdvisedTrial::quality says which gate they missed), or a step
  // cache whose quality is not known to pass them ("unchecked: ...").
  std::vector<AdvisedTrial> excluded;
  std::optional<std::size_t> best_measured;  // index into ranked
  std::optional<double> regret;  // (leader vs best measured) as a fraction; unset: none measured
  std::vector<std::size_t> to_measure;  // indices into ranked, most informative first
  bool decided = false;
};

struct AdviseOptions {
  Objective objective = Objective::kLatency;
  std::optional<double> max_output_error;
  std::size_t max_to_measure = 3;
};

struct Advice {
  Objective objective = Objective::kLatency;
  std::string estimates_from;  // FittedModel::Explain
  std::vector<GroupAdvice> groups;  // by group text
};

// Sets each measured trial's speedup from `speedups` (analysis/speedup.h: TrialSpeedups of the
// database's answering rows), so advise shows the report's number for the same measurement.
void AttachSpeedups(Advice& advice, const std::map<TrialId, Speedup>& speedups);
// The same, reading the rows of the database's answering campaigns (campaign_roles.h).
void AttachSpeedups(Advice& advice, ResultsReader& db);

Advice Advise(const SweepPlan& plan, const FittedModel& fitted, const AdviseOptions& options);

// The interval of a trial the analytic estimate predicts: value / kAnalyticFactor to value x
// kAnalyticFactor (docs/planner.md: the analytic estimate was off by up to 5x on CPU).
inline constexpr double kAnalyticFactor = 3.0;

}  // namespace ditbench
