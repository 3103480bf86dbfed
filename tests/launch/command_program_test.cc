#include "launch/command_program.h"

#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::command_program_test {
namespace {

class CommandProgramTest : public ::testing::Test {
 protected:
  std::filesystem::path Script(const std::filesystem::path& path, bool executable = true) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << "#!/bin/sh\nexit 0\n";
    ::chmod(path.c_str(), executable ? 0755 : 0644);
    return path;
  }
  SweepSpec Spec(const std::string& program) {
    ParseResult r = ParseSweep("name: c\nworkload: command\ncommand: [" + program +
                                   ", --steps, \"{steps}\", \"{flavour}\"]\n"
                                   "defaults: {steps: 3, flavour: x}\n",
                               dir_ / "sweeps" / "s.yaml");
    EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].ToString());
    return r.spec;
  }
  test::TempDir dir_;
};

TEST_F(CommandProgramTest, RelativePathsAreTakenFromTheSweepsFolder) {
  const auto script = Script(dir_ / "sweeps" / "tools" / "bench.sh");
  EXPECT_EQ(ResolveProgram("tools/bench.sh", dir_ / "sweeps", ""), script);
  EXPECT_EQ(ResolveProgram("./tools/../tools/bench.sh", dir_ / "sweeps", ""), script);
  EXPECT_EQ(ResolveProgram(script.string(), "/elsewhere", ""), script);
  EXPECT_TRUE(ResolveProgram("tools/missing.sh", dir_ / "sweeps", "").empty());
}

TEST_F(CommandProgramTest, BareNamesAreLookedUpOnPathAndMustBeExecutable) {
  const auto first = Script(dir_ / "a" / "tool", /*executable=*/false);
  const auto second = Script(dir_ / "b" / "tool");
  const std::string path = (dir_ / "a").string() + ":" + (dir_ / "b").string();
  EXPECT_EQ(ResolveProgram("tool", "/unused", path), second);  // a/tool is not executable
  EXPECT_TRUE(ResolveProgram("tool", "/unused", (dir_ / "a").string()).empty());
  EXPECT_TRUE(ResolveProgram("", "/unused", path).empty());
}

TEST_F(CommandProgramTest, RequestStartsInTheSweepsFolderWithTheTrialsValues) {
  const auto script = Script(dir_ / "sweeps" / "bench.sh");
  SweepSpec spec = Spec("./bench.sh");
  EXPECT_FALSE(CommandProgramProblem(spec));
  LaunchRequest request;
  SetCommand(spec, spec.defaults, request);
  EXPECT_EQ(request.worker, script);
  EXPECT_EQ(request.working_dir, dir_ / "sweeps");
  EXPECT_EQ(request.args, (std::vector<std::string>{"--steps", "3", "x"}));
}

TEST_F(CommandProgramTest, AProgramWithoutTheExecutePermissionIsNotExecutableNotMissing) {
  const auto script = Script(dir_ / "sweeps" / "bench.sh", /*executable=*/false);
  const auto problem = CommandProgramProblem(Spec("./bench.sh"));
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find(":3:11: 'command[0]': program './bench.sh' is not executable: " +
                          script.string()),
            std::string::npos)
      << *problem;
  EXPECT_NE(ProgramProblem("tool", "/unused", (dir_ / "sweeps").string())->find("not found"),
            std::string::npos);  // no file named tool at all ...
  Script(dir_ / "a" / "tool", /*executable=*/false);
  EXPECT_NE(ProgramProblem("tool", "/unused", (dir_ / "a").string())->find("is not executable"),
            std::string::npos);  // ... and one found on PATH without the permission
}

TEST_F(CommandProgramTest, MissingProgramIsOneLocatedLine) {
  SweepSpec spec = Spec("./nowhere.sh");
  const auto problem = CommandProgramProblem(spec);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rfind((dir_ / "sweeps" / "s.yaml").string() +
                               ":3:11: 'command[0]': program './nowhere.sh' not found",
                           0),
            0u)
      << *problem;
}

}  // namespace
}  // namespace ditbench::command_program_test
