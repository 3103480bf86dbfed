// ResultsDb's typed reads for the report and the planner (results_db.h).
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <unordered_map>

#include <fmt/format.h>
#include <sqlite3.h>

#include "base/untrusted_input.h"
#include "metrics/trial_metrics.h"
#include "storage/iso_time.h"
#include "storage/metric_values.h"
#include "storage/results_db.h"
#include "storage/statement.h"

namespace ditbench {

std::string ResultRow::resolution_label() const {
  std::string label = height == resolution || height == 0
                          ? fmt::format("{}px", resolution)
                          : fmt::format("{}x{}px", resolution, height);
  if (frames > 0) label += fmt::format(" {} frames", frames);
  return label;
}

std::vector<ResultRow> ResultsDb::Results(const std::vector<std::int64_t>& campaign_ids) {
  std::vector<ResultRow> rows;
  if (campaign_ids.empty()) return rows;
  std::string placeholders;
  for (std::size_t i = 0; i < campaign_ids.size(); ++i) placeholders += i ? ", ?" : "?";
  std::string degrees;  // the view's degree columns, in kDegreeTable's order
  for (const DegreeInfo& d : kDegreeTable) degrees += fmt::format("{}, ", d.name);
  Statement query(db_, fmt::format(R"sql(
    SELECT campaign, sweep, trial_key, status, model, precision, scope, device, build, error,
           width, batch, steps, {}world_size,
           latency_ms, ci_low_ms, ci_high_ms, cov, skew_ms, rank0_ms, peak_mem_mb, tflops, mfu,
           iterations, throttled, model_overrides, profile_blocks, output_error,
           comm_mb_per_step, busy, health_note, workload, axes, replicates, launches,
           launch_cov, seed, pipefusion_patches, pipefusion_warmup_steps, concurrent_trials,
           height, COALESCE(frames, 0),
           psnr, ssim, compute_share, comm_share, idle_share, profile, run_dir,
           energy_j, joules_per_image, energy_note, quality,
           (SELECT t.config_json FROM trials t
            WHERE t.campaign_id = results.campaign AND t.trial_key = results.trial_key)
    FROM results WHERE campaign IN ({}) ORDER BY campaign, trial_key)sql",
                                   degrees, placeholders));
  for (std::size_t i = 0; i < campaign_ids.size(); ++i) {
    query.Bind(static_cast<int>(i + 1), campaign_ids[i]);
  }
  while (query.Step()) {
    ResultRow row;
    int c = 0;
    row.campaign = query.Int(c++);
    for (std::string* text : {&row.sweep, &row.trial_key, &row.status, &row.model,
                              &row.precision, &row.scope, &row.device, &row.build, &row.error}) {
      *text = query.Text(c++);
    }
    for (std::int64_t* number : {&row.resolution, &row.batch, &row.steps})
      *number = query.Int(c++);
    for (const DegreeInfo& d : kDegreeTable) row.*d.member = static_cast<int>(query.Int(c++));
    row.world_size = query.Int(c++);
    for (std::optional<double>* value :
         {&row.latency_ms, &row.ci_low_ms, &row.ci_high_ms, &row.cov, &row.skew_ms,
          &row.rank0_ms, &row.peak_mem_mb, &row.tflops, &row.mfu}) {
      *value = query.OptionalDouble(c++);
    }
    if (!query.IsNull(c)) row.iterations = query.Int(c);
    ++c;
    row.throttled = !query.IsNull(c) && query.Int(c) != 0;
    ++c;
    if (!query.IsNull(c)) row.model_overrides = query.Text(c);
    ++c;
    row.profile_blocks = !query.IsNull(c) && query.Int(c) != 0;
    ++c;
    row.output_error = query.OptionalDouble(c++);
    row.comm_mb_per_step = query.OptionalDouble(c++);
    row.busy = !query.IsNull(c) && query.Int(c) != 0;
    ++c;
    if (!query.IsNull(c)) row.health_note = query.Text(c);
    ++c;
    if (!query.IsNull(c)) {  // absent before the command workload existed: the DiT worker
      const std::optional<Workload> workload = ParseWorkload(query.Text(c));
      if (!workload)
        throw StorageError(fmt::format("trial {}: unknown workload '{}'", row.trial_key,
                                       query.Text(c)));
      row.workload = *workload;
    }
    ++c;
    row.axes = query.IsNull(c) ? "{}" : query.Text(c);
    ++c;
    row.replicates = query.IsNull(c) ? 1 : query.Int(c);
    ++c;
    row.launches = query.IsNull(c) ? 0 : query.Int(c);
    ++c;
    row.launch_cov = query.OptionalDouble(c++);
    for (std::int64_t* number : {&row.seed, &row.pipefusion_patches, &row.pipefusion_warmup_steps})
      *number = query.IsNull(c++) ? 0 : query.Int(c - 1);
    row.concurrent_trials = query.IsNull(c) ? 0 : query.Int(c);
    ++c;
    row.height = query.IsNull(c) ? row.resolution : query.Int(c);
    ++c;
    row.frames = query.Int(c++);
    for (std::optional<double>* value :
         {&row.psnr, &row.ssim, &row.compute_share, &row.comm_share, &row.idle_share})
      *value = query.OptionalDouble(c++);
    if (!query.IsNull(c)) {
      try {
        row.profile =
            TrialTraceFromJson(ParseBoundedJson(query.Text(c), kMaxStoredJsonDepth, "JSON"));
      } catch (const std::exception& e) {
        throw StorageError(fmt::format("trial {}: its stored profile: {}", row.trial_key,
                                       e.what()));
      }
    }
    ++c;
    if (!query.IsNull(c)) row.run_dir = query.Text(c);
    ++c;
    row.energy_j = query.OptionalDouble(c++);
    row.joules_per_image = query.OptionalDouble(c++);
    if (!query.IsNull(c)) row.energy_note = query.Text(c);
    ++c;
    if (!query.IsNull(c)) row.quality = query.Text(c);
    ++c;
    if (!query.IsNull(c)) row.computation = query.Text(c);
    ++c;
    rows.push_back(std::move(row));
  }
  ReadMetricValues(db_, rows);
  return rows;
}

