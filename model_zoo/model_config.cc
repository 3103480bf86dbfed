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

ModelConfig Family(std::string name, ModelFamily family, int depth, int single_blocks,
                   int hidden, int heads, int in_channels, int text_tokens, bool negative_prompt) {
  ModelConfig m;
  m.name = std::move(name);
  m.family = family;
  m.depth = depth;
  m.single_blocks = single_blocks;
  m.hidden = hidden;
  m.heads = heads;
  m.in_channels = in_channels;
  m.out_channels = in_channels;  // no learned sigma
  m.text_tokens = text_tokens;
  m.text_dim = 4096;
  m.negative_prompt = negative_prompt;
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
      // SD3-medium: 24 MM-DiT blocks, 1536 wide (24 heads x 64), 16 latent channels, joint
      // text of 77 CLIP + 256 T5 tokens; classifier-free guidance batches a negative prompt.
      Family("sd3-medium", ModelFamily::kMmDit, 24, 0, 1536, 24, 16, 333, true),
      // Flux.1: 19 double-stream + 38 single-stream blocks, 3072 wide (24 heads x 128),
      // 16 latent channels packed 2x2, 512 T5 tokens. dev distils guidance into an embedding
      // (no negative-prompt batch), so cfg parallelism does not apply; schnell neither.
      Family("flux-dev", ModelFamily::kFlux, 19, 38, 3072, 24, 16, 512, false),
      Family("flux-schnell", ModelFamily::kFlux, 19, 38, 3072, 24, 16, 512, false),
  };
  return presets;
}

// Multiply-adds of a [m x k] by [k x n] product, as FLOPs.
double Matmul(double m, double k, double n) { return 2.0 * m * k * n; }

}  // namespace

std::string_view FamilyName(ModelFamily family) {
  switch (family) {
    case ModelFamily::kPixArt: return "pixart";
    case ModelFamily::kMmDit: return "mmdit";
    case ModelFamily::kFlux: return "flux";
  }
  return "unknown";
}

const std::vector<std::string>& OverridableDimensions() {
  static const std::vector<std::string> names = {"depth",       "heads",    "hidden",
                                                 "mlp_ratio",   "patch",    "single_blocks",
                                                 "text_dim",    "text_tokens"};
  return names;
}

std::optional<ModelConfig> ResolveModel(std::string_view name,
                                        const std::map<std::string, int>& overrides,
                                        std::string* error) {
  const ModelConfig* preset = FindModelPreset(name);
  if (!preset) {
    *error = "unknown model '" + std::string(name) + "'";
    return std::nullopt;
  }
  ModelConfig m = *preset;
  for (const auto& [key, value] : overrides) {
    int* field = key == "depth"           ? &m.depth
                 : key == "heads"         ? &m.heads
                 : key == "hidden"        ? &m.hidden
                 : key == "mlp_ratio"     ? &m.mlp_ratio
                 : key == "patch"         ? &m.patch
                 : key == "single_blocks" ? &m.single_blocks
                 : key == "text_dim"      ? &m.text_dim
                 : key == "text_tokens"   ? &m.text_tokens
                                          : nullptr;
    if (!field) {
      *error = "unknown model dimension '" + key + "'";
      return std::nullopt;
    }
    const int lo = key == "single_blocks" ? 0 : 1;
    if (value < lo || value > 1 << 20) {
      *error = "model dimension '" + key + "' must be at least " + std::to_string(lo);
      return std::nullopt;
    }
    *field = value;
  }
  if (m.hidden % m.heads != 0) {
    *error = "hidden " + std::to_string(m.hidden) + " is not divisible by heads " +
             std::to_string(m.heads);
    return std::nullopt;
  }
  if (m.family == ModelFamily::kPixArt && m.single_blocks != 0) {
    *error = "single_blocks applies to Flux models only";
    return std::nullopt;
  }
  return m;
}

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

namespace {

// One MM-DiT (double-stream) block over n image and t text tokens: each stream has its own
// q/k/v, output projection and MLP; attention runs over the joint n + t sequence.
double DoubleStreamBlockFlops(const ModelConfig& m, double n, double t) {
  const double d = m.hidden, l = n + t;
  double f = 0;
  f += Matmul(l, d, 3 * d);                    // q, k, v of both streams
  f += 2 * Matmul(l, d, l);                    // joint scores and weighted sum
  f += Matmul(l, d, d);                        // output projections
  f += 2 * Matmul(l, d, m.mlp_ratio * d);      // MLPs
  return f;
}

// One Flux single-stream block: a fused projection to q, k, v and the MLP input, attention
// over the joint sequence, and a fused projection back.
double SingleStreamBlockFlops(const ModelConfig& m, double n, double t) {
  const double d = m.hidden, l = n + t;
  return Matmul(l, d, 3 * d + m.mlp_ratio * d) + 2 * Matmul(l, d, l) +
         Matmul(l, d + m.mlp_ratio * d, d);
}

}  // namespace

double ForwardFlops(const ModelConfig& m, int resolution, int samples) {
  const double n = static_cast<double>(ImageTokens(m, resolution));
  if (m.family != ModelFamily::kPixArt) {
    const double t = m.text_tokens, d = m.hidden;
    const double patch_in = double(m.in_channels) * m.patch * m.patch;
    const double patch_out = double(m.out_channels) * m.patch * m.patch;
    double total = m.depth * DoubleStreamBlockFlops(m, n, t) +
                   m.single_blocks * SingleStreamBlockFlops(m, n, t);
    total += Matmul(n, patch_in, d) + Matmul(t, m.text_dim, d) + Matmul(n, d, patch_out);
    return samples * total;
  }
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
  if (m.family != ModelFamily::kPixArt) {
    const std::int64_t r = m.mlp_ratio;
    // Double-stream: per stream q/k/v, out, MLP and a 6D modulation from a D-wide embedding.
    const std::int64_t stream = 3 * d * d + d * d + 2 * r * d * d + 6 * d * d;
    const std::int64_t single = (3 + r) * d * d + (1 + r) * d * d + 3 * d * d;
    return m.depth * 2 * stream + m.single_blocks * single + std::int64_t(m.text_dim) * d +
           std::int64_t(m.in_channels) * m.patch * m.patch * d * 2;
  }
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
