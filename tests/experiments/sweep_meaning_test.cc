#include "experiments/sweep_meaning.h"

#include <gtest/gtest.h>

namespace ditbench::sweep_meaning_test {
namespace {

constexpr const char* kSweep = R"(name: s
defaults: {model: pixart-alpha-tiny, steps: 2}
matrix:
  ulysses: [1, 2]
)";

TEST(SweepMeaningTest, CommentsBlankLinesAndLayoutDoNotChangeTheMeaning) {
  const char* rewritten = R"(# the nightly sweep
name: "s"   # its name

defaults:
  model: pixart-alpha-tiny
  steps: 2
matrix:
  ulysses:
    - 1
    - 2   # two ranks
)";
  EXPECT_TRUE(SameSweepMeaning(kSweep, rewritten));
  EXPECT_EQ(SweepMeaning(kSweep), SweepMeaning(rewritten));
}

TEST(SweepMeaningTest, AChangedValueKeyOrItemChangesTheMeaning) {
  EXPECT_FALSE(SameSweepMeaning(kSweep, R"(name: s
defaults: {model: pixart-alpha-tiny, steps: 3}
matrix:
  ulysses: [1, 2]
)"));
  EXPECT_FALSE(SameSweepMeaning(kSweep, R"(name: s
defaults: {model: pixart-alpha-tiny, steps: 2}
matrix:
  ulysses: [1, 2, 4]
)"));
  EXPECT_FALSE(SameSweepMeaning(kSweep, R"(name: s
defaults: {model: pixart-alpha-tiny, steps: 2}
matrix:
  ring: [1, 2]
)"));
  // A value that looks like structure is still a value.
  EXPECT_FALSE(SameSweepMeaning("a: '[1, 2]'\n", "a: [1, 2]\n"));
}

TEST(SweepMeaningTest, TextThatIsNotYamlIsItsOwnMeaning) {
  EXPECT_EQ(SweepMeaning("a: [1\n"), "a: [1\n");
  EXPECT_FALSE(SameSweepMeaning("a: [1\n", "a: [2\n"));
}

}  // namespace
}  // namespace ditbench::sweep_meaning_test
