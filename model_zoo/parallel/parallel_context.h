// The parallel side of one trial rank: every communicator of the topology of the parallel
// degrees (model_zoo/shapes/parallel_layout.h) and the attention strategy they imply, built
// once per trial. A model asks it to attend, to keep this rank's part of the sequence and to
// gather the sequence back; it never looks at the degrees itself, so the same model code runs
// locally, under Ulysses, ring or USP. PipeFusion is a runner over the model's block interface
// (model_zoo/families/dit_model.h) that uses the pipefusion group.
//
// Thread-safety: one context per rank; not shared between threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "model_zoo/parallel/parallel_attention.h"
#include "model_zoo/shapes/parallel_layout.h"

namespace ditbench {

// Makes a backend over `store` for a group: (store, rank in group, group size) -> backend.
using BackendFactory = std::function<c10::intrusive_ptr<c10d::Backend>(
    const c10::intrusive_ptr<c10d::Store>&, int, int)>;

class ParallelContext {
 public:
  // One rank, no communication: reference outputs and single-device runs.
  ParallelContext();
  // This rank's communicators over `store`, each under its own store prefix; a group of size 1
  // gets no backend. Every rank of the trial must call this with the same degrees.
  // `vae_parallel`: the VAE decode is split over the first vae_parallel ranks (vae()).
  // REQUIRES: 1 <= vae_parallel <= the degrees' world size.
  ParallelContext(const ParallelDegrees& degrees, int rank,
                  const c10::intrusive_ptr<c10d::Store>& store, const BackendFactory& create,
                  int vae_parallel = 1);

  ParallelContext(ParallelContext&&) noexcept;
  ParallelContext& operator=(ParallelContext&&) noexcept;
  ~ParallelContext();

  const ParallelDegrees& degrees() const { return degrees_; }
  const RankCoordinates& at() const { return at_; }
  const RankSubgroup& world() const { return world_; }
  const RankSubgroup& cfg() const { return cfg_; }
  const RankSubgroup& pipefusion() const { return pipefusion_; }
  const RankSubgroup& sequence() const { return sequence_; }
  // The tp group: ranks holding the same tokens, each with 1 / tp of every block's heads and
  // MLP (model_zoo/weights/weight_shard.h). Size 1 without tensor parallelism.
  const RankSubgroup& tensor_parallel() const { return tp_; }
  // The ranks that split the VAE decode (`vae_parallel`): the first N of the world. Size 1 when
  // vae_parallel is 1 (every rank decodes the whole latent, as one) or on a rank past the
  // first N (decodes(): false).
  const RankSubgroup& vae() const { return vae_; }
  bool decodes() const { return decodes_; }
  const char* attention_name() const { return attention_->name(); }
  // Bytes this rank has sent through any of its communicators so far.
  std::int64_t bytes_sent() const { return counter_->bytes_sent.load(); }

  // Self-attention of this rank's image tokens over the whole sequence (see AttentionStrategy).
  // `attention` numbers a block's attention calls (0, then 1 for a dual-attention block's
  // second): under PipeFusion each has its own KV cache.
  // REQUIRES: 0 <= attention < kMaxBlockAttentions.
  AttentionOutput Attend(const Qkv& image, const std::optional<Qkv>& joint = std::nullopt,
                         int attention = 0) const;

  // This rank's contiguous part of `full` along `dim` (sequence_size equal chunks; within the
  // current patch when a patch is set).
  // REQUIRES: full.size(dim) divisible by the sequence degree (a validity rule).
  torch::Tensor ShardSequence(const torch::Tensor& full, int64_t dim) const;
  // The whole sequence (or patch) from every rank's part, on every rank; a no-op in
  // whole-sequence mode.
  torch::Tensor GatherSequence(const torch::Tensor& local, int64_t dim) const;
  // The sum of a row-parallel layer's partial outputs over the tp group, on every rank of it
  // (an all-reduce, in place); `partial` itself without tensor parallelism.
  torch::Tensor ReduceTensorParallel(torch::Tensor partial) const;
  // Both CFG halves along `dim` (rows [0, B) negative, [B, 2B) prompt) on every rank.
  torch::Tensor GatherCfg(const torch::Tensor& local, int64_t dim) const;

  // PipeFusion's runner (model_zoo/parallel/pipefusion.h) steers the context between model calls:
  // the tokens in flight are `count` tokens at `offset` of a `total`-token sequence; attention
  // goes through `caches` (the current block's, one per attention call); in whole-sequence
  // mode the tokens are already gathered. Models never call these.
  struct Patch {
    std::int64_t offset = 0, count = 0, total = 0;
  };
  void SetPatch(std::optional<Patch> patch) { patch_ = patch; }
  // The sequence is pipelined as `patches` patches. Under ring attention, synchronous steps
  // then shard it patch-interleaved (each rank: its chunk of every patch), so that a rank's KV
  // cache holds the same tokens in synchronous and patch steps; ShardSequence and
  // GatherSequence stay each other's inverse.
  void SetPatchLayout(int patches) { layout_patches_ = patches; }
  void SetKvCaches(BlockKvCaches* caches) { caches_ = caches; }
  void SetWholeSequence(bool whole) { whole_sequence_ = whole; }

 private:
  ParallelDegrees degrees_;
  RankCoordinates at_;
  RankSubgroup world_, ulysses_, ring_, sequence_, cfg_, pipefusion_, vae_, tp_;
  bool decodes_ = true;
  std::unique_ptr<AttentionStrategy> attention_;
  std::shared_ptr<CommCounter> counter_ = std::make_shared<CommCounter>();
  bool PatchInterleaved() const;

  std::optional<Patch> patch_;
  int layout_patches_ = 1;
  BlockKvCaches* caches_ = nullptr;
  bool whole_sequence_ = false;
};

}  // namespace ditbench
