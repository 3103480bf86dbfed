#include "launch/build_command.h"

#include <fstream>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::build_command_test {
namespace {

using ::testing::HasSubstr;

TEST(BuildCommandTest, TheRevisionIsTheEnvironmentVariableAsOneWord) {
  EXPECT_EQ(BuildCommandFor("make REV={rev} && echo out/{rev}"),
            "make REV=\"${DITBENCH_REV}\" && echo out/\"${DITBENCH_REV}\"");
  EXPECT_THROW(BuildCommandFor("make"), std::invalid_argument);
  test::TempDir dir;
  std::ofstream(dir / "worker it's; x") << "#!/bin/sh\n";
  const BuiltWorker built =
      BuildRevision("cd " + dir.path().string() + " && echo $PWD/worker\\ {rev}", "it's; x");
  ASSERT_TRUE(built.worker) << built.problem;
  EXPECT_EQ(built.worker->filename(), "worker it's; x");
}

// Inside double quotes a single-quoted revision is no quoting at all: "out/{rev}" with the
// revision $(touch pwned) ran the substitution. There {rev} reads the environment instead.
TEST(BuildCommandTest, ARevisionInDoubleQuotesIsReadFromTheEnvironment) {
  EXPECT_EQ(BuildCommandFor("echo \"out/{rev}\" {rev}"),
            "echo \"out/${DITBENCH_REV}\" \"${DITBENCH_REV}\"");
  EXPECT_EQ(BuildCommandFor("echo \"$(basename {rev})\""),
            "echo \"$(basename \"${DITBENCH_REV}\")\"");
  EXPECT_EQ(BuildCommandFor("echo \\\"{rev}"), "echo \\\"\"${DITBENCH_REV}\"");  // escaped quote
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
    BuildCommandFor("sh -c 'make REV={rev}'");
    FAIL() << "a single-quoted {rev} was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("{rev} is inside single quotes"));
    EXPECT_THAT(e.what(), HasSubstr("\"$DITBENCH_REV\""));
  }
  EXPECT_NO_THROW(BuildCommandFor("echo 'it''s' {rev}"));  // quotes closed before it
}

// Contexts the parse does not model: a heredoc's body, where quotes mean nothing, and a comment
// holding a quote, which the parse reads as opening one. The revision still never runs.
TEST(BuildCommandTest, ARevisionInAHeredocOrAfterACommentNeverRuns) {
  test::TempDir dir;
  std::ofstream(dir / "worker") << "#!/bin/sh\n";
  const std::string hostile = "g$(touch " + (dir / "pwned").string() + ")";
  const std::string echo_worker = "echo " + (dir / "worker").string();
  for (const std::string& command :
       {"cat > /dev/null <<EOF\n{rev}\nEOF\n" + echo_worker,
        "true # \"\necho \"{rev}\" > /dev/null; " + echo_worker,
        "true # \"\necho {rev} > /dev/null; " + echo_worker}) {
    SCOPED_TRACE(command);
    const BuiltWorker built = BuildRevision(command, hostile);
    EXPECT_TRUE(built.worker) << built.problem;
    EXPECT_FALSE(std::filesystem::exists(dir / "pwned"));
  }
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
}  // namespace ditbench::build_command_test
