#include "model_zoo/shapes/diffusers_config.h"

#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/untrusted_input.h"

namespace ditbench {
namespace {

// No width, depth or count of a real diffusers model comes near this (the widest DiT is 5,120
// wide, the deepest 60 blocks).
constexpr std::int64_t kLargestDimension = 1 << 16;

// Reads keys of one config object, remembering which were read; a null value reads as absent
// (diffusers' None).
class ConfigKeys {
 public:
  ConfigKeys(const nlohmann::json& json, std::string file) : json_(json), file_(std::move(file)) {}

  [[noreturn]] void Fail(const std::string& key, const std::string& what) const {
    throw std::invalid_argument(file_ + ": key '" + key + "': " + what);
  }

  bool Has(const std::string& key) {
    read_.insert(key);
    return json_.contains(key) && !json_.at(key).is_null();
  }
  int Int(const std::string& key, int fallback) {
    if (!Has(key)) return fallback;
    const auto& v = json_.at(key);
    if (!v.is_number_integer()) Fail(key, v.dump() + " is not an integer");
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > kLargestDimension
                               : std::abs(v.get<std::int64_t>()) > kLargestDimension)
      Fail(key, v.dump() + " is out of range, expected at most " +
                    std::to_string(kLargestDimension));
    return static_cast<int>(v.get<std::int64_t>());
  }
  // At least 1 and at most kLargestDimension: every product of two such values fits in 64 bits,
  // so that the analytic parameter count that checks the model against memory cannot overflow.
  int PositiveInt(const std::string& key, int fallback) {
    const int v = Int(key, fallback);
    if (v < 1) Fail(key, std::to_string(v) + ", expected at least 1");
    return v;
  }
  double Number(const std::string& key, double fallback) {
    if (!Has(key)) return fallback;
    const auto& v = json_.at(key);
    if (!v.is_number()) Fail(key, v.dump() + " is not a number");
    return v.get<double>();
  }
  bool Bool(const std::string& key, bool fallback) {
    if (!Has(key)) return fallback;
    const auto& v = json_.at(key);
    if (!v.is_boolean()) Fail(key, v.dump() + " is not true or false");
    return v.get<bool>();
  }
  std::vector<nlohmann::json> List(const std::string& key) {
    if (!Has(key)) return {};
    const auto& v = json_.at(key);
    if (!v.is_array()) Fail(key, v.dump() + " is not a list");
    return v.get<std::vector<nlohmann::json>>();
  }
  // The key, when present, must hold `expected` (ditbench computes only that).
  void Expect(const std::string& key, const nlohmann::json& expected) {
    if (!Has(key)) return;
    const auto& v = json_.at(key);
    const bool same = v.is_number() && expected.is_number()
                          ? v.get<double>() == expected.get<double>()
                          : v == expected;
    if (!same) Fail(key, v.dump() + " is not supported, expected " + expected.dump());
  }
  // Read and ignored: the key does not change what the forward computes.
  void Ignore(const std::string& key) { read_.insert(key); }
  // Refuses keys that were not read.
  void RefuseOthers(const std::string& class_name) const {
    for (const auto& [key, value] : json_.items())
      if (!key.empty() && key[0] != '_' && !read_.count(key))
        Fail(key, "not a parameter of " + class_name + " that ditbench knows");
  }

