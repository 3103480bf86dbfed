#include "model_zoo/parallel_context.h"

#include <stdexcept>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

namespace ditbench {
namespace {

RankSubgroup MakeGroup(Subgroup which, const ParallelDegrees& degrees, const RankCoordinates& at,
                       const c10::intrusive_ptr<c10d::Store>& store, const BackendFactory& create,
                       const std::shared_ptr<CommCounter>& counter) {
  RankSubgroup group{nullptr, IndexIn(which, degrees, at), SizeOf(which, degrees), counter};
  if (group.size > 1)
    group.backend = create(c10::make_intrusive<c10d::PrefixStore>(SubgroupName(which, at), store),
                           group.rank, group.size);
  return group;
}

}  // namespace

ParallelContext::ParallelContext() {
  world_.counter = ulysses_.counter = ring_.counter = sequence_.counter = cfg_.counter =
      pipefusion_.counter = counter_;
  attention_ = MakeAttentionStrategy(ulysses_, ring_);
}

ParallelContext::ParallelContext(const ParallelDegrees& degrees, int rank,
                                 const c10::intrusive_ptr<c10d::Store>& store,
                                 const BackendFactory& create)
    : degrees_(degrees), at_(CoordinatesOf(degrees, rank)) {
  // Refuse what this build cannot run before any rendezvous.
  if (degrees.pipefusion > 1 && degrees.ring > 1)
    throw std::invalid_argument("PipeFusion combined with ring attention is not implemented yet");
  world_ = MakeGroup(Subgroup::kWorld, degrees, at_, store, create, counter_);
  ulysses_ = MakeGroup(Subgroup::kUlysses, degrees, at_, store, create, counter_);
  ring_ = MakeGroup(Subgroup::kRing, degrees, at_, store, create, counter_);
  // With one of the two at 1 the sequence group is the other one: no extra communicator.
  if (degrees.ring == 1) sequence_ = ulysses_;
  else if (degrees.ulysses == 1) sequence_ = ring_;
  else sequence_ = MakeGroup(Subgroup::kSequence, degrees, at_, store, create, counter_);
  cfg_ = MakeGroup(Subgroup::kCfg, degrees, at_, store, create, counter_);
  pipefusion_ = MakeGroup(Subgroup::kPipeFusion, degrees, at_, store, create, counter_);
  attention_ = MakeAttentionStrategy(ulysses_, ring_);
}

ParallelContext::ParallelContext(ParallelContext&&) noexcept = default;
ParallelContext& ParallelContext::operator=(ParallelContext&&) noexcept = default;
ParallelContext::~ParallelContext() = default;

AttentionOutput ParallelContext::Attend(const Qkv& image, const std::optional<Qkv>& joint) const {
  if (!cache_) return attention_->Attend(image, joint, nullptr);
  // Under Ulysses the attended tokens are the whole patch (ring is refused with PipeFusion).
  KvCacheSlot slot{cache_, patch_ ? patch_->offset : 0, patch_ ? patch_->total : 0};
  if (!patch_) slot.total = image.q.size(1) * degrees_.ulysses;
  return attention_->Attend(image, joint, &slot);
}

torch::Tensor ParallelContext::ShardSequence(const torch::Tensor& full, int64_t dim) const {
  if (whole_sequence_) return full;
  auto tokens = patch_ ? full.narrow(dim, patch_->offset, patch_->count) : full;
  if (sequence_.size == 1) return tokens;
  const int64_t chunk = tokens.size(dim) / sequence_.size;
  TORCH_CHECK(chunk * sequence_.size == tokens.size(dim), "sequence of ", tokens.size(dim),
              " tokens does not split into ", sequence_.size, " equal parts");
  return tokens.narrow(dim, sequence_.rank * chunk, chunk);
}

torch::Tensor ParallelContext::GatherSequence(const torch::Tensor& local, int64_t dim) const {
  if (whole_sequence_) return local;
  return AllGather(local, dim, sequence_);
}

torch::Tensor ParallelContext::GatherCfg(const torch::Tensor& local, int64_t dim) const {
  return AllGather(local, dim, cfg_);
}

}  // namespace ditbench
