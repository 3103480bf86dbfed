#include "launch/build_command.h"

#include <fstream>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

using ::testing::HasSubstr;

TEST(BuildCommandTest, TheRevisionIsQuotedForTheShell) {
  EXPECT_EQ(BuildCommandFor("make REV={rev} && echo out/{rev}", "v1.2"),
            "make REV='v1.2' && echo out/'v1.2'");
  EXPECT_EQ(BuildCommandFor("echo {rev}", "it's; rm -rf /"), "echo 'it'\\''s; rm -rf /'");
  EXPECT_THROW(BuildCommandFor("make", "v1"), std::invalid_argument);
}

TEST(BuildCommandTest, TheLastLineOfStdoutIsTheWorker) {
  test::TempDir dir;
  std::ofstream(dir / "worker-r3") << "#!/bin/sh\n";
  const BuiltWorker built = BuildRevision(
      "echo building {rev}; echo; echo " + (dir / "worker-").string() + "{rev}; echo", "r3");
  ASSERT_TRUE(built.worker) << built.problem;
  EXPECT_EQ(*built.worker, dir / "worker-r3");
}

TEST(BuildCommandTest, AFailedBuildSaysWhatFailedInOneLine) {
  test::TempDir dir;
  const BuiltWorker failed = BuildRevision("echo {rev}; exit 3", "r4");
  EXPECT_FALSE(failed.worker);
  EXPECT_THAT(failed.problem, HasSubstr("revision 'r4' failed (exit 3)"));
  EXPECT_EQ(failed.problem.find('\n'), std::string::npos);
  const BuiltWorker silent = BuildRevision("true {rev}", "r5");
  EXPECT_THAT(silent.problem, HasSubstr("printed no worker path"));
  const BuiltWorker missing = BuildRevision("echo " + (dir / "none").string() + "{rev}", "r6");
  EXPECT_THAT(missing.problem, HasSubstr("which is not a file"));
}

}  // namespace
}  // namespace ditbench