 private:
  const nlohmann::json& json_;
  std::string file_;
  std::set<std::string> read_;
};

void SetWidth(ConfigKeys& keys, ModelConfig& m, int default_heads, int default_head_dim) {
  m.heads = keys.PositiveInt("num_attention_heads", default_heads);
  const std::int64_t hidden =
      std::int64_t(m.heads) * keys.PositiveInt("attention_head_dim", default_head_dim);
  if (hidden > kLargestDimension)
    keys.Fail("attention_head_dim", "num_attention_heads x attention_head_dim is " +
                                        std::to_string(hidden) + ", expected at most " +
                                        std::to_string(kLargestDimension));
  m.hidden = static_cast<int>(hidden);
}

ModelConfig PixArt(ConfigKeys& keys) {
  ModelConfig m;
  m.family = ModelFamily::kPixArt;
  m.text_attention = TextAttention::kCross;
  SetWidth(keys, m, 16, 72);
  m.in_channels = keys.PositiveInt("in_channels", 4);
  m.out_channels = keys.Has("out_channels") ? keys.PositiveInt("out_channels", 8) : m.in_channels;
  m.depth = keys.PositiveInt("num_layers", 28);
  m.patch = keys.PositiveInt("patch_size", 2);
  m.sample_size = keys.PositiveInt("sample_size", 128);
  m.interpolation_scale = keys.Number("interpolation_scale", 0);
  m.micro_conditions = keys.Bool("use_additional_conditions", m.sample_size == 128);
  if (!keys.Has("caption_channels"))
    keys.Fail("caption_channels", "missing: ditbench needs the caption projection");
  m.text_dim = keys.PositiveInt("caption_channels", 4096);
  if (keys.Int("cross_attention_dim", 1152) != m.hidden)
    keys.Fail("cross_attention_dim", "must equal num_attention_heads x attention_head_dim (" +
                                         std::to_string(m.hidden) + ")");
  if (m.micro_conditions && m.hidden % 3 != 0)
    keys.Fail("use_additional_conditions", "needs a width divisible by 3, not " +
                                               std::to_string(m.hidden));
  keys.Expect("attention_bias", true);
  keys.Expect("activation_fn", "gelu-approximate");
  keys.Expect("norm_type", "ada_norm_single");
  keys.Expect("norm_elementwise_affine", false);
  keys.Expect("norm_eps", 1e-6);
  keys.Expect("attention_type", "default");
  keys.Ignore("dropout");              // inference
  keys.Ignore("norm_num_groups");      // unused by ada_norm_single blocks
  keys.Ignore("num_embeds_ada_norm");  // unused by ada_norm_single blocks
  keys.Ignore("upcast_attention");     // scaled-dot-product attention computes in fp32 anyway
  return m;
}

ModelConfig Sd3(ConfigKeys& keys) {
  ModelConfig m;
  m.family = ModelFamily::kMmDit;
  m.text_attention = TextAttention::kJoint;
  SetWidth(keys, m, 18, 64);
  m.sample_size = keys.PositiveInt("sample_size", 128);
  m.patch = keys.PositiveInt("patch_size", 2);
  m.in_channels = keys.PositiveInt("in_channels", 16);
  m.out_channels = keys.Has("out_channels") ? keys.PositiveInt("out_channels", 16) : m.in_channels;
  m.depth = keys.PositiveInt("num_layers", 18);
  m.text_dim = keys.PositiveInt("joint_attention_dim", 4096);
  m.pooled_dim = keys.PositiveInt("pooled_projection_dim", 2048);
  m.pos_embed_max_size = keys.PositiveInt("pos_embed_max_size", 96);
  if (keys.Int("caption_projection_dim", 1152) != m.hidden)
    keys.Fail("caption_projection_dim", "must equal num_attention_heads x attention_head_dim (" +
                                            std::to_string(m.hidden) + ")");
  for (const auto& layer : keys.List("dual_attention_layers")) {
    if (!layer.is_number_integer() || layer.get<int>() < 0 || layer.get<int>() >= m.depth)
      keys.Fail("dual_attention_layers", layer.dump() + " is not a block index in [0, " +
                                             std::to_string(m.depth) + ")");
    m.dual_attention_layers.push_back(layer.get<int>());
  }
  if (keys.Has("qk_norm")) {
    keys.Expect("qk_norm", "rms_norm");
    m.qk_norm = true;
  }
  m.vae_scaling = 1.5305;
  m.vae_shift = 0.0609;
  return m;
}

ModelConfig Flux(ConfigKeys& keys) {
  ModelConfig m;
  m.family = ModelFamily::kFlux;
  m.text_attention = TextAttention::kJoint;
  SetWidth(keys, m, 24, 128);
  keys.Expect("patch_size", 1);
  const int packed = keys.PositiveInt("in_channels", 64);
  if (packed % 4) keys.Fail("in_channels", std::to_string(packed) + " is not 4 x latent channels");
  m.in_channels = m.out_channels = packed / 4;
  m.patch = 2;  // the 2x2 packing
  if (keys.Has("out_channels") && keys.Int("out_channels", packed) != packed)
    keys.Fail("out_channels", "must equal in_channels (" + std::to_string(packed) + ")");
  m.depth = keys.Int("num_layers", 19);
  m.single_blocks = keys.Int("num_single_layers", 38);
  if (m.depth < 0 || m.single_blocks < 0 || m.depth + m.single_blocks == 0)
    keys.Fail("num_layers", "no transformer blocks");
  m.text_dim = keys.PositiveInt("joint_attention_dim", 4096);
  m.pooled_dim = keys.PositiveInt("pooled_projection_dim", 768);
  m.guidance_embed = keys.Bool("guidance_embeds", false);
  m.negative_prompt = false;
  m.rope_axes = {16, 56, 56};
  auto axes = keys.List("axes_dims_rope");
  if (keys.Has("axes_dims_rope")) {
    if (axes.size() != 3) keys.Fail("axes_dims_rope", "expected 3 axes");
    for (int i = 0; i < 3; ++i) m.rope_axes[i] = axes[i].get<int>();
  }
  if (m.rope_axes[0] + m.rope_axes[1] + m.rope_axes[2] != m.head_dim())
    keys.Fail("axes_dims_rope", "must sum to attention_head_dim (" +
                                    std::to_string(m.head_dim()) + ")");
  m.vae_scaling = 0.3611;
  m.vae_shift = 0.1159;
  return m;
}

ModelConfig Vae(ConfigKeys& keys) {
  ModelConfig m;
  keys.Expect("in_channels", 3);
  keys.Expect("out_channels", 3);
  keys.Expect("act_fn", "silu");
  keys.Expect("norm_num_groups", 32);
  keys.Expect("mid_block_add_attention", true);
  for (const auto& type : keys.List("up_block_types"))
    if (type != "UpDecoderBlock2D")
      keys.Fail("up_block_types", type.dump() + " is not supported, expected \"UpDecoderBlock2D\"");
  m.vae_channels.clear();
  for (const auto& width : keys.List("block_out_channels")) {
    if (!width.is_number_integer() || width.get<std::int64_t>() < 32 ||
        width.get<std::int64_t>() > kLargestDimension || width.get<std::int64_t>() % 32)
      keys.Fail("block_out_channels", width.dump() + " is not a positive multiple of 32 up to " +
                                          std::to_string(kLargestDimension));
    m.vae_channels.push_back(static_cast<int>(width.get<std::int64_t>()));
  }
  if (m.vae_channels.size() > 8)
    keys.Fail("block_out_channels", std::to_string(m.vae_channels.size()) +
                                        " levels, expected at most 8 (a 128x upsampling)");
  if (m.vae_channels.empty()) m.vae_channels = {64};
  if (keys.List("up_block_types").size() != m.vae_channels.size() && keys.Has("up_block_types"))
    keys.Fail("up_block_types", "one per entry of block_out_channels");
  m.vae_downsample = 1 << (m.vae_channels.size() - 1);
  m.vae_layers = keys.PositiveInt("layers_per_block", 1);
  m.in_channels = keys.PositiveInt("latent_channels", 4);
  m.vae_scaling = keys.Number("scaling_factor", 0.18215);
  m.vae_shift = keys.Number("shift_factor", 0);
  m.vae_post_quant_conv = keys.Bool("use_post_quant_conv", true);
  // The encoder's side and the pipeline's business, not the decode's.
  for (const char* key : {"down_block_types", "sample_size", "latents_mean", "latents_std",
                          "force_upcast", "use_quant_conv"})
    keys.Ignore(key);
  return m;
}

}  // namespace

