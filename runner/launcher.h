// Launching the ranks of one trial and watching them until they end.
//
// Launcher is the seam between deciding and running: the scheduler hands it a LaunchRequest
// and gets back how each rank ended. LocalLauncher starts processes on this machine; tests use
// a fake that writes rank files directly.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ditbench {

struct LaunchRequest {
  std::string trial_key;
  std::filesystem::path run_dir;     // holds trial.json; ranks write rank<r>.json/.log here
  std::filesystem::path worker;      // the program each rank runs
  std::vector<std::string> args;     // its arguments
  int world_size = 1;
  std::vector<int> gpus;             // CUDA_VISIBLE_DEVICES for the trial; empty on CPU
  double timeout_s = 1800;
};

// How one rank ended.
struct RankExit {
  bool exited = false;     // false: still running when the launcher gave up (killed by us)
  int exit_code = 0;       // valid when exited and not signaled
  int signal = 0;          // non-zero: killed by this signal
  bool killed_by_us = false;
};

struct LaunchOutcome {
  std::vector<RankExit> ranks;
  bool timed_out = false;
  int first_failed_rank = -1;  // the rank whose failure stopped the trial, or -1
  double wall_s = 0;
  std::string launch_error;    // the processes could not be started at all
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  // Runs all ranks to completion. If one fails or time runs out, kills every rank (no orphans).
  virtual LaunchOutcome Run(const LaunchRequest& request) = 0;
};

// Ranks as local processes (Boost.Process), one process group per trial, supervised from the
// calling thread. Each rank gets the torchrun environment of design section 5 with a free port.
class LocalLauncher final : public Launcher {
 public:
  LaunchOutcome Run(const LaunchRequest& request) override;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int FindFreePort();

}  // namespace ditbench
