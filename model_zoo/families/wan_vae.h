// Wan 2.1's VAE decoder (diffusers' AutoencoderKLWan, its decode path): latents [B, 16, F, h, w]
// -> a clip [B, 3, 1 + 4 (F - 1), 8h, 8w] on [-1, 1].
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
#pragma once

#include <torch/torch.h>

#include "model_zoo/families/latent_decoder.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// The causal convolutions' cache while a clip is decoded: one slot per convolution, in the
// order the decoder runs them, holding the last frames of that convolution's input.
struct CausalCache {
  std::vector<torch::Tensor> slots;
  size_t next = 0;  // the slot of the next causal convolution
  int chunk = 0;    // the latent frame being decoded
  // The next convolution's slot (created empty on the first chunk).
  torch::Tensor& Next();
};

class WanVaeDecoderImpl : public LatentDecoder {
 public:
  // REQUIRES: config.vae_kind == VaeKind::kWan; 2^(levels - 1) == config.vae_downsample; every
  // width even; per-channel latent statistics for config.in_channels channels.
  explicit WanVaeDecoderImpl(const ModelConfig& config);

  // latent * std + mean (WanPipeline's unscaling), then DecodeUnscaled.
  torch::Tensor forward(const torch::Tensor& latent, int tile) override;
  // AutoencoderKLWan.decode(z): frame by frame, clamped to [-1, 1]; with tile > 0 its tiled
  // decode (model_zoo/families/vae_tiles.h), each tile frame by frame with a cache of its own
  // and, as diffusers' tiled decode, not clamped.
  torch::Tensor DecodeUnscaled(const torch::Tensor& z, int tile) override;

 private:
  // One latent tile [B, C, F, h, w], frame by frame.
  torch::Tensor DecodeFrames(const torch::Tensor& z);

  ModelConfig config_;
  torch::nn::Conv3d post_quant_conv_{nullptr};
  std::shared_ptr<torch::nn::Module> decoder_;
};

// Where its parameters come from in an AutoencoderKLWan folder (the same names).
WeightRules WanVaeWeightRules(const ModelConfig& config);

}  // namespace ditbench
