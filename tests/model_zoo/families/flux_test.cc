#include "model_zoo/families/flux.h"

#include <gtest/gtest.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/layers/sampler.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench::flux_test {
namespace {

int64_t CountParameters(torch::nn::Module& module) {
  int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

TEST(FluxTest, AnalyticParameterCountIsExactForTheModule) {
  for (const char* name : {"flux-dev-tiny", "sd3-medium-tiny", "sd3.5-medium-tiny"}) {
    const ModelConfig& config = *FindModelPreset(name);
    auto model = MakeDitModel(config);
    EXPECT_EQ(CountParameters(model->module()), ParameterCount(config)) << name;
  }
  // schnell has no guidance embedder.
  ModelConfig schnell = *FindModelPreset("flux-dev-tiny");
  schnell.guidance_embed = false;
  auto model = MakeDitModel(schnell);
  EXPECT_EQ(CountParameters(model->module()), ParameterCount(schnell));
  EXPECT_EQ(model->guidance(), Guidance::kNone);
}

TEST(FluxTest, PackingIsDiffusersOrderAndRoundTrips) {
  auto latent = torch::arange(2 * 16 * 4 * 4, torch::kFloat32).view({2, 16, 4, 4});
  auto tokens = PackLatents(latent);
  ASSERT_EQ(tokens.sizes(), (std::vector<int64_t>{2, 4, 64}));
  // Token (row 0, col 1), feature c * 4 + dy * 2 + dx = latent[c, dy, 2 + dx].
  EXPECT_EQ(tokens[0][1][5 * 4 + 1 * 2 + 0].item<float>(), latent[0][5][1][2].item<float>());
  EXPECT_TRUE(torch::equal(UnpackLatents(tokens, 2, 2, 16), latent));
  // Not square: 2 token rows of 3 columns; token (row 1, col 0) is latent rows 2-3, columns 0-1.
  auto wide = torch::arange(16 * 4 * 6, torch::kFloat32).view({1, 16, 4, 6});
  auto wide_tokens = PackLatents(wide);
  ASSERT_EQ(wide_tokens.sizes(), (std::vector<int64_t>{1, 6, 64}));
  EXPECT_EQ(wide_tokens[0][3][7 * 4 + 1 * 2 + 1].item<float>(), wide[0][7][3][1].item<float>());
  EXPECT_TRUE(torch::equal(UnpackLatents(wide_tokens, 2, 3, 16), wide));
  auto ids = FluxImageIds(2, 3, torch::kFloat64);
  EXPECT_TRUE(torch::equal(ids[4], torch::tensor({0.0, 1.0, 1.0}, torch::kFloat64)));
}

TEST(FluxTest, SamplerShiftsItsScheduleByResolution) {
  // Hand-computed from diffusers' calculate_shift / time_shift: 1024 px is 4096 tokens,
  // mu = 1.15; the last of 28 sigmas is e^mu / (e^mu + 27).
  auto dev = FlowMatchEuler::Flux(28, 4096, true);
  EXPECT_DOUBLE_EQ(dev.sigma(0), 1.0);
  EXPECT_NEAR(dev.sigma(27), 0.10472089356106765, 1e-12);
  EXPECT_DOUBLE_EQ(dev.sigma(28), 0.0);
  EXPECT_DOUBLE_EQ(dev.ModelTime(0), 1000.0);
  auto small = FlowMatchEuler::Flux(4, 256, true);  // mu = 0.5
  EXPECT_NEAR(small.sigma(1), 0.8318243439635804, 1e-12);
  EXPECT_NEAR(small.sigma(3), 0.3546612443924434, 1e-12);
  auto schnell = FlowMatchEuler::Flux(4, 4096, false);  // linspace(1, 1/4), no shift
  EXPECT_DOUBLE_EQ(schnell.sigma(1), 0.75);
  EXPECT_DOUBLE_EQ(schnell.sigma(3), 0.25);
  // SD3: shift 3 applied over the shifted training range.
  auto sd3 = FlowMatchEuler::Sd3(4);
  EXPECT_NEAR(sd3.sigma(1), 0.8576923076923075, 1e-12);
  EXPECT_NEAR(sd3.sigma(3), 0.008928571428571713, 1e-12);
  // An Euler step moves along the velocity by the sigma difference.
  auto x = torch::ones({1, 2}), v = torch::full({1, 2}, 2.0);
  EXPECT_NEAR(schnell.Step(0, x, v)[0][0].item<float>(), 1.0 + (0.75 - 1.0) * 2.0, 1e-6);
}

TEST(FluxTest, RotaryOfTheZeroPositionIsTheIdentityAndOthersRotate) {
  auto ids = torch::tensor({0.0, 0.0, 0.0, 0.0, 3.0, 5.0}, torch::kFloat64).view({2, 3});
  RotaryTable table = MakeRotaryTable(ids, {4, 14, 14}, 10000.0);
  ASSERT_EQ(table.rotation.sizes(), (std::vector<int64_t>{2, 16}));
  EXPECT_FALSE(table.identity);
  auto x = torch::randn({1, 2, 3, 32});
  auto y = ApplyRotary(x, table);
  EXPECT_TRUE(torch::allclose(y.select(1, 0), x.select(1, 0)));
  EXPECT_FALSE(torch::allclose(y.select(1, 1), x.select(1, 1)));
  // A rotation keeps each pair's length.
  EXPECT_TRUE(torch::allclose(y.norm(), x.norm(), 1e-5));
}

}  // namespace
}  // namespace ditbench::flux_test
