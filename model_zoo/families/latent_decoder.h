// The VAE decode of scope `pipeline` and of `ditbench forward` on a VAE folder, whatever the VAE:
// an image's AutoencoderKL (model_zoo/families/vae.h) or a clip's AutoencoderKLWan (Wan 2.1's or
// Wan 2.2's residual one, model_zoo/families/wan_vae.h) or AutoencoderKLHunyuanVideo
// (model_zoo/families/hunyuan_video_vae.h), chosen by ModelConfig::vae_kind. Adding a VAE adds
// its row to latent_decoder.cc.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "model_zoo/parallel/row_split.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/weights/weight_rules.h"

namespace ditbench {

class LatentDecoder : public torch::nn::Module {
 public:
  // latent: as the sampler leaves it ([B, C, h, w], or [B, C, F, h, w] for a clip) -> pixels on
  // [-1, 1] ([B, 3, H, W] or [B, 3, frames, H, W]), unscaled first as the family's pipeline
  // does; in overlapping tiles of `tile` pixels per side when tile > 0.
  virtual torch::Tensor forward(const torch::Tensor& latent, int tile) = 0;
  // The decode of an already unscaled latent, as diffusers' decode(z) (tile as above).
  virtual torch::Tensor DecodeUnscaled(const torch::Tensor& z, int tile) = 0;

  // `vae_parallel`: the decode split over `split`'s ranks (model_zoo/parallel/row_split.h),
  // every rank of it returning the whole result. Untiled, each rank decodes a band of the
  // latent's rows with its neighbours' halos; tiled, each rank decodes every parts()-th tile and
  // the tiles are shared before they are blended. Either equals the one-rank decode.
  void SetRowSplit(RowSplit split) { split_ = std::move(split); }
  const RowSplit& row_split() const { return split_; }

 protected:
  RowSplit split_;
};

// The decoder of `config`'s VAE, parameters in the default dtype.
std::shared_ptr<LatentDecoder> MakeLatentDecoder(const ModelConfig& config);
// Where its parameters come from in a diffusers VAE folder.
WeightRules LatentDecoderWeightRules(const ModelConfig& config);

}  // namespace ditbench
