// Flux.1 (dev and schnell) transformer, parameterised by a ModelConfig (diffusers'
// FluxTransformer2DModel): 2x2-packed latents embedded by one linear layer, T5 text tokens,
// a conditioning vector from the timestep, the pooled CLIP embedding and (dev) the distilled
// guidance strength; `depth` double-stream (MM-DiT) blocks, then `single_blocks` single-stream
// blocks; rotary positions over (text index, patch row, patch column); an AdaLN-continuous
// final layer.
//
// Sequence parallelism: every rank embeds the full latent and keeps its shard of image tokens;
// text tokens stay replicated and reach attention as the joint tokens of
// ParallelContext::Attend, in the double-stream blocks (model_zoo/layers/joint_block.h) and in
// the single-stream blocks (model_zoo/layers/single_stream_block.h) alike. The rotary table of the
// whole image is built once per grid and each block takes this rank's rows of it through
// ParallelContext::ShardSequence, so it follows the token shard, PipeFusion's patches included.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/layers/dit_layers.h"
#include "model_zoo/layers/joint_block.h"

namespace ditbench {

class FluxTransformerImpl : public torch::nn::Module {
 public:
  // REQUIRES: config.family == kFlux, rope axes summing to the head dimension.
  explicit FluxTransformerImpl(const ModelConfig& config);

  // The three phases of DitModel (model_zoo/families/dit_model.h). time: sigma * 1000 per row.
  DitState Embed(const torch::Tensor& latent, const torch::Tensor& time,
                 const Conditioning& conditioning, const ParallelContext& parallel);
  void RunBlock(int index, DitState& state, const ParallelContext& parallel);
  // `cache: teacache`'s input (DitModel::TeaCacheInput).
  torch::Tensor TeaCacheInput(const DitState& state);
  torch::Tensor Finish(DitState& state, const ParallelContext& parallel);

  const ModelConfig& config() const { return config_; }
  int num_blocks() const { return config_.depth + config_.single_blocks; }

 private:
  ModelConfig config_;
  torch::nn::Linear x_embedder_{nullptr}, context_embedder_{nullptr};
  EmbedderMlp timestep_embedder_{nullptr}, guidance_embedder_{nullptr}, text_embedder_{nullptr};
  torch::nn::ModuleList transformer_blocks_, single_transformer_blocks_;
  torch::nn::Linear norm_out_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear proj_out_{nullptr};
  // Rotary tables of the whole sequence, kept across forwards (built on the device); rebuilt
  // when the grid or device changes.
  RotaryTable text_rotary_, image_rotary_;
  int64_t rotary_rows_ = -1, rotary_cols_ = -1;
};
TORCH_MODULE(FluxTransformer);

// The Flux family as a DitModel: distilled guidance 3.5 (dev) or none (schnell), flow-matching
// Euler with the resolution-dependent shift (dev). REQUIRES: config.family == kFlux.
std::unique_ptr<DitModel> MakeFlux(const ModelConfig& config);

// [B, C, 2 rows, 2 cols] latents <-> [B, rows * cols, 4C] tokens (diffusers' _pack_latents
// order).
torch::Tensor PackLatents(const torch::Tensor& latent);
torch::Tensor UnpackLatents(const torch::Tensor& tokens, int64_t rows, int64_t cols,
                            int64_t channels);
// Flux's image positions: (0, row, column) for each of rows x cols tokens, row-major.
torch::Tensor FluxImageIds(int64_t rows, int64_t cols, const torch::TensorOptions& options);

}  // namespace ditbench
