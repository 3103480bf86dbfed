#include "runner/progress.h"

#include <gtest/gtest.h>

namespace ditbench {
namespace {

TEST(ProgressTest, BeforeAnyTrialEndsTheEtaIsThePlans) {
  Progress p({10, 20, 0, 30}, 1000);
  EXPECT_DOUBLE_EQ(p.RemainingSeconds(), 60);
  EXPECT_EQ(p.Line(1005), "progress: 0/4 done, 4 left, 5s elapsed, about 1m00s to go");
}

TEST(ProgressTest, TheEtaIsCorrectedByHowFarOffThePlanWas) {
  Progress p({10, 20, 0, 30}, 0);
  p.Finished(0, 20);  // took twice the estimate
  EXPECT_DOUBLE_EQ(p.RemainingSeconds(), 100);
  p.Finished(2, 0.01);  // a skipped trial: no estimate, does not change the scale
  EXPECT_DOUBLE_EQ(p.RemainingSeconds(), 100);
  EXPECT_EQ(p.Line(125), "progress: 2/4 done, 2 left, 2m05s elapsed, about 1m40s to go (plan x2)");
  p.Finished(0, 99);  // twice the same trial counts once
  EXPECT_DOUBLE_EQ(p.RemainingSeconds(), 100);
}

TEST(ProgressTest, WhenAllAreDoneThereIsNothingToGo) {
  Progress p({5}, 0);
  p.Finished(0, 4);
  EXPECT_EQ(p.Line(7200 + 7 * 60), "progress: 1/1 done, 0 left, 2h07m elapsed");
}

}  // namespace
}  // namespace ditbench
