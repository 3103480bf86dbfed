#include "plan/spec_diff.h"

#include <gtest/gtest.h>

namespace ditbench::spec_diff_test {
namespace {

TEST(SpecDiffTest, SameLinesMeanNoDiff) {
  EXPECT_EQ(SpecDiff("name: s\nsteps: 2\n", "name: s\nsteps: 2"), "");
}

TEST(SpecDiffTest, ChangedLineIsShownRemovedThenAdded) {
  EXPECT_EQ(SpecDiff("name: s\nsteps: 28\nseed: 0\n", "name: s\nsteps: 20\nseed: 0\n"),
            "- steps: 28\n+ steps: 20\n");
}

TEST(SpecDiffTest, InsertedAndDeletedLinesKeepTheirOrder) {
  EXPECT_EQ(SpecDiff("a\nb\nc\n", "a\nc\nd\n"), "- b\n+ d\n");
}

TEST(SpecDiffTest, LongDiffsAreCut) {
  EXPECT_EQ(SpecDiff("a\nb\nc\n", "x\ny\nz\n", 2), "- a\n- b\n... 4 more changed lines\n");
}

}  // namespace
}  // namespace ditbench::spec_diff_test
