// What Slurm says about a job, and what that means for a ditbench trial. Pure: parsers for the
// two ways of asking (`scontrol show job -o` while the controller remembers the job, `sacct`
// after) and the mapping of Slurm's job states onto ditbench's statuses (docs/architecture.md,
// "Statuses").
#pragma once

#include <optional>
#include <string>

#include "experiments/trial.h"

namespace ditbench {

// One job as Slurm reports it.
struct SlurmJobState {
  std::string state;   // PENDING, RUNNING, COMPLETED, TIMEOUT, ... ("CANCELLED by 0" -> CANCELLED)
  std::string reason;  // scontrol's Reason= (e.g. TimeLimit); empty from sacct
  int exit_code = 0;   // the batch script's exit code (ExitCode=X:Y's X)
  int signal = 0;      // the signal that ended the batch script (Y), 0 if none
};

// `scontrol show job -o ID` output (one line of Key=Value pairs); nullopt when it holds no
// JobState (for example "slurm_load_jobs error: Invalid job id specified").
std::optional<SlurmJobState> ParseScontrolJob(const std::string& text);

// The first line of `sacct -n -P -X -o State,ExitCode -j ID` ("CANCELLED by 0|0:15");
// nullopt for an empty or malformed answer.
std::optional<SlurmJobState> ParseSacctLine(const std::string& text);

// True while the job may still run (PENDING, RUNNING, COMPLETING, SUSPENDED, REQUEUED, ...);
// false once it has ended.
bool SlurmJobActive(const std::string& state);

// What an ended job means for its trial. `status` unset: Slurm has no opinion (COMPLETED, or
// FAILED because a rank exited non-zero), so the ranks' exits and result files decide as for
// a local trial. Otherwise Slurm ended the job itself and `status` wins:
//   OUT_OF_MEMORY -> oom, TIMEOUT -> timeout, NODE_FAIL -> crashed,
//   CANCELLED / PREEMPTED -> interrupted (run again on resume),
//   anything else that ended (BOOT_FAIL, DEADLINE, ...) -> failed.
// `reason` is one line for the trial's error, naming the job and Slurm's state.
struct SlurmVerdict {
  std::optional<TrialStatus> status;
  std::string reason;
};
SlurmVerdict JudgeEndedSlurmJob(const std::string& job_id, const SlurmJobState& job);

// `--slurm-mode step`: what srun's own output says about a step Slurm ended ("slurmstepd:
// error: *** STEP 5.0 ON node1 CANCELLED AT ... DUE TO TIME LIMIT ***", "oom-kill event",
// ...), with the same mapping as JudgeEndedSlurmJob; `status` unset when it says nothing of
// the kind.
SlurmVerdict JudgeSrunOutput(const std::string& step_id, const std::string& text);

}  // namespace ditbench
