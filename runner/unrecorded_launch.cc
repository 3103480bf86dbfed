#include "runner/unrecorded_launch.h"

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/run_folder_file.h"
#include "base/untrusted_input.h"
#include "contract/worker_contract.h"
#include "metrics/launch_summary.h"
#include "runner/ingest.h"
#include "runner/output_error.h"
#include "runner/output_image.h"

namespace ditbench {
namespace {

constexpr int kOutcomeVersion = 1;

nlohmann::json ToJson(const LaunchOutcome& outcome) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankExit& rank : outcome.ranks)
    ranks.push_back({{"exited", rank.exited},
                     {"exit_code", rank.exit_code},
                     {"signal", rank.signal},
                     {"killed_by_us", rank.killed_by_us}});
  return {{"version", kOutcomeVersion},
          {"ranks", ranks},
          {"timed_out", outcome.timed_out},
          {"first_failed_rank", outcome.first_failed_rank},
          {"wall_s", outcome.wall_s},
          {"launch_error", outcome.launch_error},
          {"scheduler_status", outcome.scheduler_status
                                   ? nlohmann::json(StatusName(*outcome.scheduler_status))
                                   : nlohmann::json()},
          {"scheduler_reason", outcome.scheduler_reason}};
}

// When the launch ended: when its outcome was written (unix seconds); now if unknown.
double WrittenAt(const std::filesystem::path& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) == 0)
    return static_cast<double>(info.st_mtim.tv_sec) + info.st_mtim.tv_nsec * 1e-9;
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void WriteLaunchOutcome(const std::filesystem::path& run_dir,
                        const LaunchOutcome& outcome) noexcept {
  try {
    WriteFileAtomically(run_dir / kOutcomeFile, ToJson(outcome).dump(), /*durable=*/false);
  } catch (...) {  // best effort (see the header)
  }
}

std::optional<LaunchOutcome> ReadLaunchOutcome(const std::filesystem::path& run_dir) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(run_dir / kOutcomeFile, ec)))
    return std::nullopt;
  try {
    // In the run folder the ranks share: read as untrusted input (a regular file of at most
    // 1 MiB, shallow JSON); anything else is no outcome, and the launch runs again.
    const nlohmann::json json = ParseBoundedJson(
        ReadRunFolderFile(run_dir, kOutcomeFile, 1 << 20), 8, (run_dir / kOutcomeFile).string());
    if (json.at("version").get<int>() != kOutcomeVersion) return std::nullopt;
    LaunchOutcome outcome;
    for (const auto& rank : json.at("ranks"))
      outcome.ranks.push_back({rank.at("exited").get<bool>(), rank.at("exit_code").get<int>(),
                               rank.at("signal").get<int>(), rank.at("killed_by_us").get<bool>()});
    outcome.timed_out = json.at("timed_out").get<bool>();
    outcome.first_failed_rank = json.at("first_failed_rank").get<int>();
    outcome.wall_s = json.at("wall_s").get<double>();
    outcome.launch_error = json.at("launch_error").get<std::string>();
    if (const auto& status = json.at("scheduler_status"); status.is_string()) {
      outcome.scheduler_status = ParseStatus(status.get<std::string>());
      if (!outcome.scheduler_status) return std::nullopt;
    }
    outcome.scheduler_reason = json.at("scheduler_reason").get<std::string>();
    return outcome;
  } catch (const std::exception&) {  // not JSON, not this format, or not a regular file
    return std::nullopt;
  }
}

int RecordUnrecordedLaunches(CampaignWriter& writer, OutputErrorStore& output_errors,
                             std::int64_t campaign, const SweepPlan& plan, int replicates,
                             const CampaignWriter::CoordinatorIsGone& gone,
                             const std::set<std::string>& taken_over, std::ostream& out) {
  int recorded = 0;
  for (const CampaignWriter::RunningTrial& running : writer.RunningTrials(campaign)) {
    if (taken_over.count(running.trial_key) || running.run_dir.empty()) continue;
    const bool known = !running.coordinator_host.empty() && running.coordinator_pid > 0;
    if (known && !gone(running.coordinator_host, running.coordinator_pid)) continue;
    const PlannedTrial* trial = nullptr;
    for (const PlannedTrial& t : plan.trials)
      if (t.key == running.trial_key) trial = &t;
    const std::optional<LaunchOutcome> outcome = ReadLaunchOutcome(running.run_dir);
    if (!trial || !outcome) continue;
    TrialRecord record = IngestTrial(trial->config, trial->key, running.run_dir, *outcome);
    record.launch = running.launch;
    record.replicates = replicates;
    record.started_at = running.started_at;
    record.finished_at = WrittenAt(std::filesystem::path(running.run_dir) / kOutcomeFile);
    record.scheduler_job = running.scheduler_job;
    if (record.status == TrialStatus::kOk) AttachOutputReference(record, trial->config);
    if (record.status == TrialStatus::kOk && trial->config.scope == Scope::kPipeline)
      KeepOutputImages(running.run_dir);
    // What the trial's launches add up to, as the sweep loop sums them.
    std::vector<LaunchMeasurement> launches =
        writer.Launches(campaign, record.trial_key, record.launch);
    LaunchMeasurement latest{record.launch, record.status, record.error, record.metrics, {}};
    for (const Sample& sample : record.samples)
      if (!sample.warmup && sample.stage == kIterationStage) latest.samples.push_back(sample);
    launches.push_back(std::move(latest));
    const TrialOutcome summary = SummarizeLaunches(launches, replicates);
    writer.RecordLaunch(campaign, record, summary);
    if (summary.status == TrialStatus::kOk && summary.metrics) {
      TrialRecord with_summary = record;
      with_summary.metrics = summary.metrics;
      UpdateOutputErrors(output_errors, with_summary);
    }
    out << fmt::format("trial {} finished before its coordinator could record it: recorded "
                       "{} from {}\n",
                       record.trial_key, StatusName(record.status), running.run_dir);
    ++recorded;
  }
  return recorded;
}

}  // namespace ditbench
