// Sequence-parallel attention and the communication it needs.
//
// Ulysses: every rank of the sequence-parallel group holds a contiguous slice of the image
// tokens (whole patch rows). Before attention an all-to-all trades the token split for a head
// split, so each rank attends over the full sequence with heads/P heads; a second all-to-all
// trades back. Exact: the output equals single-rank attention up to floating-point order.
#pragma once

#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace ditbench {

// A communicator over a subset of the trial's ranks. `backend` is null when size is 1.
struct RankSubgroup {
  c10::intrusive_ptr<c10d::Backend> backend;
  int rank = 0;
  int size = 1;
};

// Attention of [B, N, H, d] queries over [B, M, H, d] keys and values; returns [B, N, H, d].
torch::Tensor Attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// Ulysses self-attention on local tokens. qkv: [B, n, 3, H, d] for this rank's n tokens.
// Returns [B, n, H, d]. REQUIRES: H divisible by group.size.
torch::Tensor UlyssesSelfAttention(const torch::Tensor& qkv, const RankSubgroup& group);

// Concatenates every rank's `local` along `dim`, in rank order (an all-gather).
torch::Tensor AllGather(const torch::Tensor& local, int64_t dim, const RankSubgroup& group);

}  // namespace ditbench
