#include "runner/ingest.h"

#include <string.h>

#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "experiments/terminal_text.h"
#include "experiments/trial_metrics.h"

namespace ditbench {
namespace {

std::string DescribeExit(int rank, const RankExit& exit) {
  if (exit.signal != 0)
    return fmt::format("rank {} killed by signal {} ({})", rank, exit.signal,
                       strsignal(exit.signal));
  return fmt::format("rank {} exited with code {}", rank, exit.exit_code);
}

}  // namespace

RankFiles ReadRankFiles(const std::filesystem::path& run_dir, int world_size) {
  RankFiles files;
  auto note = [&](std::string problem) {
    if (files.error.empty()) files.error = std::move(problem);
  };
  for (int r = 0; r < world_size; ++r) {
    const std::filesystem::path path = RankResultPath(run_dir, r);
    RankResult result;
    try {
      result = ReadRankResult(path);
    } catch (const std::exception& e) {
      note(fmt::format("rank {} has no readable result file: {}", r, e.what()));
      continue;
    }
    if (result.rank != r) {
      note(fmt::format("{}: 'rank' is {}; expected {} (the file name)", path.string(),
                       result.rank, r));
    } else if (result.world_size != world_size) {
      note(fmt::format("{}: 'world_size' is {}; expected {} (the trial's)", path.string(),
                       result.world_size, world_size));
    }
    files.ranks.push_back(std::move(result));
  }
  // A file for a rank beyond the world size means the ranks disagree with the coordinator.
  std::set<int> beyond;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= 9 || name.rfind("rank", 0) != 0 || !name.ends_with(".json")) continue;
    const std::string digits = name.substr(4, name.size() - 9);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6) continue;
    if (const int rank = std::stoi(digits); rank >= world_size) beyond.insert(rank);
  }
  if (!beyond.empty()) {
    note(fmt::format("{}: rank {} is outside the trial's world size {}",
                     RankResultPath(run_dir, *beyond.begin()).string(), *beyond.begin(),
                     world_size));
  }
  return files;
}

std::string LastLogLine(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  if (last.size() > 500) last = last.substr(0, 500) + "...";
  return last;
}

std::string LogTail(const std::filesystem::path& log, int lines) {
  std::ifstream in(log);
  if (!in) return "(no log)";
  std::vector<std::string> tail;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line.size() > 300) line = line.substr(0, 300) + "...";
    tail.push_back(std::move(line));
    if (tail.size() > static_cast<std::size_t>(lines)) tail.erase(tail.begin());
  }
  if (tail.empty()) return "(empty log)";
  std::string joined;
  for (const auto& l : tail) joined += (joined.empty() ? "" : " | ") + l;
  constexpr std::size_t kMaxChars = 1000;
  if (joined.size() > kMaxChars) joined = "..." + joined.substr(joined.size() - kMaxChars);
  return joined;
}

namespace {

TrialRecord Ingest(const TrialConfig& config, const std::string& trial_key,
                   const std::filesystem::path& run_dir, const LaunchOutcome& outcome) {
  TrialRecord record;
  record.trial_key = trial_key;
  record.config = CanonicalJson(config);
  record.world_size = config.world_size();
  record.run_dir = run_dir.string();

  // Whatever rank files exist are read first: they carry the workers' own words.
  RankFiles files = ReadRankFiles(run_dir, config.world_size());
  const std::vector<RankResult>& ranks = files.ranks;
  for (const auto& r : ranks) {
    if (record.device.empty()) record.device = r.device;
    if (r.rank == 0) record.worker_environment = r.environment;
    record.samples.insert(record.samples.end(), r.samples.begin(), r.samples.end());
  }
  auto rank_error = [&](int rank) -> std::string {
    for (const auto& r : ranks)
      if (r.rank == rank && !r.error.empty()) return r.error;
    if (config.workload == "command")
      return fmt::format("log tail (rank{}.log): {}", rank, LogTail(RankLogPath(run_dir, rank)));
    return LastLogLine(RankLogPath(run_dir, rank));
  };

  if (!outcome.launch_error.empty()) {
    record.status = TrialStatus::kFailed;
    record.error = outcome.launch_error;
    return record;
  }
  if (outcome.scheduler_status) {
    record.status = *outcome.scheduler_status;
    record.error = outcome.scheduler_reason;
    return record;
  }
  if (outcome.timed_out) {
    record.status = TrialStatus::kTimeout;
    record.error = fmt::format("timed out after {:.0f} s; all ranks killed", config.timeout_s);
    return record;
  }
  const int failed = outcome.first_failed_rank;
  if (failed >= 0) {
    const RankExit& exit = outcome.ranks[failed];
    const std::string said = rank_error(failed);
    const std::string how = DescribeExit(failed, exit);
    if (exit.exit_code == kWorkerOutOfMemory) record.status = TrialStatus::kOom;
    else if (exit.signal != 0) record.status = TrialStatus::kCrashed;
    else record.status = TrialStatus::kFailed;
    if (exit.exit_code == kWorkerInvalidConfig)
      record.error = fmt::format("{} (invalid configuration): {}", how, said);
    else
      record.error = said.empty() ? how : fmt::format("{}: {}", how, said);
    return record;
  }
  if (!files.error.empty()) {
    record.status = TrialStatus::kFailed;
    record.error = "all ranks exited 0 but a result file is missing or bad: " + files.error;
    // An external program's own words are the best clue: what it printed last.
    if (config.workload == "command")
      record.error += "; log tail (rank0.log): " + LogTail(RankLogPath(run_dir, 0));
    return record;
  }
  for (const auto& r : ranks)
    if (r.status != "ok" || std::none_of(r.samples.begin(), r.samples.end(),
                                         [](const Sample& s) { return !s.warmup; })) {
      record.status = TrialStatus::kFailed;
      record.error = fmt::format("rank {} reported status '{}' with no timed samples: {}", r.rank,
                                 r.status, r.error);
      return record;
    }
  record.status = TrialStatus::kOk;
  record.metrics = ComputeTrialMetrics(config, ranks, record.device);
  return record;
}

}  // namespace

TrialRecord IngestTrial(const TrialConfig& config, const std::string& trial_key,
                        const std::filesystem::path& run_dir, const LaunchOutcome& outcome) {
  TrialRecord record = Ingest(config, trial_key, run_dir, outcome);
  // The worker's words are printed and stored: no terminal control reaches either.
  record.error = StripTerminalControls(record.error);
  record.device = StripTerminalControls(record.device);
  return record;
}

}  // namespace ditbench
