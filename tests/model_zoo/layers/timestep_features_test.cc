#include "model_zoo/layers/timestep_features.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ditbench::timestep_features_test {
namespace {

// dim 4: two frequencies, 10000^0 = 1 and 10000^(-1/2) = 0.01; cos of both, then sin of both.
TEST(TimestepFeaturesTest, AreCosinesThenSinesOfTheHandComputedFrequencies) {
  auto features = TimestepFeatures(torch::tensor({0.0, 3.0}, torch::kFloat64), 4);
  ASSERT_EQ(features.sizes(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(features.scalar_type(), torch::kFloat32);
  auto expected = torch::tensor(
      {{1.0, 1.0, 0.0, 0.0}, {std::cos(3.0), std::cos(0.03), std::sin(3.0), std::sin(0.03)}},
      torch::kFloat32);
  EXPECT_TRUE(torch::allclose(features, expected, 1e-6, 1e-6)) << features;
}

}  // namespace
}  // namespace ditbench::timestep_features_test
