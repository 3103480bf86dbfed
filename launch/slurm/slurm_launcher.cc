#include "launch/slurm/slurm_launcher.h"

#include <signal.h>

#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "contract/worker_contract.h"

namespace ditbench {
namespace {

// How long Slurm may fail to answer about a job in flight before the trial is given up as
// failed (a controller restart takes seconds; a job forgotten for this long is lost).
constexpr std::chrono::seconds kUnknownFor{60};

}  // namespace

SlurmLauncher::SlurmLauncher(SlurmClient& client, SlurmOptions options,
                             std::chrono::milliseconds poll_interval)
    : client_(client), options_(std::move(options)), poll_interval_(poll_interval) {}

SlurmLauncher::~SlurmLauncher() {
  for (auto& [handle, job] : jobs_)
    if (!job.id.empty()) client_.Cancel(job.id);
}

LaunchHandle SlurmLauncher::Start(const LaunchRequest& request) {
  Job job;
  job.request = request;
  job.start = job.last_known = Clock::now();
  job.outcome.ranks.resize(std::max(0, request.world_size));
  try {
    const SlurmJobShape shape = ShapeJob(request.world_size, options_);
    const auto script = request.run_dir / "slurm_job.sh";
    WriteFileAtomically(script, SlurmJobScript(request, options_, shape));
    job.id = client_.Submit(SbatchArguments(request, options_, shape, script));
  } catch (const std::exception& e) {
    job.outcome.launch_error = fmt::format("cannot submit the trial to Slurm: {}", e.what());
  }
  const LaunchHandle handle = next_handle_++;
  jobs_.emplace(handle, std::move(job));
  return handle;
}

std::optional<LaunchHandle> SlurmLauncher::Attach(const std::string& job_id,
                                                  const LaunchRequest& request) {
  if (job_id.empty() || !client_.Query(job_id)) return std::nullopt;
  Job job;
  job.id = job_id;
  job.request = request;
  job.start = job.last_known = Clock::now();
  job.outcome.ranks.resize(std::max(0, request.world_size));
  const LaunchHandle handle = next_handle_++;
  jobs_.emplace(handle, std::move(job));
  return handle;
}

std::string SlurmLauncher::ExternalId(LaunchHandle handle) const {
  auto it = jobs_.find(handle);
  return it == jobs_.end() ? std::string() : it->second.id;
}

void SlurmLauncher::Cancel(LaunchHandle handle) {
  auto it = jobs_.find(handle);
  if (it == jobs_.end() || it->second.cancelled) return;
  it->second.cancelled = true;
  it->second.outcome.cancelled = true;
  if (!it->second.id.empty()) client_.Cancel(it->second.id);
}

void SlurmLauncher::Conclude(Job& job, const SlurmJobState& state) {
  LaunchOutcome& outcome = job.outcome;
  const SlurmVerdict verdict = JudgeEndedSlurmJob(job.id, state);
  ReadRankExits(job.request.run_dir, job.request.world_size, &outcome);
  if (job.cancelled) return;  // our own scancel: the sweep records it as interrupted
  if (verdict.status) {
    outcome.scheduler_status = verdict.status;
    outcome.scheduler_reason = verdict.reason;
    outcome.timed_out = *verdict.status == TrialStatus::kTimeout;
    return;
  }
  if (state.state == "FAILED" && outcome.first_failed_rank < 0) {
    // The job failed but no rank says so: the batch script itself (srun refused the shape,
    // a rank could not be started).
    outcome.scheduler_status = TrialStatus::kFailed;
    outcome.scheduler_reason = fmt::format(
        "Slurm job {} FAILED with exit code {} before its ranks reported (see {})", job.id,
        state.exit_code, (job.request.run_dir / fmt::format("slurm-{}.out", job.id)).string());
  }
}

bool SlurmLauncher::Poll(Job& job, Clock::time_point now) {
  if (job.id.empty()) return true;  // never submitted: launch_error says why
  const std::optional<SlurmJobState> state = client_.Query(job.id);
  if (!state) {
    if (now - job.last_known < kUnknownFor) return false;
    job.outcome.launch_error = fmt::format(
        "Slurm stopped knowing job {} while it was in flight (no scontrol or sacct record)",
        job.id);
    return true;
  }
  job.last_known = now;
  if (SlurmJobActive(state->state)) return false;
  Conclude(job, *state);
  return true;
}

std::optional<FinishedTrial> SlurmLauncher::Wait(std::chrono::milliseconds up_to) {
  const auto give_up = Clock::now() + up_to;
  while (!jobs_.empty()) {
    // Slurm is asked at most once per poll interval, however often Wait() is called.
    if (const auto now = Clock::now(); now < next_poll_) {
      if (give_up <= now) break;
      std::this_thread::sleep_for(std::min(next_poll_, give_up) - now);
      if (Clock::now() < next_poll_) break;
    }
    next_poll_ = Clock::now() + poll_interval_;
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      if (!Poll(it->second, Clock::now())) continue;
      FinishedTrial finished{it->first, std::move(it->second.outcome)};
      finished.outcome.wall_s =
          std::chrono::duration<double>(Clock::now() - it->second.start).count();
      jobs_.erase(it);
      return finished;
    }
    if (Clock::now() >= give_up) break;
  }
  return std::nullopt;
}

}  // namespace ditbench
