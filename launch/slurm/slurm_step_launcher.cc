#include "launch/slurm/slurm_step_launcher.h"

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "base/run_folder_file.h"
#include "base/untrusted_input.h"
#include "contract/worker_contract.h"
#include "launch/slurm/slurm_states.h"

namespace ditbench {
namespace {

// srun's own output and its slurm_step id live apart from the ranks' files.
std::filesystem::path SrunFolder(const std::filesystem::path& run_dir) { return run_dir / "srun"; }

// The run folder is shared with the ranks: a file there is read as untrusted input (a regular
// file of at most 4 KiB; a FIFO never blocks the coordinator), and one that is missing or
// refused reads as empty.
std::string ReadAll(const std::filesystem::path& path) {
  try {
    return ReadRunFolderFile(path, 4096);
  } catch (const std::exception&) {
    return "";
  }
}

std::string StepId(const std::filesystem::path& run_dir) {
  std::string id = ReadAll(run_dir / "slurm_step");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

}  // namespace

SlurmStepLauncher::SlurmStepLauncher(SlurmClient& client, SlurmOptions options)
    : client_(client), options_(std::move(options)) {}

LaunchHandle SlurmStepLauncher::Start(const LaunchRequest& request) {
  const LaunchHandle handle = next_handle_++;
  try {
    const SlurmJobShape shape = ShapeJob(request.world_size, options_);
    const auto script = request.run_dir / "slurm_step.sh";
    WriteFileAtomically(script, SlurmStepScript(request, options_, shape));
    std::filesystem::create_directories(SrunFolder(request.run_dir));
    LaunchRequest srun;
    srun.trial_key = request.trial_key;
    srun.run_dir = SrunFolder(request.run_dir);  // srun's output: srun/rank0.log
    srun.worker = "/bin/sh";
    srun.args = {script.string()};
    srun.working_dir = RanksFolder(request);
    srun.world_size = 1;
    // Slurm's --time (whole minutes) ends the step first; this is the backstop.
    srun.timeout_s = request.timeout_s + 120;
    const LaunchHandle inner = srun_.Start(srun);
    steps_.emplace(handle, Step{inner, request});
    ours_.emplace(inner, handle);
  } catch (const std::exception& e) {
    FinishedTrial refused{handle, {}};
    refused.outcome.launch_error = fmt::format("cannot start the Slurm step: {}", e.what());
    refused_.push_back(std::move(refused));
  }
  return handle;
}

std::optional<FinishedTrial> SlurmStepLauncher::Wait(std::chrono::milliseconds up_to) {
  if (!refused_.empty()) {
    FinishedTrial refused = std::move(refused_.front());
    refused_.pop_front();
    return refused;
  }
  auto finished = srun_.Wait(up_to);
  if (!finished) return std::nullopt;
  const LaunchHandle handle = ours_.at(finished->handle);
  ours_.erase(finished->handle);
  const Step step = std::move(steps_.at(handle));
  steps_.erase(handle);
  const LaunchOutcome& srun = finished->outcome;
  FinishedTrial result{handle, {}};
  LaunchOutcome& outcome = result.outcome;
  outcome.wall_s = srun.wall_s;
  outcome.cancelled = srun.cancelled;
  outcome.launch_error = srun.launch_error;
  ReadRankExits(step.request.run_dir, step.request.world_size, &outcome);
  if (outcome.cancelled || !outcome.launch_error.empty()) return result;
  if (srun.timed_out) {
    outcome.timed_out = true;
    return result;
  }
  const std::string srun_log = ReadAll(SrunFolder(step.request.run_dir) / "rank0.log");
  const SlurmVerdict verdict = JudgeSrunOutput(StepId(step.request.run_dir), srun_log);
  if (verdict.status) {
    outcome.scheduler_status = verdict.status;
    outcome.scheduler_reason = verdict.reason;
  } else if (outcome.first_failed_rank < 0 && !srun.ranks.empty() &&
             (srun.ranks[0].exit_code != 0 || srun.ranks[0].signal != 0)) {
    outcome.scheduler_status = TrialStatus::kFailed;
    outcome.scheduler_reason = fmt::format(
        "srun failed before the ranks reported (exit {}): {}", srun.ranks[0].exit_code,
        srun_log.substr(0, srun_log.find('\n')));
  }
  return result;
}

void SlurmStepLauncher::Cancel(LaunchHandle handle) {
  auto it = steps_.find(handle);
  if (it == steps_.end()) return;
  if (const std::string step = StepId(it->second.request.run_dir); !step.empty()) {
    // A step of our allocation: just the step. One srun allocated for itself: its whole job,
    // or the allocation outlives the killed srun and holds its nodes until its time limit.
    const std::string job = step.substr(0, step.find('.'));
    client_.Cancel(job == options_.allocation ? step : job);
  }
  srun_.Cancel(it->second.srun);
}

}  // namespace ditbench
