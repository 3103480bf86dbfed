// ditbench-worker's library entry point: one rank of one trial, following the worker contract
// (contract/worker_contract.h). Returns the process exit code (kWorkerOk, ...). Always
// writes rank<r>.json, also on failure, so the coordinator can say what went wrong.
#pragma once

#include <filesystem>

#include "worker/dit_trial.h"

namespace ditbench {

struct WorkerOptions {
  std::filesystem::path trial;       // trial.json
  std::filesystem::path result_dir;  // where rank<r>.json goes; default: the trial's folder
  TrialHooks hooks;                  // test workers only (tests/support/test_worker_main.cc)
};

int RunWorker(const WorkerOptions& options);

// Prints the environment a rank would record (CPU, and the first CUDA device when one is
// visible) as JSON to stdout. Returns 0.
int DescribeWorker();

}  // namespace ditbench
