#include "model_zoo/shapes/model_config.h"

#include <algorithm>
#include <array>

namespace ditbench {
namespace {

ModelConfig PixArt(std::string name, int depth, int hidden, int heads, int text_tokens,
                   int text_dim) {
  ModelConfig m;
  m.name = std::move(name);
  m.family = ModelFamily::kPixArt;
  m.text_attention = TextAttention::kCross;
  m.depth = depth;
  m.hidden = hidden;
  m.heads = heads;
  m.text_tokens = text_tokens;
  m.text_dim = text_dim;
  return m;
}

// The shared shape of the joint text-image families: no learned sigma, no negative prompt
// unless set.
ModelConfig Joint(std::string name, ModelFamily family, int depth, int hidden, int heads,
                  int text_tokens, int text_dim, int pooled_dim) {
  ModelConfig m;
  m.name = std::move(name);
  m.family = family;
  m.text_attention = TextAttention::kJoint;
  m.depth = depth;
  m.hidden = hidden;
  m.heads = heads;
  m.in_channels = 16;
  m.out_channels = 16;  // no learned sigma
  m.text_tokens = text_tokens;
  m.text_dim = text_dim;
  m.pooled_dim = pooled_dim;
  m.vae_post_quant_conv = false;  // the 16-channel VAEs have none
  return m;
}

ModelConfig Sd3(std::string name, int depth, int hidden, int heads, int text_tokens,
                int text_dim, int pooled_dim) {
  ModelConfig m = Joint(std::move(name), ModelFamily::kMmDit, depth, hidden, heads, text_tokens,
                        text_dim, pooled_dim);
  m.negative_prompt = true;
  m.vae_scaling = 1.5305;  // SD3's VAE
  m.vae_shift = 0.0609;
  return m;
}

ModelConfig Flux(std::string name, int depth, int single_blocks, int hidden, int heads,
                 int text_tokens, int text_dim, int pooled_dim, std::array<int, 3> rope_axes,
                 bool guidance_embed) {
  ModelConfig m = Joint(std::move(name), ModelFamily::kFlux, depth, hidden, heads, text_tokens,
                        text_dim, pooled_dim);
  m.single_blocks = single_blocks;
  m.negative_prompt = false;
  m.rope_axes = rope_axes;
  m.guidance_embed = guidance_embed;
  m.vae_scaling = 0.3611;  // Flux's VAE
  m.vae_shift = 0.1159;
  return m;
}

ModelConfig WithMicroConditions(ModelConfig m) {
  m.micro_conditions = true;
  return m;
}

ModelConfig WithQkNorm(ModelConfig m) {
  m.qk_norm = true;
  return m;
}

ModelConfig WithDualAttention(ModelConfig m, int leading_blocks) {
  for (int i = 0; i < leading_blocks; ++i) m.dual_attention_layers.push_back(i);
  return m;
}

ModelConfig WithPositionTable(ModelConfig m, int max_size) {
  m.pos_embed_max_size = max_size;
  return m;
}

// CPU-sized VAE decoder for the tiny presets: four levels of 32 channels, one ResNet per level.
ModelConfig WithTinyVae(ModelConfig m) {
  m.vae_channels = {32, 32, 32, 32};
  m.vae_layers = 1;
  return m;
}

const std::vector<ModelConfig>& Presets() {
  static const std::vector<ModelConfig> presets = {
      // PixArt-alpha XL/2 (1024-MS): 28 blocks, 1152 wide, 16 heads x 72, 120 T5 tokens of
      // 4096, resolution and aspect-ratio micro-conditions.
      WithMicroConditions(PixArt("pixart-alpha", 28, 1152, 16, 120, 4096)),
      // PixArt-Sigma: the same trunk with 300 text tokens.
      PixArt("pixart-sigma", 28, 1152, 16, 300, 4096),
      // Same architecture, CPU-sized: 2 blocks, 64 wide, 4 heads x 16, 16 text tokens of 64.
      WithTinyVae(PixArt("pixart-alpha-tiny", 2, 64, 4, 16, 64)),
      // SD3-medium: 24 MM-DiT blocks, 1536 wide (24 heads x 64), 16 latent channels, joint
      // text of 77 CLIP + 256 T5 tokens, pooled CLIP-L + CLIP-G embedding of 2048;
      // classifier-free guidance batches a negative prompt.
      Sd3("sd3-medium", 24, 1536, 24, 333, 4096, 2048),
      // SD3.5-large: 38 MM-DiT blocks, 2432 wide (38 heads x 64), RMS-normalised queries and
      // keys in both streams; text, pooled embedding and VAE as SD3-medium's.
      WithQkNorm(Sd3("sd3.5-large", 38, 2432, 38, 333, 4096, 2048)),
      // SD3.5-medium (MMDiT-X): SD3-medium's shape with RMS-normalised queries and keys, a
      // second image-only self-attention in blocks 0-12, and a 384 x 384 position table.
      WithPositionTable(WithDualAttention(WithQkNorm(Sd3("sd3.5-medium", 24, 1536, 24, 333,
                                                         4096, 2048)), 13), 384),
      // Same architecture, CPU-sized: 2 blocks, 128 wide (4 heads x 32), 16 text tokens of 64.
      WithTinyVae(Sd3("sd3-medium-tiny", 2, 128, 4, 16, 64, 32)),
      // SD3.5-medium's architecture, CPU-sized: as sd3-medium-tiny, with qk norms and dual
      // attention in block 0 (block 1, the last, has none, as in SD3.5-medium).
      WithTinyVae(WithDualAttention(WithQkNorm(Sd3("sd3.5-medium-tiny", 2, 128, 4, 16, 64, 32)),
                                    1)),
      // Flux.1: 19 double-stream + 38 single-stream blocks, 3072 wide (24 heads x 128),
      // 16 latent channels packed 2x2, 512 T5 tokens, pooled CLIP 768, RoPE axes (16, 56, 56).
      // dev distils guidance into an embedding (no negative-prompt batch), so cfg parallelism
      // does not apply; schnell has no guidance at all.
      Flux("flux-dev", 19, 38, 3072, 24, 512, 4096, 768, {16, 56, 56}, true),
      Flux("flux-schnell", 19, 38, 3072, 24, 512, 4096, 768, {16, 56, 56}, false),
      // Same architecture, CPU-sized: 2 + 2 blocks, 128 wide (4 heads x 32), 16 text tokens.
      WithTinyVae(Flux("flux-dev-tiny", 2, 2, 128, 4, 16, 64, 32, {4, 14, 14}, true)),
  };
  return presets;
}

// Multiply-adds of a [m x k] by [k x n] product, as FLOPs.
double Matmul(double m, double k, double n) { return 2.0 * m * k * n; }

}  // namespace

bool ModelConfig::dual_attention(int block) const {
  return block < depth && std::find(dual_attention_layers.begin(), dual_attention_layers.end(),
                                    block) != dual_attention_layers.end();
}

int ModelConfig::dual_attention_blocks() const {
  int count = 0;
  for (int i = 0; i < depth; ++i) count += dual_attention(i);
  return count;
}

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
  if (m.family != ModelFamily::kFlux && m.single_blocks != 0) {
    *error = "single_blocks applies to Flux models only";
    return std::nullopt;
  }
  if (m.family == ModelFamily::kFlux) {
    const auto& a = m.rope_axes;
    if (a[0] + a[1] + a[2] != m.head_dim() || a[0] % 2 || a[1] % 2 || a[2] % 2) {
      *error = "head dimension " + std::to_string(m.head_dim()) +
               " (hidden / heads) must equal the sum of the rotary axes " +
               std::to_string(a[0]) + " + " + std::to_string(a[1]) + " + " +
               std::to_string(a[2]) + " of " + m.name;
      return std::nullopt;
    }
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
// modulation, q/k/v, output projection and MLP; attention runs over the joint n + t sequence.
// With `text_pre_only` (SD3's last block) the text stream only feeds q/k/v.
double DoubleStreamBlockFlops(const ModelConfig& m, double n, double t, bool text_pre_only) {
  const double d = m.hidden, l = n + t, r = m.mlp_ratio;
  const double out = text_pre_only ? n : l;     // tokens that keep their output
  double f = 0;
  f += Matmul(1, d, 6 * d) + Matmul(1, d, (text_pre_only ? 2 : 6) * d);  // modulation
  f += Matmul(l, d, 3 * d);                    // q, k, v of both streams
  f += 2 * Matmul(l, d, l);                    // joint scores and weighted sum
  f += Matmul(out, d, d);                      // output projections
  f += 2 * Matmul(out, d, r * d);              // MLPs
  return f;
}

// SD3.5's second image self-attention in a dual-attention block: three more modulation
// chunks, q/k/v, scores and weighted sum over the n image tokens, output projection.
double DualAttentionFlops(const ModelConfig& m, double n) {
  const double d = m.hidden;
  return Matmul(1, d, 3 * d) + Matmul(n, d, 3 * d) + 2 * Matmul(n, d, n) + Matmul(n, d, d);
}

// One Flux single-stream block: modulation, a projection to q, k, v and the MLP input,
// attention over the joint sequence, and a projection back from [attention, MLP].
double SingleStreamBlockFlops(const ModelConfig& m, double n, double t) {
  const double d = m.hidden, l = n + t, r = m.mlp_ratio;
  return Matmul(1, d, 3 * d) + Matmul(l, d, 3 * d + r * d) + 2 * Matmul(l, d, l) +
         Matmul(l, d + r * d, d);
}

}  // namespace

double ForwardFlops(const ModelConfig& m, int resolution, int samples) {
  const double n = static_cast<double>(ImageTokens(m, resolution));
  const double t = m.text_tokens;
  const double d = m.hidden;
  const double patch_in = double(m.in_channels) * m.patch * m.patch;
  const double patch_out = double(m.out_channels) * m.patch * m.patch;
  constexpr double kFreqDim = 256;  // sinusoidal timestep features
  if (m.text_attention == TextAttention::kJoint) {  // MM-DiT blocks
    double total = 0;
    for (int i = 0; i < m.depth; ++i) {
      const bool last_sd3 = m.family == ModelFamily::kMmDit && i + 1 == m.depth;
      total += DoubleStreamBlockFlops(m, n, t, last_sd3);
      if (m.dual_attention(i)) total += DualAttentionFlops(m, n);
    }
    total += m.single_blocks * SingleStreamBlockFlops(m, n, t);
    total += Matmul(n, patch_in, d) + Matmul(t, m.text_dim, d);  // image and text embedding
    const double embedder = Matmul(1, d, d);  // second layer of each conditioning MLP
    total += Matmul(1, kFreqDim, d) + embedder;                  // timestep
    if (m.guidance_embed) total += Matmul(1, kFreqDim, d) + embedder;  // guidance
    if (m.pooled_dim > 0) total += Matmul(1, m.pooled_dim, d) + embedder;  // pooled text
    total += Matmul(1, d, 2 * d) + Matmul(n, d, patch_out);      // final modulation, projection
    return samples * total;
  }

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
  auto linear = [](std::int64_t in, std::int64_t out) { return in * out + out; };
  if (m.text_attention == TextAttention::kJoint) {  // MM-DiT blocks
    const std::int64_t r = m.mlp_ratio, hd = m.head_dim();
    const std::int64_t qk_norms = m.family == ModelFamily::kFlux || m.qk_norm ? 2 * hd : 0;
    // A double-stream block's stream: modulation, q/k/v (+ q/k norms), output projection, MLP.
    const std::int64_t stream = linear(d, 6 * d) + linear(d, 3 * d) + qk_norms + linear(d, d) +
                                linear(d, r * d) + linear(r * d, d);
    const std::int64_t text_pre_only =
        linear(d, 2 * d) + linear(d, 3 * d) + qk_norms;  // SD3's last block
    const std::int64_t single = linear(d, 3 * d) + linear(d, 3 * d + r * d) + qk_norms +
                                linear(d + r * d, d);
    // SD3.5's dual attention: three more modulation chunks, q/k/v (+ norms), output projection.
    const std::int64_t dual = 3 * d * d + 3 * d + linear(d, 3 * d) + qk_norms + linear(d, d);
    std::int64_t total = 0;
    for (int i = 0; i < m.depth; ++i)
      total += stream + (m.family == ModelFamily::kMmDit && i + 1 == m.depth ? text_pre_only
                                                                             : stream);
    total += std::int64_t(m.dual_attention_blocks()) * dual;
    total += m.single_blocks * single;
    total += linear(std::int64_t(m.in_channels) * m.patch * m.patch, d);  // image embedding
    total += linear(m.text_dim, d);                                      // text embedding
    total += linear(256, d) + linear(d, d);                              // timestep
    if (m.guidance_embed) total += linear(256, d) + linear(d, d);
    if (m.pooled_dim > 0) total += linear(m.pooled_dim, d) + linear(d, d);
    total += linear(d, 2 * d) + linear(d, std::int64_t(m.out_channels) * m.patch * m.patch);
    return total;
  }
  const std::int64_t patch_in = std::int64_t(m.in_channels) * m.patch * m.patch;
  const std::int64_t patch_out = std::int64_t(m.out_channels) * m.patch * m.patch;
  std::int64_t block = 0;
  block += 6 * d;                                       // scale-shift table
  block += linear(d, 3 * d) + linear(d, d);             // self-attention
  block += linear(d, d) + linear(d, 2 * d) + linear(d, d);  // cross-attention
  block += linear(d, m.mlp_ratio * d) + linear(m.mlp_ratio * d, d);  // MLP
  std::int64_t total = m.depth * block;
  total += patch_in * d + d;                             // patch embedding (conv)
  total += linear(256, d) + linear(d, d) + linear(d, 6 * d);  // timestep MLP + AdaLN-single
  total += linear(m.text_dim, d) + linear(d, d);         // caption projection
  if (m.micro_conditions)  // resolution and aspect-ratio embedders, d / 3 wide each
    total += 2 * (linear(256, d / 3) + linear(d / 3, d / 3));
  total += 2 * d + linear(d, patch_out);                 // final layer
  return total;
}

std::int64_t VaeDecoderParameterCount(const ModelConfig& m) {
  auto conv = [](std::int64_t in, std::int64_t out, std::int64_t k) { return in * out * k * k + out; };
  auto norm = [](std::int64_t c) { return 2 * c; };
  auto resnet = [&](std::int64_t in, std::int64_t out) {
    return norm(in) + conv(in, out, 3) + norm(out) + conv(out, out, 3) +
           (in != out ? conv(in, out, 1) : 0);
  };
  const auto& widths = m.vae_channels;
  if (widths.empty()) return 0;
  const std::int64_t z = m.in_channels, top = widths.back();
  std::int64_t total = m.vae_post_quant_conv ? conv(z, z, 1) : 0;
  total += conv(z, top, 3) + 2 * resnet(top, top);
  total += norm(top) + 4 * (top * top + top);  // mid-block attention: norm, q, k, v, out
  std::int64_t in = top;
  for (int level = static_cast<int>(widths.size()) - 1; level >= 0; --level) {
    const std::int64_t out = widths[level];
    for (int i = 0; i <= m.vae_layers; ++i, in = out) total += resnet(in, out);
    if (level > 0) total += conv(out, out, 3);
  }
  return total + norm(widths.front()) + conv(widths.front(), 3, 3);
}

}  // namespace ditbench
