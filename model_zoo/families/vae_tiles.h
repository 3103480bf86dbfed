// Tiled VAE decoding, shared by every decoder (model_zoo/families/latent_decoder.h): the latent
// is cut into overlapping tiles over its last two dimensions (rows, columns), each tile decoded
// alone, and each blended linearly into its upper and left neighbours, as diffusers' tiled
// decodes do (AutoencoderKL.tiled_decode, AutoencoderKLWan.tiled_decode): tiles of `tile` pixels
// start every 3/4 tile and blend over a quarter tile. The decoder's activations are bounded by
// one tile's.
#pragma once

#include <functional>

#include <torch/torch.h>

#include "model_zoo/parallel/row_split.h"

namespace ditbench {

// `b` with its first `extent` entries along `dim` blended from `a`'s last ones (a's weight falls
// linearly from 1 to 1/extent, b's rises from 0), as diffusers' blend_v / blend_h / blend_t.
torch::Tensor BlendInto(const torch::Tensor& a, torch::Tensor b, int64_t extent, int64_t dim);

// `decode` maps a latent tile to pixels `downsample` times larger in its last two dimensions.
// A latent no larger than one tile is decoded in one piece. Over a split (`vae_parallel`), each
// rank decodes the tiles it owns (RowSplit::Owns) and every rank blends all of them.
// REQUIRES: tile > 0 and a multiple of 4 x downsample.
torch::Tensor DecodeInTiles(const torch::Tensor& z, int tile, int downsample,
                            const std::function<torch::Tensor(const torch::Tensor&)>& decode,
                            const RowSplit& split = RowSplit());

}  // namespace ditbench
