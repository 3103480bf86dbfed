// The video families' shapes (model_zoo/shapes/wan_shapes.h, hunyuan_video_shapes.h): token
// counts of clips, FLOPs against a hand count, parameter counts against diffusers' modules and
// published sizes, and their diffusers config.json readers.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model_zoo/shapes/diffusers_config.h"
#include "model_zoo/shapes/family.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench::video_shapes_test {
namespace {

const ModelConfig& Preset(const std::string& name) {
  const ModelConfig* m = FindModelPreset(name);
  if (!m) throw std::logic_error("no preset " + name);
  return *m;
}

std::string Error(const nlohmann::json& json) {
  try {
    DiffusersConfigFromJson(json, "m/config.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// The public numbers (lessons.md, "Video DiTs"): a Wan 2.1 clip of 81 frames is 21 latent
// frames; 832x480 is 30 x 52 patches a frame, 1280x720 is 45 x 80.
TEST(VideoShapesTest, WanClipsHaveThePublishedTokenCounts) {
  const ModelConfig& wan = Preset("wan2.1-t2v-14b");
  EXPECT_EQ(LatentFrames(wan, 81), 21);
  EXPECT_EQ(ImageTokens(wan, ImageShape{832, 480, 81}), 32760);
  EXPECT_EQ(ImageTokens(wan, ImageShape{1280, 720, 81}), 75600);
  const TokenGrid grid = TokenGridOf(wan, ImageShape{1280, 720, 81});
  EXPECT_EQ(grid.frames, 21);
  EXPECT_EQ(grid.rows, 45);
  EXPECT_EQ(grid.cols, 80);
  // Wan 2.2's VAE compresses 16x: a 1280x704 clip of 121 frames is 31 x 44 x 80 patches.
  EXPECT_EQ(ImageTokens(Preset("wan2.2-ti2v-5b"), ImageShape{1280, 704, 121}), 31 * 22 * 40);
  // An image model ignores frames; a square keeps its old count.
  EXPECT_EQ(ImageTokens(Preset("pixart-alpha"), ImageShape{1024, 1024, 0}),
            ImageTokens(Preset("pixart-alpha"), 1024));
  EXPECT_EQ(ImageTokens(Preset("pixart-alpha"), ImageShape{1280, 768, 0}), 80 * 48);
}

TEST(VideoShapesTest, PresetsHaveDiffusersShapes) {
  const ModelConfig& small = Preset("wan2.1-t2v-1.3b");
  EXPECT_EQ(small.hidden, 1536);
  EXPECT_EQ(small.heads, 12);
  EXPECT_EQ(small.depth, 30);
  EXPECT_EQ(small.mlp_width(), 8960);
  EXPECT_EQ(small.text_attention, TextAttention::kCross);
  EXPECT_TRUE(small.video());
  const ModelConfig& big = Preset("wan2.1-t2v-14b");
  EXPECT_EQ(big.hidden, 5120);
  EXPECT_EQ(big.heads, 40);
  EXPECT_EQ(big.depth, 40);
  EXPECT_EQ(big.mlp_width(), 13824);
  const ModelConfig& ti2v = Preset("wan2.2-ti2v-5b");
  EXPECT_EQ(ti2v.hidden, 3072);
  EXPECT_EQ(ti2v.in_channels, 48);
  EXPECT_EQ(ti2v.vae_downsample, 16);
  EXPECT_EQ(ti2v.vae_kind, VaeKind::kWanResidual);
  EXPECT_EQ(ti2v.vae_patch, 2);
  EXPECT_EQ(ti2v.vae_latents_std.size(), 48u);
  const ModelConfig& hunyuan = Preset("hunyuanvideo");
  EXPECT_EQ(hunyuan.text_attention, TextAttention::kJoint);
  EXPECT_EQ(hunyuan.depth, 20);
  EXPECT_EQ(hunyuan.single_blocks, 40);
  EXPECT_EQ(hunyuan.refiner_blocks, 2);
  EXPECT_FALSE(hunyuan.negative_prompt);
  EXPECT_FALSE(Preset("pixart-alpha").video());
}

// Parameter counts of diffusers 0.35.2's modules built from the presets' configurations on the
// meta device (sum of numel over parameters; tests/reference/count_video_parameters.py), and
// the published sizes: Wan 2.1 "1.3B" and "14B", Wan 2.2 "5B", HunyuanVideo "13B".
TEST(VideoShapesTest, ParameterCountsMatchDiffusersModules) {
  EXPECT_EQ(ParameterCount(Preset("wan2.1-t2v-1.3b")), 1'418'996'800);
  EXPECT_EQ(ParameterCount(Preset("wan2.1-t2v-14b")), 14'288'491'584);
  EXPECT_EQ(ParameterCount(Preset("wan2.2-ti2v-5b")), 4'999'787'712);
  EXPECT_EQ(ParameterCount(Preset("hunyuanvideo")), 12'821'012'544);
  EXPECT_EQ(ParameterCount(Preset("wan2.1-t2v-tiny")), 161'536);
  EXPECT_EQ(ParameterCount(Preset("wan2.2-ti2v-tiny")), 178'048);
  EXPECT_EQ(ParameterCount(Preset("hunyuanvideo-tiny")), 631'936);
}

// Wan's FLOPs by hand for the tiny preset (64 wide, FFN 128, 2 blocks, 16 text tokens of 32,
// 16 channels, patch 1x2x2) over 5 frames at 64x32: 2 latent frames x 2 x 4 patches = 16 tokens.
TEST(VideoShapesTest, WanFlopsMatchAHandCount) {
  const ModelConfig& m = Preset("wan2.1-t2v-tiny");
  const double n = 16, t = 16, d = 64, f = 128;
  ASSERT_EQ(ImageTokens(m, ImageShape{64, 32, 5}), 16);
  const double self = 2 * n * d * 3 * d + 2 * 2 * n * d * n + 2 * n * d * d;
  const double cross = 2 * n * d * d + 2 * t * d * 2 * d + 2 * 2 * n * d * t + 2 * n * d * d;
  const double mlp = 2 * 2 * n * d * f;
  const double once = 2 * n * 64 * d            // patch embedding: 16 channels x 1 x 2 x 2
                      + 2 * t * 32 * d + 2 * t * d * d  // text projection
                      + 2 * 256 * d + 2 * d * d + 2 * d * 6 * d  // time embedding
                      + 2 * n * d * 64;          // output projection
  EXPECT_DOUBLE_EQ(ForwardFlops(m, ImageShape{64, 32, 5}, 1), 2 * (self + cross + mlp) + once);
  EXPECT_DOUBLE_EQ(ForwardFlops(m, ImageShape{64, 32, 5}, 2),
                   2 * ForwardFlops(m, ImageShape{64, 32, 5}, 1));
}

// HunyuanVideo is Flux's blocks plus the token refiner: the refiner's cost does not grow with the
// video, the blocks' does.
TEST(VideoShapesTest, HunyuanVideoAddsTheRefinerToFluxBlocks) {
  ModelConfig m = Preset("hunyuanvideo-tiny");
  const double with = ForwardFlops(m, ImageShape{64, 64, 5}, 1);
  m.refiner_blocks = 0;
  const double without = ForwardFlops(m, ImageShape{64, 64, 5}, 1);
  const double t = m.text_tokens, d = m.hidden;
  const double block = 2 * t * d * 3 * d + 2 * 2 * t * d * t + 2 * t * d * d +
                       2 * 2 * t * d * 4 * d + 2 * d * 2 * d;
  EXPECT_DOUBLE_EQ(with - without, 2 * block);
}

nlohmann::json Wan13B() {
  // scripts/convert_wan_to_diffusers.py's "Wan-T2V-1.3B" configuration.
  return {{"_class_name", "WanTransformer3DModel"}, {"_diffusers_version", "0.35.2"},
          {"added_kv_proj_dim", nullptr}, {"attention_head_dim", 128},
          {"cross_attn_norm", true}, {"eps", 1e-06}, {"ffn_dim", 8960}, {"freq_dim", 256},
          {"image_dim", nullptr}, {"in_channels", 16}, {"num_attention_heads", 12},
          {"num_layers", 30}, {"out_channels", 16}, {"patch_size", {1, 2, 2}},
          {"pos_embed_seq_len", nullptr}, {"qk_norm", "rms_norm_across_heads"},
          {"rope_max_seq_len", 1024}, {"text_dim", 4096}};
}

TEST(VideoShapesTest, WanConfigJsonIsThePreset) {
  const DiffusersModel folder = DiffusersConfigFromJson(Wan13B(), "m/config.json");
  EXPECT_EQ(folder.config.family, ModelFamily::kWan);
  const ModelConfig& preset = Preset("wan2.1-t2v-1.3b");
  // Accepted as the weights of the preset: every architecture field agrees.
  const ModelConfig resolved = ModelWithDiffusersWeights(preset, folder, "m/config.json");
  EXPECT_EQ(ParameterCount(resolved), ParameterCount(preset));
  // ... and not as the 14B's.
  try {
    ModelWithDiffusersWeights(Preset("wan2.1-t2v-14b"), folder, "m/config.json");
    ADD_FAILURE() << "the 1.3B folder was taken for the 14B";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("num_layers is 30 where model 'wan2.1-t2v-14b' has "
                                         "depth 40"),
              std::string::npos)
        << e.what();
  }
}

TEST(VideoShapesTest, WanConfigRefusesWhatDitbenchDoesNotCompute) {
  nlohmann::json i2v = Wan13B();
  i2v["image_dim"] = 1280;
  EXPECT_EQ(Error(i2v),
            "m/config.json: key 'image_dim': image-to-video conditioning is not supported");
  nlohmann::json patch = Wan13B();
  patch["patch_size"] = {1, 2, 4};
  EXPECT_EQ(Error(patch), "m/config.json: key 'patch_size': expected [t, p, p] of positive "
                          "integers");
  nlohmann::json unknown = Wan13B();
  unknown["window_size"] = {-1, -1};
  EXPECT_NE(Error(unknown).find("key 'window_size': not a parameter of WanTransformer3DModel"),
            std::string::npos);
}

TEST(VideoShapesTest, HunyuanVideoConfigJsonIsThePreset) {
  // scripts/convert_hunyuan_video_to_diffusers.py's text-to-video configuration.
  const nlohmann::json config = {
      {"_class_name", "HunyuanVideoTransformer3DModel"}, {"in_channels", 16},
      {"out_channels", 16}, {"num_attention_heads", 24}, {"attention_head_dim", 128},
      {"num_layers", 20}, {"num_single_layers", 40}, {"num_refiner_layers", 2},
      {"mlp_ratio", 4.0}, {"patch_size", 2}, {"patch_size_t", 1}, {"qk_norm", "rms_norm"},
      {"guidance_embeds", true}, {"text_embed_dim", 4096}, {"pooled_projection_dim", 768},
      {"rope_theta", 256.0}, {"rope_axes_dim", {16, 56, 56}}, {"image_condition_type", nullptr}};
  const DiffusersModel folder = DiffusersConfigFromJson(config, "m/config.json");
  const ModelConfig& preset = Preset("hunyuanvideo");
  EXPECT_EQ(ParameterCount(ModelWithDiffusersWeights(preset, folder, "m/config.json")),
            ParameterCount(preset));
  nlohmann::json other = config;
  other["text_embed_dim"] = 2048;
  try {
    ModelWithDiffusersWeights(preset, DiffusersConfigFromJson(other, "m/config.json"),
                              "m/config.json");
    ADD_FAILURE() << "a 2048-wide text encoder was taken for HunyuanVideo's";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("text_embed_dim is 2048"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ditbench::video_shapes_test
