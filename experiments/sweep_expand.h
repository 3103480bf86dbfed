// Expanding a parsed sweep into trials: the matrix and zip groups are crossed (matrix axes in
// file order, then zip groups, the last varying fastest), `include` points are appended, then
// `exclude` points and `where` constraints remove trials. Pure and deterministic.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "experiments/sweep_spec.h"

namespace ditbench {

struct ExpandedSweep {
  std::vector<TrialConfig> trials;
  std::size_t excluded = 0;               // removed by `exclude`
  std::vector<std::size_t> failed_where;  // per constraint: trials it removed
};

// REQUIRES: spec came from a ParseResult with no errors. `gpus`: GPUs or CPU slots available,
// the `gpus` variable of constraints.
ExpandedSweep ExpandSweep(const SweepSpec& spec, int gpus);

// How many trials the matrix, zip and include sections produce before filtering
// (saturating at SIZE_MAX).
std::size_t UnfilteredTrialCount(const SweepSpec& spec);

// UnfilteredTrialCount in decimal, exact up to 2^127 ("18446744073709551616"), else
// "more than 2^127": for messages.
std::string UnfilteredTrialCountText(const SweepSpec& spec);

}  // namespace ditbench
