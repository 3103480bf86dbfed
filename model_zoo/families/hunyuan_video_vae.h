// HunyuanVideo's VAE decoder (diffusers' AutoencoderKLHunyuanVideo, its decode path): latents
// [B, 16, F, h, w] -> a clip [B, 3, 1 + 4 (F - 1), 8h, 8w].
//
// Convolutions over time are causal with the first frame replicated before the clip (and the
// edges replicated in space); the mid block's single-head attention over all the clip's pixels
// is causal over frames. Upsamplers double rows and columns and, in the two levels before the
// last, the frames after the first. As diffusers decodes by default (`use_framewise_decoding`),
// a clip of more than 4 latent frames is decoded in temporal tiles of 5 latent frames every 3,
// each tile's first output frame dropped (but the first tile's) and 4 frames blended with the
// previous tile; spatial tiles (`vae_tile`) as model_zoo/families/vae_tiles.h, inside each
// temporal tile. Under `vae_parallel` each temporal tile is split by rows (or its spatial tiles
// shared out among the ranks).
//
// Layout (diffusers' names): post_quant_conv (1x1x1), decoder.{conv_in, mid_block (resnets,
// attentions), up_blocks (widest first, `vae_layers + 1` resnets each, upsamplers), conv_norm_out,
// conv_out}; every causal convolution's weights under `.conv`.
#pragma once

#include <torch/torch.h>

#include "model_zoo/families/latent_decoder.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {

class HunyuanVideoVaeDecoderImpl : public LatentDecoder {
 public:
  // REQUIRES: config.vae_kind == VaeKind::kHunyuanVideo; vae_temporal 4; 2^(levels - 1) ==
  // vae_downsample >= 4; every width a multiple of vae_norm_groups.
  explicit HunyuanVideoVaeDecoderImpl(const ModelConfig& config);

  // latent / scaling_factor (HunyuanVideoPipeline's unscaling), then DecodeUnscaled.
  torch::Tensor forward(const torch::Tensor& latent, int tile) override;
  // AutoencoderKLHunyuanVideo.decode(z) with its default temporal tiling, spatially tiled when
  // tile > 0 (as after enable_tiling with tiles of `tile` pixels every 3/4 tile). Not clamped.
  torch::Tensor DecodeUnscaled(const torch::Tensor& z, int tile) override;

 private:
  // One temporal tile, spatially tiled when tile > 0.
  torch::Tensor DecodeSpatial(const torch::Tensor& z, int tile);
  // Untiled in space, split by rows over `split`'s ranks when it splits.
  torch::Tensor DecodeWhole(const torch::Tensor& z, const RowSplit& split);

  ModelConfig config_;
  torch::nn::Conv3d post_quant_conv_{nullptr};
  std::shared_ptr<torch::nn::Module> decoder_;
};

// Where its parameters come from in an AutoencoderKLHunyuanVideo folder (the same names).
WeightRules HunyuanVideoVaeWeightRules(const ModelConfig& config);

}  // namespace ditbench
