// A test build of ditbench-worker with one fault injected: DITBENCH_TEST_SLOW_RANK="R:MS" in its
// environment makes rank R sleep MS milliseconds at the end of every timed iteration, inside the
// timed region. Tests run it through `ditbench run --worker` to check that a slow rank shows as
// skew and sets the latency. The production worker has no such switch: this program is built
// only with the tests.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "worker/cpu_isa_guard.h"
#include "worker/worker.h"

int main(int argc, char** argv) {
  ditbench::GuardCpuIsa();
  ditbench::WorkerOptions options;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--trial") options.trial = argv[i + 1];
  if (const char* env = std::getenv("DITBENCH_TRIAL"); options.trial.empty() && env)
    options.trial = env;
  if (const char* env = std::getenv("DITBENCH_RESULT")) options.result_dir = env;
  int slow_rank = -1;
  double slow_ms = 0;
  if (const char* spec = std::getenv("DITBENCH_TEST_SLOW_RANK")) {
    if (std::sscanf(spec, "%d:%lf", &slow_rank, &slow_ms) != 2 || slow_ms < 0) {
      std::fprintf(stderr, "slow_rank_worker: DITBENCH_TEST_SLOW_RANK expects RANK:MS\n");
      return 2;
    }
  }
  options.hooks.in_timed_region = [slow_rank, slow_ms](int rank) {
    if (rank == slow_rank)
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(slow_ms));
  };
  return ditbench::RunWorker(options);
}
