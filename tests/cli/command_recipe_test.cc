// The README's command-workload recipe, word for word, through the real `ditbench` program:
// a benchmark that does `import ditbench_result` with no path surgery runs, because `run`
// puts the build's python/ folder (beside the program) on the ranks' PYTHONPATH.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::command_recipe_test {
namespace {

using ::testing::HasSubstr;

std::string Shell(const std::string& command, int* exit_code) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe)) output += buffer;
  const int status = ::pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

TEST(CommandRecipeTest, TheReadmesThreeLinesRunAsWritten) {
  test::TempDir dir;
  // An existing benchmark's own code, then the README's three lines unchanged.
  std::ofstream(dir / "bench.py")
      << "prompt = 'a cat'\n"
         "def pipe(prompt, num_inference_steps):\n"
         "    return sum(i * i for i in range(200 * num_inference_steps))\n"
         "import ditbench_result            # python/ditbench_result.py: standard library, torch "
         "optional\n"
         "def step(): pipe(prompt, num_inference_steps=ditbench_result.trial()[\"steps\"])\n"
         "ditbench_result.run(step)         # times step() for this trial, writes "
         "rank<RANK>.json\n";
  std::ofstream(dir / "sweep.yaml")
      << "name: my-bench\n"
         "workload: command\n"
         "command: [python3, bench.py, --steps, \"{steps}\", --height, \"{resolution}\", --opt, "
         "\"{opt}\"]\n"
         "defaults: {steps: 2, warmup: 1, repeats: 3}\n"
         "matrix:\n"
         "  resolution: [512]\n"
         "  opt: [none, compile]\n";
  int code = -1;
  // PYTHONPATH unset, as in a fresh shell: the helper is found without it.
  const std::string out =
      Shell("env -u PYTHONPATH " + std::string(DITBENCH_BIN) + " run " +
                (dir / "sweep.yaml").string() + " --db " + (dir / "r.db").string() +
                " --gpus cpu:1",
            &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("done: 2 ran (2 ok, 0 failed)"));
}

}  // namespace
}  // namespace ditbench::command_recipe_test
