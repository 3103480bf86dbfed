#include "model_zoo/pixart.h"

#include <gtest/gtest.h>

#include "model_zoo/dit_model.h"
#include "model_zoo/model_config.h"

namespace ditbench {
namespace {

// The position table is kept across forwards (rebuilding it on the host every forward stalled
// the GPU); a kept table must never leak into a forward at another resolution.
TEST(PixArtTest, KeptPositionTableFollowsTheResolution) {
  c10::InferenceMode inference;
  std::string error;
  auto config = ResolveModel("pixart-alpha-tiny", {}, &error);
  ASSERT_TRUE(config) << error;
  ParallelContext single;
  auto run = [&](DitModel& model, int resolution) {
    torch::manual_seed(5);
    const int latent = LatentSize(*config, resolution);
    auto x = torch::randn({2, config->in_channels, latent, latent});
    auto t = torch::full({2}, 500.0);
    Conditioning text = model.MakeConditioning(2);
    return model.Forward(x, t, text, single);
  };
  torch::manual_seed(0);
  auto model = MakePixArt(*config);
  torch::manual_seed(0);
  auto fresh = MakePixArt(*config);
  auto small = run(*model, 256);
  auto large = run(*model, 512);
  EXPECT_TRUE(torch::equal(large, run(*fresh, 512)));
  EXPECT_TRUE(torch::equal(small, run(*model, 256)));
  EXPECT_FALSE(torch::equal(small, run(*model, 256).mul(1.5)));  // the comparison can fail
}

}  // namespace
}  // namespace ditbench
