// `--slurm-mode step`: each trial one `srun` job step, run by the coordinator as a local
// process (inside an allocation from salloc/sbatch the steps share it; outside one, srun
// allocates a job per trial). The srun process is supervised by a LocalLauncher: it dies with
// the coordinator (and Slurm then ends the step), so steps are never re-attached after a
// restart; their trials become `interrupted` and run again. Use `--slurm-mode job` for runs
// that must survive the coordinator.
//
// How each rank ended comes from rank<r>.exit as in job mode; what Slurm did to the step
// (time limit, OOM, preemption, node failure) from srun's own output (JudgeSrunOutput). Cancel
// scancels the step, then kills srun.
//
// Thread-safety: none; one thread owns it.
#pragma once

#include <deque>
#include <map>

#include "launch/launcher.h"
#include "launch/local_launcher.h"
#include "launch/slurm/slurm_client.h"
#include "launch/slurm/slurm_job.h"

namespace ditbench {

class SlurmStepLauncher final : public Launcher {
 public:
  // `client` (for scancel) is borrowed and must outlive the launcher.
  SlurmStepLauncher(SlurmClient& client, SlurmOptions options);

  LaunchHandle Start(const LaunchRequest& request) override;
  std::optional<FinishedTrial> Wait(std::chrono::milliseconds up_to) override;
  void Cancel(LaunchHandle handle) override;
  int InFlight() const override { return static_cast<int>(steps_.size() + refused_.size()); }

 private:
  struct Step {
    LaunchHandle srun;  // the LocalLauncher's handle of the srun process
    LaunchRequest request;
  };
  SlurmClient& client_;
  SlurmOptions options_;
  LocalLauncher srun_;
  std::map<LaunchHandle, Step> steps_;         // ours, by our handle
  std::map<LaunchHandle, LaunchHandle> ours_;  // srun handle -> ours
  std::deque<FinishedTrial> refused_;          // could not even be started
  LaunchHandle next_handle_ = 1;
};

}  // namespace ditbench
