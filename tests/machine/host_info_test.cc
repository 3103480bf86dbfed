#include "machine/host_info.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::host_info_test {
namespace {

// A process that ends while ditbench samples it is simply not there: its /proc files read as
// "" (they vanish, even between open and read), never an exception that stops a run.
TEST(HostInfoTest, AVanishedProcessesFilesReadAsNothing) {
  EXPECT_NE(ReadProcText("/proc/self/stat"), "");
  EXPECT_EQ(ReadProcText("/proc/999999999/stat"), "");
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  const std::string path = "/proc/" + std::to_string(child) + "/stat";
  int status = 0;
  ::waitpid(child, &status, 0);  // reaped: its folder is gone
  EXPECT_EQ(ReadProcText(path), "");
}

TEST(HostInfoTest, CommandOutputLinesRunsAProgramWithItsArgumentsVerbatim) {
  EXPECT_EQ(CommandOutputLines({"printf", "a\\n\\nb; touch x\\n"}),
            (std::vector<std::string>{"a", "b; touch x"}));
}

TEST(HostInfoTest, APathWithQuotesAndSemicolonsRunsNothingElse) {
  test::TempDir dir;
  const auto folder = dir / "it's; touch pwned; '";
  std::filesystem::create_directories(folder);
  const auto program = folder / "describe";
  std::ofstream(program) << "#!/bin/sh\necho described\n";
  std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  // Through a shell, the quote would end the quoting and `touch pwned` would run instead.
  EXPECT_EQ(CommandOutputLines({program.string(), "--describe"}),
            std::vector<std::string>{"described"});
}

TEST(HostInfoTest, RecordedVariablesIncludeTheLibrariesThatChangeResults) {
  setenv("MKL_NUM_THREADS", "4", 1);
  setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
  setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", 1);
  setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 1);
  setenv("DITBENCH_UNRELATED", "x", 1);
  const nlohmann::json vars = RecordedVariables();
  EXPECT_EQ(vars["MKL_NUM_THREADS"], "4");
  EXPECT_EQ(vars["ONEDNN_MAX_CPU_ISA"], "AVX2");
  EXPECT_EQ(vars["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True");
  EXPECT_EQ(vars["CUBLAS_WORKSPACE_CONFIG"], ":4096:8");
  EXPECT_FALSE(vars.contains("DITBENCH_UNRELATED"));
}

TEST(HostInfoTest, MissingProgramGivesNoLines) {
  EXPECT_TRUE(CommandOutputLines({"/nonexistent/ditbench-probe"}).empty());
  EXPECT_TRUE(CommandOutputLines({}).empty());
}

}  // namespace
}  // namespace ditbench::host_info_test
