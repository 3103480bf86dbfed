// ditbench-worker: one rank of one trial. Started by `ditbench run`, or by hand under torchrun
// or srun with the same environment.
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "experiments/worker/cpu_isa_guard.h"
#include "experiments/worker/worker.h"

int main(int argc, char** argv) {
  ditbench::GuardCpuIsa();  // before anything runs a LibTorch kernel
  ditbench::WorkerOptions options;
  CLI::App app{"ditbench-worker: runs one rank of one benchmark trial"};
  std::string trial, result_dir;
  if (const char* env = std::getenv("DITBENCH_TRIAL")) trial = env;
  if (const char* env = std::getenv("DITBENCH_RESULT")) result_dir = env;
  app.add_option("--trial", trial, "trial.json written by the coordinator (or $DITBENCH_TRIAL)");
  app.add_option("--result-dir", result_dir, "where rank<r>.json goes (or $DITBENCH_RESULT)");
  bool describe = false;
  app.add_flag("--describe", describe,
               "print this machine's devices, driver and library versions as JSON, and exit");
  CLI11_PARSE(app, argc, argv);
  if (describe) return ditbench::DescribeWorker();
  if (trial.empty()) {
    std::fprintf(stderr, "ditbench-worker: error: no trial file: pass --trial or set DITBENCH_TRIAL\n");
    return 2;
  }
  options.trial = trial;
  options.result_dir = result_dir;
  return ditbench::RunWorker(options);
}
