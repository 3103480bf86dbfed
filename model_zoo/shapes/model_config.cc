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

std::int64_t ParameterCount(const ModelConfig& m) {
  return std::int64_t(std::max(1, m.experts)) * ShapesOf(m.family).parameter_count(m);
}

std::int64_t Fp8ParameterCount(const ModelConfig& m) {
  ModelConfig without_blocks = m;
  without_blocks.depth = 0;
  without_blocks.single_blocks = 0;
  const std::int64_t blocks = ParameterCount(m) - ParameterCount(without_blocks);
  const std::int64_t d = m.hidden;
  std::int64_t modulation = 0;
  if (m.family != ModelFamily::kPixArt && m.family != ModelFamily::kWan)
    modulation =
        m.depth * 2 * LinearParameters(d, 6 * d) + m.single_blocks * LinearParameters(d, 3 * d);
  if (m.family == ModelFamily::kMmDit && m.depth > 0) {
    // SD3: the last block modulates its text stream for attention only (2 x hidden outputs),
    // and SD3.5's dual-attention blocks modulate with 9 x hidden outputs, not 6.
    modulation -= LinearParameters(d, 6 * d) - LinearParameters(d, 2 * d);
    modulation += std::int64_t(m.dual_attention_blocks()) * 3 * d * (d + 1);
  }
  return std::max<std::int64_t>(0, blocks - std::int64_t(std::max(1, m.experts)) * modulation);
}

}  // namespace ditbench