DiffusersModel DiffusersConfigFromJson(const nlohmann::json& json, const std::string& file) {
  if (!json.is_object()) throw std::invalid_argument(file + ": not a JSON object");
  if (!json.contains("_class_name") || !json.at("_class_name").is_string())
    throw std::invalid_argument(file + ": key '_class_name': missing (not a diffusers config)");
  DiffusersModel model;
  model.class_name = json.at("_class_name").get<std::string>();
  ConfigKeys keys(json, file);
  if (model.class_name == "PixArtTransformer2DModel") {
    model.config = PixArt(keys);
  } else if (model.class_name == "SD3Transformer2DModel") {
    model.config = Sd3(keys);
  } else if (model.class_name == "FluxTransformer2DModel") {
    model.config = Flux(keys);
  } else if (model.class_name == "AutoencoderKL") {
    model.kind = DiffusersKind::kVae;
    model.config = Vae(keys);
  } else {
    keys.Fail("_class_name", "'" + model.class_name +
                                 "' is not supported, expected PixArtTransformer2DModel, "
                                 "SD3Transformer2DModel, FluxTransformer2DModel or AutoencoderKL");
  }
  keys.RefuseOthers(model.class_name);
  model.config.name = model.class_name;
  return model;
}

constexpr std::uint64_t kMaxConfigBytes = 1 << 20;
constexpr int kMaxConfigDepth = 8;

DiffusersModel ReadDiffusersConfig(const std::filesystem::path& dir) {
  const auto path = dir / "config.json";
  if (!std::filesystem::exists(path))
    throw std::invalid_argument(path.string() + ": cannot open (not a diffusers folder)");
  // A diffusers config.json is a flat object of a few kilobytes.
  nlohmann::json json;
  try {
    json = ParseBoundedJson(ReadRegularFile(path, kMaxConfigBytes), kMaxConfigDepth,
                            path.string());
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(e.what());
  }
  return DiffusersConfigFromJson(json, path.string());
}

