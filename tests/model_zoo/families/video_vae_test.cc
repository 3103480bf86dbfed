#include "model_zoo/families/hunyuan_video_vae.h"
#include "model_zoo/families/wan_vae.h"

#include <gtest/gtest.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/vae_shapes.h"

namespace ditbench {
namespace {

std::shared_ptr<WanVaeDecoderImpl> SeededDecoder(const ModelConfig& config) {
  torch::manual_seed(7);
  auto vae = std::make_shared<WanVaeDecoderImpl>(config);
  DrawSeededWeights(*vae);
  return vae;
}

// The first latent frame decodes to one frame, every later one to four (the 4x temporal VAE),
// at 8x the latent's rows and columns, on [-1, 1].
TEST(WanVaeTest, DecodesTheFirstLatentFrameToOneFrameAndEachLaterOneToFour) {
  c10::InferenceMode inference;
  const ModelConfig& config = *FindModelPreset("wan2.1-t2v-tiny");
  auto vae = SeededDecoder(config);
  auto clip = vae->forward(torch::randn({1, config.in_channels, 3, 4, 6}), 0);
  EXPECT_EQ(clip.sizes(), (std::vector<int64_t>{1, 3, 9, 32, 48}));
  EXPECT_TRUE(torch::isfinite(clip).all().item<bool>());
  EXPECT_LE(clip.abs().max().item<double>(), 1.0);
  EXPECT_GT(clip.std().item<double>(), 0.01);  // not a constant (or all-clamped) clip
}

// Causal: the frames of a shorter clip are the first frames of a longer one that starts the
// same, whatever follows, since every convolution over time sees only earlier frames (through
// its cache of the previous latent frame's features).
TEST(WanVaeTest, FramesDoNotDependOnLaterLatentFrames) {
  c10::InferenceMode inference;
  const ModelConfig& config = *FindModelPreset("wan2.1-t2v-tiny");
  auto vae = SeededDecoder(config);
  auto latent = torch::randn({1, config.in_channels, 3, 4, 4});
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

// The pipeline's unscaling is per channel: latent * latents_std + latents_mean.
TEST(WanVaeTest, UnscalesEachChannelByItsStatistics) {
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

// The analytic count (plan's memory, the folder check before allocating) counts exactly the
// module's parameters: the tiny preset's and Wan 2.1's real decoder.
TEST(WanVaeTest, AnalyticParameterCountIsTheModules) {
  for (const char* name : {"wan2.1-t2v-tiny", "wan2.1-t2v-1.3b"}) {
    const ModelConfig& config = *FindModelPreset(name);
    WanVaeDecoderImpl vae(config);
    std::int64_t counted = 0;
    for (const auto& p : vae.parameters()) counted += p.numel();
    EXPECT_EQ(VaeDecoderParameterCount(config), counted) << name;
  }
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
}  // namespace ditbench
