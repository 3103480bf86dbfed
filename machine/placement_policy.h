// --policy: how trials share the slots (SlotPool, machine/placement.h).
#pragma once

#include <array>

#include "base/choices.h"

namespace ditbench {

// How trials share the slots.
enum class PlacementPolicy {
  kExclusive,  // one trial at a time, whatever its size (the default: clean timings)
  kPack,       // several trials at once on disjoint slots
};
// --policy's names (also what a campaign records as its "policy").
inline constexpr std::array<Choice<PlacementPolicy>, 2> kPlacementPolicies{{
    {PlacementPolicy::kExclusive, "exclusive", "one trial at a time"},
    {PlacementPolicy::kPack, "pack",
     "several at once on disjoint GPUs/slots, CPU slots pinned to their own cores"},
}};

}  // namespace ditbench
