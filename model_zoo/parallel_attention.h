// Attention strategies: how a sequence-parallel group attends over a sequence whose image tokens
// are split across its ranks. A model never picks one: it asks its ParallelContext to attend
// (model_zoo/parallel_context.h), and the context holds the strategy the trial's degrees imply.
//
// - LocalAttention: one rank holds the whole sequence.
// - UlyssesAttention: every rank holds a contiguous slice of the image tokens (whole patch
//   rows). An all-to-all trades the token split for a head split, so each rank attends over the
//   full sequence with H/P heads; a second all-to-all trades back. Exact: the output equals
//   single-rank attention up to floating-point order.
// Joint attention (MM-DiT, Flux): text tokens, replicated on every rank of the group, are
// attended together with the image tokens; each strategy returns the text tokens' output whole.
//
// To add a strategy (ring, USP): a class here, and its selection in MakeAttentionStrategy.
#pragma once

#include <memory>
#include <optional>

#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace ditbench {

// A communicator over a subset of the trial's ranks. `backend` is null when size is 1.
struct RankSubgroup {
  c10::intrusive_ptr<c10d::Backend> backend;
  int rank = 0;
  int size = 1;
};

// Queries, keys and values, each [B, tokens, H, d]. `packed`, when defined, is the same data
// as one [B, tokens, 3, H, d] tensor (a fused projection), which saves Ulysses a copy.
struct Qkv {
  torch::Tensor q, k, v;
  torch::Tensor packed;
  // Views of one fused projection [B, tokens, 3, H, d].
  static Qkv FromPacked(const torch::Tensor& packed);
};

// The output of one attention call: this rank's image tokens [B, n, H, d] and, for joint
// attention, all text tokens [B, T, H, d] (identical on every rank of the group).
struct AttentionOutput {
  torch::Tensor image;
  torch::Tensor text;
};

class AttentionStrategy {
 public:
  virtual ~AttentionStrategy() = default;
  // Self-attention of this rank's image tokens over the whole sequence, with `joint` text
  // tokens (replicated on every rank) attended jointly when given.
  virtual AttentionOutput Attend(const Qkv& image, const std::optional<Qkv>& joint) const = 0;
  virtual const char* name() const = 0;
};

// Attention of [B, N, H, d] queries over [B, M, H, d] keys and values; returns [B, N, H, d].
torch::Tensor Attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// The strategy for a sequence group made of `ulysses` and `ring` groups (sizes 1 when unused).
// Throws std::invalid_argument for a combination this build does not implement (ring > 1).
std::unique_ptr<AttentionStrategy> MakeAttentionStrategy(const RankSubgroup& ulysses,
                                                         const RankSubgroup& ring);

// Concatenates every rank's `local` along `dim`, in rank order (an all-gather).
torch::Tensor AllGather(const torch::Tensor& local, int64_t dim, const RankSubgroup& group);

}  // namespace ditbench
