// How a trial's ranks are laid out over its parallel degrees. Torch-free: the coordinator, the
// validity rules and the worker share it.
//
// world size = dp x cfg x pipefusion x ring x ulysses x tp, tensor parallelism innermost (its
// all-reduces, two or three per block, want the fastest link), then Ulysses (as in xDiT):
//   rank = ((((dp_i * cfg + cfg_i) * pipefusion + pf_i) * ring + ring_i) * ulysses + u_i) * tp
//          + tp_i
// With tp = 1 this is the layout of the five older degrees, rank for rank.
// The sequence-parallel group is ring x ulysses; within it a rank's position is
// ring_i * ulysses + u_i, and image tokens are split into that many contiguous chunks in that
// order. The tp ranks of one sequence position hold the same tokens, each with its share of
// the heads. Every subgroup is named by the coordinates its members share, so that each rank can
// build its own communicators without talking to the others.
#pragma once

#include <string>

#include "model_zoo/shapes/parallel_degrees.h"

namespace ditbench {

struct RankCoordinates {
  int dp = 0, cfg = 0, pipefusion = 0, ring = 0, ulysses = 0, tp = 0;
  int sequence_rank = 0;  // ring * ulysses_size + ulysses: position in the sequence group
  bool operator==(const RankCoordinates&) const = default;
};

// REQUIRES: 0 <= rank < degrees.world_size().
RankCoordinates CoordinatesOf(const ParallelDegrees& degrees, int rank);
int RankOf(const ParallelDegrees& degrees, const RankCoordinates& at);

// The subgroups a rank belongs to. Each name is unique to the group (all members compute the
// same name) and is used as the store prefix of that group's communicator.
enum class Subgroup { kWorld, kUlysses, kRing, kSequence, kCfg, kPipeFusion, kTensor };
std::string SubgroupName(Subgroup group, const RankCoordinates& at);
// This rank's index inside `group` and the group's size.
int IndexIn(Subgroup group, const ParallelDegrees& degrees, const RankCoordinates& at);
int SizeOf(Subgroup group, const ParallelDegrees& degrees);

}  // namespace ditbench
