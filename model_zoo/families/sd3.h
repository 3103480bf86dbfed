// Stable Diffusion 3 (MM-DiT) transformer, parameterised by a ModelConfig (diffusers'
// SD3Transformer2DModel, SD3-medium's configuration): a patch-embedding convolution with 2D
// sin-cos positions cropped from the centre of a pos_embed_max_size^2 table (SD3-medium 192,
// SD3.5-medium 384), text tokens projected to the model width, a conditioning vector from the
// timestep and the pooled text embedding, `depth` joint (double-stream) blocks, the last of
// which only uses the text for keys and values, and an AdaLN-continuous final layer.
// SD3.5-medium's blocks listed in dual_attention_layers add an image-only self-attention
// (model_zoo/layers/joint_block.h).
//
// Sequence parallelism as in Flux (model_zoo/families/flux.h): image tokens sharded, text tokens
// replicated and attended jointly through ParallelContext::Attend.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/layers/dit_layers.h"
#include "model_zoo/layers/joint_block.h"

namespace ditbench {

class Sd3TransformerImpl : public torch::nn::Module {
 public:
  // REQUIRES: config.family == kMmDit.
  explicit Sd3TransformerImpl(const ModelConfig& config);

  // The three phases of DitModel (model_zoo/families/dit_model.h). time: sigma * 1000 per row.
  // REQUIRES: latent patch rows <= config.pos_embed_max_size (a validity rule).
  DitState Embed(const torch::Tensor& latent, const torch::Tensor& time,
                 const Conditioning& conditioning, const ParallelContext& parallel);
  void RunBlock(int index, DitState& state, const ParallelContext& parallel);
  torch::Tensor Finish(DitState& state, const ParallelContext& parallel);

  const ModelConfig& config() const { return config_; }
  int num_blocks() const { return config_.depth; }

 private:
  ModelConfig config_;
  torch::nn::Conv2d pos_embed_proj_{nullptr};
  torch::nn::Linear context_embedder_{nullptr};
  EmbedderMlp timestep_embedder_{nullptr}, text_embedder_{nullptr};
  torch::nn::ModuleList transformer_blocks_;
  torch::nn::Linear norm_out_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear proj_out_{nullptr};
  // The cropped positions on the device at the activations' dtype, kept across forwards.
  torch::Tensor positions_;
  int64_t positions_rows_ = 0;  // the patch rows positions_ was made for
};
TORCH_MODULE(Sd3Transformer);

// The SD3 family as a DitModel: CFG batch with guidance 7.0, flow-matching Euler with shift 3.
// REQUIRES: config.family == kMmDit.
std::unique_ptr<DitModel> MakeSd3(const ModelConfig& config);

// SD3's positions for a grid x grid token map: diffusers' get_2d_sincos_pos_embed over the
// pos_embed_max_size^2 table (base size sample_size / patch; SD3-medium: 192 rows, base 64),
// centre-cropped; [grid * grid, hidden] in fp32.
torch::Tensor Sd3Positions(const ModelConfig& config, int64_t grid);

}  // namespace ditbench
