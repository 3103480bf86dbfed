// `ditbench run`: a sweep file in, one campaign of recorded trials out.
//
// Deciding and running are kept apart: PlanSweep expands and classifies the trials (pure);
// RunSweep records skipped ones, launches the rest one at a time through a Launcher, and
// commits each finished trial in its own transaction.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "experiments/sweep_spec.h"
#include "experiments/validity.h"
#include "runner/launcher.h"
#include "runner/sweep_plan.h"

namespace ditbench {

struct RunOptions {
  std::filesystem::path sweep;
  std::filesystem::path db = "results.db";
  std::string gpus = "auto";       // auto | 0,1,2 | cpu:N
  std::string rerun;               // "" | failed | all
  bool fresh = false;              // --new: start a new campaign
  bool dry_run = false;            // print the plan, run nothing
  std::filesystem::path worker;    // ditbench-worker; default: next to this executable
  std::filesystem::path run_root;  // default: <db folder>/runs
};

// Where trials run: GPU indices, or CPU slots.
struct Placement {
  Capacity capacity;
  std::vector<int> gpus;  // empty on CPU
};
// Parses --gpus. "auto": the GPUs nvidia-smi lists, else CPU with one slot per core.
// Throws std::invalid_argument with a one-line message on a malformed value.
Placement ResolvePlacement(const std::string& gpus);
// The first GPU's name from nvidia-smi, or "unknown GPU".
std::string GpuName();

// Runs the sweep; returns the exit code (0 ok/skipped, 1 some failed, 2 spec or usage error,
// 130 interrupted). Progress goes to `out`, errors to `err`.
int RunSweep(const RunOptions& options, Launcher& launcher, std::ostream& out, std::ostream& err);

}  // namespace ditbench
