// PixArt-alpha (and -Sigma) transformer, parameterised by a ModelConfig: patch embedding with
// fixed 2D sin-cos positions, AdaLN-single timestep conditioning, self-attention (Ulysses
// sequence-parallel when the group has more than one rank), cross-attention to text tokens,
// GELU(tanh) MLP, and the final modulated projection (learned sigma: 2x latent channels out).
//
// Sequence parallelism: every rank embeds the full latent, keeps its own slice of patch rows,
// runs the blocks on it, and the slices are all-gathered before unpatchify, so every rank ends
// with the same full output. Self-attention goes through the ParallelContext; cross-attention
// to the (replicated) text needs no communication.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/layers/dit_layers.h"
#include "model_zoo/parallel/parallel_context.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {

class PixArtBlockImpl : public torch::nn::Module {
 public:
  explicit PixArtBlockImpl(const ModelConfig& config);
  // x: [B, n, D] local tokens; t6: [B, 6, D] AdaLN-single modulation; text: [B, T, D].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& t6,
                        const torch::Tensor& text, const ParallelContext& parallel);

 private:
  int64_t heads_;
  torch::Tensor scale_shift_table_;
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, attn_out_{nullptr};
  torch::nn::Linear cross_q_{nullptr}, cross_kv_{nullptr}, cross_out_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(PixArtBlock);

class PixArtTransformerImpl : public torch::nn::Module {
 public:
  // REQUIRES: config.family == kPixArt.
  explicit PixArtTransformerImpl(const ModelConfig& config);

  // The three phases of DitModel (model_zoo/families/dit_model.h). latent: [B, C, h, w] (full, identical
  // on every rank); timestep: [B]; text: [B, T, text_dim].
  DitState Embed(const torch::Tensor& latent, const torch::Tensor& timestep,
                 const Conditioning& conditioning, const ParallelContext& parallel);
  void RunBlock(int index, DitState& state, const ParallelContext& parallel);
  // [B, out_channels, h, w] on every rank.
  torch::Tensor Finish(DitState& state, const ParallelContext& parallel);

  const ModelConfig& config() const { return config_; }
  int num_blocks() const { return static_cast<int>(blocks_->size()); }

 private:
  ModelConfig config_;
  torch::nn::Conv2d patch_embed_{nullptr};
  torch::nn::Linear t_fc1_{nullptr}, t_fc2_{nullptr}, t_block_{nullptr};
  torch::nn::Linear caption_fc1_{nullptr}, caption_fc2_{nullptr};
  EmbedderMlp resolution_embedder_{nullptr}, aspect_ratio_embedder_{nullptr};  // micro-conditions
  torch::nn::ModuleList blocks_;
  torch::Tensor final_table_;
  torch::nn::LayerNorm final_norm_{nullptr};
  torch::nn::Linear final_linear_{nullptr};
  // The fixed positions on the device, at the activations' dtype, kept across forwards (as
  // diffusers keeps its pos_embed buffer): rebuilding them on the host every forward stalled
  // the GPU. Rebuilt when the grid, device or dtype changes.
  torch::Tensor positions_;
  int64_t positions_rows_ = 0;  // the patch rows positions_ was made for
};
TORCH_MODULE(PixArtTransformer);

// The PixArt family as a DitModel: CFG batch, guidance 4.5, DPM-Solver++ (2M), learned
// sigma dropped from the prediction. REQUIRES: config.family == kPixArt.
std::unique_ptr<DitModel> MakePixArt(const ModelConfig& config);

// Fixed 2D sin-cos positions for a grid x grid token map as diffusers' PatchEmbed builds them
// for `config` (sample size, interpolation scale): [grid * grid, hidden] in fp32.
torch::Tensor PixArtPositions(const ModelConfig& config, int64_t grid);

}  // namespace ditbench
