#include "launch/slurm/slurm_states.h"

#include <array>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

namespace ditbench {
namespace {

// "X:Y" -> (X, Y); (0, 0) when malformed.
std::pair<int, int> ParseExitCode(const std::string& text) {
  const auto colon = text.find(':');
  try {
    if (colon == std::string::npos) return {std::stoi(text), 0};
    return {std::stoi(text.substr(0, colon)), std::stoi(text.substr(colon + 1))};
  } catch (const std::exception&) {
    return {0, 0};
  }
}

// "CANCELLED by 0" -> "CANCELLED"; "TIMEOUT" -> "TIMEOUT".
std::string FirstWord(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  in >> word;
  return word;
}

}  // namespace

std::optional<SlurmJobState> ParseScontrolJob(const std::string& text) {
  SlurmJobState job;
  bool found = false;
  std::istringstream in(text);
  for (std::string field; in >> field;) {
    const auto eq = field.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "JobState") {
      job.state = value;
      found = !value.empty();
    } else if (key == "Reason") {
      job.reason = value;
    } else if (key == "ExitCode") {
      std::tie(job.exit_code, job.signal) = ParseExitCode(value);
    }
  }
  if (!found) return std::nullopt;
  return job;
}

std::optional<SlurmJobState> ParseSacctLine(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));
  const auto bar = line.find('|');
  if (bar == std::string::npos) return std::nullopt;
  SlurmJobState job;
  job.state = FirstWord(line.substr(0, bar));
  if (job.state.empty()) return std::nullopt;
  std::tie(job.exit_code, job.signal) = ParseExitCode(line.substr(bar + 1));
  return job;
}

bool SlurmJobActive(const std::string& state) {
  static constexpr std::array<std::string_view, 12> kActive = {
      "PENDING",   "CONFIGURING", "RUNNING",  "COMPLETING", "SUSPENDED", "REQUEUED",
      "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED"};
  for (auto active : kActive)
    if (state == active) return true;
  return false;
}

SlurmVerdict JudgeEndedSlurmJob(const std::string& job_id, const SlurmJobState& job) {
  const std::string said =
      job.reason.empty() || job.reason == "None" ? "" : fmt::format(" ({})", job.reason);
  auto verdict = [&](TrialStatus status, std::string what) {
    return SlurmVerdict{status, fmt::format("Slurm job {} ended {}{}: {}", job_id, job.state,
                                            said, what)};
  };
  if (job.state == "COMPLETED" || job.state == "FAILED") return {};
  if (job.state == "OUT_OF_MEMORY")
    return verdict(TrialStatus::kOom, "a rank went over the job's memory limit");
  if (job.state == "TIMEOUT")
    return verdict(TrialStatus::kTimeout, "Slurm's time limit stopped every rank");
  if (job.state == "NODE_FAIL")
    return verdict(TrialStatus::kCrashed, "a node of the job failed");
  if (job.state == "CANCELLED")
    return verdict(TrialStatus::kInterrupted, "cancelled (scancel); it runs again on resume");
  if (job.state == "PREEMPTED")
    return verdict(TrialStatus::kInterrupted, "preempted by another job; it runs again on resume");
  return verdict(TrialStatus::kFailed, "the job did not run to its end");
}

SlurmVerdict JudgeSrunOutput(const std::string& step_id, const std::string& text) {
  struct Sign {
    const char* words;
    TrialStatus status;
    const char* what;
  };
  static constexpr Sign kSigns[] = {
      {"DUE TO TIME LIMIT", TrialStatus::kTimeout, "TIMEOUT: Slurm's time limit stopped every rank"},
      {"DUE TO PREEMPTION", TrialStatus::kInterrupted, "PREEMPTED: it runs again on resume"},
      {"DUE TO NODE FAILURE", TrialStatus::kCrashed, "NODE_FAIL: a node of the step failed"},
      {"oom-kill", TrialStatus::kOom, "OUT_OF_MEMORY: a rank went over the memory limit"},
      {"OUT_OF_MEMORY", TrialStatus::kOom, "OUT_OF_MEMORY: a rank went over the memory limit"},
      {"CANCELLED", TrialStatus::kInterrupted, "CANCELLED (scancel): it runs again on resume"},
  };
  for (const Sign& sign : kSigns)
    if (text.find(sign.words) != std::string::npos)
      return {sign.status, fmt::format("Slurm step {} ended {}", step_id.empty() ? "?" : step_id,
                                       sign.what)};
  return {};
}

}  // namespace ditbench
