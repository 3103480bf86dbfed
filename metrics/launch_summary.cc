#include "metrics/launch_summary.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "metrics/metric_table.h"
#include "metrics/trial_metrics.h"
#include "stats/distributions.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

bool IsFailedLaunch(TrialStatus s) {
  return s == TrialStatus::kOom || s == TrialStatus::kTimeout || s == TrialStatus::kCrashed ||
         s == TrialStatus::kFailed;
}

// A launch stored ok that timed nothing (no timed iteration, or a latency of 0: an older
// ditbench's all-warm-up load; the database is untrusted): no measurement, a failed launch.
bool TimedNothing(const LaunchMeasurement& launch) {
  return launch.status == TrialStatus::kOk && launch.metrics &&
         (launch.metrics->iterations <= 0 || !(launch.metrics->latency_ms > 0));
}

double MedianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Quantile(values, 0.5);
}

// The rank-0 median and the median skew of one launch's samples.
std::pair<double, double> Rank0AndSkew(const std::vector<Sample>& samples) {
  std::vector<Sample> rank0;
  for (const Sample& s : samples)
    if (s.rank == 0) rank0.push_back(s);
  std::vector<double> skew;
  for (const auto& [iteration, spread] : SlowestPerIteration(samples)) skew.push_back(spread.skew_ms());
  const std::vector<double> series = SlowestSeries(rank0);
  return {series.empty() ? 0 : MedianOf(series), skew.empty() ? 0 : MedianOf(skew)};
}

// The figures of the launches' pooled samples (LaunchReduction::kPooled): the latency, the
// median of the launches' medians, with its interval (one launch: its own, within-launch one;
// several: a t interval over their log medians), the spread of the pooled series, rank 0's
// median and the skew.
void PoolLaunches(const std::vector<const LaunchMeasurement*>& ok, TrialMetrics& m) {
  std::vector<double> medians, pooled, rank0, skew;
  for (const LaunchMeasurement* launch : ok) {
    medians.push_back(launch->metrics->latency_ms);
    const std::vector<double> series = SlowestSeries(launch->samples);
    pooled.insert(pooled.end(), series.begin(), series.end());
    const auto [r0, sk] = Rank0AndSkew(launch->samples);
    rank0.push_back(r0);
    skew.push_back(sk);
  }
  const double n = static_cast<double>(medians.size());
  m.launches = static_cast<int>(medians.size());
  m.latency_ms = MedianOf(medians);
  if (!pooled.empty()) {
    const Summary p = Summarize(pooled);
    m.mean_ms = p.mean;
    m.p90_ms = p.p90;
    m.p99_ms = p.p99;
    m.std_ms = p.stddev;
    m.min_ms = p.min;
    m.max_ms = p.max;
    m.cov = p.cov;
    m.outliers = p.outliers;
  }
  if (medians.size() == 1) {  // one ok launch: its own, within-launch interval
    m.ci_low_ms = ok.front()->metrics->ci_low_ms;
    m.ci_high_ms = ok.front()->metrics->ci_high_ms;
  } else {
    m.launch_cov = Summarize(medians).cov;
    std::vector<double> logs;
    for (double median : medians) logs.push_back(std::log(median));
    const Summary log_summary = Summarize(logs);
    const double half = StudentTQuantile(0.975, n - 1) * log_summary.stddev / std::sqrt(n);
    m.ci_low_ms = std::min(std::exp(log_summary.mean - half), m.latency_ms);
    m.ci_high_ms = std::max(std::exp(log_summary.mean + half), m.latency_ms);
  }
  m.rank0_ms = MedianOf(rank0);
  m.skew_ms = MedianOf(skew);
}

// Every other metric of the table, as its row says (metrics/metric_table.h). kNewest: the
// launch just measured (`newest`: stored launches keep only some figures); kScaledToLatency:
// its figure at the trial's latency. Otherwise reduced over the ok launches that have it; the
// median of a column metric only when every ok launch has it (energy is measured on every
// launch of a GPU trial or on none: a median over some would mix).
void ReduceByTable(const std::vector<const LaunchMeasurement*>& ok, const TrialMetrics* newest,
                   TrialMetrics& m) {
  for (const MetricInfo& info : MetricTable()) {
    if (info.over_launches == LaunchReduction::kPooled) continue;
    if (info.over_launches == LaunchReduction::kNewest ||
        info.over_launches == LaunchReduction::kScaledToLatency) {
      const std::optional<double> value = newest ? MetricOf(*newest, info) : std::nullopt;
      if (!value) continue;
      if (info.over_launches == LaunchReduction::kNewest)
        SetMetric(m, info, *value);
      else if (m.latency_ms > 0 && newest->latency_ms > 0)
        SetMetric(m, info, *value * newest->latency_ms / m.latency_ms);
      continue;
    }
    std::vector<double> values;  // in launch order
    for (const LaunchMeasurement* launch : ok)
      if (const std::optional<double> value = MetricOf(*launch->metrics, info))
        values.push_back(*value);
    const bool some_lack = values.size() != ok.size();
    if (values.empty() ||
        (info.member.is_column() && info.over_launches == LaunchReduction::kMedian && some_lack))
      continue;
    SetMetric(m, info, ReduceOverLaunches(info.over_launches, values));
  }
  // A program's own numbers, held by name: the median over the launches that have them; a
  // number a program named after a column metric, that row's reduction where it reduces values.
  std::map<std::string, std::vector<double>> own;
  for (const LaunchMeasurement* launch : ok)
    for (const auto& [name, value] : launch->metrics->extra) {
      const MetricInfo* info = FindMetric(name);
      if (!info || info->member.is_column()) own[name].push_back(value);
    }
  for (const auto& [name, values] : own) {
    const MetricInfo* info = FindMetric(name);
    const bool of_values = info && info->over_launches != LaunchReduction::kPooled &&
                           info->over_launches != LaunchReduction::kScaledToLatency;
    m.extra[name] =
        ReduceOverLaunches(of_values ? info->over_launches : LaunchReduction::kMedian, values);
  }
}

