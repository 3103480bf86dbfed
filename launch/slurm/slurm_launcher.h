// Trials as Slurm jobs: each Start() writes <run_dir>/slurm_job.sh (launch/slurm/slurm_job.h) and
// submits it with sbatch; Wait() polls each job's state through a SlurmClient and, once the
// job has ended, tells how each rank ended from the rank<r>.exit files and what Slurm's final
// state means (launch/slurm/slurm_states.h).
//
// Jobs do not depend on the coordinator: a coordinator killed outright leaves them running,
// and the next one finds them again with Attach() from the job id recorded with the trial
// (ExternalId()). Cancel() is scancel. The trial's timeout becomes the job's --time (Slurm
// ends the job: TIMEOUT), so the launcher keeps no deadline of its own.
//
// Thread-safety: none; one thread owns a SlurmLauncher. Destroying it cancels every job still
// in flight (a sweep that returns normally has none).
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "launch/launcher.h"
#include "launch/slurm/slurm_client.h"
#include "launch/slurm/slurm_job.h"

namespace ditbench {

class SlurmLauncher final : public Launcher {
 public:
  // `client` is borrowed and must outlive the launcher. `poll_interval`: how often Wait()
  // asks Slurm about the jobs in flight.
  SlurmLauncher(SlurmClient& client, SlurmOptions options,
                std::chrono::milliseconds poll_interval = std::chrono::milliseconds(250));
  ~SlurmLauncher() override;
  SlurmLauncher(const SlurmLauncher&) = delete;
  SlurmLauncher& operator=(const SlurmLauncher&) = delete;

  LaunchHandle Start(const LaunchRequest& request) override;
  std::optional<FinishedTrial> Wait(std::chrono::milliseconds up_to) override;
  void Cancel(LaunchHandle handle) override;
  int InFlight() const override { return static_cast<int>(jobs_.size()); }
  std::string ExternalId(LaunchHandle handle) const override;
  std::optional<LaunchHandle> Attach(const std::string& job_id,
                                     const LaunchRequest& request) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Job {
    std::string id;  // empty when sbatch refused it (outcome.launch_error says why)
    LaunchRequest request;
    LaunchOutcome outcome;
    Clock::time_point start;
    Clock::time_point last_known;  // when Slurm last answered for it
    bool cancelled = false;
  };
  // True once the job has ended (or cannot be followed any more); fills its outcome.
  bool Poll(Job& job, Clock::time_point now);
  void Conclude(Job& job, const SlurmJobState& state);

  SlurmClient& client_;
  SlurmOptions options_;
  std::chrono::milliseconds poll_interval_;
  std::map<LaunchHandle, Job> jobs_;
  LaunchHandle next_handle_ = 1;
  Clock::time_point next_poll_{};
};

}  // namespace ditbench
