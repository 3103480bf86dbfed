// Wan 2.1 text-to-video transformer, parameterised by a ModelConfig (diffusers'
// WanTransformer3DModel): a 3D patch embedding (patch (patch_t, patch, patch)), one time
// embedding projected to six modulations per block added to each block's scale-shift table,
// umT5 text projected by a GELU(tanh) MLP; blocks of self-attention (RMS norm of queries and
// keys across all heads, 3D rotary positions over frame, row and column), cross-attention to
// the text (after an affine layer norm), and a GELU(tanh) MLP, with diffusers' layer norms and
// modulations computed in fp32; a modulated final projection and unpatchify.
//
// Sequence parallelism: every rank embeds the whole clip and keeps its shard of the tokens
// (frame-major, then row, then column); self-attention goes through the ParallelContext
// (Ulysses, ring, USP), each block taking this rank's rows of the rotary table through
// ShardSequence; cross-attention to the replicated text is local, as PixArt's.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/layers/dit_layers.h"
#include "model_zoo/weights/weight_rules.h"

namespace ditbench {

class WanBlockImpl : public torch::nn::Module {
 public:
  explicit WanBlockImpl(const ModelConfig& config);
  // x: this rank's tokens [B, n, D]; t6: the time projection [B, 6, D]; text: [B, T, D];
  // rotary: this rank's rows of the table.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& t6, const torch::Tensor& text,
                        const RotaryTable& rotary, const ParallelContext& parallel);

 private:
  int64_t heads_;
  torch::Tensor scale_shift_table_;  // [1, 6, D]
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr}, norm3_{nullptr};
  torch::nn::Linear qkv_{nullptr}, to_out_{nullptr};
  RmsNorm norm_q_{nullptr}, norm_k_{nullptr};
  torch::nn::Linear cross_q_{nullptr}, cross_kv_{nullptr}, cross_out_{nullptr};
  RmsNorm cross_norm_q_{nullptr}, cross_norm_k_{nullptr};
  torch::nn::Linear ffn_fc1_{nullptr}, ffn_fc2_{nullptr};
};
TORCH_MODULE(WanBlock);

class WanTransformerImpl : public torch::nn::Module {
 public:
  // REQUIRES: config.family == kWan.
  explicit WanTransformerImpl(const ModelConfig& config);

  // The three phases of DitModel (model_zoo/families/dit_model.h). latent: [B, C, F, H, W]
  // (full, identical on every rank); time: [B] (diffusers' timestep, 0 to 1000); the output of
  // Finish has the latent's shape.
  // REQUIRES: F % patch_t == 0, H and W multiples of patch, the token count a multiple of the
  // sequence-parallel degree.
  DitState Embed(const torch::Tensor& latent, const torch::Tensor& time,
                 const Conditioning& conditioning, const ParallelContext& parallel);
  void RunBlock(int index, DitState& state, const ParallelContext& parallel);
  // `cache: teacache`'s input (DitModel::TeaCacheInput).
  torch::Tensor TeaCacheInput(const DitState& state);
  torch::Tensor Finish(DitState& state, const ParallelContext& parallel);

  const ModelConfig& config() const { return config_; }
  int num_blocks() const { return static_cast<int>(blocks_->size()); }

 private:
  ModelConfig config_;
  torch::nn::Conv3d patch_embedding_{nullptr};  // applied as one GEMM over the patches
  EmbedderMlp time_embedder_{nullptr};
  torch::nn::Linear time_proj_{nullptr}, text_fc1_{nullptr}, text_fc2_{nullptr};
  torch::nn::ModuleList blocks_;
  torch::nn::LayerNorm norm_out_{nullptr};
  torch::nn::Linear proj_out_{nullptr};
  torch::Tensor scale_shift_table_;  // [1, 2, D]
  // The token grid of the latent being embedded (patches per frame, row, column; DitState
  // carries a square grid only) and its rotary table, kept across forwards on the device;
  // rebuilt when the grid or the device changes.
  std::array<int64_t, 3> grid_ = {0, 0, 0};
  RotaryTable rotary_;
};
TORCH_MODULE(WanTransformer);

// Wan's 3D rotary table for a frames x rows x cols token grid as diffusers' WanRotaryPosEmbed
// builds it: [frames * rows * cols, head_dim / 2] complex64, frame-major. The head dimension's
// frequencies are split head_dim - 4 (head_dim / 6) / 2 (head_dim / 6) / 2 (head_dim / 6)
// between frame, row and column, and its features take their positions from the split
// head_dim - 2 (head_dim / 3) / head_dim / 3 / head_dim / 3 as diffusers' forward does (the two
// differ when head_dim % 6 is 4, as for the tiny preset's 16; a pair straddling them takes its
// cosine from one axis and its sine from the next, exactly as diffusers computes it).
RotaryTable WanRotaryTable(int64_t head_dim, int64_t frames, int64_t rows, int64_t cols,
                           torch::Device device);

// The Wan family as a DitModel: CFG batch with guidance 5.0 and UniPC on flow sigmas
// (model_zoo/layers/flow_unipc.h), as WanPipeline runs them.
// REQUIRES: config.family == kWan.
std::unique_ptr<DitModel> MakeWan(const ModelConfig& config);
WeightRules WanWeightRules(const ModelConfig& config);

}  // namespace ditbench
