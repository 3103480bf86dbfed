// HunyuanVideo text-to-video transformer, parameterised by a ModelConfig (diffusers'
// HunyuanVideoTransformer3DModel): a 3D patch embedding (patch (patch_t, patch, patch)); a token
// refiner over the LLaMA text (its own timestep + mean-pooled-text embedding, then
// `refiner_blocks` self-attention blocks with gated residuals); a conditioning vector from the
// timestep, the pooled CLIP embedding and the distilled guidance; Flux's blocks after it,
// `depth` dual-stream then `single_blocks` single-stream (model_zoo/layers/joint_block.h,
// model_zoo/layers/single_stream_block.h), with 3D rotary positions (theta 256, axes over frame,
// row and column) on the video tokens only; an AdaLN-continuous final layer and unpatchify.
//
// The text's padding: diffusers' forward takes an encoder_attention_mask (ones, then zeros for
// padding) and masks the padded tokens as attention keys in the refiner and in every block, so
// they never reach a video token. This module attends to every text token it is given: `ditbench
// forward` gives each row its unmasked tokens only, which is the same function; trials draw
// prompts of text_tokens unpadded tokens, the work diffusers does over its padded 256.
//
// Sequence parallelism, as Flux: every rank embeds the whole clip and keeps its shard of the
// video tokens (frame-major, then row, then column); the refined text tokens are replicated and
// reach ParallelContext::Attend as its joint tokens (Ulysses, ring, USP); each block takes this
// rank's rows of the rotary table through ParallelContext::ShardSequence. The refiner runs
// whole on every rank (the text is not split).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/layers/dit_layers.h"
#include "model_zoo/weights/weight_rules.h"

namespace ditbench {

// One block of the token refiner (diffusers' HunyuanVideoIndividualTokenRefinerBlock): affine
// layer norm, self-attention over the text, affine layer norm, SiLU MLP; both residuals gated
// by a projection of the refiner's embedding.
class HunyuanVideoRefinerBlockImpl : public torch::nn::Module {
 public:
  HunyuanVideoRefinerBlockImpl(int64_t dim, int64_t heads, int64_t mlp_ratio);
  // x: [B, T, D] text tokens; temb: [B, D] the refiner's embedding.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& temb);

 private:
  int64_t heads_;
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, to_out_{nullptr};
  torch::nn::Linear ff_fc1_{nullptr}, ff_fc2_{nullptr};
  torch::nn::Linear norm_out_{nullptr};  // gates of attention and MLP
};
TORCH_MODULE(HunyuanVideoRefinerBlock);

// The token refiner (diffusers' HunyuanVideoTokenRefiner): [B, T, text_dim] prompt embeddings
// -> [B, T, D] tokens.
class HunyuanVideoTokenRefinerImpl : public torch::nn::Module {
 public:
  explicit HunyuanVideoTokenRefinerImpl(const ModelConfig& config);
  // text: every token a prompt token; time: [B] diffusers' timestep.
  torch::Tensor forward(const torch::Tensor& text, const torch::Tensor& time);

 private:
  EmbedderMlp time_embedder_{nullptr}, text_embedder_{nullptr};
  torch::nn::Linear proj_in_{nullptr};
  torch::nn::ModuleList blocks_;
};
TORCH_MODULE(HunyuanVideoTokenRefiner);

class HunyuanVideoTransformerImpl : public torch::nn::Module {
 public:
  // REQUIRES: config.family == kHunyuanVideo, rope axes summing to the head dimension.
  explicit HunyuanVideoTransformerImpl(const ModelConfig& config);

  // The three phases of DitModel (model_zoo/families/dit_model.h). latent: [B, C, F, H, W]
  // (full, identical on every rank); time: [B] (diffusers' timestep, 0 to 1000); guidance: the
  // model's input as HunyuanVideoPipeline passes it (guidance_scale x 1000). The output of
  // Finish has the latent's shape.
  // REQUIRES: F % patch_t == 0, H and W multiples of patch, the video token count a multiple
  // of the sequence-parallel degree.
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
  torch::nn::Conv3d x_embedder_{nullptr};  // applied as one GEMM over the patches
  HunyuanVideoTokenRefiner context_embedder_{nullptr};
  EmbedderMlp timestep_embedder_{nullptr}, text_embedder_{nullptr}, guidance_embedder_{nullptr};
  torch::nn::ModuleList transformer_blocks_, single_transformer_blocks_;
  torch::nn::Linear norm_out_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear proj_out_{nullptr};
  // The token grid of the latent being embedded (latent frames / patch_t, patch rows, patch
  // columns) and its rotary table, kept across forwards on the device; rebuilt when the grid
  // or the device changes.
  std::array<int64_t, 3> grid_ = {0, 0, 0};
  RotaryTable rotary_;
};
TORCH_MODULE(HunyuanVideoTransformer);

// HunyuanVideo's 3D rotary table for a frames x rows x cols token grid as diffusers'
// HunyuanVideoRotaryPosEmbed builds it (frequencies and angles in fp32, base `theta`, the
// config's rope_theta, 256 by default): [frames *
// rows * cols, head_dim / 2] complex64, frame-major; axes[0] / 2 pairs rotate by the frame,
// then axes[1] / 2 by the row, axes[2] / 2 by the column.
RotaryTable HunyuanVideoRotaryTable(const std::array<int, 3>& axes, int64_t frames, int64_t rows,
                                    int64_t cols, torch::Device device, double theta = 256.0);

// HunyuanVideoPipeline's sigmas: linspace(1, 0, steps + 1) without its last, shifted by
// FlowMatchEulerDiscreteScheduler's `shift` (7.0 in the model's scheduler_config.json), each
// computed in fp32 as numpy computes them; the sampler is flow-matching Euler over them.
std::vector<double> HunyuanVideoSigmas(int steps, double shift = 7.0);

// The HunyuanVideo family as a DitModel: distilled guidance 6.0 (one forward per step, no
// negative prompt: true_cfg_scale 1.0), flow-matching Euler with shift 7.0, as
// HunyuanVideoPipeline runs them. REQUIRES: config.family == kHunyuanVideo.
std::unique_ptr<DitModel> MakeHunyuanVideo(const ModelConfig& config);
WeightRules HunyuanVideoWeightRules(const ModelConfig& config);

}  // namespace ditbench
