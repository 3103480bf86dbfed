#include "model_zoo/model_config.h"

#include <array>

namespace ditbench {
namespace {

ModelConfig PixArt(std::string name, int depth, int hidden, int heads, int text_tokens,
                   int text_dim) {
  ModelConfig m;
  m.name = std::move(name);
  m.family = ModelFamily::kPixArt;
  m.depth = depth;
  m.hidden = hidden;
  m.heads = heads;
  m.text_tokens = text_tokens;
  m.text_dim = text_dim;
  return m;
}

const std::vector<ModelConfig>& Presets() {
  static const std::vector<ModelConfig> presets = {
      // PixArt-alpha XL/2: 28 blocks, 1152 wide, 16 heads x 72, 120 T5 tokens of 4096.
      PixArt("pixart-alpha", 28, 1152, 16, 120, 4096),
      // PixArt-Sigma: the same trunk with 300 text tokens.
      PixArt("pixart-sigma", 28, 1152, 16, 300, 4096),
      // Same architecture, CPU-sized: 2 blocks, 64 wide, 4 heads x 16, 16 text tokens of 64.
      PixArt("pixart-alpha-tiny", 2, 64, 4, 16, 64),
  };
  return presets;
}

// Multiply-adds of a [m x k] by [k x n] product, as FLOPs.
double Matmul(double m, double k, double n) { return 2.0 * m * k * n; }

}  // namespace

const ModelConfig* FindModelPreset(std::string_view name) {
  for (const auto& m : Presets())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> ModelPresetNames() {
  std::vector<std::string> names;
  for (const auto& m : Presets()) names.push_back(m.name);
  return names;
}

int LatentSize(const ModelConfig& model, int resolution) {
  return resolution / model.vae_downsample;
}

int TokenGridSize(const ModelConfig& model, int resolution) {
  return LatentSize(model, resolution) / model.patch;
}

std::int64_t ImageTokens(const ModelConfig& model, int resolution) {
  const std::int64_t g = TokenGridSize(model, resolution);
  return g * g;
}

double ForwardFlops(const ModelConfig& m, int resolution, int samples) {
  const double n = static_cast<double>(ImageTokens(m, resolution));
  const double t = m.text_tokens;
  const double d = m.hidden;
  const double patch_in = double(m.in_channels) * m.patch * m.patch;
  const double patch_out = double(m.out_channels) * m.patch * m.patch;
  constexpr double kFreqDim = 256;  // sinusoidal timestep features

  double block = 0;
  block += Matmul(n, d, 3 * d);          // self-attention q, k, v
  block += 2 * Matmul(n, d, n);          // scores and weighted sum (all heads together)
  block += Matmul(n, d, d);              // self-attention out projection
  block += Matmul(n, d, d);              // cross-attention q
  block += Matmul(t, d, 2 * d);          // cross-attention k, v from text tokens
  block += 2 * Matmul(n, d, t);          // cross scores and weighted sum
  block += Matmul(n, d, d);              // cross-attention out projection
  block += 2 * Matmul(n, d, m.mlp_ratio * d);  // MLP up and down

  double once = 0;
  once += Matmul(n, patch_in, d);                              // patch embedding
  once += Matmul(t, m.text_dim, d) + Matmul(t, d, d);          // caption projection
  once += Matmul(1, kFreqDim, d) + Matmul(1, d, d) + Matmul(1, d, 6 * d);  // AdaLN-single
  once += Matmul(n, d, patch_out);                             // final layer
  return samples * (m.depth * block + once);
}

std::int64_t ParameterCount(const ModelConfig& m) {
  const std::int64_t d = m.hidden;
  const std::int64_t patch_in = std::int64_t(m.in_channels) * m.patch * m.patch;
  const std::int64_t patch_out = std::int64_t(m.out_channels) * m.patch * m.patch;
  auto linear = [](std::int64_t in, std::int64_t out) { return in * out + out; };
  std::int64_t block = 0;
  block += 6 * d;                                       // scale-shift table
  block += linear(d, 3 * d) + linear(d, d);             // self-attention
  block += linear(d, d) + linear(d, 2 * d) + linear(d, d);  // cross-attention
  block += linear(d, m.mlp_ratio * d) + linear(m.mlp_ratio * d, d);  // MLP
  std::int64_t total = m.depth * block;
  total += patch_in * d + d;                             // patch embedding (conv)
  total += linear(256, d) + linear(d, d) + linear(d, 6 * d);  // timestep MLP + AdaLN-single
  total += linear(m.text_dim, d) + linear(d, d);         // caption projection
  total += 2 * d + linear(d, patch_out);                 // final layer
  return total;
}

}  // namespace ditbench
