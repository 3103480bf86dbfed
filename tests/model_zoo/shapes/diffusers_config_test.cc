#include "model_zoo/shapes/diffusers_config.h"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model_zoo/shapes/vae_shapes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::diffusers_config_test {
namespace {

nlohmann::json Flux() {
  return {{"_class_name", "FluxTransformer2DModel"}, {"_diffusers_version", "0.35.2"},
          {"patch_size", 1}, {"in_channels", 64}, {"num_layers", 2}, {"num_single_layers", 3},
          {"attention_head_dim", 32}, {"num_attention_heads", 2}, {"joint_attention_dim", 48},
          {"pooled_projection_dim", 32}, {"guidance_embeds", true},
          {"axes_dims_rope", {4, 14, 14}}, {"out_channels", nullptr}};
}

std::string Error(const nlohmann::json& json) {
  try {
    DiffusersConfigFromJson(json, "m/config.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(DiffusersConfigTest, FluxConfigBecomesTheModelZooShape) {
  const DiffusersModel m = DiffusersConfigFromJson(Flux(), "m/config.json");
  EXPECT_EQ(m.kind, DiffusersKind::kTransformer);
  EXPECT_EQ(m.config.family, ModelFamily::kFlux);
  EXPECT_EQ(m.config.depth, 2);
  EXPECT_EQ(m.config.single_blocks, 3);
  EXPECT_EQ(m.config.hidden, 64);
  EXPECT_EQ(m.config.in_channels, 16);  // 64 packed = 16 latent channels x 2 x 2
  EXPECT_EQ(m.config.text_dim, 48);
  EXPECT_TRUE(m.config.guidance_embed);
}

TEST(DiffusersConfigTest, UnsupportedValueNamesFileKeyAndExpectation) {
  auto json = Flux();
  json["patch_size"] = 2;
  EXPECT_EQ(Error(json), "m/config.json: key 'patch_size': 2 is not supported, expected 1");
}

TEST(DiffusersConfigTest, RotaryAxesMustCoverTheHeadDimension) {
  auto json = Flux();
  json["axes_dims_rope"] = {4, 14, 16};
  EXPECT_NE(Error(json).find("key 'axes_dims_rope': must sum to attention_head_dim (32)"),
            std::string::npos);
}

TEST(DiffusersConfigTest, UnknownKeyIsRefused) {
  auto json = Flux();
  json["use_magic"] = true;
  EXPECT_NE(Error(json).find("key 'use_magic': not a parameter"), std::string::npos);
}

TEST(DiffusersConfigTest, Sd35DualAttentionLayersMustBeBlocks) {
  nlohmann::json json = {{"_class_name", "SD3Transformer2DModel"},
                         {"caption_projection_dim", 1152}, {"num_layers", 3},
                         {"qk_norm", "rms_norm"}, {"dual_attention_layers", {0, 1}}};
  const ModelConfig m = DiffusersConfigFromJson(json, "c").config;
  EXPECT_EQ(m.dual_attention_layers, (std::vector<int>{0, 1}));
  EXPECT_TRUE(m.dual_attention(1));
  EXPECT_FALSE(m.dual_attention(2));
  EXPECT_EQ(m.dual_attention_blocks(), 2);
  json["dual_attention_layers"] = {0, 3};
  EXPECT_EQ(Error(json),
            "m/config.json: key 'dual_attention_layers': 3 is not a block index in [0, 3)");
}

// sd3.5-medium-tiny's architecture differs from sd3-medium-tiny's only in its dual attention
// (and qk norms): a folder of one is refused for the other, naming the dual attention.
TEST(DiffusersConfigTest, WeightsFolderMustMatchThePresetsDualAttention) {
  const ModelConfig& dual = *FindModelPreset("sd3.5-medium-tiny");
  DiffusersModel folder;
  folder.kind = DiffusersKind::kTransformer;
  folder.class_name = "SD3Transformer2DModel";
  folder.config = dual;
  EXPECT_EQ(ModelWithDiffusersWeights(dual, folder, "m/config.json").name, "sd3.5-medium-tiny");
  ModelConfig other = dual;
  other.dual_attention_layers = {1};
  try {
    ModelWithDiffusersWeights(other, folder, "m/config.json");
    FAIL() << "a folder with other dual-attention blocks was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dual_attention_layers is [0] where model "
                                         "'sd3.5-medium-tiny' has dual attention blocks [1]"),
              std::string::npos)
        << e.what();
  }
}

TEST(DiffusersConfigTest, PixArtMicroConditionsFollowSampleSize) {
  nlohmann::json json = {{"_class_name", "PixArtTransformer2DModel"},
                         {"caption_channels", 4096}, {"sample_size", 128}};
  EXPECT_TRUE(DiffusersConfigFromJson(json, "c").config.micro_conditions);
  json["sample_size"] = 64;
  EXPECT_FALSE(DiffusersConfigFromJson(json, "c").config.micro_conditions);
}

TEST(DiffusersConfigTest, VaeDecoderShape) {
  nlohmann::json json = {{"_class_name", "AutoencoderKL"},
                         {"block_out_channels", {128, 256, 512, 512}},
                         {"up_block_types", std::vector<std::string>(4, "UpDecoderBlock2D")},
                         {"layers_per_block", 2}, {"latent_channels", 16},
                         {"scaling_factor", 0.3611}, {"shift_factor", 0.1159},
                         {"use_post_quant_conv", false}};
  const DiffusersModel m = DiffusersConfigFromJson(json, "c");
  EXPECT_EQ(m.kind, DiffusersKind::kVae);
  EXPECT_EQ(m.config.vae_downsample, 8);
  EXPECT_EQ(m.config.in_channels, 16);
  EXPECT_FALSE(m.config.vae_post_quant_conv);
  EXPECT_DOUBLE_EQ(m.config.vae_shift, 0.1159);
}

// AutoencoderKL takes any norm_num_groups that divides its widths (GroupNorm's rule).
TEST(DiffusersConfigTest, VaeNormGroupsOtherThan32AreAcceptedWhereTheyDivideTheWidths) {
  nlohmann::json json = {{"_class_name", "AutoencoderKL"},
                         {"block_out_channels", {48, 96}},
                         {"up_block_types", std::vector<std::string>(2, "UpDecoderBlock2D")},
                         {"norm_num_groups", 16}};
  EXPECT_EQ(DiffusersConfigFromJson(json, "c").config.vae_norm_groups, 16);
  json.erase("norm_num_groups");  // diffusers' default, 32: 48 no longer divides
  EXPECT_NE(Error(json).find("norm_num_groups (32)"), std::string::npos) << Error(json);
  json["block_out_channels"] = {40, 96};
  json["norm_num_groups"] = 16;
  const std::string error = Error(json);
  EXPECT_NE(error.find("key 'block_out_channels': 40 is not a positive multiple of "
                       "norm_num_groups (16)"),
            std::string::npos)
      << error;
}

// The video VAEs: AutoencoderKLWan's widths from base_dim x dim_mult, its temporal levels and
// per-channel statistics; AutoencoderKLHunyuanVideo's from block_out_channels; both 4x in time.
TEST(DiffusersConfigTest, VideoVaeDecoderShapes) {
  nlohmann::json wan = {{"_class_name", "AutoencoderKLWan"}, {"base_dim", 96}, {"z_dim", 16},
                        {"dim_mult", {1, 2, 4, 4}}, {"num_res_blocks", 2},
                        {"temperal_downsample", {false, true, true}},
                        {"latents_mean", std::vector<double>(16, 0.5)},
                        {"latents_std", std::vector<double>(16, 2.0)}, {"is_residual", false},
                        {"attn_scales", nlohmann::json::array()}, {"dropout", 0.0}};
  const DiffusersModel w = DiffusersConfigFromJson(wan, "c");
  EXPECT_EQ(w.kind, DiffusersKind::kVae);
  EXPECT_EQ(w.config.vae_kind, VaeKind::kWan);
  EXPECT_EQ(w.config.vae_channels, (std::vector<int>{96, 192, 384, 384}));
  EXPECT_EQ(w.config.vae_downsample, 8);
  EXPECT_EQ(w.config.vae_temporal, 4);
  EXPECT_EQ(w.config.vae_latents_std, std::vector<double>(16, 2.0));
  // The real decoder's analytic count matches the preset's (both AutoencoderKLWan of Wan 2.1).
  ModelConfig preset = *FindModelPreset("wan2.1-t2v-14b");
  EXPECT_EQ(VaeDecoderParameterCount(w.config), VaeDecoderParameterCount(preset));
  EXPECT_EQ(VaeDecoderParameterCount(ModelWithDiffusersVae(preset, w, "c")),
            VaeDecoderParameterCount(preset));

  auto refused = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json bad = wan;
    bad[key] = value;
    return Error(bad);
  };
  EXPECT_NE(refused("is_residual", "yes").find("key 'is_residual'"), std::string::npos);
  // Statistics of another count load (the class reads them nowhere); the decode refuses them.
  nlohmann::json fifteen = wan;
  fifteen["latents_std"] = std::vector<double>(15, 1.0);
  EXPECT_EQ(DiffusersConfigFromJson(fifteen, "c").config.vae_latents_std.size(), 15u);
  EXPECT_NE(refused("latents_std", std::vector<double>(16, 0.0)).find("not a positive number"),
            std::string::npos);
  EXPECT_NE(refused("temperal_downsample", {true, false, true}).find("temporal levels last"),
            std::string::npos);
  // Without statistics, the class's defaults (Wan 2.1's), which only 16 channels can take.
  nlohmann::json defaults = wan;
  defaults.erase("latents_mean");
  defaults.erase("latents_std");
  EXPECT_EQ(DiffusersConfigFromJson(defaults, "c").config.vae_latents_std,
            FindModelPreset("wan2.1-t2v-1.3b")->vae_latents_std);
  defaults["z_dim"] = 48;
  EXPECT_TRUE(DiffusersConfigFromJson(defaults, "c").config.vae_latents_mean.empty())
      << "no defaults for 48 channels: none, for the decode to refuse";

