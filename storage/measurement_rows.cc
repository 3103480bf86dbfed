#include "storage/measurement_rows.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "storage/metric_values.h"
#include "storage/statement.h"

namespace ditbench {

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
  Statement insert(db, R"sql(
    INSERT INTO trial_metrics (trial_id, latency_ms, mean_ms, p90_ms, p99_ms, std_ms, min_ms,
      max_ms, cov, ci_low_ms, ci_high_ms, rank0_ms, skew_ms, iterations, warmup, outliers,
      peak_mem_mb, peak_reserved_mb, flops, tflops, mfu, images_per_s, tokens_per_s,
      throttled, sm_clock_min_mhz, sm_clock_max_mhz, comm_mb_per_step, output_error,
      output_error_note, output_reference_key, extra_json, launches, launch_cov, psnr, ssim,
      energy_j, joules_per_image, energy_note, quality)
    VALUES (:trial_id, :latency_ms, :mean_ms, :p90_ms, :p99_ms, :std_ms, :min_ms,
      :max_ms, :cov, :ci_low_ms, :ci_high_ms, :rank0_ms, :skew_ms, :iterations, :warmup, :outliers,
      :peak_mem_mb, :peak_reserved_mb, :flops, :tflops, :mfu, :images_per_s, :tokens_per_s,
      :throttled, :sm_clock_min_mhz, :sm_clock_max_mhz, :comm_mb_per_step, :output_error,
      :output_error_note, :output_reference_key, :extra_json, :launches, :launch_cov, :psnr,
      :ssim, :energy_j, :joules_per_image, :energy_note, :quality))sql");
  insert.Bind(":trial_id", trial_id)
      .Bind(":latency_ms", m.latency_ms)
      .Bind(":mean_ms", m.mean_ms)
      .Bind(":p90_ms", m.p90_ms)
      .Bind(":p99_ms", m.p99_ms)
      .Bind(":std_ms", m.std_ms)
      .Bind(":min_ms", m.min_ms)
      .Bind(":max_ms", m.max_ms)
      .Bind(":cov", m.cov)
      .Bind(":ci_low_ms", m.ci_low_ms)
      .Bind(":ci_high_ms", m.ci_high_ms)
      .Bind(":rank0_ms", m.rank0_ms)
      .Bind(":skew_ms", m.skew_ms)
      .Bind(":iterations", m.iterations)
      .Bind(":warmup", m.warmup)
      .Bind(":outliers", m.outliers)
      .Bind(":peak_mem_mb", m.peak_mem_mb)
      .Bind(":peak_reserved_mb", m.peak_reserved_mb)
      .Bind(":flops", m.flops)
      .Bind(":tflops", m.tflops)
      .Bind(":mfu", m.mfu)
      .Bind(":images_per_s", m.images_per_s)
      .Bind(":tokens_per_s", m.tokens_per_s)
      .Bind(":throttled",
            m.throttled ? std::optional<double>(*m.throttled ? 1.0 : 0.0) : std::nullopt)
      .Bind(":sm_clock_min_mhz", m.sm_clock_min_mhz)
      .Bind(":sm_clock_max_mhz", m.sm_clock_max_mhz)
      .Bind(":comm_mb_per_step", m.comm_mb_per_step)
      .Bind(":output_error", m.output_error)
      .Bind(":output_error_note", m.output_error_note)
      .Bind(":output_reference_key", m.output_reference_key)
      .Bind(":launches", std::max(m.launches, 1))
      .Bind(":launch_cov", m.launch_cov)
      .Bind(":psnr", m.psnr)
      .Bind(":ssim", m.ssim)
      .Bind(":energy_j", m.energy_j)
      .Bind(":joules_per_image", m.joules_per_image);
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
