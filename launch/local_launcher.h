// Ranks as local processes (Boost.Process 1.74), one process group per trial.
//
// Every trial in flight is supervised from the thread that calls Wait(), by polling each
// child's running() (Boost 1.74's wait_for is unsafe with several children: it swaps the
// SIGCHLD handler). At a trial's first failing rank, at its timeout, or on Cancel(), the whole
// process group gets SIGKILL, grandchildren included. Each rank also gets SIGKILL if the
// coordinator dies (parent-death signal), so no rank outlives it. A rank with cores in
// LaunchRequest::rank_cpus is pinned to them before it starts (exit 126 if that fails).
//
// Thread-safety: none; one thread owns a LocalLauncher. Destroying it kills and reaps every
// trial still in flight.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "launch/rank_environment.h"

namespace ditbench {

class LocalLauncher final : public Launcher {
 public:
  // `environment`: what every rank inherits, as "NAME=value" (default: this process's), before
  // the torchrun variables of launch/rank_environment.h are added.
  explicit LocalLauncher(std::vector<std::string> environment = CurrentEnvironment());
  ~LocalLauncher() override;
  LocalLauncher(const LocalLauncher&) = delete;
  LocalLauncher& operator=(const LocalLauncher&) = delete;

  LaunchHandle Start(const LaunchRequest& request) override;
  std::optional<FinishedTrial> Wait(std::chrono::milliseconds up_to) override;
  void Cancel(LaunchHandle handle) override;
  int InFlight() const override { return static_cast<int>(trials_.size()); }
  bool RanksShareHost() const override { return true; }

 private:
  struct Trial;  // a process group and its children (Boost stays out of this header)
  std::vector<std::string> environment_;
  std::map<LaunchHandle, std::unique_ptr<Trial>> trials_;
  LaunchHandle next_handle_ = 1;
};

// A TCP port on 127.0.0.1 that was free a moment ago. Throws std::runtime_error.
int FindFreePort();
// Whether a server could listen on 127.0.0.1:`port` now (a bind with SO_REUSEADDR, as servers
// set it, succeeds): false when another socket listens there.
bool PortIsFree(int port);

// The worker program `run`, `forward` and `selfcheck` start when --worker is not given:
// ditbench-worker beside this executable (plain "ditbench-worker", found on PATH, when
// /proc/self/exe cannot be read).
std::filesystem::path DefaultWorkerProgram();

}  // namespace ditbench
