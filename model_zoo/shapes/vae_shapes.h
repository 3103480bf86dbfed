// The VAE decoders' shapes, from the model's VAE configuration alone (no weights), one walk of
// each decoder's levels per quantity: its exact parameter count (plan's memory, the weights
// folder's check before allocating) and the FLOPs of a decode (what `plan` prices a `scope:
// pipeline` trial's decode by, and what the cost model fits its decode terms on, so that
// decoders of different cost per pixel are not one price per megapixel).
//
// FLOPs are counted as FlopCounterMode counts diffusers' decode: 2 x multiply-adds of every
// convolution and linear (biases left out) and of the attention's two products; norms,
// activations, upsampling and blending are left out. The decode as ditbench and diffusers run it
// by default: AutoencoderKLWan (Wan 2.1's, or Wan 2.2's residual one) a latent frame at a time
// (each temporal upsampler's convolution skips the first latent frame), AutoencoderKLHunyuanVideo
// in its temporal tiles of 5 latent frames every 3 when a clip has more than 4. Spatial tiles
// (`vae_tile`) are not counted: their overlap adds up to about 1/3 more.
#pragma once

#include <cstdint>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// The parameters of the VAE decoder of `model` (model_zoo/families/latent_decoder.h; exact).
std::int64_t VaeDecoderParameterCount(const ModelConfig& model);

// FLOPs of decoding one sample (an image, or a clip of shape.frames frames) of `shape`.
double VaeDecodeFlops(const ModelConfig& model, const ImageShape& shape);

// The collectives of one sample's decode split by rows (`vae_parallel` > 1, untiled;
// model_zoo/parallel/row_split.h), each small but for the last: a halo exchange per 3x3
// convolution, two all-reduces per GroupNorm (AutoencoderKL's and AutoencoderKLHunyuanVideo's;
// Wan's norms are per pixel), a gather per mid-block attention, for every pass of the decoder
// (AutoencoderKLWan: each latent frame; AutoencoderKLHunyuanVideo: each temporal tile), then
// the gather of the decoded sample.
std::int64_t VaeSplitCollectives(const ModelConfig& model, const ImageShape& shape);

// The spatial tiles a decode in tiles of `tile` pixels cuts one frame's latent into, as
// model_zoo/families/vae_tiles.h cuts them (a tile every 3/4 tile; 1 when the latent fits in
// one tile).
// REQUIRES: tile >= 4 x model.vae_downsample.
int VaeDecodeTiles(const ModelConfig& model, const ImageShape& shape, int tile);

// The largest share of a decode one of `parts` ranks does under vae_parallel: its band of the
// latent's rows (untiled: ceil(rows / parts) of them) or its tiles (tile > 0: ceil(tiles / parts)
// of them). 1 when parts is 1.
double VaeSplitShare(const ModelConfig& model, const ImageShape& shape, int tile, int parts);

}  // namespace ditbench
