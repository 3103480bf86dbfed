#include "model_zoo/layers/dit_layers.h"

namespace ditbench {

namespace F = torch::nn::functional;

namespace {

// The layer's FP8 weight while a ScopedFp8Layers quantizes it (model_zoo/layers/fp8_linear.h);
// null otherwise.
const Fp8Matrix* Fp8WeightOf(const torch::nn::Linear& layer) {
  const Fp8Layers* layers = ActiveFp8Layers();
  return layers ? layers->Find(layer.get()) : nullptr;
}

}  // namespace

torch::Tensor Dense(const torch::nn::Linear& layer, const torch::Tensor& x) {
  return DenseRows(layer, x, 0, -1, Epilogue::kNone);
}

torch::Tensor DenseGelu(const torch::nn::Linear& layer, const torch::Tensor& x) {
  return DenseRows(layer, x, 0, -1, Epilogue::kGeluTanh);
}

torch::Tensor DenseRows(const torch::nn::Linear& layer, const torch::Tensor& x, int64_t first,
                        int64_t count, Epilogue epilogue) {
  // A quantized layer's high-precision weight may be released: its rows are the FP8 weight's.
  const Fp8Matrix* q = Fp8WeightOf(layer);
  const int64_t out = q ? q->data.size(0) : layer->weight.size(0);
  if (count < 0) count = out - first;
  const bool whole = first == 0 && count == out;
  const torch::Tensor bias =
      !layer->bias.defined() || whole ? layer->bias : layer->bias.narrow(0, first, count);
  if (q) {
    const Fp8Scaling scaling = ActiveFp8Layers()->scaling();
    Fp8Matrix rows =
        whole ? *q
              : Fp8Matrix{q->data.narrow(0, first, count), scaling == Fp8Scaling::kRowwise
                                                               ? q->scale.narrow(0, first, count)
                                                               : q->scale};
    auto y = Fp8Linear(x, rows, bias, scaling);
    return epilogue == Epilogue::kGeluTanh ? GeluTanh(y) : y;
  }
  const torch::Tensor weight = whole ? layer->weight : layer->weight.narrow(0, first, count);
  return FusedLinear(x, weight, bias, epilogue);
}

torch::Tensor PatchEmbed3d(const torch::nn::Conv3d& embed, const torch::Tensor& latent) {
  const auto& kernel = embed->options.kernel_size();
  const int64_t pt = kernel->at(0), p = kernel->at(1);
  TORCH_CHECK(kernel->at(2) == p, "PatchEmbed3d takes square spatial patches");
  const int64_t b = latent.size(0), channels = latent.size(1);
  const int64_t frames = latent.size(2) / pt, rows = latent.size(3) / p, cols = latent.size(4) / p;
  // Patches [B, N, C * pt * p * p] in the convolution weight's (channel, t, y, x) order.
  auto patches = latent.reshape({b, channels, frames, pt, rows, p, cols, p})
                     .permute({0, 2, 4, 6, 1, 3, 5, 7})
                     .reshape({b, frames * rows * cols, channels * pt * p * p});
  return FusedLinear(patches, embed->weight.view({embed->weight.size(0), -1}), embed->bias,
                     Epilogue::kNone);
}

torch::nn::LayerNorm PlainNorm(int64_t dim, double eps) {
  return torch::nn::LayerNorm(
      torch::nn::LayerNormOptions({dim}).elementwise_affine(false).eps(eps));
}

torch::Tensor GeluTanh(const torch::Tensor& x) {
  return F::gelu(x, F::GELUFuncOptions().approximate("tanh"));
}

RmsNormImpl::RmsNormImpl(int64_t dim, double eps) : eps_(eps) {
  weight_ = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
  // CUDA has one fused kernel when the weight is in the input's dtype (it computes in fp32 and
  // rounds once); LibTorch's CPU rms_norm is the same ops as below, slower in bf16.
  if (x.is_cuda() && weight_.scalar_type() == x.scalar_type())
    return at::rms_norm(x, {x.size(-1)}, weight_, eps_);
  // diffusers' order of roundings (x * rsqrt(mean(x^2) + eps) in fp32, to the weight's dtype,
  // times the weight) in four passes instead of eight: the mean square as one fp32 reduction
  // over x as it is (||x||^2 / d), no fp32 copy of x.
  const double d = double(x.size(-1));
  auto norm = at::linalg_vector_norm(x, 2, {-1}, /*keepdim=*/true, torch::kFloat32);
  auto inverse = (norm.square() / d + eps_).rsqrt();
  return (x * inverse).to(weight_.scalar_type()) * weight_;
}

EmbedderMlpImpl::EmbedderMlpImpl(int64_t in, int64_t out) {
  linear_1_ = register_module("linear_1", torch::nn::Linear(in, out));
  linear_2_ = register_module("linear_2", torch::nn::Linear(out, out));
}

torch::Tensor EmbedderMlpImpl::forward(const torch::Tensor& x) {
  return Dense(linear_2_, torch::silu(Dense(linear_1_, x)));
}

namespace {

torch::Tensor SinCos1d(int64_t dim, const torch::Tensor& positions) {
  auto omega = torch::arange(dim / 2, torch::kFloat64) / (dim / 2.0);
  omega = 1.0 / torch::pow(10000.0, omega);
  auto out = torch::outer(positions.to(torch::kFloat64), omega);
  return torch::cat({torch::sin(out), torch::cos(out)}, 1);
}

}  // namespace

torch::Tensor SinCosPositions2d(int64_t hidden, const SinCosAxis& rows, const SinCosAxis& cols,
                                double base_size, double interpolation_scale) {
  // Two fp32 divisions by fp64 scalars per axis, as diffusers writes them.
  auto coordinates = [&](const SinCosAxis& axis) {
    return torch::arange(axis.start, axis.start + axis.count, torch::kFloat32) /
           (double(axis.table) / base_size) / interpolation_scale;
  };
  auto mesh = torch::meshgrid({coordinates(rows), coordinates(cols)}, "ij");  // [rows, cols]
  auto first = SinCos1d(hidden / 2, mesh[1].reshape({-1}));  // the column
  auto second = SinCos1d(hidden / 2, mesh[0].reshape({-1}));  // the row
  return torch::cat({first, second}, 1).to(torch::kFloat32);
}

RotaryTable RotaryTable::Narrow(int64_t start, int64_t length) const {
  return {rotation.narrow(0, start, length), identity};
}

RotaryTable MakeRotaryTable(const torch::Tensor& ids, const std::array<int, 3>& axes_dim,
                            double theta) {
  std::vector<torch::Tensor> angles;
  auto options = torch::TensorOptions().dtype(torch::kFloat64).device(ids.device());
  for (size_t axis = 0; axis < axes_dim.size(); ++axis) {
    const int64_t dim = axes_dim[axis];
    auto freqs = 1.0 / torch::pow(theta, torch::arange(0, dim, 2, options) / double(dim));
    angles.push_back(torch::outer(ids.select(1, int64_t(axis)).to(torch::kFloat64), freqs));
  }
  auto all = torch::cat(angles, 1);
  return {torch::complex(all.cos().to(torch::kFloat32), all.sin().to(torch::kFloat32)),
          ids.eq(0).all().item<bool>()};
}

torch::Tensor ApplyRotary(const torch::Tensor& x, const RotaryTable& table) {
  if (table.identity) return x;
  auto pairs = torch::view_as_complex(x.to(torch::kFloat32).unflatten(-1, {-1, 2}));
  auto rotated = pairs * table.rotation.unsqueeze(0).unsqueeze(2);  // [1, S, 1, d / 2]
  return torch::view_as_real(rotated).flatten(-2).to(x.scalar_type());
}

}  // namespace ditbench
