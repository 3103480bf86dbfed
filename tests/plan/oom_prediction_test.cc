#include "plan/oom_prediction.h"

#include <gtest/gtest.h>

namespace ditbench::oom_prediction_test {
namespace {

TrialConfig Config(int resolution, int ulysses, int batch = 1) {
  TrialConfig c;
  c.model = "pixart-alpha";
  c.resolution = resolution;
  c.ulysses = ulysses;
  c.batch = batch;
  return c;
}

TEST(OomPredictionTest, LargerResolutionBatchOrLowerDegreeIsAtLeastAsLarge) {
  const TrialConfig oomed = Config(1024, 4);
  EXPECT_TRUE(AtLeastAsLarge(Config(2048, 4), oomed));
  EXPECT_TRUE(AtLeastAsLarge(Config(1024, 2), oomed));
  EXPECT_TRUE(AtLeastAsLarge(Config(1024, 4, 2), oomed));
  EXPECT_TRUE(AtLeastAsLarge(Config(2048, 1, 4), oomed));
  TrialConfig seed = oomed;
  seed.seed = 7;  // the same size, another computation
  EXPECT_TRUE(AtLeastAsLarge(seed, oomed));
}

TEST(OomPredictionTest, SmallerOrIncomparableOrOtherModelsAreNotPredicted) {
  const TrialConfig oomed = Config(1024, 4);
  EXPECT_FALSE(AtLeastAsLarge(oomed, oomed));            // the trial itself
  EXPECT_FALSE(AtLeastAsLarge(Config(512, 4), oomed));   // smaller
  EXPECT_FALSE(AtLeastAsLarge(Config(1024, 8), oomed));  // more ranks share it
  EXPECT_FALSE(AtLeastAsLarge(Config(2048, 8), oomed));  // larger but more ranks: unknown
  TrialConfig other = Config(2048, 4);
  other.model = "pixart-sigma";
  EXPECT_FALSE(AtLeastAsLarge(other, oomed));
  TrialConfig fp16 = Config(2048, 4);
  fp16.precision = Precision::kFp16;
  EXPECT_FALSE(AtLeastAsLarge(fp16, oomed));
  TrialConfig ring = Config(1024, 4);
  ring.ring = 2;  // a degree above the OOMed trial's
  EXPECT_FALSE(AtLeastAsLarge(ring, oomed));
}

TEST(OomPredictionTest, PredictedOomNamesTheFirstTrialItIsLargerThan) {
  const std::vector<OomTrial> oomed = {{"aaa", Config(2048, 4)}, {"bbb", Config(1024, 4)}};
  EXPECT_EQ(PredictedOom(Config(2048, 2), oomed), "aaa");
  EXPECT_EQ(PredictedOom(Config(1024, 2), oomed), "bbb");
  EXPECT_EQ(PredictedOom(Config(512, 2), oomed), std::nullopt);
}

}  // namespace
}  // namespace ditbench::oom_prediction_test
