#include "model_zoo/shapes/model_config.h"

#include <algorithm>
#include <array>

#include "model_zoo/shapes/family.h"

namespace ditbench {
namespace {

// Every family's presets, family by family (model_zoo/shapes/family.cc).
const std::vector<ModelConfig>& Presets() {
  static const std::vector<ModelConfig> presets = [] {
    std::vector<ModelConfig> all;
    for (const FamilyShapes& family : FamilyShapesTable())
      for (ModelConfig& preset : family.presets()) all.push_back(std::move(preset));
    return all;
  }();
  return presets;
}

}  // namespace

ModelConfig WithTinyVae(ModelConfig m) {
  m.vae_channels = {32, 32, 32, 32};
  m.vae_layers = 1;
  return m;
}

bool ModelConfig::dual_attention(int block) const {
  return block < depth && std::find(dual_attention_layers.begin(), dual_attention_layers.end(),
                                    block) != dual_attention_layers.end();
}

int ModelConfig::dual_attention_blocks() const {
  int count = 0;
  for (int i = 0; i < depth; ++i) count += dual_attention(i);
  return count;
}

std::string_view FamilyName(ModelFamily family) { return ShapesOf(family).name; }

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
    if (field == &m.mlp_ratio) m.ffn_dim = 0;  // the ratio now sets the MLP's width
  }
  if (m.hidden % m.heads != 0) {
    *error = "hidden " + std::to_string(m.hidden) + " is not divisible by heads " +
             std::to_string(m.heads);
    return std::nullopt;
  }
  if (std::string problem = ShapesOf(m.family).problem(m); !problem.empty()) {
    *error = std::move(problem);
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

int LatentFrames(const ModelConfig& model, int frames) {
  if (!model.video() || frames <= 0) return 1;
  return (frames - 1) / model.vae_temporal + 1;
}

TokenGrid TokenGridOf(const ModelConfig& model, const ImageShape& shape) {
  const int unit = model.vae_downsample * model.patch;
  return {LatentFrames(model, shape.frames) / std::max(1, model.patch_t), shape.height / unit,
          shape.width / unit};
}

std::int64_t ImageTokens(const ModelConfig& model, const ImageShape& shape) {
  return TokenGridOf(model, shape).tokens();
}

double ForwardFlops(const ModelConfig& m, const ImageShape& shape, int samples) {
  return samples * ShapesOf(m.family).forward_flops(m, double(ImageTokens(m, shape)));
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
  return samples * ShapesOf(m.family).forward_flops(m, double(ImageTokens(m, resolution)));
}

std::int64_t ParameterCount(const ModelConfig& m) { return ShapesOf(m.family).parameter_count(m); }

namespace {

// AutoencoderKLWan's decoder (model_zoo/families/wan_vae.h): causal 3D convolutions of kernel 3,
// RMS norms with one gain per channel, levels from the widest. Wan 2.1's: every level but the
// last halves the width in its upsampler, which the next level's first block takes. Wan 2.2's
// residual one: the upsamplers keep the width (their shortcuts have no parameters) and the last
// convolution gives 3 x vae_patch^2 channels.
std::int64_t WanVaeDecoderParameterCount(const ModelConfig& m) {
  auto conv3d = [](std::int64_t in, std::int64_t out, std::int64_t taps) { return in * out * taps + out; };
  auto resnet = [&](std::int64_t in, std::int64_t out) {
    return in + conv3d(in, out, 27) + out + conv3d(out, out, 27) + (in != out ? conv3d(in, out, 1) : 0);
  };
  const bool residual = m.vae_kind == VaeKind::kWanResidual;
  const auto& widths = m.vae_channels;
  const std::int64_t z = m.in_channels, top = widths.back();
  const int levels = static_cast<int>(widths.size());
  int temporal = 0;
  for (int t = m.vae_temporal; t > 1; t /= 2) ++temporal;
  std::int64_t total = conv3d(z, z, 1) + conv3d(z, top, 27) + 2 * resnet(top, top);
  total += top + conv3d(top, 3 * top, 1) + conv3d(top, top, 1);  // mid attention: norm, qkv, proj
  std::int64_t in = top;
  for (int i = 0; i < levels; ++i) {
    const std::int64_t out = widths[levels - 1 - i];
    for (int j = 0; j <= m.vae_layers; ++j, in = out) total += resnet(in, out);
    if (i + 1 < levels) {
      const std::int64_t upsampled = residual ? out : out / 2;
      total += conv3d(out, upsampled, 9);                   // the 2D upsampler's convolution
      if (i < temporal) total += conv3d(out, 2 * out, 3);  // and the temporal one's
      in = upsampled;
    }
  }
  const std::int64_t pixels = 3 * std::int64_t(m.vae_patch) * m.vae_patch;
  return total + widths.front() + conv3d(widths.front(), pixels, 27);
}

// AutoencoderKLHunyuanVideo's decoder (model_zoo/families/hunyuan_video_vae.h): causal 3D
// convolutions of kernel 3, GroupNorms, every level but the last upsampled by a convolution that
// keeps its width.
std::int64_t HunyuanVideoVaeDecoderParameterCount(const ModelConfig& m) {
  auto conv3d = [](std::int64_t in, std::int64_t out, std::int64_t taps) { return in * out * taps + out; };
  auto resnet = [&](std::int64_t in, std::int64_t out) {
    return 2 * in + conv3d(in, out, 27) + 2 * out + conv3d(out, out, 27) + (in != out ? conv3d(in, out, 1) : 0);
  };
  const auto& widths = m.vae_channels;
  const std::int64_t z = m.in_channels, top = widths.back();
  const int levels = static_cast<int>(widths.size());
  std::int64_t total = conv3d(z, z, 1) + conv3d(z, top, 27) + 2 * resnet(top, top);
  total += 2 * top + 4 * (top * top + top);  // mid attention: group norm, q, k, v, out
  std::int64_t in = top;
  for (int i = 0; i < levels; ++i) {
    const std::int64_t out = widths[levels - 1 - i];
    for (int j = 0; j <= m.vae_layers; ++j, in = out) total += resnet(in, out);
    if (i + 1 < levels) total += conv3d(out, out, 27);
  }
  return total + 2 * widths.front() + conv3d(widths.front(), 3, 27);
}

}  // namespace

std::int64_t VaeDecoderParameterCount(const ModelConfig& m) {
  if (m.vae_kind == VaeKind::kWan || m.vae_kind == VaeKind::kWanResidual)
    return WanVaeDecoderParameterCount(m);
  if (m.vae_kind == VaeKind::kHunyuanVideo) return HunyuanVideoVaeDecoderParameterCount(m);
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
