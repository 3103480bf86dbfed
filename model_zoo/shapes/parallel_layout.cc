#include "model_zoo/shapes/parallel_layout.h"

#include <stdexcept>

#include <fmt/format.h>

namespace ditbench {

RankCoordinates CoordinatesOf(const ParallelDegrees& d, int rank) {
  if (rank < 0 || rank >= d.world_size())
    throw std::out_of_range(fmt::format("rank {} outside world size {}", rank, d.world_size()));
  RankCoordinates at;
  at.tp = rank % d.tp;
  rank /= d.tp;
  at.ulysses = rank % d.ulysses;
  rank /= d.ulysses;
  at.ring = rank % d.ring;
  rank /= d.ring;
  at.pipefusion = rank % d.pipefusion;
  rank /= d.pipefusion;
  at.cfg = rank % d.cfg;
  at.dp = rank / d.cfg;
  at.sequence_rank = at.ring * d.ulysses + at.ulysses;
  return at;
}

int RankOf(const ParallelDegrees& d, const RankCoordinates& at) {
  return ((((at.dp * d.cfg + at.cfg) * d.pipefusion + at.pipefusion) * d.ring + at.ring) *
              d.ulysses +
          at.ulysses) *
             d.tp +
         at.tp;
}

std::string SubgroupName(Subgroup group, const RankCoordinates& at) {
  // Every group but the tensor-parallel one holds ranks of one tp coordinate: a suffix that
  // is empty at tp 0, so the names of a trial without tensor parallelism are as they were.
  const std::string tp = at.tp > 0 ? fmt::format("-tp{}", at.tp) : std::string();
  switch (group) {
    case Subgroup::kWorld: return "world/";
    case Subgroup::kUlysses:
      return fmt::format("ulysses/dp{}-cfg{}-pf{}-ring{}{}/", at.dp, at.cfg, at.pipefusion, at.ring,
                         tp);
    case Subgroup::kRing:
      return fmt::format("ring/dp{}-cfg{}-pf{}-u{}{}/", at.dp, at.cfg, at.pipefusion, at.ulysses,
                         tp);
    case Subgroup::kSequence:
      return fmt::format("sequence/dp{}-cfg{}-pf{}{}/", at.dp, at.cfg, at.pipefusion, tp);
    case Subgroup::kCfg:
      return fmt::format("cfg/dp{}-pf{}-ring{}-u{}{}/", at.dp, at.pipefusion, at.ring, at.ulysses,
                         tp);
    case Subgroup::kPipeFusion:
      return fmt::format("pipefusion/dp{}-cfg{}-ring{}-u{}{}/", at.dp, at.cfg, at.ring, at.ulysses,
                         tp);
    case Subgroup::kTensor:
      return fmt::format("tp/dp{}-cfg{}-pf{}-ring{}-u{}/", at.dp, at.cfg, at.pipefusion, at.ring,
                         at.ulysses);
  }
  return "unknown/";
}

int IndexIn(Subgroup group, const ParallelDegrees& d, const RankCoordinates& at) {
  switch (group) {
    case Subgroup::kWorld: return RankOf(d, at);
    case Subgroup::kUlysses: return at.ulysses;
    case Subgroup::kRing: return at.ring;
    case Subgroup::kSequence: return at.sequence_rank;
    case Subgroup::kCfg: return at.cfg;
    case Subgroup::kPipeFusion: return at.pipefusion;
    case Subgroup::kTensor:
      return at.tp;
  }
  return 0;
}

int SizeOf(Subgroup group, const ParallelDegrees& d) {
  switch (group) {
    case Subgroup::kWorld: return d.world_size();
    case Subgroup::kUlysses: return d.ulysses;
    case Subgroup::kRing: return d.ring;
    case Subgroup::kSequence: return d.sequence_size();
    case Subgroup::kCfg: return d.cfg;
    case Subgroup::kPipeFusion: return d.pipefusion;
    case Subgroup::kTensor:
      return d.tp;
  }
  return 1;
}

}  // namespace ditbench
