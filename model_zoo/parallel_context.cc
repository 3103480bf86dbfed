#include "model_zoo/parallel_context.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

namespace ditbench {
namespace {

RankSubgroup MakeGroup(Subgroup which, const ParallelDegrees& degrees, const RankCoordinates& at,
                       const c10::intrusive_ptr<c10d::Store>& store, const BackendFactory& create) {
  RankSubgroup group{nullptr, IndexIn(which, degrees, at), SizeOf(which, degrees)};
  if (group.size > 1)
    group.backend = create(c10::make_intrusive<c10d::PrefixStore>(SubgroupName(which, at), store),
                           group.rank, group.size);
  return group;
}

}  // namespace

ParallelContext::ParallelContext()
    : attention_(MakeAttentionStrategy(ulysses_, ring_)) {}

ParallelContext::ParallelContext(const ParallelDegrees& degrees, int rank,
                                 const c10::intrusive_ptr<c10d::Store>& store,
                                 const BackendFactory& create)
    : degrees_(degrees), at_(CoordinatesOf(degrees, rank)) {
  // Refuse what this build cannot run before any rendezvous.
  attention_ = MakeAttentionStrategy(RankSubgroup{nullptr, at_.ulysses, degrees.ulysses},
                                     RankSubgroup{nullptr, at_.ring, degrees.ring});
  world_ = MakeGroup(Subgroup::kWorld, degrees, at_, store, create);
  ulysses_ = MakeGroup(Subgroup::kUlysses, degrees, at_, store, create);
  ring_ = MakeGroup(Subgroup::kRing, degrees, at_, store, create);
  // With one of the two at 1 the sequence group is the other one: no extra communicator.
  if (degrees.ring == 1) sequence_ = ulysses_;
  else if (degrees.ulysses == 1) sequence_ = ring_;
  else sequence_ = MakeGroup(Subgroup::kSequence, degrees, at_, store, create);
  cfg_ = MakeGroup(Subgroup::kCfg, degrees, at_, store, create);
  pipefusion_ = MakeGroup(Subgroup::kPipeFusion, degrees, at_, store, create);
  attention_ = MakeAttentionStrategy(ulysses_, ring_);
}

ParallelContext::ParallelContext(ParallelContext&&) noexcept = default;
ParallelContext& ParallelContext::operator=(ParallelContext&&) noexcept = default;
ParallelContext::~ParallelContext() = default;

AttentionOutput ParallelContext::Attend(const Qkv& image, const std::optional<Qkv>& joint) const {
  return attention_->Attend(image, joint);
}

torch::Tensor ParallelContext::ShardSequence(const torch::Tensor& full, int64_t dim) const {
  if (sequence_.size == 1) return full;
  const int64_t chunk = full.size(dim) / sequence_.size;
  TORCH_CHECK(chunk * sequence_.size == full.size(dim), "sequence of ", full.size(dim),
              " tokens does not split into ", sequence_.size, " equal parts");
  return full.narrow(dim, sequence_.rank * chunk, chunk);
}

torch::Tensor ParallelContext::GatherSequence(const torch::Tensor& local, int64_t dim) const {
  return AllGather(local, dim, sequence_);
}

torch::Tensor ParallelContext::GatherCfg(const torch::Tensor& local, int64_t dim) const {
  return AllGather(local, dim, cfg_);
}

}  // namespace ditbench
