// Building blocks shared by the MM-DiT families (Flux, SD3), named as in diffusers so that a
// weight mapping reads one to one: dense layers, AdaLN modulation, RMS norm for queries and
// keys, the two-layer timestep/text embedders, and rotary position embeddings.
#pragma once

#include <array>

#include <torch/torch.h>

namespace ditbench {

// x W^T + b as one addmm (at::linear, as Python's nn.Linear; LibTorch's module forward
// splits off the bias add).
torch::Tensor Dense(const torch::nn::Linear& layer, const torch::Tensor& x);
// LayerNorm without affine parameters, eps 1e-6.
torch::nn::LayerNorm PlainNorm(int64_t dim);
torch::Tensor GeluTanh(const torch::Tensor& x);
// x * (1 + scale) + shift with [B, D] modulation broadcast over tokens.
torch::Tensor Modulate(const torch::Tensor& x, const torch::Tensor& shift,
                       const torch::Tensor& scale);

// Root-mean-square norm over the last dimension with a learned scale (computed in fp32, as
// diffusers' RMSNorm), eps 1e-6.
class RmsNormImpl : public torch::nn::Module {
 public:
  explicit RmsNormImpl(int64_t dim);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor weight_;
};
TORCH_MODULE(RmsNorm);

// linear_1 -> SiLU -> linear_2 (diffusers' TimestepEmbedding and PixArtAlphaTextProjection with
// act_fn silu).
class EmbedderMlpImpl : public torch::nn::Module {
 public:
  EmbedderMlpImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Linear linear_1_{nullptr}, linear_2_{nullptr};
};
TORCH_MODULE(EmbedderMlp);

// diffusers' get_2d_sincos_pos_embed, computed as it does (patch coordinates in fp32, the
// sin-cos in fp64): the `count` x `count` window at patch row and column `start` of a `table` x
// `table` grid whose coordinates are index / (table / base_size) / interpolation_scale.
// [count * count, hidden] in fp32, row-major; the first half of each row encodes the column.
torch::Tensor SinCosPositions2d(int64_t hidden, int64_t count, int64_t start, int64_t table,
                                double base_size, double interpolation_scale);

// Rotary tables over multi-axis positions (Flux's FluxPosEmbed): ids [S, axes] -> cos and sin,
// each [S, sum(axes_dim)] in fp32, every frequency repeated for its (real, imaginary) pair.
struct RotaryTable {
  torch::Tensor cos, sin;
  RotaryTable Narrow(int64_t start, int64_t length) const;
};
RotaryTable MakeRotaryTable(const torch::Tensor& ids, const std::array<int, 3>& axes_dim,
                            double theta);
// x [B, S, H, d] rotated by `table` ([S, d]); computed in fp32, returned in x's dtype.
torch::Tensor ApplyRotary(const torch::Tensor& x, const RotaryTable& table);

}  // namespace ditbench
