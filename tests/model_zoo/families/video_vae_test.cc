#include "model_zoo/families/hunyuan_video_vae.h"
#include "model_zoo/families/wan_vae.h"

#include <gtest/gtest.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/vae_shapes.h"

namespace ditbench::video_vae_test {
namespace {

std::shared_ptr<WanVaeDecoderImpl> SeededDecoder(const ModelConfig& config) {
  torch::manual_seed(7);
  auto vae = std::make_shared<WanVaeDecoderImpl>(config);
  DrawSeededWeights(*vae);
  return vae;
}

// Wan 2.1's decoder and Wan 2.2's residual one (16x: 8x from its levels, 2x from its patches).
class WanVaeTest : public ::testing::TestWithParam<const char*> {
 protected:
  const ModelConfig& config() const { return *FindModelPreset(GetParam()); }
};

// The first latent frame decodes to one frame, every later one to four (the 4x temporal VAE),
// at vae_downsample x the latent's rows and columns, on [-1, 1].
TEST_P(WanVaeTest, DecodesTheFirstLatentFrameToOneFrameAndEachLaterOneToFour) {
  c10::InferenceMode inference;
  auto vae = SeededDecoder(config());
  auto clip = vae->forward(torch::randn({1, config().in_channels, 3, 4, 6}), 0);
  const int64_t s = config().vae_downsample;
  EXPECT_EQ(clip.sizes(), (std::vector<int64_t>{1, 3, 9, 4 * s, 6 * s}));
  EXPECT_TRUE(torch::isfinite(clip).all().item<bool>());
  EXPECT_LE(clip.abs().max().item<double>(), 1.0);
  EXPECT_GT(clip.std().item<double>(), 0.01);  // not a constant (or all-clamped) clip
}

// Causal: the frames of a shorter clip are the first frames of a longer one that starts the
// same, whatever follows, since every convolution over time sees only earlier frames (through
// its cache of the previous latent frame's features; the residual levels' shortcuts repeat
// each latent frame's features into its own frames only).
TEST_P(WanVaeTest, FramesDoNotDependOnLaterLatentFrames) {
  c10::InferenceMode inference;
  auto vae = SeededDecoder(config());
  auto latent = torch::randn({1, config().in_channels, 3, 4, 4});
  auto longer = vae->forward(latent, 0);
  auto shorter = vae->forward(latent.narrow(2, 0, 2), 0);
  ASSERT_EQ(shorter.size(2), 5);
  EXPECT_TRUE(torch::allclose(longer.narrow(2, 0, 5), shorter, 1e-5, 1e-6));
  // ... and do depend on earlier ones: the cache carries them.
  auto changed = latent.clone();
  changed.narrow(2, 0, 1).add_(1.0);
  auto after = vae->forward(changed, 0);
  EXPECT_FALSE(torch::allclose(after.narrow(2, 5, 4), longer.narrow(2, 5, 4), 1e-3, 1e-4));
}

// A tiled decode gives the untiled decode's shape (the patches unfolded in every tile), and a
// tile larger than the frame decodes it in one piece: the untiled decode before its clamp.
TEST_P(WanVaeTest, TiledDecodeKeepsTheClipsShape) {
  c10::InferenceMode inference;
  auto vae = SeededDecoder(config());
  auto z = torch::randn({1, config().in_channels, 2, 8, 6});
  auto whole = vae->DecodeUnscaled(z, 0);
  const int tile = 4 * config().vae_downsample;  // the smallest tile vae_tiles.h takes
  EXPECT_EQ(vae->DecodeUnscaled(z, tile).sizes(), whole.sizes());
  EXPECT_TRUE(torch::equal(vae->DecodeUnscaled(z, 16 * tile).clamp(-1.0, 1.0), whole));
}

INSTANTIATE_TEST_SUITE_P(Presets, WanVaeTest,
                         ::testing::Values("wan2.1-t2v-tiny", "wan2.2-ti2v-tiny"),
                         [](const auto& info) {
                           const bool wan21 = std::string(info.param).rfind("wan2.1", 0) == 0;
                           return std::string(wan21 ? "Wan21" : "Wan22");
                         });

// The pipeline's unscaling is per channel: latent * latents_std + latents_mean.
TEST(WanVaeUnscaleTest, UnscalesEachChannelByItsStatistics) {
  c10::InferenceMode inference;
  const ModelConfig& config = *FindModelPreset("wan2.1-t2v-tiny");
  auto vae = SeededDecoder(config);
  auto latent = torch::randn({1, config.in_channels, 2, 4, 4});
  auto stats = [&](const std::vector<double>& v) {
    return torch::tensor(v, torch::kFloat32).view({1, -1, 1, 1, 1});
  };
  auto unscaled = latent * stats(config.vae_latents_std) + stats(config.vae_latents_mean);
  EXPECT_TRUE(torch::allclose(vae->forward(latent, 0), vae->DecodeUnscaled(unscaled, 0), 1e-4, 1e-5));
  EXPECT_FALSE(torch::allclose(vae->forward(latent, 0), vae->DecodeUnscaled(latent, 0), 1e-4, 1e-5));
}

// A folder's statistics of another count than the latent channels load (the class reads them
// nowhere, model_zoo/shapes/diffusers_config.cc); the decode, which applies them, refuses them.
TEST(WanVaeUnscaleTest, StatisticsOfAnotherCountAreRefusedByTheDecodeAlone) {
  ModelConfig config = *FindModelPreset("wan2.1-t2v-tiny");
  config.vae_latents_std.pop_back();
  try {
    WanVaeDecoderImpl decoder(config);
    FAIL() << "15 statistics for 16 latent channels were taken";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs latents_mean and latents_std per latent channel"),
              std::string::npos)
        << e.what();
  }
}

// The analytic count (plan's memory, the folder check before allocating) counts exactly the
// module's parameters: the tiny presets', Wan 2.1's real decoder and Wan 2.2's at an eighth of
// its widths (levels of different widths: shortcut convolutions; the full size, 555,051,580, is
// pinned against diffusers' module in diffusers_config_test.cc).
TEST(WanVaeParametersTest, AnalyticParameterCountIsTheModules) {
  ModelConfig wan22 = *FindModelPreset("wan2.2-ti2v-5b");
  for (int& width : wan22.vae_channels) width /= 8;
  std::vector<ModelConfig> configs = {*FindModelPreset("wan2.1-t2v-tiny"),
                                      *FindModelPreset("wan2.1-t2v-1.3b"),
                                      *FindModelPreset("wan2.2-ti2v-tiny"), wan22};
  for (const ModelConfig& config : configs) {
    WanVaeDecoderImpl vae(config);
    std::int64_t counted = 0;
    for (const auto& p : vae.parameters()) counted += p.numel();
    EXPECT_EQ(VaeDecoderParameterCount(config), counted) << config.name;
  }
}

// Wan 2.2's module carries diffusers' parameter names: a residual level's upsampler is one
// module (`upsampler`), not a list, and its shortcut has no parameters.
TEST(WanVaeParametersTest, ResidualLevelsCarryDiffusersNames) {
  WanVaeDecoderImpl vae(*FindModelPreset("wan2.2-ti2v-tiny"));
  const auto names = vae.named_parameters().keys();
  auto has = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  EXPECT_TRUE(has("decoder.up_blocks.0.upsampler.time_conv.weight"));
  EXPECT_TRUE(has("decoder.up_blocks.2.upsampler.resample.1.bias"));
  EXPECT_FALSE(has("decoder.up_blocks.2.upsampler.time_conv.weight"));  // a spatial level
  EXPECT_TRUE(has("decoder.conv_out.weight"));
  EXPECT_EQ(vae.named_parameters()["decoder.conv_out.weight"].size(0), 12);  // 3 x 2 x 2
  for (const auto& name : names) EXPECT_EQ(name.find("upsamplers"), std::string::npos) << name;
}

// HunyuanVideo's decoder: a clip of more than 4 latent frames goes in temporal tiles, whose
// frames still come out 1 + 4 (F - 1), finite, and causal (the first 13 frames come from the
// first tile alone, whatever the later latent frames hold).
TEST(HunyuanVideoVaeTest, TemporalTilesGiveEveryFrameAndKeepTheFirstTilesFrames) {
  c10::InferenceMode inference;
  const ModelConfig& config = *FindModelPreset("hunyuanvideo-tiny");
  torch::manual_seed(7);
  auto vae = std::make_shared<HunyuanVideoVaeDecoderImpl>(config);
  DrawSeededWeights(*vae);
  auto latent = torch::randn({1, config.in_channels, 6, 2, 3});
  auto clip = vae->forward(latent, 0);
  EXPECT_EQ(clip.sizes(), (std::vector<int64_t>{1, 3, 21, 16, 24}));
  EXPECT_TRUE(torch::isfinite(clip).all().item<bool>());
  auto changed = latent.clone();
  changed.narrow(2, 5, 1).add_(1.0);
  auto after = vae->forward(changed, 0);
  EXPECT_TRUE(torch::equal(after.narrow(2, 0, 13), clip.narrow(2, 0, 13)));
  EXPECT_FALSE(torch::allclose(after.narrow(2, 17, 4), clip.narrow(2, 17, 4), 1e-3, 1e-4));
}

TEST(HunyuanVideoVaeTest, AnalyticParameterCountIsTheModules) {
  for (const char* name : {"hunyuanvideo-tiny", "hunyuanvideo"}) {
    const ModelConfig& config = *FindModelPreset(name);
    HunyuanVideoVaeDecoderImpl vae(config);
    std::int64_t counted = 0;
    for (const auto& p : vae.parameters()) counted += p.numel();
    EXPECT_EQ(VaeDecoderParameterCount(config), counted) << name;
  }
}

}  // namespace
}  // namespace ditbench::video_vae_test