std::unordered_map<std::string, ResultsDb::Measurement> ResultsDb::NewestOkMeasurements() {
  // The trial's wall time from its ISO 8601 start and end (storage/iso_time.h). Each key keeps
  // its row of the highest campaign (a key is in a campaign once: UNIQUE (campaign_id,
  // trial_key)).
  Statement query(db_, fmt::format(R"sql(
    SELECT r.trial_key, r.campaign, r.latency_ms, r.peak_mem_mb, r.warmup, r.iterations, {}
    FROM results r JOIN trials t ON t.campaign_id = r.campaign AND t.trial_key = r.trial_key
    WHERE r.status = 'ok' AND r.latency_ms IS NOT NULL)sql",
                                   SecondsBetweenSql("t.started_at", "t.finished_at")));
  std::unordered_map<std::string, std::int64_t> campaign_of;
  std::unordered_map<std::string, Measurement> newest;
  while (query.Step()) {
    std::string key = query.Text(0);
    const std::int64_t campaign = query.Int(1);
    const auto [it, fresh] = campaign_of.try_emplace(key, campaign);
    if (!fresh && it->second >= campaign) continue;
    it->second = campaign;
    Measurement m;
    m.latency_ms = query.Double(2);
    m.peak_mem_mb = query.OptionalDouble(3);
    if (!query.IsNull(4) && !query.IsNull(5) && !query.IsNull(6)) {
      const double iterations = static_cast<double>(query.Int(4) + query.Int(5));
      m.startup_s = std::max(0.0, query.Double(6) - iterations * m.latency_ms / 1000);
    }
    newest[std::move(key)] = m;
  }
  return newest;
}

std::map<std::string, std::vector<std::vector<Sample>>> ResultsDb::TimedSamples(
    std::int64_t campaign_id, const std::string& stage) {
  Statement query(db_, R"sql(
    SELECT t.trial_key, s.launch, s.rank, s.iteration, s.ms
    FROM samples s JOIN trials t ON t.id = s.trial_id
    JOIN launches l ON l.trial_id = s.trial_id AND l.launch = s.launch
    WHERE t.campaign_id = ? AND s.stage = ? AND s.warmup = 0 AND l.status = 'ok'
    ORDER BY t.trial_key, s.launch, s.iteration, s.rank)sql");
  query.Bind(1, campaign_id).Bind(2, stage);
  std::map<std::string, std::vector<std::vector<Sample>>> samples;
  std::string key;
  std::int64_t launch = -1;
  std::vector<std::vector<Sample>>* launches = nullptr;
  while (query.Step()) {
    if (!launches || query.Text(0) != key) {
      key = query.Text(0);
      launches = &samples[key];
      launch = -1;
    }
    if (query.Int(1) != launch) {
      launch = query.Int(1);
      launches->emplace_back();
    }
    launches->back().push_back(Sample{static_cast<int>(query.Int(2)),
                                      static_cast<int>(query.Int(3)), stage, query.Double(4),
                                      false});
  }
  return samples;
}