// `ok` in launch order, non-empty; `newest` the launch just measured.
TrialMetrics Combine(const std::vector<const LaunchMeasurement*>& ok,
                     const LaunchMeasurement& newest_launch) {
  TrialMetrics m;
  for (const LaunchMeasurement* launch : ok) {
    const TrialMetrics& lm = *launch->metrics;
    m.iterations += lm.iterations;
    m.warmup += lm.warmup;
    for (auto [field, value] : {std::pair{&m.peak_reserved_mb, lm.peak_reserved_mb},
                                std::pair{&m.sm_clock_max_mhz, lm.sm_clock_max_mhz}})
      if (value) *field = std::max(field->value_or(*value), *value);
    if (lm.sm_clock_min_mhz)
      m.sm_clock_min_mhz =
          std::min(m.sm_clock_min_mhz.value_or(*lm.sm_clock_min_mhz), *lm.sm_clock_min_mhz);
    if (lm.throttled) m.throttled = m.throttled.value_or(false) || *lm.throttled;
  }
  PoolLaunches(ok, m);
  const TrialMetrics* newest = newest_launch.metrics ? &*newest_launch.metrics : nullptr;
  ReduceByTable(ok, newest, m);
  if (!newest) return m;
  // What is not a metric of the table and does not vary between launches: the newest's.
  m.flops = newest->flops;
  m.output_error_note = newest->output_error_note;
  m.output_reference_key = newest->output_reference_key;
  m.energy_note = newest->energy_note;
  m.extra_declared = newest->extra_declared;
  m.extra_note = newest->extra_note;
  if (newest->tokens_per_s && m.latency_ms > 0)
    m.tokens_per_s = *newest->tokens_per_s * newest->latency_ms / m.latency_ms;
  return m;
}

}  // namespace

TrialOutcome SummarizeLaunches(const std::vector<LaunchMeasurement>& launches, int replicates) {
  TrialOutcome outcome;
  std::vector<const LaunchMeasurement*> by_index;
  for (const LaunchMeasurement& launch : launches) by_index.push_back(&launch);
  std::sort(by_index.begin(), by_index.end(),
            [](const auto* x, const auto* y) { return x->launch < y->launch; });
  const auto word = [&](const LaunchMeasurement& launch) {
    const std::string error = TimedNothing(launch)
                                  ? fmt::format(
                                        "stored ok with {} timed iterations at {} ms; a launch "
                                        "that timed nothing is no measurement",
                                        launch.metrics->iterations, launch.metrics->latency_ms)
                                  : launch.error;
    if (replicates <= 1 && launch.launch == 0) return error;
    return fmt::format("launch {} of {}: {}", launch.launch + 1, std::max(replicates, 1), error);
  };
  const LaunchMeasurement* failed = nullptr;
  const LaunchMeasurement* interrupted = nullptr;
  bool running = false;
  std::vector<const LaunchMeasurement*> ok;
  for (const LaunchMeasurement* launch : by_index) {
    if (launch->status == TrialStatus::kRunning) running = true;
    if ((IsFailedLaunch(launch->status) || TimedNothing(*launch)) && !failed) failed = launch;
    if (launch->status == TrialStatus::kInterrupted && !interrupted) interrupted = launch;
    if (launch->status == TrialStatus::kOk && launch->metrics && !TimedNothing(*launch))
      ok.push_back(launch);
  }
  if (running) {
    outcome.status = TrialStatus::kRunning;
  } else if (failed) {
    outcome.status = TimedNothing(*failed) ? TrialStatus::kFailed : failed->status;
    outcome.error = word(*failed);
  } else if (interrupted) {
    outcome.status = TrialStatus::kInterrupted;
    outcome.error = word(*interrupted);
  } else if (!ok.empty()) {
    outcome.status = TrialStatus::kOk;
  } else {
    outcome.status = by_index.empty() ? TrialStatus::kPending : by_index.front()->status;
    if (!by_index.empty()) outcome.error = by_index.front()->error;
  }
  if (ok.size() == 1 && ok.front() == &launches.back()) {
    outcome.metrics = ok.front()->metrics;
  } else if (!ok.empty()) {
    outcome.metrics = Combine(ok, launches.back());
  }
  return outcome;
}

}  // namespace ditbench