  nlohmann::json hunyuan = {{"_class_name", "AutoencoderKLHunyuanVideo"},
                            {"block_out_channels", {128, 256, 512, 512}},
                            {"up_block_types", std::vector<std::string>(4, "HunyuanVideoUpBlock3D")},
                            {"layers_per_block", 2}, {"latent_channels", 16},
                            {"temporal_compression_ratio", 4}, {"spatial_compression_ratio", 8}};
  const DiffusersModel h = DiffusersConfigFromJson(hunyuan, "c");
  EXPECT_EQ(h.config.vae_kind, VaeKind::kHunyuanVideo);
  EXPECT_EQ(h.config.vae_temporal, 4);
  EXPECT_DOUBLE_EQ(h.config.vae_scaling, 0.476986);  // the class's default
  EXPECT_EQ(VaeDecoderParameterCount(h.config),
            VaeDecoderParameterCount(*FindModelPreset("hunyuanvideo")));
  hunyuan["temporal_compression_ratio"] = 8;
  EXPECT_NE(Error(hunyuan).find("key 'temporal_compression_ratio'"), std::string::npos);
  // The published decoders' sizes: diffusers 0.35.2's AutoencoderKLWan() and
  // AutoencoderKLHunyuanVideo() built on the meta device, parameters outside encoder. and
  // quant_conv. counted.
  EXPECT_EQ(VaeDecoderParameterCount(*FindModelPreset("wan2.1-t2v-1.3b")), 73295603);
  EXPECT_EQ(VaeDecoderParameterCount(*FindModelPreset("hunyuanvideo")), 146136339);
  // A Wan VAE folder for an image model, or an image VAE for Wan, is refused by name.
  EXPECT_THROW(ModelWithDiffusersVae(*FindModelPreset("pixart-alpha"), w, "c"), std::invalid_argument);
}

