// A VAE decode split by rows over a group of ranks (`vae_parallel: N` in a sweep). Each rank
// holds a contiguous band of rows (the last-but-one dimension of [B, C, h, w] or [B, C, F, h, w])
// of every activation, and each layer computes on its band exactly what it computes on the
// whole activation:
// - a convolution sees `padding` rows of each neighbour's band (its halo) and, at the image's
//   top and bottom, the padding the layer pads with (zeros, or the edge row repeated);
// - a GroupNorm's mean and variance are over the whole activation (every band's sums,
//   all-reduced, in two passes and in fp32);
// - an attention's keys and values come from every band (all-gathered); its queries stay local.
// Bands may differ by a row (ForRows): 90 latent rows (720 px / 8) split over 8 ranks.
// Pointwise layers (activations, 1x1 convolutions, per-pixel channel norms, nearest upsampling)
// need nothing. With one rank (the default) every call is the layer's own computation, so a
// decoder written against RowSplit is the unsplit decoder when nothing is split.
//
// Thread-safety: as its group's backend (one per rank, not shared between threads).
#pragma once

#include <vector>

#include <torch/torch.h>

#include "model_zoo/parallel/parallel_attention.h"

namespace ditbench {

class RowSplit {
 public:
  RowSplit() = default;  // one rank: nothing is split
  explicit RowSplit(RankSubgroup group) : group_(std::move(group)) {}

  bool split() const { return group_.size > 1; }
  int parts() const { return group_.size; }
  int part() const { return group_.rank; }
  const RankSubgroup& group() const { return group_; }

  // The split of a latent of `rows` rows: parts() contiguous bands, the first rows % parts()
  // of them one row taller (90 rows over 8 ranks: 12, 12, 11, ...). Every activation of the
  // decode keeps the latent's proportions (a band twice as tall after each 2x upsampling).
  // REQUIRES: rows >= parts() (a validity rule).
  RowSplit ForRows(int64_t rows) const;

  // This rank's band of `full`'s rows.
  // REQUIRES: split ForRows(full's rows).
  torch::Tensor Shard(const torch::Tensor& full) const;
  // Every rank's band in rank order: the whole rows, on every rank of the group.
  torch::Tensor Gather(const torch::Tensor& band) const;

  // What a layer pads the image's top and bottom with.
  enum class Edge { kZeros, kReplicate };
  // `band` with `halo` rows of the bands above and below it, or the image's padding at its top
  // and bottom.
  // REQUIRES: halo <= band rows.
  torch::Tensor WithHalo(const torch::Tensor& band, int64_t halo, Edge edge) const;

  // A zero-padded convolution of stride 1 over the band, as over the whole activation.
  torch::Tensor Conv(torch::nn::Conv2d conv, const torch::Tensor& band) const;
  torch::Tensor Conv(torch::nn::Conv3d conv, const torch::Tensor& band) const;
  // A GroupNorm with the whole activation's statistics.
  torch::Tensor Norm(torch::nn::GroupNorm norm, const torch::Tensor& band) const;

  // Owner-computes for independent pieces (a tiled decode's tiles): piece k belongs to rank
  // k % parts(). Share(k, piece, like) returns piece k on every rank: its owner's `piece`
  // (undefined elsewhere), broadcast with its shape; `like` gives the dtype, device and the
  // number of dimensions.
  bool Owns(int64_t piece) const { return piece % parts() == part(); }
  torch::Tensor Share(int64_t piece, const torch::Tensor& mine, const torch::Tensor& like) const;

 private:
  // `band`'s rows per latent row of this rank's band (1 at the latent, 2 after one upsampling).
  int64_t Scale(const torch::Tensor& band) const;

  RankSubgroup group_;
  std::vector<int64_t> bands_;  // latent rows per rank (ForRows)
};

}  // namespace ditbench
