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

TrialMetrics Combine(const std::vector<const LaunchMeasurement*>& ok,
                     const LaunchMeasurement& newest) {
  TrialMetrics m;
  std::vector<double> medians, pooled, rank0, skew;
  for (const LaunchMeasurement* launch : ok) {
    const TrialMetrics& lm = *launch->metrics;
    medians.push_back(lm.latency_ms);
    const std::vector<double> series = SlowestSeries(launch->samples);
    pooled.insert(pooled.end(), series.begin(), series.end());
    const auto [r0, sk] = Rank0AndSkew(launch->samples);
    rank0.push_back(r0);
    skew.push_back(sk);
    m.iterations += lm.iterations;
    m.warmup += lm.warmup;
    for (auto [field, value] : {std::pair{&m.peak_mem_mb, lm.peak_mem_mb},
                                std::pair{&m.peak_reserved_mb, lm.peak_reserved_mb},
                                std::pair{&m.sm_clock_max_mhz, lm.sm_clock_max_mhz}})
      if (value) *field = std::max(field->value_or(*value), *value);
    if (lm.sm_clock_min_mhz)
      m.sm_clock_min_mhz = std::min(m.sm_clock_min_mhz.value_or(*lm.sm_clock_min_mhz),
                                    *lm.sm_clock_min_mhz);
    if (lm.throttled) m.throttled = m.throttled.value_or(false) || *lm.throttled;
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
  // Energy: the median over launches, like the latency, when every ok launch measured it.
  std::vector<double> energy, per_image;
  for (const LaunchMeasurement* launch : ok) {
    if (launch->metrics->energy_j) energy.push_back(*launch->metrics->energy_j);
    if (launch->metrics->joules_per_image)
      per_image.push_back(*launch->metrics->joules_per_image);
  }
  if (!energy.empty() && energy.size() == ok.size()) m.energy_j = MedianOf(energy);
  if (!per_image.empty() && per_image.size() == ok.size()) m.joules_per_image = MedianOf(per_image);

  // Extra metrics: over the launches that have them, as the metric table's row says (the
  // median for a program's own numbers); declarations and notes from the newest launch.
  std::map<std::string, std::vector<double>> extra;  // in launch order
  for (const LaunchMeasurement* launch : ok)
    for (const auto& [name, value] : launch->metrics->extra) extra[name].push_back(value);
  for (const auto& [name, values] : extra) {
    const MetricInfo* info = FindMetric(name);
    m.extra[name] =
        ReduceOverLaunches(info ? info->over_launches : LaunchReduction::kMedian, values);
  }

  // What does not vary between launches comes from the newest one.
  if (newest.metrics) {
    const TrialMetrics& d = *newest.metrics;
    m.flops = d.flops;
    m.comm_mb_per_step = d.comm_mb_per_step;
    m.output_error = d.output_error;
    m.output_error_note = d.output_error_note;
    m.output_reference_key = d.output_reference_key;
    m.energy_note = d.energy_note;
    m.extra_declared = d.extra_declared;
    m.extra_note = d.extra_note;
    const double scale = m.latency_ms > 0 ? d.latency_ms / m.latency_ms : 0;
    for (auto [field, value] : {std::pair{&m.tflops, d.tflops}, std::pair{&m.mfu, d.mfu},
                                std::pair{&m.images_per_s, d.images_per_s},
                                std::pair{&m.tokens_per_s, d.tokens_per_s}})
      if (value && scale > 0) *field = *value * scale;
  }
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
