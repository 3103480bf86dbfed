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

// Inside double quotes a single-quoted revision is no quoting at all: "out/{rev}" with the
// revision $(touch pwned) ran the substitution. There {rev} reads the environment instead.
TEST(BuildCommandTest, ARevisionInDoubleQuotesIsReadFromTheEnvironment) {
  EXPECT_EQ(BuildCommandFor("echo \"out/{rev}\" {rev}", "v1"),
            "echo \"out/${DITBENCH_REV}\" 'v1'");
  EXPECT_EQ(BuildCommandFor("echo \"$(basename {rev})\"", "v1"), "echo \"$(basename 'v1')\"");
  EXPECT_EQ(BuildCommandFor("echo \\\"{rev}", "v1"), "echo \\\"'v1'");  // an escaped quote
  test::TempDir dir;
  std::ofstream(dir / "worker") << "#!/bin/sh\n";
  const std::string hostile = "$(touch " + (dir / "pwned").string() + ")`touch " +
                              (dir / "pwned2").string() + "`";
  const BuiltWorker built = BuildRevision(
      "test \"x{rev}\" = \"x$DITBENCH_REV\" && echo \"" + dir.path().string() + "/worker\"",
      hostile);
  EXPECT_TRUE(built.worker) << built.problem;
  EXPECT_FALSE(std::filesystem::exists(dir / "pwned"));
  EXPECT_FALSE(std::filesystem::exists(dir / "pwned2"));
}

TEST(BuildCommandTest, ARevisionInSingleQuotesIsRefused) {
  try {
    BuildCommandFor("sh -c 'make REV={rev}'", "v1");
    FAIL() << "a single-quoted {rev} was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("{rev} is inside single quotes"));
    EXPECT_THAT(e.what(), HasSubstr("\"$DITBENCH_REV\""));
  }
  EXPECT_NO_THROW(BuildCommandFor("echo 'it''s' {rev}", "v1"));  // quotes closed before it
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
