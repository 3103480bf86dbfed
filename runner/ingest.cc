#include "runner/ingest.h"

#include <string.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "base/run_folder_file.h"
#include "base/terminal_text.h"
#include "base/untrusted_input.h"
#include "contract/npy.h"
#include "experiments/trial_kind.h"
#include "metrics/trace_profile.h"
#include "metrics/trial_kind_metrics.h"
#include "metrics/trial_metrics.h"
#include "metrics/trial_trace.h"

namespace ditbench {
namespace {

std::string DescribeExit(int rank, const RankExit& exit) {
  if (exit.signal != 0)
    return fmt::format("rank {} killed by signal {} ({})", rank, exit.signal,
                       strsignal(exit.signal));
  return fmt::format("rank {} exited with code {}", rank, exit.exit_code);
}

// `line` cut to at most `max_bytes` at a character boundary, "..." after it when cut.
// REQUIRES: `line` is valid UTF-8.
std::string CutLine(std::string line, std::size_t max_bytes) {
  if (line.size() <= max_bytes) return line;
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) --end;
  line.resize(end);
  return line + "...";
}

}  // namespace

RankFiles ReadRankFiles(const std::filesystem::path& run_dir, int world_size,
                        const std::function<bool()>& cancelled) {
  RankFiles files;
  auto note = [&](std::string problem) {
    if (files.error.empty()) files.error = std::move(problem);
  };
  for (int r = 0; r < world_size; ++r) {
    const std::filesystem::path path = RankResultPath(run_dir, r);
    RankResult result;
    try {
      result = ReadRankResult(path, cancelled);
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

namespace {

// The non-blank lines of the last 64 KiB of a log, or nothing when it is missing or is not a
// regular file inside the run folder (a rank may have replaced its log by a FIFO or a link:
// reading never blocks and never follows a link).
std::optional<std::vector<std::string>> LogLines(const std::filesystem::path& log) {
  constexpr std::uint64_t kTailBytes = 64 * 1024;
  std::string text;
  bool cut = false;
  try {
    const RegularFile file = OpenRunFolderFile(log, std::numeric_limits<std::uint64_t>::max());
    cut = file.size > kTailBytes;
    text = ReadRegularFileAt(file, log, cut ? file.size - kTailBytes : 0, kTailBytes);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  // A program's own output: any bytes. Lines reach errors, rank files and the database as
  // valid UTF-8 (a progress bar's block characters cut short, or raw bytes, become U+FFFD).
  std::vector<std::string> lines;
  std::istringstream in(ValidUtf8(text));
  std::string line;
  if (cut) std::getline(in, line);  // the first line is only the end of one
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(std::move(line));
  return lines;
}

}  // namespace

std::string LastLogLine(const std::filesystem::path& log) {
  const auto lines = LogLines(log);
  if (!lines || lines->empty()) return "";
  std::string last = lines->back();
  last = CutLine(std::move(last), 500);
  return last;
}

std::string LogTail(const std::filesystem::path& log, int lines) {
  const auto all = LogLines(log);
  if (!all) return "(no log)";
  if (all->empty()) return "(empty log)";
  std::string joined;
  const std::size_t first = all->size() > static_cast<std::size_t>(lines) ? all->size() - lines : 0;
  for (std::size_t i = first; i < all->size(); ++i) {
    joined += (joined.empty() ? "" : " | ") + CutLine((*all)[i], 300);
  }
  constexpr std::size_t kMaxChars = 1000;
  if (joined.size() > kMaxChars) {
    std::size_t start = joined.size() - kMaxChars;
    while (start < joined.size() && (static_cast<unsigned char>(joined[start]) & 0xC0) == 0x80)
      ++start;
    joined = "..." + joined.substr(start);
  }
  return joined;
}

namespace {

// `profile: trace`: each rank's trace analysed (metrics/trace_profile.h). A trace that is
// missing or unreadable is recorded with why; it never fails the trial, whose timed numbers
// were taken before the profiler pass.
TrialTrace ReadTraces(const std::filesystem::path& run_dir, const std::vector<RankResult>& ranks,
                      const std::function<bool()>& cancelled) {
  TrialTrace trace;
  for (const RankResult& r : ranks) {
    RankTrace rank;
    rank.rank = r.rank;
    rank.trace_file = StripTerminalControls(r.trace_file);
    if (r.trace_file.empty()) {
      rank.error = fmt::format("rank {} wrote no trace", r.rank);
    } else {
      try {
        rank.profile = ReadTraceProfile(run_dir / r.trace_file, cancelled);
      } catch (const std::exception& e) {
        rank.error = StripTerminalControls(e.what());
      }
    }
    trace.ranks.push_back(std::move(rank));
  }
  return trace;
}

// The first problem of the ranks' files against each other and the trial (metrics/
// trial_metrics.h, metrics/trial_kind_metrics.h), or nothing: the records of the trial's kind
// (timed iterations, or served requests against `requests`, the trial file's), the latent they
// computed, and what their steps ran.
std::optional<RankProblem> RanksProblem(const TrialConfig& config, const RequestList& requests,
                                        const std::vector<RankResult>& ranks) {
  const KindMetrics& kind = MetricsOfKind(KindOf(config));
  if (auto problem = kind.records_problem(config, requests, ranks)) return problem;
  const TrialConfig iteration = kind.recorded_iteration(config, requests);
  if (auto problem = LatentShapeProblem(iteration, ranks)) return problem;
  if (auto problem = StepRecordsProblem(iteration, ranks)) return problem;
  return StepReuseProblem(ranks);
}

// Why the trial's records cannot be summarized, as the trial's error, or nothing: the requests
// of its trial file, for a kind that has them (read into `requests`: the list the coordinator
// materialized and the ranks served, never generated again here), then RanksProblem.
std::optional<std::string> RecordsProblem(const TrialConfig& config,
                                          const std::filesystem::path& run_dir,
                                          const std::vector<RankResult>& ranks,
                                          RequestList& requests) {
  if (KindRow(KindOf(config)).has_requests) {
    try {
      requests = ReadTrialRequests(run_dir / kTrialFileName);
    } catch (const std::exception& e) {
      return fmt::format("the trial's requests cannot be read: {}", e.what());
    }
  }
  if (const auto problem = RanksProblem(config, requests, ranks))
    return fmt::format("{}: {}", RankResultPath(run_dir, problem->rank).string(), problem->problem);
  return std::nullopt;
}

// The final output is read later, to compare it with its reference: a file that cannot be
// read as the float32 array its header claims fails the trial now. nullopt: none, or readable.
std::optional<std::string> OutputFileProblem(const std::filesystem::path& run_dir) {
  const std::filesystem::path output = run_dir / kOutputFileName;
  std::error_code absent;
  if (std::filesystem::symlink_status(output, absent).type() ==
      std::filesystem::file_type::not_found)
    return std::nullopt;
  try {
    ReadNpyHeader(output);
  } catch (const std::exception& e) {
    return fmt::format("bad final output: {}", e.what());
  }
  return std::nullopt;
}

TrialRecord Ingest(const TrialConfig& config, const std::string& trial_key,
                   const std::filesystem::path& run_dir, const LaunchOutcome& outcome,
                   const std::function<bool()>& cancelled, const IntervalSet* busy_s) {
  TrialRecord record;
  record.trial_key = trial_key;
  record.config = config;
  record.world_size = config.world_size();
  record.run_dir = run_dir.string();
  // Whatever rank files exist are read first: they carry the workers' own words (an engine
  // trial's one client writes one).
  const int launched = LaunchedRanks(config.workload, config.world_size());
  RankFiles files = ReadRankFiles(run_dir, launched, cancelled);
  const std::vector<RankResult>& ranks = files.ranks;
  for (const auto& r : ranks) {
    if (record.device.empty()) record.device = r.device;
    if (r.rank == 0) record.worker_environment = r.environment;
    if (r.rank == 0) record.steps = r.steps;
    record.samples.insert(record.samples.end(), r.samples.begin(), r.samples.end());
  }
  auto rank_error = [&](int rank) -> std::string {
    for (const auto& r : ranks)
      if (r.rank == rank && !r.error.empty()) return r.error;
    if (TraitsOf(config.workload).log_tail_in_errors)
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
    if (TraitsOf(config.workload).log_tail_in_errors)
      record.error += "; log tail (rank0.log): " + LogTail(RankLogPath(run_dir, 0));
    return record;
  }
  // A serving replica may serve no request past the warm-up ones: its ranks time none.
  const bool may_time_nothing = MetricsOfKind(KindOf(config)).rank_may_time_nothing;
  for (const auto& r : ranks) {
    const bool timed =
        std::any_of(r.samples.begin(), r.samples.end(), [](const Sample& s) { return !s.warmup; });
    if (r.status != "ok" || (!timed && !may_time_nothing)) {
      record.status = TrialStatus::kFailed;
      record.error = fmt::format("rank {} reported status '{}' with no timed samples: {}", r.rank,
                                 r.status, r.error);
      return record;
    }
  }
  RequestList requests;
  if (auto problem = RecordsProblem(config, run_dir, ranks, requests)) {
    record.status = TrialStatus::kFailed;
    record.error = std::move(*problem);
    return record;
  }
  if (auto problem = OutputFileProblem(run_dir)) {
    record.status = TrialStatus::kFailed;
    record.error = std::move(*problem);
    return record;
  }
  record.status = TrialStatus::kOk;
  record.metrics = ComputeTrialMetrics(config, ranks, record.device, busy_s, requests);
  if (config.profile_trace) record.trace = ReadTraces(run_dir, ranks, cancelled);
  return record;
}

}  // namespace

namespace {

// The most of one string of a worker's environment (a build, a driver or library name) kept.
constexpr std::size_t kEnvironmentTextBytes = 1024;
// Deeper than this, a worker's environment is not walked: its rank file's reader caps depth
// well below, so this only keeps the walk bounded whatever reader comes first.
constexpr int kEnvironmentDepth = 64;

// `value` with every key and string made stored text (base/terminal_text.h); null past
// kEnvironmentDepth.
nlohmann::json StoredEnvironment(const nlohmann::json& value, int depth = 0) {
  if (depth > kEnvironmentDepth) return nullptr;
  if (value.is_string()) return StoredText(value.get_ref<const std::string&>(), kEnvironmentTextBytes);
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) out.push_back(StoredEnvironment(item, depth + 1));
    return out;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, item] : value.items())
      out[StoredText(key, kEnvironmentTextBytes)] = StoredEnvironment(item, depth + 1);
    return out;
  }
  return value;
}

}  // namespace

TrialRecord IngestTrial(const TrialConfig& config, const std::string& trial_key,
                        const std::filesystem::path& run_dir, const LaunchOutcome& outcome,
                        const std::function<bool()>& cancelled, const IntervalSet* busy_s) {
  TrialRecord record = Ingest(config, trial_key, run_dir, outcome, cancelled, busy_s);
  // The worker's words are printed and stored: valid UTF-8, no terminal control, capped.
  record.error = StoredText(record.error);
  record.device = StoredText(record.device, kEnvironmentTextBytes);
  record.worker_environment = StoredEnvironment(record.worker_environment);
  return record;
}

}  // namespace ditbench
