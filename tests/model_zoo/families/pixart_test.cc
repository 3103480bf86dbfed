#include "model_zoo/families/pixart.h"

#include <gtest/gtest.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench::pixart_test {
namespace {

// The position table is kept across forwards (rebuilding it on the host every forward stalled
// the GPU); a kept table must never leak into a forward at another resolution, nor into the
// same number of patches turned on their side.
TEST(PixArtTest, KeptPositionTableFollowsTheResolution) {
  c10::InferenceMode inference;
  std::string error;
  auto config = ResolveModel("pixart-alpha-tiny", {}, &error);
  ASSERT_TRUE(config) << error;
  ParallelContext single;
  auto run = [&](DitModel& model, int width, int height) {
    torch::manual_seed(5);
    auto x = torch::randn({2, config->in_channels, height / config->vae_downsample,
                           width / config->vae_downsample});
    auto t = torch::full({2}, 500.0);
    Conditioning text = model.MakeConditioning(2, ImageShape{width, height, 0});
    return model.Forward(x, t, text, single);
  };
  torch::manual_seed(0);
  auto model = MakePixArt(*config);
  torch::manual_seed(0);
  auto fresh = MakePixArt(*config);
  auto small = run(*model, 256, 256);
  auto large = run(*model, 512, 512);
  EXPECT_TRUE(torch::equal(large, run(*fresh, 512, 512)));
  EXPECT_TRUE(torch::equal(small, run(*model, 256, 256)));
  EXPECT_FALSE(torch::equal(small, run(*model, 256, 256).mul(1.5)));  // the comparison can fail
  auto wide = run(*model, 384, 256);
  auto tall = run(*model, 256, 384);  // as many patches as `wide`, rows and columns swapped
  torch::manual_seed(0);
  auto fresh_tall = MakePixArt(*config);
  EXPECT_TRUE(torch::equal(tall, run(*fresh_tall, 256, 384)));
  EXPECT_EQ(wide.sizes(), (std::vector<int64_t>{2, config->out_channels, 32, 48}));
}

// A bf16 model is allocated in bf16: no fp32 copy exists on the way (its host peak would show
// one), and the process's default dtype is back to fp32 afterwards.
TEST(PixArtTest, ModelIsBuiltInItsPrecision) {
  std::string error;
  for (const char* name : {"pixart-alpha-tiny", "sd3-medium-tiny", "flux-dev-tiny"}) {
    auto config = ResolveModel(name, {}, &error);
    ASSERT_TRUE(config) << error;
    torch::manual_seed(3);
    auto model = MakeDitModel(*config, torch::kBFloat16);
    for (const auto& p : model->module().parameters())
      ASSERT_EQ(p.scalar_type(), torch::kBFloat16) << name;
    EXPECT_EQ(c10::get_default_dtype(), caffe2::TypeMeta::Make<float>());
    // The same seed gives the same weights at both precisions, up to bf16's rounding.
    torch::manual_seed(3);
    auto low = MakeDitModel(*config, torch::kBFloat16);
    torch::manual_seed(3);
    auto high = MakeDitModel(*config, torch::kFloat32);
    auto low_params = low->module().parameters(), high_params = high->module().parameters();
    ASSERT_EQ(low_params.size(), high_params.size());
    for (size_t i = 0; i < low_params.size(); ++i)
      ASSERT_TRUE(torch::equal(low_params[i], high_params[i].to(torch::kBFloat16))) << name << " " << i;
  }
}

// PixArt-alpha's micro-conditions take the image's resolution: another resolution, another
// output (the embedders are live), and the preset has them, as the 1024-MS checkpoint does. As
// its pipeline passes them: [height, width] and height / width.
TEST(PixArtTest, MicroConditionsFollowTheResolution) {
  EXPECT_TRUE(FindModelPreset("pixart-alpha")->micro_conditions);
  EXPECT_FALSE(FindModelPreset("pixart-sigma")->micro_conditions);
  c10::InferenceMode inference;
  std::string error;
  auto config = ResolveModel("pixart-alpha-tiny", {}, &error);
  ASSERT_TRUE(config) << error;
  config->micro_conditions = true;
  config->hidden = 96;  // divisible by 3 for the embedders
  torch::manual_seed(0);
  auto model = MakePixArt(*config);
  ParallelContext single;
  const int latent = LatentSize(*config, 256);
  auto x = torch::randn({2, config->in_channels, latent, latent});
  auto t = torch::full({2}, 500.0);
  torch::manual_seed(1);
  Conditioning at256 = model->MakeConditioning(2, ImageShape{256, 256, 0});
  torch::manual_seed(1);
  Conditioning at1024 = model->MakeConditioning(2, ImageShape{1024, 1024, 0});
  ASSERT_TRUE(at256.resolution.defined());
  EXPECT_EQ(at256.resolution[0][0].item<float>(), 256.0f);
  Conditioning wide = model->MakeConditioning(2, ImageShape{1280, 768, 0});
  EXPECT_TRUE(torch::equal(wide.resolution, torch::tensor({{768.0f, 1280.0f}, {768.0f, 1280.0f}})));
  EXPECT_FLOAT_EQ(wide.aspect_ratio[1][0].item<float>(), 768.0f / 1280.0f);
  EXPECT_FALSE(torch::allclose(model->Forward(x, t, at256, single),
                               model->Forward(x, t, at1024, single)));
}

}  // namespace
}  // namespace ditbench::pixart_test
