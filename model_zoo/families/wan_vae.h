// Wan's VAE decoder (diffusers' AutoencoderKLWan, its decode path): latents [B, z, F, h, w] -> a
// clip [B, 3, 1 + 4 (F - 1), s h, s w] on [-1, 1] (Wan 2.1: z 16, s 8; Wan 2.2: z 48, s 16).
//
// Every convolution over time is causal (a kernel of 3 frames sees the frame and the two before
// it). The clip is decoded one latent frame at a time, as diffusers decodes it: each causal
// convolution keeps the last two frames of its input (the feature cache) and prepends them to
// the next frame's, so the decoder's activations are those of one latent frame (4 output
// frames) whatever the clip's length. The first latent frame decodes to one frame (the temporal
// upsamplers skip it), every later one to four.
//
// Layout (diffusers' names, which the module's parameters carry): post_quant_conv (1x1x1), then
// decoder.{conv_in, mid_block (residual, single-head attention per frame, residual), up_blocks
// (widest first; `vae_layers + 1` residual blocks each, then a 2x nearest upsample and a 3x3
// convolution halving the width, with a temporal convolution doubling the frames first in the
// deepest levels), norm_out, conv_out}; norms are RMS norms over channels with one gain each.
//
// Wan 2.2's (is_residual, VaeKind::kWanResidual) differs in its levels and its output: an
// upsampler keeps the width (`up_blocks.i.upsampler`, no list) and the level adds its input,
// each channel repeated over the output's channels, frames and 2x2 pixels (diffusers' DupUp3D);
// conv_out gives 3 x p^2 channels that the decode unfolds into p x p pixels (patch_size p =
// ModelConfig::vae_patch, 2).
#pragma once

#include <torch/torch.h>

#include "model_zoo/families/latent_decoder.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// The causal convolutions' cache while a clip is decoded: one slot per convolution, in the
// order the decoder runs them, holding the last frames of that convolution's input (of this
// rank's band of rows under `vae_parallel`: the split decodes every band frame by frame, and a
// convolution's halo is exchanged after the cached frames are prepended).
struct CausalCache {
  RowSplit split;  // the ranks that decode the clip's rows (one: every row here)
  std::vector<torch::Tensor> slots;
  size_t next = 0;  // the slot of the next causal convolution
  int chunk = 0;    // the latent frame being decoded
  // The next convolution's slot (created empty on the first chunk).
  torch::Tensor& Next();
};

class WanVaeDecoderImpl : public LatentDecoder {
 public:
  // REQUIRES: config.vae_kind is kWan or kWanResidual; 2^(levels - 1) x vae_patch ==
  // config.vae_downsample; every width even (kWan); per-channel latent statistics for
  // config.in_channels channels.
  explicit WanVaeDecoderImpl(const ModelConfig& config);

  // latent * std + mean (WanPipeline's unscaling), then DecodeUnscaled.
  torch::Tensor forward(const torch::Tensor& latent, int tile) override;
  // AutoencoderKLWan.decode(z): frame by frame, clamped to [-1, 1]; with tile > 0 its tiled
  // decode (model_zoo/families/vae_tiles.h), each tile frame by frame with a cache of its own
  // and, as diffusers' tiled decode, not clamped. (diffusers 0.35.2's tiled decode of the
  // residual VAE neither unfolds the patches nor treats the first frame as first; this one does
  // both, as its untiled decode.)
  torch::Tensor DecodeUnscaled(const torch::Tensor& z, int tile) override;

 private:
  // One latent tile [B, C, F, h, w] (this rank's band of its rows under `split`), frame by
  // frame.
  torch::Tensor DecodeFrames(const torch::Tensor& z, const RowSplit& split);
  // [B, 3 p^2, T, H, W] -> [B, 3, T, p H, p W] (diffusers' unpatchify; p = vae_patch).
  torch::Tensor Unpatchify(const torch::Tensor& x) const;

  ModelConfig config_;
  torch::nn::Conv3d post_quant_conv_{nullptr};
  std::shared_ptr<torch::nn::Module> decoder_;
};

// Where its parameters come from in an AutoencoderKLWan folder (the same names).
WeightRules WanVaeWeightRules(const ModelConfig& config);

}  // namespace ditbench
