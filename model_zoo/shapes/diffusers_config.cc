#include "model_zoo/shapes/diffusers_config.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/untrusted_input.h"
#include "model_zoo/shapes/config_keys.h"
#include "model_zoo/shapes/family.h"

namespace ditbench {
namespace {

// A VAE class's defaults for the keys GroupNormVae reads.
struct VaeDefaults {
  std::vector<int> widths;
  int layers_per_block;
  int latent_channels;
  double scaling_factor;
};

// What AutoencoderKL and AutoencoderKLHunyuanVideo share: RGB, SiLU, GroupNorms of
// norm_num_groups, an attention in the mid block, up blocks of `up_block`, their widths, depth
// and latent channels, and a scaling factor.
ModelConfig GroupNormVae(ConfigKeys& keys, const char* up_block, const VaeDefaults& defaults) {
  ModelConfig m;
  keys.Expect("in_channels", 3);
  keys.Expect("out_channels", 3);
  keys.Expect("act_fn", "silu");
  m.vae_norm_groups = keys.PositiveInt("norm_num_groups", 32);
  keys.Expect("mid_block_add_attention", true);
  for (const auto& type : keys.List("up_block_types"))
    if (type != up_block)
      keys.Fail("up_block_types", type.dump() + " is not supported, expected \"" + up_block + "\"");
  m.vae_channels.clear();
  for (const auto& width : keys.List("block_out_channels")) {
    // GroupNorm splits every width into norm_num_groups groups.
    if (!width.is_number_integer() || width.get<std::int64_t>() < m.vae_norm_groups ||
        width.get<std::int64_t>() > kLargestDimension ||
        width.get<std::int64_t>() % m.vae_norm_groups)
      keys.Fail("block_out_channels",
                width.dump() + " is not a positive multiple of norm_num_groups (" +
                    std::to_string(m.vae_norm_groups) + ") up to " +
                    std::to_string(kLargestDimension));
    m.vae_channels.push_back(static_cast<int>(width.get<std::int64_t>()));
  }
  if (m.vae_channels.size() > 8)
    keys.Fail("block_out_channels", std::to_string(m.vae_channels.size()) +
                                        " levels, expected at most 8 (a 128x upsampling)");
  if (!keys.Has("block_out_channels")) m.vae_channels = defaults.widths;
  if (m.vae_channels.empty()) keys.Fail("block_out_channels", "expected at least one level");
  if (keys.List("up_block_types").size() != m.vae_channels.size() && keys.Has("up_block_types"))
    keys.Fail("up_block_types", "one per entry of block_out_channels");
  m.vae_downsample = 1 << (m.vae_channels.size() - 1);
  m.vae_layers = keys.PositiveInt("layers_per_block", defaults.layers_per_block);
  m.in_channels = keys.PositiveInt("latent_channels", defaults.latent_channels);
  m.vae_scaling = keys.Number("scaling_factor", defaults.scaling_factor);
  if (!(m.vae_scaling > 0)) keys.Fail("scaling_factor", "expected a positive number");
  return m;
}

ModelConfig Vae(ConfigKeys& keys) {
  ModelConfig m = GroupNormVae(keys, "UpDecoderBlock2D", {{64}, 1, 4, 0.18215});
  m.vae_shift = keys.Number("shift_factor", 0);
  m.vae_post_quant_conv = keys.Bool("use_post_quant_conv", true);
  // The encoder's side and the pipeline's business, not the decode's.
  for (const char* key : {"down_block_types", "sample_size", "latents_mean", "latents_std",
                          "force_upcast", "use_quant_conv"})
    keys.Ignore(key);
  return m;
}

// AutoencoderKLHunyuanVideo: 4x temporal compression, its spatial compression from its levels.
ModelConfig HunyuanVideoVae(ConfigKeys& keys) {
  ModelConfig m =
      GroupNormVae(keys, "HunyuanVideoUpBlock3D", {{128, 256, 512, 512}, 2, 16, 0.476986});
  if (m.vae_channels.size() < 3)
    keys.Fail("block_out_channels", "expected at least 3 levels (two of them temporal)");
  m.vae_kind = VaeKind::kHunyuanVideo;
  m.vae_temporal = 4;
  m.vae_post_quant_conv = true;
  keys.Expect("temporal_compression_ratio", 4);
  keys.Expect("spatial_compression_ratio", m.vae_downsample);
  keys.Ignore("down_block_types");  // the encoder's
  return m;
}

// AutoencoderKLWan (Wan 2.1's, or Wan 2.2's with is_residual): its decoder's widths are
// decoder_base_dim (or base_dim) times dim_mult; the temporal downsampling levels must be the
// deepest ones (the decoder's first); patch_size p folds p x p pixels into 3 p^2 channels.
ModelConfig WanVae(ConfigKeys& keys) {
  ModelConfig m;
  m.vae_kind = keys.Bool("is_residual", false) ? VaeKind::kWanResidual : VaeKind::kWan;
  m.vae_patch = keys.PositiveInt("patch_size", 1);  // null: 1
  if (m.vae_patch > 16)
    keys.Fail("patch_size", std::to_string(m.vae_patch) + ", expected at most 16");
  const int pixels = 3 * m.vae_patch * m.vae_patch;
  keys.Expect("in_channels", pixels);
  keys.Expect("out_channels", pixels);
  const int encoder_base = keys.PositiveInt("base_dim", 96);  // the decoder's too, by default
  const int base = keys.PositiveInt("decoder_base_dim", encoder_base);
  m.in_channels = keys.PositiveInt("z_dim", 16);
  auto mults = keys.List("dim_mult");
  if (!keys.Has("dim_mult")) mults = {1, 2, 4, 4};
  if (mults.empty() || mults.size() > 8)
    keys.Fail("dim_mult", "expected 1 to 8 levels");
  m.vae_channels.clear();
  for (const auto& mult : mults) {
    if (!mult.is_number_integer() || mult.get<std::int64_t>() < 1 ||
        mult.get<std::int64_t>() * base > kLargestDimension || (mult.get<std::int64_t>() * base) % 2)
      keys.Fail("dim_mult", mult.dump() + " is not a positive integer giving an even width (x " +
                                std::to_string(base) + ") up to " +
                                std::to_string(kLargestDimension));
    m.vae_channels.push_back(static_cast<int>(mult.get<std::int64_t>()) * base);
  }
  m.vae_downsample = (1 << (m.vae_channels.size() - 1)) * m.vae_patch;
  m.vae_layers = keys.PositiveInt("num_res_blocks", 2);
  auto temporal = keys.List("temperal_downsample");
  if (!keys.Has("temperal_downsample")) temporal = {false, true, true};
  if (temporal.size() + 1 != m.vae_channels.size())
    keys.Fail("temperal_downsample", "one per level of dim_mult but the last");
  int levels = 0;
  for (size_t i = 0; i < temporal.size(); ++i) {
    if (!temporal[i].is_boolean()) keys.Fail("temperal_downsample", temporal[i].dump() + " is not true or false");
    if (temporal[i].get<bool>()) ++levels;
    else if (levels > 0) keys.Fail("temperal_downsample", "expected the temporal levels last, as [false, true, true]");
  }
  m.vae_temporal = 1 << levels;
  // A residual level's shortcut repeats each of its input channels over its output's channels,
  // frames and 2x2 pixels: a whole number of times.
  for (size_t i = 0; m.vae_kind == VaeKind::kWanResidual && i + 1 < m.vae_channels.size(); ++i) {
    const size_t from = m.vae_channels.size() - 1 - i;
    const int in = m.vae_channels[std::min(from + 1, m.vae_channels.size() - 1)];
    const int out = m.vae_channels[from], factor = i < size_t(levels) ? 8 : 4;
    if (out * factor % in != 0)
      keys.Fail("dim_mult", "a residual level from width " + std::to_string(in) + " to " +
                                std::to_string(out) + " repeats channels " +
                                std::to_string(out * factor) + " / " + std::to_string(in) +
                                " times, expected a whole number");
  }
  // The pipeline decodes latent * std + mean: one of each per latent channel. Absent, the class's
  // defaults, Wan 2.1's 16 channels' (its presets hold them). The class itself reads them
  // nowhere, so a count other than z_dim (the defaults with another z_dim: none) loads, and only
  // the decode, which applies them, refuses it (model_zoo/families/wan_vae.cc): a folder whose
  // transformer is timed at scope forward or denoise is not refused over its VAE's statistics.
  const ModelConfig& wan21 = *FindModelPreset("wan2.1-t2v-14b");
  const auto statistics = [&](const std::string& key, bool positive) {
    if (!keys.Has(key)) {
      if (m.in_channels != wan21.in_channels) return std::vector<double>{};
      return key == "latents_mean" ? wan21.vae_latents_mean : wan21.vae_latents_std;
    }
    std::vector<double> values;
    for (const auto& v : keys.List(key)) {
      if (!v.is_number() || (positive && !(v.get<double>() > 0)))
        keys.Fail(key, v.dump() + (positive ? " is not a positive number" : " is not a number"));
      values.push_back(v.get<double>());
    }
    return values;
  };
  m.vae_latents_mean = statistics("latents_mean", false);
  m.vae_latents_std = statistics("latents_std", true);
  if (keys.Has("scale_factor_spatial") && keys.Int("scale_factor_spatial", 8) != m.vae_downsample)
    keys.Fail("scale_factor_spatial", "expected " + std::to_string(m.vae_downsample) +
                                          " (from dim_mult and patch_size)");
  if (keys.Has("scale_factor_temporal") && keys.Int("scale_factor_temporal", 4) != m.vae_temporal)
    keys.Fail("scale_factor_temporal", "expected " + std::to_string(m.vae_temporal) + " (from temperal_downsample)");
  // The encoder's side, and the decoder's attention scales, which AutoencoderKLWan's decoder
  // does not use; dropout is off in inference.
  // diffusers 0.35.2 clamps the decode to [-1, 1] whatever clip_output says.
  for (const char* key : {"attn_scales", "dropout", "clip_output"}) keys.Ignore(key);
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
  const auto& families = FamilyShapesTable();
  const auto family = std::find_if(families.begin(), families.end(), [&](const auto& f) {
    return f.diffusers_class == model.class_name;
  });
  if (family != families.end()) {
    model.config = family->from_diffusers(keys);
  } else if (model.class_name == "AutoencoderKL") {
    model.kind = DiffusersKind::kVae;
    model.config = Vae(keys);
  } else if (model.class_name == "AutoencoderKLWan") {
    model.kind = DiffusersKind::kVae;
    model.config = WanVae(keys);
  } else if (model.class_name == "AutoencoderKLHunyuanVideo") {
    model.kind = DiffusersKind::kVae;
    model.config = HunyuanVideoVae(keys);
  } else {
    std::string expected;
    for (const FamilyShapes& f : families) expected += std::string(f.diffusers_class) + ", ";
    expected.resize(expected.size() - 2);
    keys.Fail("_class_name", "'" + model.class_name + "' is not supported, expected " +
                                 expected + ", AutoencoderKL, AutoencoderKLWan or AutoencoderKLHunyuanVideo");
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
      {ShapesOf(model.family).text_dim_key.data(), "text_dim", std::to_string(f.text_dim),
       std::to_string(model.text_dim)},
      {"pooled_projection_dim", "pooled width", std::to_string(f.pooled_dim),
       std::to_string(model.pooled_dim)},
      {"guidance_embeds", "guidance embedding", Text(f.guidance_embed), Text(model.guidance_embed)},
      {"axes_dims_rope", "rotary axes", AxesText(f.rope_axes), AxesText(model.rope_axes)},
      {"qk_norm", "qk norm", Text(f.qk_norm), Text(model.qk_norm)},
      {"dual_attention_layers", "dual attention blocks", DualAttentionText(f),
       DualAttentionText(model)},
      {"use_additional_conditions", "micro-conditions", Text(f.micro_conditions),
       Text(model.micro_conditions)},
      {"ffn_dim", "MLP width", std::to_string(f.mlp_width()), std::to_string(model.mlp_width())},
      {"patch_size (temporal)", "temporal patch", std::to_string(f.patch_t),
       std::to_string(model.patch_t)},
      {"num_refiner_layers", "token-refiner blocks", std::to_string(f.refiner_blocks),
       std::to_string(model.refiner_blocks)},
      {"freq_dim", "timestep features", std::to_string(f.time_freq_dim),
       std::to_string(model.time_freq_dim)},
      {"cross_attn_norm", "cross-attention norm", Text(f.cross_attn_norm),
       Text(model.cross_attn_norm)},
  };
  for (const Field& field : fields)
    if (field.folder != field.model)
      fail(fmt::format("{} is {} where model '{}' has {} {}, expected the same architecture "
                       "(override the preset's dimensions to match)",
                       field.diffusers_key, field.folder, model.name, field.dimension,
                       field.model));
  // Where diffusers' configuration says more than a preset does (position tables, the norms'
  // epsilon, the rotary base), it wins.
  ModelConfig resolved = model;
  resolved.norm_eps = f.norm_eps;
  resolved.rope_theta = f.rope_theta;
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
  if (f.vae_kind != model.vae_kind || f.vae_temporal != model.vae_temporal)
    throw std::invalid_argument(fmt::format(
        "{}: '{}' is not the VAE of model '{}' ({}), expected {}", file, folder.class_name,
        model.name, f.vae_temporal ? fmt::format("{}x temporal", f.vae_temporal) : "an image VAE",
        model.vae_kind == VaeKind::kWan            ? "AutoencoderKLWan"
        : model.vae_kind == VaeKind::kWanResidual  ? "AutoencoderKLWan with is_residual"
        : model.vae_kind == VaeKind::kHunyuanVideo ? "AutoencoderKLHunyuanVideo"
                                                   : "AutoencoderKL"));
  ModelConfig resolved = model;
  resolved.vae_latents_mean = f.vae_latents_mean;
  resolved.vae_latents_std = f.vae_latents_std;
  resolved.vae_channels = f.vae_channels;
  resolved.vae_norm_groups = f.vae_norm_groups;
  resolved.vae_layers = f.vae_layers;
  resolved.vae_scaling = f.vae_scaling;
  resolved.vae_shift = f.vae_shift;
  resolved.vae_post_quant_conv = f.vae_post_quant_conv;
  resolved.vae_patch = f.vae_patch;
  return resolved;
}

}  // namespace ditbench
