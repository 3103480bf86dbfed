#include "runner/failure_streak.h"

#include <gtest/gtest.h>

namespace ditbench::failure_streak_test {
namespace {

TEST(FailureSignatureTest, IsTheStatusAndTheLastLineOfTheError) {
  EXPECT_EQ(FailureSignature(TrialStatus::kFailed,
                             "rank 1 exited 1: log tail (rank1.log): Traceback (most recent "
                             "call last): | File \"bench.py\", line 1 | ModuleNotFoundError: "
                             "No module named 'ditbench_result'"),
            "failed: ModuleNotFoundError: No module named 'ditbench_result'");
  EXPECT_EQ(FailureSignature(TrialStatus::kOom, "out of memory\n  \n"), "oom: out of memory");
  EXPECT_EQ(FailureSignature(TrialStatus::kCrashed, ""), "crashed: (no message)");
}

TEST(FailureStreakTest, TheFirstLaunchesFailingAlikeMakeAStreakOnce) {
  FailureStreak streak(3);
  EXPECT_FALSE(streak.Add(TrialStatus::kFailed, "rank 0 exited 1: boom"));
  EXPECT_FALSE(streak.Add(TrialStatus::kFailed, "rank 1 exited 1: boom"));  // another rank
  EXPECT_TRUE(streak.Add(TrialStatus::kFailed, "log tail: x | rank 0 exited 1: boom"));
  EXPECT_EQ(streak.signature(), "failed: rank 0 exited 1: boom");  // the first, as it read
  EXPECT_FALSE(streak.Add(TrialStatus::kFailed, "boom"));  // said once
}

TEST(FailureStreakTest, AnOkOrADifferentFailureFirstEndsTheWatch) {
  FailureStreak ok_first(2);
  EXPECT_FALSE(ok_first.Add(TrialStatus::kOk, ""));
  EXPECT_FALSE(ok_first.Add(TrialStatus::kFailed, "boom"));
  EXPECT_FALSE(ok_first.Add(TrialStatus::kFailed, "boom"));
  FailureStreak different(2);
  EXPECT_FALSE(different.Add(TrialStatus::kFailed, "boom"));
  EXPECT_FALSE(different.Add(TrialStatus::kOom, "boom"));
  EXPECT_FALSE(different.Add(TrialStatus::kOom, "boom"));
  FailureStreak one(1);
  EXPECT_TRUE(one.Add(TrialStatus::kTimeout, "timed out"));
}

}  // namespace
}  // namespace ditbench::failure_streak_test
