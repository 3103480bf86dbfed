#include "model_zoo/shapes/model_config.h"

#include <gtest/gtest.h>

namespace ditbench::model_config_test {
namespace {

TEST(ModelConfigTest, PixArtAlphaHasTheXl2Shape) {
  const ModelConfig* m = FindModelPreset("pixart-alpha");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->depth, 28);
  EXPECT_EQ(m->hidden, 1152);
  EXPECT_EQ(m->heads, 16);
  EXPECT_EQ(m->head_dim(), 72);
  EXPECT_EQ(m->text_tokens, 120);
  EXPECT_EQ(ImageTokens(*m, 1024), 4096);  // 1024 / 8 / 2 = 64 patch rows
  EXPECT_EQ(FindModelPreset("pixart-sigma")->text_tokens, 300);
  EXPECT_EQ(FindModelPreset("nope"), nullptr);
}

// How each preset's image tokens see the prompt, as diffusers defines the family: PixArt
// cross-attends to text no block changes, as Wan does; SD3, SD3.5, Flux and HunyuanVideo attend
// jointly and update it.
TEST(ModelConfigTest, EveryPresetSaysHowItsTokensSeeThePrompt) {
  for (const std::string& name : ModelPresetNames()) {
    const ModelConfig& m = *FindModelPreset(name);
    const TextAttention expected = name.rfind("pixart", 0) == 0 || name.rfind("wan", 0) == 0
                                       ? TextAttention::kCross
                                       : TextAttention::kJoint;
    EXPECT_EQ(m.text_attention, expected) << name;
  }
}

TEST(ModelConfigTest, PixArtAlphaHasAbout600MParameters) {
  // PixArt-alpha XL/2 is published as 0.6B parameters.
  const double params = double(ParameterCount(*FindModelPreset("pixart-alpha")));
  EXPECT_GT(params, 0.58e9);
  EXPECT_LT(params, 0.64e9);
}

TEST(ModelConfigTest, JointFamiliesHaveTheirPublishedSizes) {
  // Flux.1-dev is published as 12B (11.9B) parameters, SD3-medium as 2B.
  const double flux = double(ParameterCount(*FindModelPreset("flux-dev")));
  EXPECT_GT(flux, 11.8e9);
  EXPECT_LT(flux, 12.0e9);
  const double sd3 = double(ParameterCount(*FindModelPreset("sd3-medium")));
  EXPECT_GT(sd3, 1.95e9);
  EXPECT_LT(sd3, 2.1e9);
  // SD3.5-large is published as 8.1B.
  const double sd35 = double(ParameterCount(*FindModelPreset("sd3.5-large")));
  EXPECT_GT(sd35, 8.0e9);
  EXPECT_LT(sd35, 8.2e9);
  EXPECT_TRUE(FindModelPreset("sd3.5-large")->qk_norm);
  // SD3.5-medium is published as 2.5B: its checkpoint also stores the 384 x 384 position
  // table (pos_embed.pos_embed, 226M), which ditbench computes instead of counting.
  const ModelConfig& medium = *FindModelPreset("sd3.5-medium");
  const double table =
      double(medium.pos_embed_max_size) * medium.pos_embed_max_size * medium.hidden;
  const double sd35m = double(ParameterCount(medium));
  EXPECT_GT(sd35m + table, 2.4e9);
  EXPECT_LT(sd35m + table, 2.55e9);
  EXPECT_EQ(medium.dual_attention_blocks(), 13);
  EXPECT_TRUE(medium.dual_attention(12));
  EXPECT_FALSE(medium.dual_attention(13));
  EXPECT_EQ(medium.text_tokens, 333);
  // Over SD3-medium it adds, per dual-attention block, 3 more modulation chunks, q/k/v and an
  // output projection (7 d^2 + 7 d) and their two qk norms; and 4 qk norms in every block.
  const std::int64_t d = medium.hidden;
  EXPECT_EQ(ParameterCount(medium) - ParameterCount(*FindModelPreset("sd3-medium")),
            13 * (7 * d * d + 7 * d + 128) + 24 * 4 * 64);
  EXPECT_EQ(FindModelPreset("flux-dev")->rope_axes, (std::array<int, 3>{16, 56, 56}));
  EXPECT_TRUE(FindModelPreset("flux-dev")->guidance_embed);
  EXPECT_FALSE(FindModelPreset("flux-schnell")->guidance_embed);
}

TEST(ModelConfigTest, FluxRefusesAHeadDimensionTheRotaryAxesDoNotCover) {
  std::string error;
  EXPECT_TRUE(ResolveModel("flux-dev", {{"depth", 2}}, &error)) << error;
  EXPECT_FALSE(ResolveModel("flux-dev", {{"heads", 16}}, &error));
  EXPECT_NE(error.find("rotary"), std::string::npos) << error;
  EXPECT_FALSE(ResolveModel("sd3-medium", {{"single_blocks", 2}}, &error));
}

TEST(ModelConfigTest, ForwardFlopsMatchesAHandCount) {
  // A 1-block model small enough to count by hand: N=4 tokens, D=8, T=2, text_dim=4.
  ModelConfig m;
  m.depth = 1;
  m.hidden = 8;
  m.heads = 2;
  m.patch = 2;
  m.in_channels = 4;
  m.out_channels = 8;
  m.vae_downsample = 8;
  m.text_tokens = 2;
  m.text_dim = 4;
  m.mlp_ratio = 4;
  // 32 px -> 4 latent -> 2 patch rows -> N = 4.
  const double n = 4, d = 8, t = 2;
  double block = 2 * n * d * 3 * d + 2 * 2 * n * n * d + 2 * n * d * d  // self-attention
                 + 2 * n * d * d + 2 * t * d * 2 * d + 2 * 2 * n * t * d + 2 * n * d * d  // cross
                 + 2 * 2 * n * d * 4 * d;  // MLP
  double once = 2 * n * 16 * d + 2 * t * 4 * d + 2 * t * d * d + 2 * 256 * d + 2 * d * d +
                2 * d * 6 * d + 2 * n * d * 32;
  EXPECT_DOUBLE_EQ(ForwardFlops(m, 32, 1), block + once);
  EXPECT_DOUBLE_EQ(ForwardFlops(m, 32, 3), 3 * (block + once));
}

TEST(ModelConfigTest, AttentionMakesFlopsGrowFasterThanTokens) {
  const ModelConfig& m = *FindModelPreset("pixart-alpha");
  const double ratio = ForwardFlops(m, 2048, 1) / ForwardFlops(m, 1024, 1);
  EXPECT_GT(ratio, 4.0);  // 4x tokens, and attention is quadratic
  EXPECT_LT(ratio, 16.0);
}

}  // namespace
}  // namespace ditbench::model_config_test

namespace ditbench::model_config_test {
namespace {

// Families without single-stream blocks share one rule (model_zoo/shapes/family.h).
TEST(ModelConfigTest, SingleBlocksAreRefusedOutsideFlux) {
  for (const char* preset : {"pixart-alpha-tiny", "sd3-medium-tiny"}) {
    std::string error;
    EXPECT_FALSE(ResolveModel(preset, {{"single_blocks", 2}}, &error)) << preset;
    EXPECT_EQ(error, "single_blocks applies to Flux models only") << preset;
  }
  std::string error;
  EXPECT_TRUE(ResolveModel("flux-dev-tiny", {{"single_blocks", 3}}, &error)) << error;
}

}  // namespace
}  // namespace ditbench::model_config_test
