#include "runner/unrecorded_launch.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::unrecorded_launch_test {
namespace {

// ditbench-outcome.json sits in the run folder the ranks share: a FIFO or a 100,000-deep JSON
// there reads as "no outcome" (the launch runs again), at once and without a crash.
TEST(UnrecordedLaunchTest, AnOutcomeFileThatIsNotOursReadsAsNone) {
  test::TempDir dir;
  const auto file = dir / "ditbench-outcome.json";
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  EXPECT_FALSE(ReadLaunchOutcome(dir.path()).has_value());
  std::filesystem::remove(file);
  std::ofstream(file) << std::string(100000, '[') << std::string(100000, ']');
  EXPECT_FALSE(ReadLaunchOutcome(dir.path()).has_value());
  std::filesystem::remove(file);
  EXPECT_FALSE(ReadLaunchOutcome(dir.path()).has_value());  // missing
}

// An outcome linked from elsewhere is not this launch's: the launch runs again.
TEST(UnrecordedLaunchTest, AnOutcomeThatLinksOutOfTheRunFolderReadsAsNone) {
  test::TempDir dir, elsewhere;
  LaunchOutcome outcome;
  outcome.ranks = {RankExit{true, 0, 0, false}};
  WriteLaunchOutcome(elsewhere.path(), outcome);
  ASSERT_TRUE(ReadLaunchOutcome(elsewhere.path()).has_value());
  std::filesystem::create_symlink(elsewhere / "ditbench-outcome.json",
                                  dir / "ditbench-outcome.json");
  EXPECT_FALSE(ReadLaunchOutcome(dir.path()).has_value());
}

}  // namespace
}  // namespace ditbench::unrecorded_launch_test
