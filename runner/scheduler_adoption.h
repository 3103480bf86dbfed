// Starting a trial's ranks, and taking over trials an earlier coordinator left running.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/sweep_spec.h"
#include "launch/launcher.h"
#include "plan/sweep_plan.h"
#include "storage/campaign_writer.h"

namespace ditbench {

// What the launcher needs to run `t` in `run_dir` (devices are added by the caller): the
// worker, or for a `command` workload the sweep's program (run by `worker` as its first
// argument when `worker` is not empty: RunOptions::command_prefix).
LaunchRequest TrialRequest(const SweepSpec& spec, const PlannedTrial& t,
                           const std::filesystem::path& run_dir,
                           const std::filesystem::path& worker);

// A trial an earlier coordinator left running as a scheduler job, watched again.
struct AdoptedTrial {
  LaunchHandle handle;
  const PlannedTrial* trial;
  int launch;  // which of the trial's launches the job runs (replicates, halving rounds)
  std::filesystem::path run_dir;
  double started_at;
  std::string job;
};

// After a restart: trials recorded `running` with a scheduler job (a Slurm job id) whose
// coordinator is gone are handed to the launcher again (Launcher::Attach) and recorded as
// ours, so that they are waited for and ingested instead of run twice. Trials the launcher
// cannot attach to stay as they are (resume marks them interrupted and runs them again).
std::vector<AdoptedTrial> AdoptSchedulerJobs(CampaignWriter& db, std::int64_t campaign,
                                             const SweepSpec& spec, const SweepPlan& plan,
                                             Launcher& launcher,
                                             const std::filesystem::path& worker,
                                             const CampaignWriter::CoordinatorIsGone& gone,
                                             std::ostream& out);

}  // namespace ditbench
