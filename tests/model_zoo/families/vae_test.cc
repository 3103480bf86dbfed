#include "model_zoo/families/vae.h"

#include <gtest/gtest.h>

#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/vae_shapes.h"
#include "worker/dit_trial.h"

namespace ditbench::vae_test {
namespace {

TEST(VaeTest, DecodesLatentsToImagesAtEightTimesTheSize) {
  c10::InferenceMode inference;
  for (const char* name : {"pixart-alpha-tiny", "flux-dev-tiny"}) {
    const ModelConfig& config = *FindModelPreset(name);
    torch::manual_seed(0);
    VaeDecoder vae(config);
    auto latent = torch::randn({2, config.in_channels, 8, 12});
    auto image = vae(latent);
    EXPECT_EQ(image.sizes(), (std::vector<int64_t>{2, 3, 64, 96})) << name;
    EXPECT_TRUE(torch::isfinite(image).all().item<bool>()) << name;
  }
}

TEST(VaeTest, UnscalesTheLatentBeforeDecoding) {
  c10::InferenceMode inference;
  ModelConfig config = *FindModelPreset("flux-dev-tiny");
  torch::manual_seed(0);
  VaeDecoder vae(config);
  ModelConfig shifted = config;
  shifted.vae_shift += 0.5;
  torch::manual_seed(0);
  VaeDecoder same_weights(shifted);
  auto latent = torch::randn({1, config.in_channels, 4, 4});
  // The shifted decoder on (latent - 0.5 * scaling) sees the same unscaled input.
  auto expected = vae(latent);
  auto got = same_weights(latent - 0.5 * config.vae_scaling);
  EXPECT_TRUE(torch::allclose(got, expected, 1e-4, 1e-5));
  EXPECT_FALSE(torch::allclose(same_weights(latent), expected, 1e-4, 1e-5));
}

// The analytic count that checks a VAE folder against memory before it is built counts exactly
// the module's parameters.
TEST(VaeTest, AnalyticParameterCountIsTheModules) {
  for (const char* name : {"pixart-alpha-tiny", "flux-dev-tiny", "pixart-alpha", "sd3-medium"}) {
    const ModelConfig& config = *FindModelPreset(name);
    VaeDecoder vae(config);
    std::int64_t counted = 0;
    for (const auto& p : vae->parameters()) counted += p.numel();
    EXPECT_EQ(VaeDecoderParameterCount(config), counted) << name;
  }
}

// Every GroupNorm of the decoder takes the config's groups (diffusers' norm_num_groups): a
// decode with 16 groups differs from one with 32 over the same weights.
TEST(VaeTest, GroupNormsTakeTheConfigsGroups) {
  torch::manual_seed(4);
  ModelConfig config = *FindModelPreset("pixart-alpha-tiny");
  config.vae_norm_groups = 16;
  VaeDecoder sixteen(config);
  int norms = 0;
  for (const auto& module : sixteen->modules(/*include_self=*/false))
    if (auto* norm = module->as<torch::nn::GroupNormImpl>()) {
      EXPECT_EQ(norm->options.num_groups(), 16);
      ++norms;
    }
  EXPECT_GT(norms, 3);
  config.vae_norm_groups = 32;
  VaeDecoder thirty_two(config);
  torch::NoGradGuard no_grad;
  auto from = sixteen->named_parameters();
  for (auto& item : thirty_two->named_parameters()) item.value().copy_(from[item.key()]);
  auto latent = torch::randn({1, config.in_channels, 4, 4});
  EXPECT_FALSE(torch::allclose(sixteen(latent), thirty_two(latent), 1e-4, 1e-4));
}

TEST(VaeTest, RefusesLevelsThatDoNotMatchTheDownsampling) {
  ModelConfig config = *FindModelPreset("pixart-alpha-tiny");
  config.vae_channels = {32, 32};
  EXPECT_THROW(VaeDecoder{config}, c10::Error);
}

// Scope pipeline = denoise + decode: the decode is its own stage in every iteration.
TEST(VaeTest, PipelineTrialRecordsADecodeStage) {
  for (const char* model : {"pixart-alpha-tiny", "sd3-medium-tiny", "flux-dev-tiny"}) {
    TrialConfig config;
    config.model = model;
    config.resolution = 128;
    config.precision = Precision::kFp32;
    config.scope = Scope::kPipeline;
    config.steps = 2;
    config.warmup = 1;
    config.repeats = Repeats{2, 2, 0.0, 0.0};
    ParallelContext single;
    RankResult result;
    RunDitTrial(config, single, torch::kCPU, result);
    int decodes = 0, steps = 0;
    for (const auto& s : result.samples) {
      if (s.stage == "decode") {
        ++decodes;
        EXPECT_GT(s.ms, 0) << model;
      }
      if (s.stage.rfind("step:", 0) == 0) ++steps;
    }
    EXPECT_EQ(decodes, 3) << model << ": one per iteration, warm-up included";
    EXPECT_EQ(steps, 6) << model;
  }
}

}  // namespace
}  // namespace ditbench::vae_test
