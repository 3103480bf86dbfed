#include "runner/scheduler_adoption.h"

#include <unistd.h>

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "experiments/trial_identity.h"
#include "launch/command_program.h"
#include "machine/host_info.h"

namespace ditbench {

// What the launcher needs to run `t` in `run_dir` (devices are added by the caller): the
// worker, for a `command` workload the sweep's program, for an `engine` workload the client.
LaunchRequest TrialRequest(const SweepSpec& spec, const PlannedTrial& t,
                           const std::filesystem::path& run_dir,
                           const std::filesystem::path& worker) {
  LaunchRequest request;
  request.trial_key = t.key;
  // Absolute: a command starts in its sweep's folder and finds the run folder from there.
  request.run_dir = std::filesystem::absolute(run_dir);
  if (TraitsOf(t.config.workload).launch == WorkloadLaunch::kProgram) {
    SetCommand(spec, t.config, request);  // placeholders checked by the parser: no throw
    if (!worker.empty()) {  // a command prefix (RunOptions::command_prefix): it runs the command
      request.args.insert(request.args.begin(), request.worker.string());
      request.worker = worker;
    }
  } else if (TraitsOf(t.config.workload).launch == WorkloadLaunch::kEngine) {
    // One client process, ditbench itself, in the sweep's folder (relative server paths).
    request.worker = worker;
    request.args = {"engine-trial", "--trial", (request.run_dir / "trial.json").string()};
    request.working_dir = CommandFolder(spec);
  } else {
    request.worker = worker;
    request.args = {"--trial", (run_dir / "trial.json").string()};
  }
  request.world_size = LaunchedRanks(t.config.workload, t.config.world_size());
  request.timeout_s = t.config.timeout_s;
  return request;
}

// After a restart: trials recorded `running` with a scheduler job (a Slurm job id) whose
// coordinator is gone are handed to the launcher again (Launcher::Attach) and recorded as
// ours, so that they are waited for and ingested instead of run twice. Trials the launcher
// cannot attach to stay as they are (resume marks them interrupted and runs them again).
std::vector<AdoptedTrial> AdoptSchedulerJobs(CampaignWriter& db, std::int64_t campaign,
                                             const SweepSpec& spec, const SweepPlan& plan,
                                             Launcher& launcher,
                                             const std::filesystem::path& worker,
                                             const CampaignWriter::CoordinatorIsGone& gone,
                                             std::ostream& out) {
  std::vector<AdoptedTrial> adopted;
  for (const CampaignWriter::RunningTrial& r : db.RunningTrials(campaign)) {
    if (r.scheduler_job.empty() || r.run_dir.empty()) continue;
    if (!r.coordinator_host.empty() && r.coordinator_pid > 0 &&
        !gone(r.coordinator_host, r.coordinator_pid))
      continue;  // its own coordinator still watches it
    auto planned = std::find_if(plan.trials.begin(), plan.trials.end(),
                                [&r](const PlannedTrial& t) { return t.key == r.trial_key; });
    if (planned == plan.trials.end()) continue;
    const auto handle =
        launcher.Attach(r.scheduler_job, TrialRequest(spec, *planned, r.run_dir, worker));
    if (!handle) {
      out << fmt::format("trial {}: Slurm job {} of an earlier coordinator cannot be watched "
                         "again (Slurm forgot it, or this run does not use --launcher slurm "
                         "--slurm-mode job): it runs again\n",
                         r.trial_key, r.scheduler_job);
      continue;
    }
    TrialRecord running;
    running.trial_key = planned->key;
    running.config = planned->config;
    running.world_size = planned->config.world_size();
    running.status = TrialStatus::kRunning;
    running.launch = r.launch;
    running.run_dir = r.run_dir;
    running.started_at = r.started_at;
    running.coordinator_host = Hostname();
    running.coordinator_pid = ::getpid();
    running.scheduler_job = r.scheduler_job;
    db.MarkRunning(campaign, running);
    out << fmt::format("trial {}: Slurm job {} of an earlier coordinator is known to Slurm: "
                       "watching it again\n",
                       r.trial_key, r.scheduler_job);
    adopted.push_back({*handle, &*planned, r.launch, r.run_dir, r.started_at, r.scheduler_job});
  }
  return adopted;
}

}  // namespace ditbench