std::map<std::string, std::vector<std::vector<double>>> ResultsDb::SlowestSeriesByLaunch(
    std::int64_t campaign_id, const std::string& stage) {
  // Ok launches of ok trials: trial id -> (key, launch indices).
  std::unordered_map<std::int64_t, std::pair<std::string, std::vector<std::int64_t>>> trials;
  Statement launches(db_, R"sql(
    SELECT t.id, t.trial_key, l.launch FROM trials t JOIN launches l ON l.trial_id = t.id
    WHERE t.campaign_id = ? AND t.status = 'ok' AND l.status = 'ok')sql");
  launches.Bind(1, campaign_id);
  while (launches.Step()) {
    auto& entry = trials[launches.Int(0)];
    entry.first = launches.Text(1);
    entry.second.push_back(launches.Int(2));
  }
  // Each ok launch's timed samples, every rank's, handed to the one reducer of the slowest
  // rank per iteration (metrics/trial_metrics.h): storage reads, it never reduces.
  Statement samples(db_, R"sql(
    SELECT s.trial_id, s.launch, s.rank, s.iteration, s.ms FROM samples s
    WHERE s.trial_id IN (SELECT id FROM trials WHERE campaign_id = ? AND status = 'ok')
      AND s.stage = ? AND s.warmup = 0)sql");
  samples.Bind(1, campaign_id).Bind(2, stage);
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Sample>> by_launch;
  while (samples.Step()) {
    Sample sample;
    sample.rank = static_cast<int>(samples.Int(2));
    sample.iteration = static_cast<int>(samples.Int(3));
    sample.stage = stage;
    sample.ms = samples.Double(4);
    by_launch[{samples.Int(0), samples.Int(1)}].push_back(std::move(sample));
  }
  std::map<std::string, std::vector<std::vector<double>>> series;
  for (const auto& [trial_and_launch, launch_samples] : by_launch) {  // launches in order
    const auto& [trial, launch] = trial_and_launch;
    auto it = trials.find(trial);
    if (it == trials.end()) continue;
    const std::vector<std::int64_t>& ok = it->second.second;
    if (std::find(ok.begin(), ok.end(), launch) == ok.end()) continue;
    series[it->second.first].push_back(SlowestSeries(launch_samples, stage));
  }
  return series;
}

std::optional<std::string> ResultsDb::NewestOkRunDir(const std::string& trial_key) {
  Statement query(db_,
                  "SELECT run_dir FROM results WHERE trial_key = ? AND status = 'ok' "
                  "AND run_dir IS NOT NULL ORDER BY campaign DESC LIMIT 1");
  query.Bind(1, trial_key);
  if (!query.Step()) return std::nullopt;
  return query.Text(0);
}

std::vector<AwaitingReference> ResultsDb::TrialsAwaitingReference(const std::string& reference_key) {
  Statement query(db_, R"sql(
    SELECT t.id, t.run_dir, json_extract(t.policy_json, '$.quality')
    FROM trials t JOIN trial_metrics m ON m.trial_id = t.id
    WHERE t.status = 'ok' AND m.output_error IS NULL AND m.output_reference_key = ?
    ORDER BY t.id)sql");
  query.Bind(1, reference_key);
  std::vector<AwaitingReference> trials;
  while (query.Step()) {
    AwaitingReference trial{query.Int(0), query.Text(1), {}};
    if (!query.IsNull(2)) {
      std::string expected;
      const auto gate = ParseStoredJson(query.Text(2));
      if (!QualityGateFromJson(gate, &trial.quality, &expected))
        throw StorageError(fmt::format("trial {}: its stored quality gate: expected {}",
                                       trial.trial_id, expected));
    }
    trials.push_back(std::move(trial));
  }
  return trials;
}

void ResultsDb::SetOutputError(std::int64_t trial_id, std::optional<double> error,
                               const std::string& note) {
  Statement update(db_, "UPDATE trial_metrics SET output_error = ?, output_error_note = ? "
                        "WHERE trial_id = ?");
  update.Bind(1, error).Bind(2, note).Bind(3, trial_id);
  update.Run();
}

void ResultsDb::SetQualityVerdict(std::int64_t trial_id,
                                  const std::optional<std::string>& verdict) {
  Statement update(db_, "UPDATE trial_metrics SET quality = ? WHERE trial_id = ?");
  if (verdict) update.Bind(1, *verdict);
  else update.BindNull(1);
  update.Bind(2, trial_id).Run();
}

