// PixArt-alpha (and -Sigma) transformer, parameterised by a ModelConfig: patch embedding with
// fixed 2D sin-cos positions, AdaLN-single timestep conditioning, self-attention (Ulysses
// sequence-parallel when the group has more than one rank), cross-attention to text tokens,
// GELU(tanh) MLP, and the final modulated projection (learned sigma: 2x latent channels out).
//
// Sequence parallelism: every rank embeds the full latent, keeps its own slice of patch rows,
// runs the blocks on it, and the slices are all-gathered before unpatchify, so every rank ends
// with the same full output.
#pragma once

#include <torch/torch.h>

#include "model_zoo/model_config.h"
#include "model_zoo/parallel_attention.h"

namespace ditbench {

class PixArtBlockImpl : public torch::nn::Module {
 public:
  explicit PixArtBlockImpl(const ModelConfig& config);
  // x: [B, n, D] local tokens; t6: [B, 6, D] AdaLN-single modulation; text: [B, T, D].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& t6,
                        const torch::Tensor& text, const RankSubgroup& sp);

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

  // latent: [B, C, h, w] (full, identical on every rank); timestep: [B]; text: [B, T, text_dim].
  // Returns [B, out_channels, h, w] on every rank. `block_hook` (may be empty) is called before
  // (begin = true) and after each transformer block, for per-block timing.
  using BlockHook = std::function<void(int block, bool begin)>;
  torch::Tensor forward(const torch::Tensor& latent, const torch::Tensor& timestep,
                        const torch::Tensor& text, const RankSubgroup& sp,
                        const BlockHook& block_hook = {});

  const ModelConfig& config() const { return config_; }

 private:
  ModelConfig config_;
  torch::nn::Conv2d patch_embed_{nullptr};
  torch::nn::Linear t_fc1_{nullptr}, t_fc2_{nullptr}, t_block_{nullptr};
  torch::nn::Linear caption_fc1_{nullptr}, caption_fc2_{nullptr};
  torch::nn::ModuleList blocks_;
  torch::Tensor final_table_;
  torch::nn::LayerNorm final_norm_{nullptr};
  torch::nn::Linear final_linear_{nullptr};
  // The fixed positions on the device, at the activations' dtype, kept across forwards (as
  // diffusers keeps its pos_embed buffer): rebuilding them on the host every forward stalled
  // the GPU. Rebuilt when the grid, device or dtype changes.
  torch::Tensor positions_;
};
TORCH_MODULE(PixArtTransformer);

// Sinusoidal timestep features [B, dim] (the DiT convention: cos then sin).
torch::Tensor TimestepFeatures(const torch::Tensor& timestep, int64_t dim);
// Fixed 2D sin-cos positions for a grid x grid token map: [grid * grid, hidden].
torch::Tensor SinCosPositions(int64_t hidden, int64_t grid);

}  // namespace ditbench
