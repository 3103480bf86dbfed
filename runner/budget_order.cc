#include "runner/budget_order.h"

#include <algorithm>
#include <numeric>

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

}  // namespace ditbench
