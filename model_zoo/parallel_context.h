// The parallel side of one trial rank: every communicator of the dp x cfg x pipefusion x ring x
// ulysses topology (model_zoo/parallel_layout.h) and the attention strategy they imply, built
// once per trial. A model asks it to attend, to keep this rank's part of the sequence and to
// gather the sequence back; it never looks at the degrees itself, so the same model code runs
// locally, under Ulysses, ring or USP. PipeFusion is a runner over the model's block interface
// (model_zoo/dit_model.h) that uses the pipefusion group.
//
// Thread-safety: one context per rank; not shared between threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "model_zoo/parallel_attention.h"
#include "model_zoo/parallel_layout.h"

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
  // Throws std::invalid_argument for degrees this build cannot run (ring > 1).
  ParallelContext(const ParallelDegrees& degrees, int rank,
                  const c10::intrusive_ptr<c10d::Store>& store, const BackendFactory& create);

  ParallelContext(ParallelContext&&) noexcept;
  ParallelContext& operator=(ParallelContext&&) noexcept;
  ~ParallelContext();

  const ParallelDegrees& degrees() const { return degrees_; }
  const RankCoordinates& at() const { return at_; }
  const RankSubgroup& world() const { return world_; }
  const RankSubgroup& cfg() const { return cfg_; }
  const RankSubgroup& pipefusion() const { return pipefusion_; }
  const RankSubgroup& sequence() const { return sequence_; }
  const char* attention_name() const { return attention_->name(); }

  // Self-attention of this rank's image tokens over the whole sequence (see AttentionStrategy).
  AttentionOutput Attend(const Qkv& image, const std::optional<Qkv>& joint = std::nullopt) const;

  // This rank's contiguous part of `full` along `dim` (sequence_size equal chunks).
  // REQUIRES: full.size(dim) divisible by the sequence degree (a validity rule).
  torch::Tensor ShardSequence(const torch::Tensor& full, int64_t dim) const;
  // The whole sequence from every rank's part, on every rank.
  torch::Tensor GatherSequence(const torch::Tensor& local, int64_t dim) const;
  // Both CFG halves along `dim` (rows [0, B) negative, [B, 2B) prompt) on every rank.
  torch::Tensor GatherCfg(const torch::Tensor& local, int64_t dim) const;

 private:
  ParallelDegrees degrees_;
  RankCoordinates at_;
  RankSubgroup world_, ulysses_, ring_, sequence_, cfg_, pipefusion_;
  std::unique_ptr<AttentionStrategy> attention_;
};

}  // namespace ditbench
