// Wan 2.2 A14B's experts (model_zoo/families/wan.cc, ModelConfig::experts): the first expert for
// model times at or above expert_boundary x 1000, the second below, each a Wan transformer of
// its own weights with its own guidance scale, and both experts' parameters counted.
#include <gtest/gtest.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench::wan_experts_test {
namespace {

const ModelConfig& Tiny() { return *FindModelPreset("wan2.2-t2v-a14b-tiny"); }

TEST(WanExpertsTest, TheSwitchIsAtTheBoundaryTimestepWithEachExpertsGuidance) {
  auto model = MakeDitModel(Tiny());
  model->BeginStep(999);
  EXPECT_EQ(model->expert(), 0);
  EXPECT_DOUBLE_EQ(model->guidance_scale(), 4.0);
  model->BeginStep(875);  // diffusers: t >= boundary_ratio x 1000 is the high-noise expert's
  EXPECT_EQ(model->expert(), 0);
  model->BeginStep(874.5);
  EXPECT_EQ(model->expert(), 1);
  EXPECT_DOUBLE_EQ(model->guidance_scale(), 3.0);
  // A model of one transformer has one expert whatever the time.
  auto one = MakeDitModel(*FindModelPreset("wan2.1-t2v-tiny"));
  one->BeginStep(10);
  EXPECT_EQ(one->expert(), 0);
  EXPECT_DOUBLE_EQ(one->guidance_scale(), 5.0);
}

TEST(WanExpertsTest, EachExpertIsAWanTransformerOfItsOwnWeights) {
  c10::InferenceMode inference;
  torch::manual_seed(3);
  auto experts = MakeDitModel(Tiny());
  EXPECT_EQ(ParameterCount(Tiny()), [&] {
    std::int64_t n = 0;
    for (const auto& p : experts->module().parameters()) n += p.numel();
    return n;
  }());
  ModelConfig single = Tiny();
  single.experts = 1;
  const auto x = torch::randn({2, 16, 2, 8, 8});
  const auto t = torch::full({2}, 500.0);
  const Conditioning conditioning = experts->MakeConditioning(2, ImageShape{64, 64, 5});
  const ParallelContext local;
  std::vector<torch::Tensor> outputs;
  for (int expert = 0; expert < 2; ++expert) {
    // The expert's parameters, copied into a model of one transformer.
    auto alone = MakeDitModel(single);
    const std::string prefix = expert == 0 ? "transformer." : "transformer_2.";
    auto mine = experts->module().named_parameters();
    for (auto& p : alone->module().named_parameters()) p.value().copy_(mine[prefix + p.key()]);
    experts->BeginStep(expert == 0 ? 900 : 100);
    ASSERT_EQ(experts->expert(), expert);
    const auto got = experts->Forward(x, t, conditioning, local);
    EXPECT_TRUE(torch::equal(got, alone->Forward(x, t, conditioning, local))) << expert;
    outputs.push_back(got);
  }
  EXPECT_FALSE(torch::allclose(outputs[0], outputs[1]));  // two experts, two sets of weights
}

}  // namespace
}  // namespace ditbench::wan_experts_test
