// `ditbench run` and `plan` parse their named options (--policy, --rerun, --search,
// --launcher) once, at the edge: an unknown name is one line listing the valid ones, exit 2,
// before anything is opened.
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "tests/support/temp_dir.h"

namespace ditbench::run_command_test {
namespace {

// Standard error captured while alive.
class StderrTo {
 public:
  explicit StderrTo(std::streambuf* buffer) : old_(std::cerr.rdbuf(buffer)) {}
  ~StderrTo() { std::cerr.rdbuf(old_); }

 private:
  std::streambuf* old_;
};

struct Case {
  const char* args;
  const char* line;
};

int RunParsed(std::function<int()> (*define)(CLI::App&), const char* name, const std::string& args,
              std::string& err) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand(name);
  std::function<int()> action = define(*sub);
  app.parse(std::string(name) + " " + args, false);
  std::stringstream captured;
  int code = 0;
  {
    StderrTo to(captured.rdbuf());
    code = action();
  }
  err = captured.str();
  return code;
}

TEST(RunCommandTest, AnUnknownNameIsOneLineListingTheValidNamesAndNothingIsOpened) {
  test::TempDir dir;
  std::ofstream(dir / "sweep.yaml") << "name: s\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2}\n"
                                       "matrix:\n  ulysses: [1]\n";
  const std::string common =
      (dir / "sweep.yaml").string() + " --gpus cpu:1 --db " + (dir / "r.db").string() + " ";
  for (const Case& c : {
           Case{"--policy greedy",
                "ditbench run: error: --policy 'greedy': expected exclusive or pack\n"},
           Case{"--rerun some",
                "ditbench run: error: --rerun 'some': expected failed, busy or all\n"},
           Case{"--search random", "ditbench run: error: --search 'random': expected advise\n"},
           Case{"--launcher pbs",
                "ditbench run: error: --launcher 'pbs': expected local or slurm\n"},
           Case{"--launcher slurm --slurm-mode array",
                "ditbench run: error: --slurm-mode 'array': expected job or step\n"},
       }) {
    std::string err;
    EXPECT_EQ(RunParsed(DefineRunCommand, "run", common + c.args, err), kExitUsage) << c.args;
    EXPECT_EQ(err, c.line);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "r.db"));
}

TEST(RunCommandTest, PlanRefusesAnUnknownPolicyOrLauncherTheSameWay) {
  test::TempDir dir;
  std::ofstream(dir / "sweep.yaml") << "name: s\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2}\n"
                                       "matrix:\n  ulysses: [1]\n";
  const std::string common = (dir / "sweep.yaml").string() + " --gpus cpu:1 ";
  std::string err;
  EXPECT_EQ(RunParsed(DefinePlanCommand, "plan", common + "--policy Pack", err), kExitUsage);
  EXPECT_EQ(err, "ditbench plan: error: --policy 'Pack': expected exclusive or pack\n");
  EXPECT_EQ(RunParsed(DefinePlanCommand, "plan", common + "--launcher slurm2", err), kExitUsage);
  EXPECT_EQ(err, "ditbench plan: error: --launcher 'slurm2': expected local or slurm\n");
}

}  // namespace
}  // namespace ditbench::run_command_test
