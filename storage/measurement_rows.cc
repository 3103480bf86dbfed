#include "storage/measurement_rows.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "metrics/metric_table.h"
#include "storage/metric_values.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

// The columns of trial_metrics that are not metrics of the table: the latency's distribution,
// counts, resources and notes. Every column metric (metrics/metric_table.h) is bound by name
// after them.
constexpr const char* kSummaryColumns[] = {"trial_id",
                                           "mean_ms",
                                           "p90_ms",
                                           "p99_ms",
                                           "std_ms",
                                           "min_ms",
                                           "max_ms",
                                           "iterations",
                                           "warmup",
                                           "outliers",
                                           "peak_reserved_mb",
                                           "flops",
                                           "tokens_per_s",
                                           "throttled",
                                           "sm_clock_min_mhz",
                                           "sm_clock_max_mhz",
                                           "output_error_note",
                                           "output_reference_key",
                                           "extra_json",
                                           "launches",
                                           "launch_cov",
                                           "energy_note",
                                           "quality"};

std::string InsertMetricsSql() {
  std::vector<std::string> columns(std::begin(kSummaryColumns), std::end(kSummaryColumns));
  for (const MetricInfo* metric : ColumnMetrics()) columns.emplace_back(metric->name);
  std::vector<std::string> parameters;
  for (const std::string& column : columns) parameters.push_back(":" + column);
  return fmt::format("INSERT INTO trial_metrics ({}) VALUES ({})", fmt::join(columns, ", "),
                     fmt::join(parameters, ", "));
}

}  // namespace

void InsertSamples(sqlite3* db, std::int64_t trial_id, int launch,
                   const std::vector<Sample>& samples) {
  Statement insert(db,
                   "INSERT INTO samples (trial_id, rank, iteration, stage, ms, warmup, launch, "
                   "reused) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const Sample& sample : samples) {
    insert.Bind(1, trial_id)
        .Bind(2, sample.rank)
        .Bind(3, sample.iteration)
        .Bind(4, sample.stage)
        .Bind(5, sample.ms)
        .Bind(6, sample.warmup ? 1 : 0)
        .Bind(7, launch)
        .Bind(8, sample.reused ? 1 : 0);
    insert.Run();
    insert.Reset();
  }
}

void InsertMetrics(sqlite3* db, std::int64_t trial_id, const TrialMetrics& m) {
  Statement insert(db, InsertMetricsSql());
  for (const MetricInfo* metric : ColumnMetrics())
    insert.Bind(fmt::format(":{}", metric->name), MetricOf(m, *metric));
  insert.Bind(":trial_id", trial_id)
      .Bind(":mean_ms", m.mean_ms)
      .Bind(":p90_ms", m.p90_ms)
      .Bind(":p99_ms", m.p99_ms)
      .Bind(":std_ms", m.std_ms)
      .Bind(":min_ms", m.min_ms)
      .Bind(":max_ms", m.max_ms)
      .Bind(":iterations", m.iterations)
      .Bind(":warmup", m.warmup)
      .Bind(":outliers", m.outliers)
      .Bind(":peak_reserved_mb", m.peak_reserved_mb)
      .Bind(":flops", m.flops)
      .Bind(":tokens_per_s", m.tokens_per_s)
      .Bind(":throttled",
            m.throttled ? std::optional<double>(*m.throttled ? 1.0 : 0.0) : std::nullopt)
      .Bind(":sm_clock_min_mhz", m.sm_clock_min_mhz)
      .Bind(":sm_clock_max_mhz", m.sm_clock_max_mhz)
      .Bind(":launches", std::max(m.launches, 1))
      .Bind(":launch_cov", m.launch_cov);
  insert.Bind(":output_error_note", m.output_error_note)
      .Bind(":output_reference_key", m.output_reference_key);
  insert.BindTextOrNull(":energy_note", m.energy_note);
  insert.BindTextOrNull(":quality", m.quality.value_or(""));
  if (m.extra.empty())
    insert.BindNull(":extra_json");
  else
    insert.Bind(":extra_json", nlohmann::json(m.extra).dump());
  insert.Run();
  WriteMetricValues(db, trial_id, m);
}

void InsertTrace(sqlite3* db, std::int64_t trial_id, const TrialTrace& trace) {
  Statement update(db, R"sql(
    UPDATE trial_metrics SET profile_json = :profile_json, compute_share = :compute_share,
      comm_share = :comm_share, idle_share = :idle_share WHERE trial_id = :trial_id)sql");
  const RankTrace* slowest = trace.Slowest();
  const auto share = [&](double (TraceProfile::*of)() const) {
    return slowest ? std::optional<double>(((*slowest->profile).*of)()) : std::nullopt;
  };
  update.Bind(":profile_json", TrialTraceJson(trace).dump())
      .Bind(":compute_share", share(&TraceProfile::compute_share))
      .Bind(":comm_share", share(&TraceProfile::comm_share))
      .Bind(":idle_share", share(&TraceProfile::idle_share))
      .Bind(":trial_id", trial_id);
  update.Run();
}

void InsertSteps(sqlite3* db, std::int64_t trial_id, const std::vector<StepKernels>& steps) {
  nlohmann::json list = nlohmann::json::array();
  std::set<std::string> kernels;
  for (const StepKernels& step : steps) {
    list.push_back({{"step", step.step},
                    {"attention", step.attention},
                    {"linear", step.linear},
                    {"reused", step.reused}});
    if (step.expert != 0) list.back()["expert"] = step.expert;
    for (std::size_t start = 0; start < step.attention.size();) {
      const std::size_t plus = std::min(step.attention.find('+', start), step.attention.size());
      kernels.insert(step.attention.substr(start, plus - start));
      start = plus + 1;
    }
  }
  Statement update(db, R"sql(
    UPDATE trial_metrics SET steps_json = :steps_json, attention_ran = :attention_ran
    WHERE trial_id = :trial_id)sql");
  update.Bind(":steps_json", list.dump())
      .Bind(":attention_ran", fmt::format("{}", fmt::join(kernels, "+")))
      .Bind(":trial_id", trial_id);
  update.Run();
}

}  // namespace ditbench
