#include "runner/advise_search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "analysis/configuration_group.h"
#include "plan/advisor.h"
#include "plan/cost_model.h"
#include "plan/fitted_model.h"
#include "stats/least_squares.h"

namespace ditbench {

std::size_t MostInformative(const std::vector<std::vector<double>>& measured,
                            const std::vector<std::vector<double>>& candidates) {
  const std::size_t n = candidates.front().size();
  std::vector<double> scale(n, 0.0);
  for (const auto* set : {&measured, &candidates})
    for (const auto& x : *set)
      for (std::size_t j = 0; j < n; ++j) scale[j] = std::max(scale[j], std::abs(x[j]));
  const auto scaled = [&](const std::vector<double>& x) {
    std::vector<double> s(n);
    for (std::size_t j = 0; j < n; ++j) s[j] = scale[j] > 0 ? x[j] / scale[j] : 0.0;
    return s;
  };
  std::vector<double> normal(n * n, 0.0);
  for (std::size_t j = 0; j < n; ++j) normal[j * n + j] = 1e-3;  // a weak ridge: always solvable
  for (const auto& raw : measured) {
    const auto x = scaled(raw);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) normal[a * n + b] += x[a] * x[b];
  }
  const auto inverse = InverseSpd(normal, n);
  std::size_t best = 0;
  double best_leverage = -1;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto x = scaled(candidates[i]);
    double leverage = 0;
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) leverage += x[a] * (*inverse)[a * n + b] * x[b];
    if (leverage > best_leverage + 1e-12) {
      best_leverage = leverage;
      best = i;
    }
  }
  return best;
}

namespace {

// The trial the search measures next and why.
struct SearchPick {
  std::optional<std::size_t> next;  // an index into the plan's trials
  std::string reason;
};

// With a fitted model: among the `open` trials, the one most likely to beat an undecided
// group's leader (the leader itself when it is only predicted), else a cache setting whose
// quality is unchecked; nullopt when every group is decided.
std::optional<SearchPick> PickFromAdvice(const SweepPlan& plan, const Advice& advice,
                                         const std::vector<std::size_t>& open) {
  double best_p = -1;
  bool undecided = false;
  SearchPick pick;
  for (const GroupAdvice& g : advice.groups) {
    if (g.decided) continue;
    for (std::size_t r : g.to_measure) {
      const AdvisedTrial& a = g.ranked[r];
      const auto found = std::find_if(open.begin(), open.end(), [&](std::size_t i) {
        return plan.trials[i].key == a.trial->key;
      });
      if (found == open.end()) continue;
      undecided = true;
      const double p = r == 0 ? 1.0 : a.p_beats_leader;
      if (p > best_p) {
        best_p = p;
        pick.next = *found;
        const AdvisedTrial& lead = g.ranked.front();
        pick.reason =
            r == 0 ? fmt::format("the leader of {} is only predicted: {:.4g} ms [{:.4g}, {:.4g}]",
                                 g.group, a.latency_ms.value, a.latency_ms.low, a.latency_ms.high)
                   : fmt::format(
                         "{:.0f}% likely to beat the leader of {} ({}, {:.4g} ms): "
                         "predicted {:.4g} ms [{:.4g}, {:.4g}]",
                         p * 100, g.group, ConfigurationLabel(lead.trial->config),
                         lead.latency_ms.value, a.latency_ms.value, a.latency_ms.low,
                         a.latency_ms.high);
      }
      break;  // the group's most informative open trial
    }
  }
  // A cache setting is recommended only once its quality is measured: when the ranked
  // trials are decided, measure the ones excluded for want of it.
  for (const GroupAdvice& g : advice.groups) {
    if (undecided) break;
    for (const AdvisedTrial& a : g.excluded) {
      if (a.measured || !a.quality.starts_with(kQualityUnchecked)) continue;
      const auto found = std::find_if(open.begin(), open.end(), [&](std::size_t i) {
        return plan.trials[i].key == a.trial->key;
      });
      if (found == open.end()) continue;
      undecided = true;
      pick.next = *found;
      pick.reason = fmt::format(
          "a cache setting of {} ({}) is recommended only once its quality "
          "is measured against the sweep's gates",
          g.group, ConfigurationLabel(a.trial->config));
      break;
    }
  }
  if (!undecided) return std::nullopt;
  return pick;
}

}  // namespace

AdviseSearchEnd RunAdviseSearch(const SweepPlan& plan, const TrialSelection& selection,
                                ResultsReader& reader, PlannerHistory& history,
                                CampaignWriter& writer, std::int64_t campaign,
                                const std::set<std::string>& live,
                                const AdviseSearchSettings& settings, const RunRound& run_round,
                                RunStatus& status) {
  const double began = settings.now();
  std::set<std::string> tried;  // launched by this search (ok or not): never twice
  while (true) {
    const auto statuses = reader.TrialStatuses(campaign);
    const FittedModel fitted = FitFromDatabase(history, settings.device);
    // The trials the search may still measure: valid, selected, not running elsewhere, not
    // measured (in any campaign of the device) and not failed in this one.
    const ObservationIndex observed(fitted.observations);
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < plan.trials.size(); ++i) {
      const PlannedTrial& t = plan.trials[i];
      if (t.invalid_reason || !TraitsOf(t.config.workload).builtin_model) continue;
      if (live.count(t.key) || !selection.Selects(t.key) || tried.count(t.key)) continue;
      if (observed.Find(t.key) || statuses.count(t.key)) continue;
      open.push_back(i);
    }
    std::optional<std::size_t> next;
    std::string reason;
    if (fitted.model) {
      const std::optional<SearchPick> pick = PickFromAdvice(plan, Advise(plan, fitted, {}), open);
      if (!pick) {
        status.SearchDone("every group's leader is measured and no interval overlaps it");
        return AdviseSearchEnd::kDecided;
      }
      next = pick->next;
      reason = pick->reason;
    } else if (!open.empty()) {
      std::vector<std::vector<double>> measured, candidates;
      for (const CostObservation& o : fitted.observations)
        if (auto x = CostFeatures(o.config, o.comm_mb_per_step, o.sharing))
          measured.push_back(*x);
      for (std::size_t i : open) {
        const PlannedTrial& t = plan.trials[i];
        candidates.push_back(CostFeatures(t.config, {}, t.sharing).value());
      }
      next = open[MostInformative(measured, candidates)];
      reason = fmt::format("teaches the cost model the most ({} of the {} trials a first fit "
                           "needs are measured)",
                           fitted.observations.size(), kMinimumTrialsToFit);
    }
    if (!next) {
      status.SearchDone("no trial left to measure");
      return AdviseSearchEnd::kNothingLeft;
    }
    const PlannedTrial& t = plan.trials[*next];
    if (settings.budget_s >= 0) {
      const double estimate = t.estimate ? t.estimate->trial_s : 0.0;
      if (settings.now() - began + estimate > settings.budget_s) {
        status.SearchDone(fmt::format("the budget is spent ({} would need {:.0f} s more)", t.key,
                                      estimate));
        return AdviseSearchEnd::kBudgetSpent;
      }
    }
    tried.insert(t.key);
    writer.RecordSearchReason(campaign, t.key, 0, reason);
    status.SearchChoice(t.key, reason);
    if (!run_round({QueuedTrial{*next, &t, 0, false}})) return AdviseSearchEnd::kStopped;
  }
}

}  // namespace ditbench
