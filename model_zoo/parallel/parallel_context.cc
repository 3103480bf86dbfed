#include "model_zoo/parallel/parallel_context.h"

#include <stdexcept>

#include <ATen/record_function.h>
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
      pipefusion_.counter = vae_.counter = tp_.counter = counter_;
  attention_ = MakeAttentionStrategy(ulysses_, ring_);
}

ParallelContext::ParallelContext(const ParallelDegrees& degrees, int rank,
                                 const c10::intrusive_ptr<c10d::Store>& store,
                                 const BackendFactory& create, int vae_parallel)
    : degrees_(degrees), at_(CoordinatesOf(degrees, rank)) {
  world_ = MakeGroup(Subgroup::kWorld, degrees, at_, store, create, counter_);
  ulysses_ = MakeGroup(Subgroup::kUlysses, degrees, at_, store, create, counter_);
  ring_ = MakeGroup(Subgroup::kRing, degrees, at_, store, create, counter_);
  // With one of the two at 1 the sequence group is the other one: no extra communicator.
  if (degrees.ring == 1) sequence_ = ulysses_;
  else if (degrees.ulysses == 1) sequence_ = ring_;
  else sequence_ = MakeGroup(Subgroup::kSequence, degrees, at_, store, create, counter_);
  cfg_ = MakeGroup(Subgroup::kCfg, degrees, at_, store, create, counter_);
  pipefusion_ = MakeGroup(Subgroup::kPipeFusion, degrees, at_, store, create, counter_);
  tp_ = MakeGroup(Subgroup::kTensor, degrees, at_, store, create, counter_);
  attention_ = MakeAttentionStrategy(ulysses_, ring_);
  TORCH_CHECK(vae_parallel >= 1 && vae_parallel <= world_.size, "vae_parallel ", vae_parallel,
              " is not from 1 to the trial's ", world_.size, " ranks");
  vae_.counter = counter_;
  decodes_ = vae_parallel == 1 || rank < vae_parallel;
  if (vae_parallel > 1 && decodes_) {
    vae_.rank = rank;
    vae_.size = vae_parallel;
    vae_.backend =
        create(c10::make_intrusive<c10d::PrefixStore>("vae/", store), rank, vae_parallel);
  }
}

ParallelContext::ParallelContext(ParallelContext&&) noexcept = default;
ParallelContext& ParallelContext::operator=(ParallelContext&&) noexcept = default;
ParallelContext::~ParallelContext() = default;

bool ParallelContext::PatchInterleaved() const {
  return !patch_ && layout_patches_ > 1 && degrees_.ring > 1;
}

AttentionOutput ParallelContext::Attend(const Qkv& image, const std::optional<Qkv>& joint,
                                        int attention) const {
  RECORD_USER_SCOPE("ditbench.attention");  // a profiler's range (metrics/trace_profile.h)
  TORCH_CHECK(attention >= 0 && attention < kMaxBlockAttentions, "attention call ", attention,
              " of a block: a block makes at most ", kMaxBlockAttentions);
  if (!caches_) return attention_->Attend(image, joint, nullptr);
  KvCache* cache = &(*caches_)[attention];
  // The cache holds what this rank attends over: after Ulysses' all-to-all, its ring chunk of
  // every patch, patch after patch; a patch's slice sits at its offset over the ring degree.
  const std::int64_t ring = degrees_.ring;
  KvCacheSlot slot{cache, patch_ ? patch_->offset / ring : 0, patch_ ? patch_->total / ring : 0};
  if (!patch_) {
    slot.total = image.q.size(1) * degrees_.ulysses;
    // A synchronous step under ring holds its tokens Ulysses rank after Ulysses rank, each
    // with its chunk of every patch: stored patch after patch, as the patch steps read them.
    if (PatchInterleaved()) {
      slot.groups = degrees_.ulysses;
      slot.patches = layout_patches_;
    }
  }
  return attention_->Attend(image, joint, &slot);
}

torch::Tensor ParallelContext::ShardSequence(const torch::Tensor& full, int64_t dim) const {
  if (whole_sequence_) return full;
  auto tokens = patch_ ? full.narrow(dim, patch_->offset, patch_->count) : full;
  if (sequence_.size == 1) return tokens;
  if (PatchInterleaved()) {  // this rank's chunk of each patch, patch after patch
    std::vector<torch::Tensor> parts;
    for (const auto& patch : tokens.chunk(layout_patches_, dim)) {
      const int64_t chunk = patch.size(dim) / sequence_.size;
      TORCH_CHECK(chunk * sequence_.size == patch.size(dim), "patch of ", patch.size(dim),
                  " tokens does not split into ", sequence_.size, " equal parts");
      parts.push_back(patch.narrow(dim, sequence_.rank * chunk, chunk));
    }
    return torch::cat(parts, dim);
  }
  const int64_t chunk = tokens.size(dim) / sequence_.size;
  TORCH_CHECK(chunk * sequence_.size == tokens.size(dim), "sequence of ", tokens.size(dim),
              " tokens does not split into ", sequence_.size, " equal parts");
  return tokens.narrow(dim, sequence_.rank * chunk, chunk);
}

torch::Tensor ParallelContext::GatherSequence(const torch::Tensor& local, int64_t dim) const {
  if (whole_sequence_) return local;
  auto gathered = AllGather(local, dim, sequence_);
  if (!PatchInterleaved() || sequence_.size == 1) return gathered;
  // Rank after rank, each with its chunk of every patch -> patch after patch.
  std::vector<std::vector<torch::Tensor>> by_rank;
  for (const auto& part : gathered.chunk(sequence_.size, dim))
    by_rank.push_back(part.chunk(layout_patches_, dim));
  std::vector<torch::Tensor> ordered;
  for (int m = 0; m < layout_patches_; ++m)
    for (const auto& rank_parts : by_rank) ordered.push_back(rank_parts[m]);
  return torch::cat(ordered, dim);
}

torch::Tensor ParallelContext::ReduceTensorParallel(torch::Tensor partial) const {
  if (tp_.size == 1) return partial;
  partial = partial.contiguous();
  AllReduce(partial, c10d::ReduceOp::SUM, tp_);
  return partial;
}

torch::Tensor ParallelContext::GatherCfg(const torch::Tensor& local, int64_t dim) const {
  return AllGather(local, dim, cfg_);
}

}  // namespace ditbench