// A folder's GroupNorm groups reach the decoder the worker builds, with its widths: 8-wide
// levels in 4 groups (the reference engine's tiny VAE) ran with the preset's 32 groups before.
TEST(DiffusersConfigTest, AVaeFoldersNormGroupsComeWithItsWidths) {
  nlohmann::json tiny = {{"_class_name", "AutoencoderKL"},
                         {"in_channels", 3},
                         {"out_channels", 3},
                         {"latent_channels", 4},
                         {"layers_per_block", 1},
                         {"block_out_channels", {8, 8, 8, 8}},
                         {"norm_num_groups", 4},
                         {"act_fn", "silu"},
                         {"scaling_factor", 0.18215}};
  const DiffusersModel folder = DiffusersConfigFromJson(tiny, "c");
  const ModelConfig model =
      ModelWithDiffusersVae(*FindModelPreset("pixart-alpha-tiny"), folder, "c");
  EXPECT_EQ(model.vae_channels, (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(model.vae_norm_groups, 4);
}

// Wan 2.2 TI2V-5B's vae/config.json (its statistics shortened to their count): residual levels,
// decoder_base_dim over base_dim, 2x2 patches (12 pixel channels), 16x in all.
TEST(DiffusersConfigTest, ResidualWanVaeDecoderShapes) {
  const ModelConfig& preset = *FindModelPreset("wan2.2-ti2v-5b");
  nlohmann::json wan22 = {{"_class_name", "AutoencoderKLWan"},
                          {"attn_scales", nlohmann::json::array()},
                          {"base_dim", 160}, {"clip_output", false}, {"decoder_base_dim", 256},
                          {"dim_mult", {1, 2, 4, 4}}, {"dropout", 0.0}, {"in_channels", 12},
                          {"is_residual", true}, {"latents_mean", preset.vae_latents_mean},
                          {"latents_std", preset.vae_latents_std}, {"num_res_blocks", 2},
                          {"out_channels", 12}, {"patch_size", 2}, {"scale_factor_spatial", 16},
                          {"scale_factor_temporal", 4},
                          {"temperal_downsample", {false, true, true}}, {"z_dim", 48}};
  const DiffusersModel w = DiffusersConfigFromJson(wan22, "vae/config.json");
  EXPECT_EQ(w.config.vae_kind, VaeKind::kWanResidual);
  EXPECT_EQ(w.config.vae_channels, (std::vector<int>{256, 512, 1024, 1024}));
  EXPECT_EQ(w.config.vae_patch, 2);
  EXPECT_EQ(w.config.vae_downsample, 16);
  EXPECT_EQ(w.config.vae_temporal, 4);
  EXPECT_EQ(VaeDecoderParameterCount(w.config), VaeDecoderParameterCount(preset));
  EXPECT_EQ(VaeDecoderParameterCount(ModelWithDiffusersVae(preset, w, "c")),
            VaeDecoderParameterCount(preset));
  // diffusers 0.35.2's AutoencoderKLWan(**this config) on the meta device, parameters outside
  // encoder. and quant_conv. counted (the brief's count; tests/reference/make_reference.py's
  // wan22_vae case checks the tiny decoder's count against its module).
  EXPECT_EQ(VaeDecoderParameterCount(preset), 555051580);
  // Wan 2.1's model takes no Wan 2.2 VAE folder, nor Wan 2.2's a Wan 2.1 one.
  EXPECT_THROW(ModelWithDiffusersVae(*FindModelPreset("wan2.1-t2v-14b"), w, "c"),
               std::invalid_argument);

  auto refused = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json bad = wan22;
    bad[key] = value;
    return Error(bad);
  };
  EXPECT_NE(refused("in_channels", 3).find("key 'in_channels': 3 is not supported, expected 12"),
            std::string::npos) << refused("in_channels", 3);
  EXPECT_NE(refused("patch_size", 0).find("key 'patch_size': 0, expected at least 1"),
            std::string::npos) << refused("patch_size", 0);
  EXPECT_NE(refused("scale_factor_spatial", 8).find("key 'scale_factor_spatial': expected 16"),
            std::string::npos) << refused("scale_factor_spatial", 8);
  // Widths 2048 -> 256 in an upsampling level: 256 x 4 values a pixel cannot repeat 2048 evenly.
  EXPECT_NE(refused("dim_mult", {1, 1, 8, 8}).find("key 'dim_mult': a residual level from width "
                                                   "2048 to 256"),
            std::string::npos)
      << refused("dim_mult", {1, 1, 8, 8});
}

TEST(DiffusersConfigTest, UnknownClassIsRefused) {
  EXPECT_NE(Error({{"_class_name", "UNet2DConditionModel"}}).find("key '_class_name'"),
            std::string::npos);
}

// A weights folder must hold the preset's architecture: with the preset's dimensions
// overridden to the folder's it is accepted, otherwise the first differing field is named.
TEST(DiffusersConfigTest, WeightsFolderMustMatchThePresetsArchitecture) {
  const DiffusersModel folder = DiffusersConfigFromJson(Flux(), "m/config.json");
  std::string error;
  auto matching = ResolveModel("flux-dev-tiny", {{"heads", 2}, {"hidden", 64}, {"text_dim", 48},
                                                  {"single_blocks", 3}}, &error);
  ASSERT_TRUE(matching) << error;
  EXPECT_EQ(ModelWithDiffusersWeights(*matching, folder, "m/config.json").name, "flux-dev-tiny");
  auto preset = ResolveModel("flux-dev-tiny", {}, &error);
  try {
    ModelWithDiffusersWeights(*preset, folder, "m/config.json");
    FAIL() << "a folder of another architecture was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "m/config.json: num_single_layers is 3 where model 'flux-dev-tiny' has "
                           "single_blocks 2, expected the same architecture (override the "
                           "preset's dimensions to match)");
  }
  // A VAE folder is not a transformer, and a transformer folder is not a VAE.
  nlohmann::json vae = {{"_class_name", "AutoencoderKL"}, {"latent_channels", 4},
                        {"block_out_channels", {32, 32, 32, 32}}};
  const DiffusersModel vae_folder = DiffusersConfigFromJson(vae, "v/config.json");
  EXPECT_THROW(ModelWithDiffusersWeights(*preset, vae_folder, "v/config.json"),
               std::invalid_argument);
  EXPECT_THROW(ModelWithDiffusersVae(*preset, folder, "m/config.json"), std::invalid_argument);
  try {  // 4 latent channels for a 16-channel Flux
    ModelWithDiffusersVae(*preset, vae_folder, "v/config.json");
    FAIL() << "a 4-channel VAE was accepted for Flux";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("latent_channels is 4 where model 'flux-dev-tiny' has 16"),
              std::string::npos) << e.what();
  }
  vae["latent_channels"] = 16;
  EXPECT_EQ(ModelWithDiffusersVae(*preset, DiffusersConfigFromJson(vae, "v/config.json"),
                                  "v/config.json").vae_channels,
            (std::vector<int>{32, 32, 32, 32}));
}

