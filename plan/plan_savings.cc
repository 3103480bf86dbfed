#include "plan/plan_savings.h"

#include <algorithm>
#include <map>
#include <ostream>

#include <fmt/format.h>

#include "plan/budget_order.h"
#include "plan/halving.h"
#include "plan/oom_prediction.h"
#include "plan/plan_output.h"

namespace ditbench {
namespace {

// Beyond this many trials the on_oom figure is not computed (it compares every pair).
constexpr std::size_t kMaxOomPairs = 5000;

bool Runs(const PlannedTrial& t) { return !t.invalid_reason && !t.unsupported; }

double Seconds(const PlannedTrial& t) { return t.estimate ? t.estimate->trial_s : 0.0; }

// A screening launch: the trial with repeats.min timed iterations instead of its full count.
double ScreeningSeconds(const PlannedTrial& t) {
  if (!t.estimate) return 0;
  const TrialEstimate& e = *t.estimate;
  const double cut = TimedIterations(t.config, e.iteration_ms) - t.config.repeats.min;
  return e.trial_s - std::max(0.0, cut) * e.iteration_ms / 1000;
}

}  // namespace

PlanSavings EstimateSavings(const SweepSpec& spec, const SweepPlan& plan, double budget_s) {
  PlanSavings savings;
  for (const PlannedTrial& t : plan.trials)
    if (Runs(t) && !t.estimate) ++savings.unestimated;

  if (spec.skip_larger_after_oom && plan.trials.size() <= kMaxOomPairs) {
    PlanSavings::OnOom oom;
    for (const PlannedTrial& t : plan.trials) {
      if (!Runs(t)) continue;
      for (const PlannedTrial& other : plan.trials)
        if (&other != &t && Runs(other) && AtLeastAsLarge(t.config, other.config)) {
          ++oom.trials;
          oom.seconds += Seconds(t) * spec.replicates;
          break;
        }
    }
    savings.on_oom = oom;
  }

  if (spec.halving_keep > 0) {
    PlanSavings::Halving h;
    std::map<std::string, std::vector<const PlannedTrial*>> groups;
    for (const PlannedTrial& t : plan.trials)
      if (Runs(t)) groups[HalvingGroup(t.config)].push_back(&t);
    for (auto& [group, members] : groups) {
      h.trials += static_cast<std::int64_t>(members.size());
      for (const PlannedTrial* t : members) {
        h.full_s += Seconds(*t);
        h.screening_s += ScreeningSeconds(*t);
      }
      // Each round keeps the fastest: by the estimates, the trials estimated fastest.
      std::stable_sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
        const double x = a->estimate ? a->estimate->iteration_ms : 0;
        const double y = b->estimate ? b->estimate->iteration_ms : 0;
        return x < y;
      });
      for (std::int64_t kept : HalvingRounds(static_cast<std::int64_t>(members.size()),
                                             spec.halving_keep)) {
        h.remeasured += kept;
        for (std::int64_t i = 0; i < kept; ++i) h.remeasured_s += Seconds(*members[i]);
      }
    }
    h.groups = static_cast<std::int64_t>(groups.size());
    h.saved_s = h.full_s - h.screening_s - h.remeasured_s;
    savings.halving = h;
  }

  if (budget_s >= 0) {
    const BudgetFit fit = FitBudget(plan, spec.replicates, budget_s);
    PlanSavings::Budget b;
    b.budget_s = budget_s;
    b.launches = fit.launches;
    b.fit = fit.fit;
    b.cut = fit.launches - fit.fit;
    b.seconds = fit.seconds;
    b.fit_seconds = fit.fit_seconds;
    b.cut_seconds = fit.seconds - fit.fit_seconds;
    savings.budget = b;
  }
  return savings;
}

void WriteSavings(const PlanSavings& s, std::ostream& out) {
  if (s.on_oom)
    out << fmt::format(
        "savings: on_oom: skip_larger: up to {} trial(s) ({}) are skipped if a "
        "smaller trial of the same model runs out of memory first\n",
        s.on_oom->trials, DurationText(s.on_oom->seconds));
  if (s.halving) {
    const auto& h = *s.halving;
    out << fmt::format(
        "savings: search: halving: {} trial(s) screened with repeats.min ({}), "
        "then at most {} re-measurement launch(es) of the fastest in {} group(s) "
        "({}): {} {} against measuring all {} to the target CI ({})\n",
        h.trials, DurationText(h.screening_s), h.remeasured, h.groups, DurationText(h.remeasured_s),
        h.saved_s >= 0 ? "saves" : "costs",
        DurationText(h.saved_s) + (h.saved_s >= 0 ? "" : " more"), h.trials,
        DurationText(h.full_s));
  }
  if (s.budget) {
    const auto& b = *s.budget;
    out << fmt::format(
        "savings: --budget {}: {} of {} launch(es) fit ({} of {}; the 1-rank "
        "trials first, then the cheapest); {} launch(es) ({}) cut, left for the "
        "next run\n",
        DurationText(b.budget_s), b.fit, b.launches, DurationText(b.fit_seconds),
        DurationText(b.seconds), b.cut, DurationText(b.cut_seconds));
  }
  if ((s.on_oom || s.halving || s.budget) && s.unestimated > 0)
    out << fmt::format("savings: {} trial(s) without an estimate count as 0 s above\n",
                       s.unestimated);
}

nlohmann::json ToJson(const PlanSavings& s) {
  nlohmann::json j = nlohmann::json::object();
  if (s.on_oom) j["on_oom"] = {{"trials", s.on_oom->trials}, {"seconds", s.on_oom->seconds}};
  if (s.halving) {
    const auto& h = *s.halving;
    j["halving"] = {{"trials", h.trials},         {"groups", h.groups},
                    {"remeasured_launches", h.remeasured}, {"full_s", h.full_s},
                    {"screening_s", h.screening_s}, {"remeasured_s", h.remeasured_s},
                    {"saved_s", h.saved_s}};
  }
  if (s.budget) {
    const auto& b = *s.budget;
    j["budget"] = {{"budget_s", b.budget_s}, {"launches", b.launches},
                   {"fit", b.fit},           {"cut", b.cut},
                   {"seconds", b.seconds},   {"fit_seconds", b.fit_seconds},
                   {"cut_seconds", b.cut_seconds}};
  }
  j["unestimated_trials"] = s.unestimated;
  return j;
}

}  // namespace ditbench
