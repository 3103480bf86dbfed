#include "plan/advisor.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/configuration_group.h"
#include "experiments/quality_gate.h"
#include "plan/halving.h"

namespace ditbench {
namespace {

// A score where lower is better, with its standard deviation (0 for a measurement).
struct Score {
  double value, sd;
};

Score ScoreOf(const AdvisedTrial& t, Objective objective) {
  const double sign = objective == Objective::kLatency ? 1.0 : -1.0;
  return {sign * t.objective.value, (t.objective.high - t.objective.low) / (2 * 1.959964)};
}

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The objective of a latency: ms, images per second, or images per second per rank.
CostPrediction ObjectiveOf(const CostPrediction& ms, const TrialConfig& c, Objective objective) {
  if (objective == Objective::kLatency) return ms;
  const double images = double(c.images_per_iteration()) * 1000;
  const double per = objective == Objective::kEfficiency ? c.world_size() : 1;
  const auto rate = [&](double latency) { return latency > 0 ? images / latency / per : 0.0; };
  return {rate(ms.value), rate(ms.high), ms.low > 0 ? rate(ms.low) : rate(ms.value) * 1e3};
}

}  // namespace

std::optional<Objective> ParseObjective(std::string_view name) {
  if (name == "latency") return Objective::kLatency;
  if (name == "throughput") return Objective::kThroughput;
  if (name == "efficiency") return Objective::kEfficiency;
  return std::nullopt;
}

std::string_view ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kLatency: return "latency";
    case Objective::kThroughput: return "throughput";
    case Objective::kEfficiency: return "efficiency";
  }
  return "latency";
}

std::string_view ObjectiveUnit(Objective objective) {
  switch (objective) {
    case Objective::kLatency: return "ms";
    case Objective::kThroughput: return "images/s";
    case Objective::kEfficiency: return "images/s per rank";
  }
  return "ms";
}

void AttachSpeedups(Advice& advice, const std::map<TrialId, Speedup>& speedups) {
  for (GroupAdvice& g : advice.groups)
    for (std::vector<AdvisedTrial>* list : {&g.ranked, &g.excluded})
      for (AdvisedTrial& t : *list) {
        if (!t.measured) continue;
        const auto found = speedups.find({t.campaign, t.trial->key});
        if (found == speedups.end()) continue;
        t.speedup = found->second.value;
        t.speedup_trust = found->second.trust.Names();
        t.speedup_reference = found->second.ReferenceText();
      }
}

void AttachSpeedups(Advice& advice, ResultsReader& db) {
  AttachSpeedups(advice, AnsweringSpeedups(db));
}

Advice Advise(const SweepPlan& plan, const FittedModel& fitted, const AdviseOptions& options) {
  Advice advice;
  advice.objective = options.objective;
  advice.estimates_from = fitted.Explain();
  std::map<std::string, GroupAdvice> groups;
  const ObservationIndex observed(fitted.observations);
  const ObservationIndex observed_busy(fitted.busy_observations);
  for (const PlannedTrial& t : plan.trials) {
    if (t.invalid_reason || !TraitsOf(t.config.workload).builtin_model) continue;
    AdvisedTrial a;
    a.trial = &t;
    const CostObservation* o = observed.Find(t.key);
    if (!o) o = observed_busy.Find(t.key);
    if (o) {
      a.measured = true;
      a.busy = o->busy;
      a.campaign = o->campaign;
      a.latency_ms = {o->latency_ms, o->latency_ms, o->latency_ms};
      a.output_error = o->output_error;
      a.quality = QualityVerdict(t.config.quality, t.config.scope == Scope::kPipeline,
                                 {o->output_error, o->psnr, o->ssim})
                      .value_or("");
    } else if (fitted.model) {
      const auto p = fitted.model->Iteration(t.config, {}, t.sharing);
      if (!p) continue;
      a.latency_ms = *p;
    } else if (t.estimate) {
      const double v = t.estimate->iteration_ms;
      a.latency_ms = {v, v / kAnalyticFactor, v * kAnalyticFactor};
    } else {
      continue;
    }
    // A step cache trades quality for speed: under the sweep's gates it is recommended only
    // once its measured quality passed them, never on a predicted latency alone.
    if (!t.config.cache.empty() && !t.config.quality.empty() && a.quality != "ok" &&
        !IsBelowQuality(a.quality))
      a.quality = std::string(kQualityUnchecked) +
                  (a.measured ? ": cache: no quality measured against the uncached trial"
                              : ": cache: not measured, its quality unknown");
    a.objective = ObjectiveOf(a.latency_ms, t.config, options.objective);
    const std::string group_key = HalvingGroup(t.config);
    GroupAdvice& g = groups[group_key];
    if (g.label.empty()) g.label = ReportGroupOf(t.config).Label();
    if ((a.measured && options.max_output_error && a.output_error &&
         *a.output_error > *options.max_output_error) ||
        IsBelowQuality(a.quality) || a.quality.starts_with(kQualityUnchecked))
      g.excluded.push_back(a);
    else
      g.ranked.push_back(a);
  }
  for (auto& [text, g] : groups) {
    g.group = text;
    if (g.ranked.empty()) {
      advice.groups.push_back(std::move(g));
      continue;
    }
    std::stable_sort(g.ranked.begin(), g.ranked.end(), [&](const auto& x, const auto& y) {
      return ScoreOf(x, options.objective).value < ScoreOf(y, options.objective).value;
    });
    const Score leader = ScoreOf(g.ranked.front(), options.objective);
    for (std::size_t i = 0; i < g.ranked.size(); ++i) {
      AdvisedTrial& t = g.ranked[i];
      if (t.measured && !g.best_measured) g.best_measured = i;
      if (i == 0) continue;
      const Score s = ScoreOf(t, options.objective);
      const double spread = std::sqrt(s.sd * s.sd + leader.sd * leader.sd);
      t.p_beats_leader = spread > 0 ? NormalCdf((leader.value - s.value) / spread)
                                    : (s.value < leader.value ? 1.0 : 0.0);
    }
    if (g.best_measured) {
      const double best = g.ranked[*g.best_measured].objective.value;
      const double lead = g.ranked.front().objective.value;
      g.regret = options.objective == Objective::kLatency ? (lead - best) / best
                                                          : (best - lead) / best;
    }
    // What to measure: the leader while it is only predicted, then every unmeasured trial
    // whose interval overlaps the leader's, the likeliest to beat it first.
    const AdvisedTrial& lead = g.ranked.front();
    // A leader measured only on a busy machine is not a decision: measure it again.
    if (!lead.measured || lead.busy) g.to_measure.push_back(0);
    std::vector<std::size_t> overlapping;
    for (std::size_t i = 1; i < g.ranked.size(); ++i) {
      const AdvisedTrial& t = g.ranked[i];
      if (t.measured) continue;
      const bool overlaps = options.objective == Objective::kLatency
                                ? t.objective.low < lead.objective.high
                                : t.objective.high > lead.objective.low;
      if (overlaps) overlapping.push_back(i);
    }
    std::stable_sort(overlapping.begin(), overlapping.end(), [&](std::size_t x, std::size_t y) {
      return g.ranked[x].p_beats_leader > g.ranked[y].p_beats_leader;
    });
    for (std::size_t i : overlapping) g.to_measure.push_back(i);
    g.decided = g.to_measure.empty();
    if (g.to_measure.size() > options.max_to_measure) g.to_measure.resize(options.max_to_measure);
    advice.groups.push_back(std::move(g));
  }
  return advice;
}

}  // namespace ditbench