namespace {

// One architecture field: diffusers' key (for the message), ditbench's dimension, both values.
struct Field {
  const char* diffusers_key;
  const char* dimension;
  std::string folder, model;
};

std::string Text(bool b) { return b ? "true" : "false"; }

std::string AxesText(const std::array<int, 3>& a) {
  return fmt::format("[{}, {}, {}]", a[0], a[1], a[2]);
}

// The blocks with dual attention, as diffusers lists them: "[0, 1, 2]".
std::string DualAttentionText(const ModelConfig& m) {
  std::vector<int> blocks;
  for (int i = 0; i < m.depth; ++i)
    if (m.dual_attention(i)) blocks.push_back(i);
  return fmt::format("[{}]", fmt::join(blocks, ", "));
}

}  // namespace

ModelConfig ModelWithDiffusersWeights(const ModelConfig& model, const DiffusersModel& folder,
                                      const std::string& file) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(fmt::format("{}: {}", file, what));
  };
  if (folder.kind != DiffusersKind::kTransformer)
    fail(fmt::format("'{}' is a VAE, expected the transformer of {}", folder.class_name,
                     model.name));
  const ModelConfig& f = folder.config;
  if (f.family != model.family)
    fail(fmt::format("_class_name '{}' is not the {} family of model '{}'", folder.class_name,
                     FamilyName(model.family), model.name));
  const Field fields[] = {
      {"num_layers", "depth", std::to_string(f.depth), std::to_string(model.depth)},
      {"num_single_layers", "single_blocks", std::to_string(f.single_blocks),
       std::to_string(model.single_blocks)},
      {"num_attention_heads", "heads", std::to_string(f.heads), std::to_string(model.heads)},
      {"num_attention_heads x attention_head_dim", "hidden", std::to_string(f.hidden),
       std::to_string(model.hidden)},
      {"patch_size", "patch", std::to_string(f.patch), std::to_string(model.patch)},
      {"in_channels", "latent channels", std::to_string(f.in_channels),
       std::to_string(model.in_channels)},
      {"out_channels", "output channels", std::to_string(f.out_channels),
       std::to_string(model.out_channels)},
      {model.text_attention == TextAttention::kCross ? "caption_channels" : "joint_attention_dim",
       "text_dim", std::to_string(f.text_dim), std::to_string(model.text_dim)},
      {"pooled_projection_dim", "pooled width", std::to_string(f.pooled_dim),
       std::to_string(model.pooled_dim)},
      {"guidance_embeds", "guidance embedding", Text(f.guidance_embed),
       Text(model.guidance_embed)},
      {"axes_dims_rope", "rotary axes", AxesText(f.rope_axes), AxesText(model.rope_axes)},
      {"qk_norm", "qk norm", Text(f.qk_norm), Text(model.qk_norm)},
      {"dual_attention_layers", "dual attention blocks", DualAttentionText(f),
       DualAttentionText(model)},
      {"use_additional_conditions", "micro-conditions", Text(f.micro_conditions),
       Text(model.micro_conditions)},
  };
  for (const Field& field : fields)
    if (field.folder != field.model)
      fail(fmt::format("{} is {} where model '{}' has {} {}, expected the same architecture "
                       "(override the preset's dimensions to match)",
                       field.diffusers_key, field.folder, model.name, field.dimension,
                       field.model));
  // Where diffusers' configuration says more than a preset does (position tables), it wins.
  ModelConfig resolved = model;
  resolved.sample_size = f.sample_size;
  resolved.interpolation_scale = f.interpolation_scale;
  resolved.pos_embed_max_size = f.pos_embed_max_size;
  return resolved;
}

ModelConfig ModelWithDiffusersVae(const ModelConfig& model, const DiffusersModel& folder,
                                  const std::string& file) {
  if (folder.kind != DiffusersKind::kVae)
    throw std::invalid_argument(
        fmt::format("{}: '{}' is not a VAE, expected AutoencoderKL", file, folder.class_name));
  const ModelConfig& f = folder.config;
  if (f.in_channels != model.in_channels)
    throw std::invalid_argument(
        fmt::format("{}: latent_channels is {} where model '{}' has {} latent channels", file,
                    f.in_channels, model.name, model.in_channels));
  if (f.vae_downsample != model.vae_downsample)
    throw std::invalid_argument(fmt::format(
        "{}: block_out_channels give a {}x upsampling where model '{}' has latents {}x smaller "
        "than images", file, f.vae_downsample, model.name, model.vae_downsample));
  ModelConfig resolved = model;
  resolved.vae_channels = f.vae_channels;
  resolved.vae_layers = f.vae_layers;
  resolved.vae_scaling = f.vae_scaling;
  resolved.vae_shift = f.vae_shift;
  resolved.vae_post_quant_conv = f.vae_post_quant_conv;
  return resolved;
}

}  // namespace ditbench
