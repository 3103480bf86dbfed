#include "runner/progress.h"

#include <gtest/gtest.h>

namespace ditbench::progress_test {
namespace {

TEST(ProgressTest, BeforeAnyTrialEndsTheEtaIsThePlans) {
  Progress p({10, 20, 0, 30}, 1000);
  EXPECT_DOUBLE_EQ(*p.RemainingSeconds(), 60);
  EXPECT_EQ(p.Line(1005), "progress: 0/4 done, 4 left, 5s elapsed, about 1m00s to go");
}

TEST(ProgressTest, TheEtaIsCorrectedByHowFarOffThePlanWas) {
  Progress p({10, 20, 0, 30}, 0);
  p.Finished(0, 20);  // took twice the estimate
  EXPECT_DOUBLE_EQ(*p.RemainingSeconds(), 100);
  p.Finished(2, 0.01);  // a skipped trial: no estimate, does not change the scale
  EXPECT_DOUBLE_EQ(*p.RemainingSeconds(), 100);
  EXPECT_EQ(p.Line(125), "progress: 2/4 done, 2 left, 2m05s elapsed, about 1m40s to go (plan x2)");
  p.Finished(0, 99);  // twice the same trial counts once
  EXPECT_DOUBLE_EQ(*p.RemainingSeconds(), 100);
}

TEST(ProgressTest, WhenAllAreDoneThereIsNothingToGo) {
  Progress p({5}, 0);
  p.Finished(0, 4);
  EXPECT_EQ(p.Line(7200 + 7 * 60), "progress: 1/1 done, 0 left, 2h07m elapsed");
}

TEST(ProgressTest, TrialsWithoutAnEstimateTakeTheMeanOfThoseFinishedOrAreUnknown) {
  // A command workload: the plan has no estimate; one trial is invalid (never runs).
  Progress p({std::nullopt, std::nullopt, 0, std::nullopt}, 0);
  EXPECT_FALSE(p.RemainingSeconds().has_value());
  EXPECT_EQ(p.Line(3), "progress: 0/4 done, 4 left, 3s elapsed, time to go unknown until a "
                       "trial ends");
  p.Finished(2, 0.01);  // the invalid one: still nothing measured
  EXPECT_FALSE(p.RemainingSeconds().has_value());
  p.Finished(0, 40);
  EXPECT_DOUBLE_EQ(*p.RemainingSeconds(), 80);  // two left at 40 s each
  p.Finished(1, 20);
  EXPECT_DOUBLE_EQ(*p.RemainingSeconds(), 30);  // one left at the mean, 30 s
  EXPECT_EQ(p.Line(60), "progress: 3/4 done, 1 left, 1m00s elapsed, about 30s to go");
}

}  // namespace
}  // namespace ditbench::progress_test
