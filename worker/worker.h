// ditbench-worker's library entry point: one rank of one trial, following the worker contract
// (contract/worker_contract.h). Returns the process exit code (kWorkerOk, ...). Always
// writes rank<r>.json, also on failure, so the coordinator can say what went wrong.
#pragma once

#include <filesystem>

#include "worker/dit_trial.h"
#include "worker/selfcheck.h"

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

// ditbench-worker --selfcheck FILE: this rank of the launch's environment, with the rendezvous,
// backend and CPU threads a trial would have, runs MeasureSelfcheck (worker/selfcheck.h); rank 0
// writes `file` atomically (contract/selfcheck_measurements.h). Returns kWorkerOk when the file
// was written (a section that failed is named in it), kWorkerInvalidConfig for a malformed rank
// environment, kWorkerFailed otherwise; says why on stderr.
int RunSelfcheck(const std::filesystem::path& file, const SelfcheckOptions& options = {});

}  // namespace ditbench