// Sizes that would overflow the shape arithmetic or the machine are refused in one line, before
// a model is built (issue 19).
TEST(DiffusersConfigTest, OutOfRangeSizesAreRefused) {
  auto json = Flux();
  json["num_layers"] = 3000000000LL;  // wraps round to a negative int if read as one
  EXPECT_EQ(Error(json),
            "m/config.json: key 'num_layers': 3000000000 is out of range, expected at most 65536");
  json = Flux();
  json["num_layers"] = 1e9;
  EXPECT_EQ(Error(json), "m/config.json: key 'num_layers': 1000000000.0 is not an integer");
  json = Flux();
  json["num_attention_heads"] = 60000;
  json["attention_head_dim"] = 60000;
  EXPECT_NE(Error(json).find("num_attention_heads x attention_head_dim is 3600000000, expected "
                             "at most 65536"),
            std::string::npos)
      << Error(json);
}

TEST(DiffusersConfigTest, ConfigFileMustBeARegularShallowFile) {
  test::TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "config.json").c_str(), 0600), 0);
  try {
    ReadDiffusersConfig(dir.path());
    ADD_FAILURE() << "a FIFO was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: is a FIFO; expected a regular file"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(dir / "config.json");
  std::ofstream(dir / "config.json") << std::string(5000, '[') << std::string(5000, ']');
  try {
    ReadDiffusersConfig(dir.path());
    ADD_FAILURE() << "a 5,000-deep config was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: JSON nested more than 8 levels deep"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ditbench::diffusers_config_test
