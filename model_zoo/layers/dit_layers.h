// Building blocks shared by the MM-DiT families (Flux, SD3), named as in diffusers so that a
// weight mapping reads one to one: dense layers, AdaLN modulation, RMS norm for queries and
// keys, the two-layer timestep/text embedders, and rotary position embeddings.
#pragma once

#include <array>

#include <torch/torch.h>

#include "model_zoo/layers/fp8_linear.h"
#include "model_zoo/layers/fused_ops.h"

namespace ditbench {

// x W^T + b with the bias inside the GEMM (FusedLinear; LibTorch's module forward splits off
// the bias add).
torch::Tensor Dense(const torch::nn::Linear& layer, const torch::Tensor& x);
// GELU(tanh)(x W^T + b) with the GELU as the GEMM's epilogue where the device has one.
torch::Tensor DenseGelu(const torch::nn::Linear& layer, const torch::Tensor& x);
// Rows [first, first + count) (count -1: to the last) of the layer's output (one weight holding
// several projections), then the epilogue. Dense and DenseGelu are the whole layer. Each runs the
// layer's FP8 weight while a ScopedFp8Layers quantizes it (model_zoo/layers/fp8_linear.h).
torch::Tensor DenseRows(const torch::nn::Linear& layer, const torch::Tensor& x, int64_t first,
                        int64_t count, Epilogue epilogue);
// A video latent [B, C, F, H, W] through a 3D patch embedding (a Conv3d whose kernel equals its
// stride, the video families' x_embedder / patch_embedding) as one GEMM over the patches: tokens
// [B, F / pt x H / p x W / p, D], frame-major as the convolution's output flattens.
// REQUIRES: the kernel divides F, H and W.
torch::Tensor PatchEmbed3d(const torch::nn::Conv3d& embed, const torch::Tensor& latent);
// LayerNorm without affine parameters.
torch::nn::LayerNorm PlainNorm(int64_t dim, double eps = 1e-6);
torch::Tensor GeluTanh(const torch::Tensor& x);

// Root-mean-square norm over the last dimension with a learned scale (computed in fp32, as
// diffusers' RMSNorm).
class RmsNormImpl : public torch::nn::Module {
 public:
  explicit RmsNormImpl(int64_t dim, double eps = 1e-6);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor weight_;
  double eps_;
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

// One axis of a 2-D sin-cos position table: the `count` patches from index `start` of an axis
// `table` patches long, whose coordinates are index / (table / base_size) / interpolation_scale.
struct SinCosAxis {
  int64_t start = 0;
  int64_t count = 0;
  int64_t table = 0;
  // The whole axis of `count` patches (PixArt's table, interpolated to the image).
  static SinCosAxis Whole(int64_t count) { return {0, count, count}; }
  // The centred window of `count` patches in an axis of `table` (SD3's cropped table).
  static SinCosAxis Centred(int64_t count, int64_t table) {
    return {(table - count) / 2, count, table};
  }
};

// diffusers' get_2d_sincos_pos_embed, computed as it does (patch coordinates in fp32, the
// sin-cos in fp64) over a window of `rows` x `cols` patches: [rows.count * cols.count, hidden]
// in fp32, row-major; the first half of each row encodes the column, the second the row.
torch::Tensor SinCosPositions2d(int64_t hidden, const SinCosAxis& rows, const SinCosAxis& cols,
                                double base_size, double interpolation_scale);

// Rotary tables over multi-axis positions (Flux's FluxPosEmbed): ids [S, axes] -> one unit
// complex number per (real, imaginary) pair of a head's features, [S, sum(axes_dim) / 2] in
// complex64 (cos and sin rounded to fp32, as diffusers' table). A table whose positions are all
// zero (Flux's text tokens) rotates by nothing: `identity`, and ApplyRotary skips it.
struct RotaryTable {
  torch::Tensor rotation;
  bool identity = false;
  RotaryTable Narrow(int64_t start, int64_t length) const;
};
RotaryTable MakeRotaryTable(const torch::Tensor& ids, const std::array<int, 3>& axes_dim,
                            double theta);
// x [B, S, H, d] rotated by `table` ([S, d / 2]): one complex multiply in fp32, returned in
// x's dtype (diffusers' real form, x * cos + rotate_half(x) * sin, takes five kernels).
torch::Tensor ApplyRotary(const torch::Tensor& x, const RotaryTable& table);

}  // namespace ditbench
