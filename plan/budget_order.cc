#include "plan/budget_order.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/user_error.h"
#include "experiments/trial_settings.h"

namespace ditbench {

std::vector<std::size_t> BudgetOrder(const std::vector<const PlannedTrial*>& trials) {
  std::vector<std::size_t> order(trials.size());
  std::iota(order.begin(), order.end(), 0);
  const auto rank = [&](std::size_t i) {
    const PlannedTrial& t = *trials[i];
    const bool baseline = t.config.world_size() == 1;
    const double seconds = t.estimate ? t.estimate->trial_s : 0.0;
    return std::make_pair(!baseline, seconds);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
  return order;
}

BudgetFit FitBudget(const SweepPlan& plan, int replicates, double budget_s) {
  std::vector<const PlannedTrial*> runnable;
  for (const PlannedTrial& t : plan.trials)
    if (!t.invalid_reason) runnable.push_back(&t);
  const std::vector<std::size_t> order = BudgetOrder(runnable);
  BudgetFit fit;
  bool spent = false;
  // Under --policy pack launches overlap: each starts when the packed schedule says, and the
  // seconds are wall time (when the last launch, or the last that fits, ends).
  std::optional<PackedSchedule> packed;
  if (plan.pack_slots > 0) packed.emplace(plan.pack_slots);
  for (int round = 0; round < std::max(replicates, 1); ++round) {
    for (std::size_t i : order) {
      const PlannedTrial& t = *runnable[i];
      const double s = t.estimate ? t.estimate->trial_s : 0.0;
      ++fit.launches;
      // As `run` does: a launch starts while the time spent plus its estimate fits.
      double start = fit.seconds;
      if (packed) {
        const std::optional<double> at = packed->Place(t.key, t.config.world_size(), s);
        if (!at) continue;  // needs more slots than there are: never started
        start = *at;
      }
      fit.seconds = packed ? packed->end() : fit.seconds + s;
      if (!spent && start + s <= budget_s) {
        ++fit.fit;
        fit.fit_seconds = packed ? std::max(fit.fit_seconds, start + s) : fit.fit_seconds + s;
      } else {
        spent = true;
      }
    }
  }
  return fit;
}

double ParseBudgetOption(const std::string& text) {
  double seconds = 0;
  if (!ParseDuration(nlohmann::json(text), &seconds))
    throw UserError("--budget '" + text + "': expected a duration such as 90s, 30m or 8h");
  return seconds;
}

}  // namespace ditbench
