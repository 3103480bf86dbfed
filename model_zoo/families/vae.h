// The VAE decoder (diffusers' AutoencoderKL decoder): latents -> RGB images, for scope
// `pipeline` (denoise + decode). conv_in, a mid block (two ResNet blocks around a single-head
// self-attention), up blocks from the widest level down, each `layers + 1` ResNet blocks and a
// nearest-neighbour 2x upsample (all but the last), then GroupNorm, SiLU and conv_out to 3
// channels. The latent is unscaled first: z / scaling_factor + shift_factor.
//
// Shapes come from the DiT's ModelConfig: latent channels (4 for PixArt's SD VAE, 16 for the
// Flux and SD3 VAEs), level widths, ResNet blocks per level and the scaling and shift factors.
// Under `vae_parallel` (LatentDecoder::SetRowSplit) the decode is split by latent rows.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "model_zoo/families/latent_decoder.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/weights/weight_rules.h"

namespace ditbench {

class VaeResnetBlockImpl : public torch::nn::Module {
 public:
  VaeResnetBlockImpl(int64_t in, int64_t out, int64_t groups);
  // x: this rank's band of rows under `split` (the whole activation when nothing is split).
  torch::Tensor forward(const torch::Tensor& x, const RowSplit& split);

 private:
  torch::nn::GroupNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv_shortcut_{nullptr};
};
TORCH_MODULE(VaeResnetBlock);

class VaeAttentionImpl : public torch::nn::Module {
 public:
  VaeAttentionImpl(int64_t channels, int64_t groups);
  torch::Tensor forward(const torch::Tensor& x, const RowSplit& split);

 private:
  torch::nn::GroupNorm group_norm_{nullptr};
  torch::nn::Linear to_q_{nullptr}, to_k_{nullptr}, to_v_{nullptr}, to_out_{nullptr};
};
TORCH_MODULE(VaeAttention);

class VaeDecoderImpl : public LatentDecoder {
 public:
  // REQUIRES: 2^(levels - 1) == config.vae_downsample; every width divisible by
  // config.vae_norm_groups.
  explicit VaeDecoderImpl(const ModelConfig& config);
  // latent: [B, latent channels, h, w] as the sampler leaves it -> [B, 3, 8h, 8w]; in tiles of
  // `tile` pixels (DecodeTiled) when tile > 0.
  torch::Tensor forward(const torch::Tensor& latent, int tile = 0) override;
  torch::Tensor DecodeUnscaled(const torch::Tensor& z, int tile) override {
    return tile > 0 ? DecodeTiled(z, tile) : Decode(z);
  }
  // The decode of an already unscaled latent z (diffusers' AutoencoderKL.decode), split by
  // rows over row_split()'s ranks when it splits.
  torch::Tensor Decode(const torch::Tensor& z);
  // The same in overlapping tiles of `tile` pixels per side (model_zoo/families/vae_tiles.h).
  // REQUIRES: tile a multiple of 4 x vae_downsample.
  torch::Tensor DecodeTiled(const torch::Tensor& z, int tile);

 private:
  // z: this rank's band of the latent's rows under `split`.
  torch::Tensor DecodeBand(const torch::Tensor& z, const RowSplit& split);

  ModelConfig config_;
  torch::nn::Conv2d post_quant_conv_{nullptr}, conv_in_{nullptr}, conv_out_{nullptr};
  torch::nn::ModuleList mid_resnets_, up_resnets_, upsamplers_;
  VaeAttention mid_attention_{nullptr};
  torch::nn::GroupNorm conv_norm_out_{nullptr};
  std::vector<int> resnets_per_level_;
};
TORCH_MODULE(VaeDecoder);

// Where VaeDecoder's parameters come from in an AutoencoderKL folder.
WeightRules VaeWeightRules(const ModelConfig& config);

}  // namespace ditbench
