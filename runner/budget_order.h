// `run --budget 8h`: which launches come first when the night may end before the sweep does.
// Pure: planned trials in, an order out. Within each replicate round: the 1-rank trials first
// (every speedup and output error of their group is measured against them), then the rest by
// estimated time, cheapest first (the most results per hour); ties keep the sweep's order. The
// run stops starting launches once the time spent plus the next launch's estimate would pass
// the budget (runner/sweep_run.cc); the campaign stays open, and the next `run` resumes it.
#pragma once

#include <cstddef>
#include <vector>

#include "runner/sweep_plan.h"

namespace ditbench {

// A permutation of 0..trials.size()-1: the order above.
std::vector<std::size_t> BudgetOrder(const std::vector<const PlannedTrial*>& trials);

}  // namespace ditbench
