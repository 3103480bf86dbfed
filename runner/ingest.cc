#include "runner/ingest.h"

#include <string.h>

#include <algorithm>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "experiments/device_peaks.h"
#include "model_zoo/model_config.h"
#include "report/stats.h"

namespace ditbench {
namespace {

double Median(std::vector<double> v) { return Summarize(std::move(v)).median; }

std::string DescribeExit(int rank, const RankExit& exit) {
  if (exit.signal != 0)
    return fmt::format("rank {} killed by signal {} ({})", rank, exit.signal,
                       strsignal(exit.signal));
  return fmt::format("rank {} exited with code {}", rank, exit.exit_code);
}

}  // namespace

std::string LastLogLine(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  if (last.size() > 500) last = last.substr(0, 500) + "...";
  return last;
}

TrialMetrics ComputeMetrics(const TrialConfig& config, const std::vector<RankResult>& ranks,
                            const std::string& device_name) {
  // iteration -> rank -> ms, timed iterations only.
  std::map<int, std::map<int, double>> times;
  int warmup_iterations = 0;
  for (const auto& r : ranks)
    for (const auto& s : r.samples) {
      if (s.stage != "iteration") continue;
      if (s.warmup) {
        if (r.rank == 0) ++warmup_iterations;
        continue;
      }
      times[s.iteration][r.rank] = s.ms;
    }
  std::vector<double> slowest, rank0, skew;
  for (const auto& [iteration, by_rank] : times) {
    double lo = by_rank.begin()->second, hi = lo;
    for (const auto& [rank, ms] : by_rank) {
      lo = std::min(lo, ms);
      hi = std::max(hi, ms);
    }
    slowest.push_back(hi);
    skew.push_back(hi - lo);
    if (by_rank.contains(0)) rank0.push_back(by_rank.at(0));
  }
  TrialMetrics m;
  Summary s = Summarize(slowest);
  m.latency_ms = s.median;
  m.mean_ms = s.mean;
  m.p90_ms = s.p90;
  m.p99_ms = s.p99;
  m.std_ms = s.stddev;
  m.min_ms = s.min;
  m.max_ms = s.max;
  m.cov = s.cov;
  m.ci_low_ms = s.ci_low;
  m.ci_high_ms = s.ci_high;
  m.outliers = s.outliers;
  m.iterations = static_cast<int>(slowest.size());
  m.warmup = warmup_iterations;
  m.rank0_ms = rank0.empty() ? 0 : Median(rank0);
  m.skew_ms = Median(skew);
  for (const auto& r : ranks) {
    if (r.clocks.is_object() && r.clocks.value("available", false)) {
      m.throttled = m.throttled.value_or(false) || r.clocks.value("throttled", false);
      const double lo = r.clocks.value("sm_mhz_min", 0.0), hi = r.clocks.value("sm_mhz_max", 0.0);
      m.sm_clock_min_mhz = m.sm_clock_min_mhz ? std::min(*m.sm_clock_min_mhz, lo) : lo;
      m.sm_clock_max_mhz = std::max(m.sm_clock_max_mhz.value_or(0), hi);
    }
    if (r.peak_mem_mb) m.peak_mem_mb = std::max(m.peak_mem_mb.value_or(0), *r.peak_mem_mb);
    if (r.peak_reserved_mb)
      m.peak_reserved_mb = std::max(m.peak_reserved_mb.value_or(0), *r.peak_reserved_mb);
  }

  std::string unused;
  if (auto model = ResolveModel(config.model, config.model_overrides, &unused)) {
    const int forwards = config.scope == Scope::kForward ? 1 : config.steps;
    // Samples per forward over the whole trial: CFG batches a negative prompt; dp replicates.
    const int samples = config.batch * (model->negative_prompt ? 2 : 1) * config.dp;
    m.flops = forwards * ForwardFlops(*model, config.resolution, samples);
    const double seconds = m.latency_ms / 1000.0;
    if (seconds > 0) {
      m.tflops = *m.flops / seconds / 1e12;
      m.images_per_s = config.batch * config.dp / seconds;
      m.tokens_per_s =
          double(ImageTokens(*model, config.resolution)) * samples * forwards / seconds;
      if (auto peak = DensePeakTflops(device_name, config.precision))
        m.mfu = *m.tflops / (*peak * config.world_size());
    }
  }
  return m;
}

TrialRecord IngestTrial(const TrialConfig& config, const std::string& trial_key,
                        const std::filesystem::path& run_dir, const LaunchOutcome& outcome) {
  TrialRecord record;
  record.trial_key = trial_key;
  record.config = CanonicalJson(config);
  record.world_size = config.world_size();
  record.run_dir = run_dir.string();

  // Whatever rank files exist are read first: they carry the workers' own words.
  std::vector<RankResult> ranks;
  std::string rank_file_error;
  for (int r = 0; r < config.world_size(); ++r) {
    try {
      ranks.push_back(ReadRankResult(RankResultPath(run_dir, r)));
    } catch (const std::exception& e) {
      if (rank_file_error.empty()) rank_file_error = e.what();
    }
  }
  for (const auto& r : ranks) {
    if (record.device.empty()) record.device = r.device;
    if (r.rank == 0) record.worker_environment = r.environment;
    record.samples.insert(record.samples.end(), r.samples.begin(), r.samples.end());
  }
  auto rank_error = [&](int rank) -> std::string {
    for (const auto& r : ranks)
      if (r.rank == rank && !r.error.empty()) return r.error;
    return LastLogLine(RankLogPath(run_dir, rank));
  };

  if (!outcome.launch_error.empty()) {
    record.status = TrialStatus::kFailed;
    record.error = outcome.launch_error;
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
  if (static_cast<int>(ranks.size()) != config.world_size()) {
    record.status = TrialStatus::kFailed;
    record.error = "all ranks exited 0 but a result file is missing or bad: " + rank_file_error;
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
  record.metrics = ComputeMetrics(config, ranks, record.device);
  return record;
}

}  // namespace ditbench
