// Starting the ranks of trials and watching them until they end.
//
// Launcher is the seam between deciding and running, shaped like ninja's CommandRunner: the
// sweep loop Start()s a trial and gets a handle back at once, Wait()s for any started trial to
// end, and may Cancel() one. Several trials may be in flight; which devices each gets is the
// caller's decision (machine/placement.h), so a launcher never overlaps trials by itself.
// LocalLauncher (launch/local_launcher.h) starts processes on this machine; SlurmLauncher
// (launch/slurm/slurm_launcher.h) submits each trial as a Slurm job; tests use fakes
// (tests/support/runner_fakes.h).
//
// A launcher reads no global state (no interrupt flag, no environment): interruption is the
// caller's business, expressed through Cancel().
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "experiments/trial.h"

namespace ditbench {

struct LaunchRequest {
  std::string trial_key;
  std::filesystem::path run_dir;     // holds trial.json; ranks write rank<r>.json/.log here
  std::filesystem::path worker;      // the program each rank runs
  std::vector<std::string> args;     // its arguments
  // The folder the ranks start in; empty: the coordinator's. A relative `worker` is resolved
  // against it.
  std::filesystem::path working_dir;
  int world_size = 1;
  // CUDA_VISIBLE_DEVICES entries for the trial, as the driver names them ("4", "GPU-8e3c...");
  // empty on CPU, and then the ranks see no GPU at all.
  std::vector<std::string> devices;
  // The CPU cores each rank is pinned to (rank r: rank_cpus[r]); empty, or an empty list for a
  // rank: not pinned. Honoured by LocalLauncher; a batch scheduler binds ranks itself.
  std::vector<std::vector<int>> rank_cpus;
  double timeout_s = 1800;
  // A folder put first on the ranks' PYTHONPATH (a `command` workload: the folder of
  // ditbench_result.py, so that `import ditbench_result` works as written); empty: none.
  std::filesystem::path python_path;
  // Rank 0 is handed the rendezvous port already listening (contract/worker_environment.h,
  // kRendezvousFdVariable): for ditbench-worker, which serves its store on it. A `command`
  // workload's program binds MASTER_PORT itself, so it is never handed one. LocalLauncher only.
  bool rendezvous_socket = false;
};

// How one rank ended.
struct RankExit {
  bool exited = false;     // false: never started, or not seen to end
  int exit_code = 0;       // valid when exited and not signaled
  int signal = 0;          // non-zero: killed by this signal
  bool killed_by_us = false;
};

struct LaunchOutcome {
  std::vector<RankExit> ranks;
  bool timed_out = false;
  bool cancelled = false;      // Cancel() stopped it
  int first_failed_rank = -1;  // the rank whose failure stopped the trial, or -1
  double wall_s = 0;
  std::string launch_error;    // the processes could not be started at all (one line)
  // Set when a batch scheduler ended the trial for its own reasons (Slurm's OUT_OF_MEMORY,
  // TIMEOUT, NODE_FAIL, PREEMPTED...): the status it means and one line saying so. It wins
  // over what the ranks' exits would say.
  std::optional<TrialStatus> scheduler_status;
  std::string scheduler_reason;
};

// Identifies a started trial until Wait() returns it. Never reused by one launcher.
using LaunchHandle = std::uint64_t;

struct FinishedTrial {
  LaunchHandle handle = 0;
  LaunchOutcome outcome;
};

class Launcher {
 public:
  virtual ~Launcher() = default;

  // Starts every rank of `request` and returns at once. Never throws for a trial's own
  // trouble (no free port, a worker that cannot start): the trial then finishes at the next
  // Wait() with `launch_error` set, so a bad trial is data, not the end of the sweep.
  virtual LaunchHandle Start(const LaunchRequest& request) = 0;

  // Returns the next started trial that has ended, waiting at most `up_to` for one; nullopt if
  // none ended in that time or none is in flight. A trial ends when all its ranks have exited:
  // on the first failing rank or at its timeout the launcher kills all of them (no orphans).
  virtual std::optional<FinishedTrial> Wait(std::chrono::milliseconds up_to) = 0;

  // Kills every rank of a trial in flight; it still comes out of Wait(), with `cancelled` set.
  // Unknown or finished handles are ignored.
  virtual void Cancel(LaunchHandle handle) = 0;

  // Trials started and not yet returned by Wait().
  virtual int InFlight() const = 0;

  // Whether every rank of every trial runs on this host, so that a rank's monotonic clock
  // (std::chrono::steady_clock) is the coordinator's: what the coordinator's machine-health
  // windows need to be placed on a rank's own times. False (the default) when ranks may run on
  // other hosts, as under a batch scheduler.
  virtual bool RanksShareHost() const { return false; }

  // The scheduler's name for a trial in flight (a Slurm job id), to be recorded with the
  // running trial so that a coordinator started later can find it; empty when the trial lives
  // and dies with this process (local ranks die with their coordinator).
  virtual std::string ExternalId(LaunchHandle) const { return {}; }

  // Watches again a trial that an earlier coordinator started as `external_id` (from
  // ExternalId()), described by `request`: it then ends through Wait() like any other, at
  // once if it already ended while no coordinator watched. nullopt when this launcher cannot
  // (the default) or the scheduler no longer knows the job.
  virtual std::optional<LaunchHandle> Attach(const std::string& /*external_id*/,
                                             const LaunchRequest& /*request*/) {
    return std::nullopt;
  }
};

}  // namespace ditbench