void ResultsDb::SetOutputQuality(std::int64_t trial_id, std::optional<double> psnr,
                                 std::optional<double> ssim) {
  Statement update(db_, "UPDATE trial_metrics SET psnr = ?, ssim = ? WHERE trial_id = ?");
  update.Bind(1, psnr).Bind(2, ssim).Bind(3, trial_id);
  update.Run();
}

std::vector<LaunchMeasurement> ResultsDb::Launches(std::int64_t campaign_id,
                                                   const std::string& trial_key, int except) {
  Statement query(db_, R"sql(
    SELECT l.launch, l.status, l.error, l.latency_ms, l.ci_low_ms, l.ci_high_ms, l.iterations,
           l.warmup, l.peak_mem_mb, l.peak_reserved_mb, l.throttled, l.sm_clock_min_mhz,
           l.sm_clock_max_mhz, l.trial_id, l.energy_j, l.joules_per_image
    FROM launches l JOIN trials t ON t.id = l.trial_id
    WHERE t.campaign_id = ? AND t.trial_key = ? AND l.launch != ? ORDER BY l.launch)sql");
  query.Bind(1, campaign_id).Bind(2, trial_key).Bind(3, except);
  std::vector<LaunchMeasurement> launches;
  std::int64_t trial_id = 0;
  while (query.Step()) {
    LaunchMeasurement launch;
    launch.launch = static_cast<int>(query.Int(0));
    launch.status = ParseStatus(query.Text(1)).value_or(TrialStatus::kFailed);
    launch.error = query.Text(2);
    trial_id = query.Int(13);
    if (launch.status == TrialStatus::kOk && !query.IsNull(3)) {
      TrialMetrics m;
      m.latency_ms = query.Double(3);
      m.ci_low_ms = query.OptionalDouble(4).value_or(m.latency_ms);
      m.ci_high_ms = query.OptionalDouble(5).value_or(m.latency_ms);
      m.iterations = query.IsNull(6) ? 0 : static_cast<int>(query.Int(6));
      m.warmup = query.IsNull(7) ? 0 : static_cast<int>(query.Int(7));
      m.peak_mem_mb = query.OptionalDouble(8);
      m.peak_reserved_mb = query.OptionalDouble(9);
      if (!query.IsNull(10)) m.throttled = query.Int(10) != 0;
      m.sm_clock_min_mhz = query.OptionalDouble(11);
      m.sm_clock_max_mhz = query.OptionalDouble(12);
      m.energy_j = query.OptionalDouble(14);
      m.joules_per_image = query.OptionalDouble(15);
      launch.metrics = m;
    }
    launches.push_back(std::move(launch));
  }
  if (launches.empty()) return launches;
  Statement samples(db_, R"sql(
    SELECT launch, rank, iteration, ms FROM samples
    WHERE trial_id = ? AND stage = ? AND warmup = 0 AND launch != ?
    ORDER BY launch, iteration, rank)sql");
  samples.Bind(1, trial_id).Bind(2, kIterationStage).Bind(3, except);
  while (samples.Step()) {
    const int index = static_cast<int>(samples.Int(0));
    auto it = std::find_if(launches.begin(), launches.end(),
                           [&](const LaunchMeasurement& l) { return l.launch == index; });
    if (it == launches.end()) continue;
    it->samples.push_back(Sample{static_cast<int>(samples.Int(1)),
                                 static_cast<int>(samples.Int(2)), kIterationStage,
                                 samples.Double(3), false});
  }
  return launches;
}

std::vector<Sample> ResultsDb::Samples(std::int64_t campaign_id, const std::string& trial_key,
                                       int launch) {
  Statement query(db_, R"sql(
    SELECT s.rank, s.iteration, s.stage, s.ms, s.warmup
    FROM samples s JOIN trials t ON t.id = s.trial_id
    WHERE t.campaign_id = ? AND t.trial_key = ? AND s.launch = ?
    ORDER BY s.iteration, s.rank, s.stage)sql");
  query.Bind(1, campaign_id).Bind(2, trial_key).Bind(3, launch);
  std::vector<Sample> samples;
  while (query.Step()) {
    samples.push_back(Sample{static_cast<int>(query.Int(0)), static_cast<int>(query.Int(1)),
                             query.Text(2), query.Double(3), query.Int(4) != 0});
  }
  return samples;
}

}  // namespace ditbench
