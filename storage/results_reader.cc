// ResultsReader's typed reads (results_reader.h).
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "base/terminal_text.h"
#include "base/untrusted_input.h"
#include "metrics/trial_metrics.h"
#include "storage/iso_time.h"
#include "storage/metric_values.h"
#include "storage/results_reader.h"
#include "storage/statement.h"
#include "storage/stored_text.h"

namespace ditbench {
namespace {

// A trial's stored steps (trial_metrics.steps_json, written by CampaignWriter): the database
// is untrusted input, so every entry is checked before it is shown.
std::vector<StepKernels> StoredSteps(const std::string& trial_key, const std::string& text) {
  std::vector<StepKernels> steps;
  try {
    const nlohmann::json list = ParseBoundedJson(text, kMaxStoredJsonDepth, "JSON");
    if (!list.is_array()) throw std::runtime_error("not a list");
    for (const nlohmann::json& item : list) {
      if (!item.is_object() || !item.value("step", nlohmann::json()).is_number_integer() ||
          !item.value("attention", nlohmann::json()).is_string() ||
          !item.value("linear", nlohmann::json()).is_string())
        throw std::runtime_error("an entry is not {step, attention, linear}");
      const nlohmann::json reused = item.value("reused", nlohmann::json(false));
      if (!reused.is_boolean()) throw std::runtime_error("an entry's reused is not true or false");
      const nlohmann::json expert = item.value("expert", nlohmann::json(0));
      if (!expert.is_number_integer() || expert.get<std::int64_t>() < 0 ||
          expert.get<std::int64_t>() >= kMaxExperts)
        throw std::runtime_error("an entry's expert is not an expert's index");
      steps.push_back({item["step"].get<int>(),
                       StripTerminalControls(item["attention"].get<std::string>()),
                       StripTerminalControls(item["linear"].get<std::string>()), reused.get<bool>(),
                       static_cast<int>(expert.get<std::int64_t>())});
    }
  } catch (const std::exception& e) {
    throw StorageError(fmt::format("trial {}: its stored steps: {}", trial_key, e.what()));
  }
  return steps;
}

// The read of Results: the view's columns a ResultRow holds, in its order, for the campaigns
// bound to `placeholders`; free texts cut (storage/stored_text.h).
std::string ResultsSql(const std::string& placeholders) {
  std::string degrees;  // the view's degree columns, in kDegreeTable's order
  for (const DegreeInfo& d : kDegreeTable) degrees += fmt::format("{}, ", d.name);
  std::string metrics;  // the column metrics, in the metric table's order
  for (const MetricInfo* metric : ColumnMetrics()) metrics += fmt::format("{}, ", metric->name);
  return fmt::format(R"sql(
    SELECT campaign, sweep, trial_key, status, model, precision, scope, device, build,
           {error},
           width, batch, steps, {degrees}world_size, {metrics}
           iterations, throttled, model_overrides, profile_blocks,
           busy, {health_note}, workload, axes, replicates, launches,
           launch_cov, seed, pipefusion_patches, pipefusion_warmup_steps, concurrent_trials,
           height, COALESCE(frames, 0),
           compute_share, comm_share, idle_share, profile, {run_dir},
           {energy_note}, {quality}, {attention_ran}, step_kernels,
           (SELECT t.config_json FROM trials t
            WHERE t.campaign_id = results.campaign AND t.trial_key = results.trial_key)
    FROM results WHERE campaign IN ({placeholders}) ORDER BY campaign, trial_key)sql",
                     fmt::arg("degrees", degrees), fmt::arg("metrics", metrics),
                     fmt::arg("placeholders", placeholders),
                     fmt::arg("error", ShownTextSql("error")),
                     fmt::arg("health_note", ShownTextSql("health_note")),
                     fmt::arg("run_dir", ShownTextSql("run_dir")),
                     fmt::arg("energy_note", ShownTextSql("energy_note")),
                     fmt::arg("quality", ShownTextSql("quality")),
                     fmt::arg("attention_ran", ShownTextSql("attention_ran")));
}

}  // namespace

std::vector<CampaignInfo> ResultsReader::Campaigns() { return StoredCampaigns(db_); }

std::vector<CampaignInfo> StoredCampaigns(sqlite3* db) {
  Statement query(
      db, fmt::format(R"sql(
    SELECT c.id, s.name, {}, c.spec_hash, c.spec_text, {}, {},
           {}, {}, {}, c.excluded, {},
           (SELECT count(*) FROM trials t WHERE t.campaign_id = c.id)
    FROM campaigns c JOIN sweeps s ON s.id = c.sweep_id ORDER BY c.id)sql",
                      ShownTextSql("c.sweep_path"), ShownTextSql("c.build"), ShownTextSql("c.host"),
                      BoundedJsonSql("c.environment_json"), UnixSecondsSql("c.started_at"),
                      UnixSecondsSql("c.finished_at"), ShownTextSql("c.label")));
  std::vector<CampaignInfo> campaigns;
  while (query.Step()) {
    CampaignInfo info;
    info.id = query.Int(0);
    info.record.sweep_name = query.Text(1);
    info.record.sweep_path = query.Text(2);
    info.record.spec_hash = query.Text(3);
    info.record.spec_text = query.Text(4);
    info.record.build = query.Text(5);
    info.record.host = query.Text(6);
    // Too long to read (BoundedJsonSql) or not JSON: no environment.
    if (!query.IsNull(7)) info.record.environment = ParseStoredJson(query.Text(7));
    if (info.record.environment.is_discarded()) info.record.environment = nlohmann::json();
    info.started_at = query.Double(8);
    info.finished_at = query.OptionalDouble(9);
    info.excluded = query.Int(10) != 0;
    if (!query.IsNull(11)) info.label = query.Text(11);
    info.trials = query.Int(12);
    campaigns.push_back(std::move(info));
  }
  return campaigns;
}

std::map<std::string, TrialStatus> ResultsReader::TrialStatuses(std::int64_t campaign_id) {
  Statement query(db_, "SELECT trial_key, status FROM trials WHERE campaign_id = ?");
  query.Bind(1, campaign_id);
  std::map<std::string, TrialStatus> statuses;
  while (query.Step()) {
    std::string name = query.Text(1);
    std::optional<TrialStatus> status = ParseStatus(name);
    if (!status) {
      throw StorageError(fmt::format("unknown status '{}' for trial {} in '{}'", name,
                                     query.Text(0), path_.string()));
    }
    statuses.emplace(query.Text(0), *status);
  }
  return statuses;
}

std::map<std::string, std::map<int, TrialStatus>> ResultsReader::LaunchStatuses(
    std::int64_t campaign_id) {
  Statement query(db_, R"sql(
    SELECT t.trial_key, l.launch, l.status FROM launches l JOIN trials t ON t.id = l.trial_id
    WHERE t.campaign_id = ?)sql");
  query.Bind(1, campaign_id);
  std::map<std::string, std::map<int, TrialStatus>> statuses;
  while (query.Step()) {
    const std::optional<TrialStatus> status = ParseStatus(query.Text(2));
    if (!status) {
      throw StorageError(fmt::format("unknown status '{}' for launch {} of trial {} in '{}'",
                                     query.Text(2), query.Int(1), query.Text(0), path_.string()));
    }
    statuses[query.Text(0)][static_cast<int>(query.Int(1))] = *status;
  }
  return statuses;
}

std::vector<ResultRow> ResultsReader::Results(const std::vector<std::int64_t>& campaign_ids) {
  std::vector<ResultRow> rows;
  if (campaign_ids.empty()) return rows;
  std::string placeholders;
  for (std::size_t i = 0; i < campaign_ids.size(); ++i) placeholders += i ? ", ?" : "?";
  Statement query(db_, ResultsSql(placeholders));
  for (std::size_t i = 0; i < campaign_ids.size(); ++i) {
    query.Bind(static_cast<int>(i + 1), campaign_ids[i]);
  }
  while (query.Step()) {
    ResultRow row;
    int c = 0;
    row.campaign = query.Int(c++);
    for (std::string* text : {&row.sweep, &row.trial_key, &row.status, &row.model, &row.precision,
                              &row.scope, &row.device, &row.build, &row.error}) {
      *text = query.Text(c++);
    }
    for (std::int64_t* number : {&row.resolution, &row.batch, &row.steps}) *number = query.Int(c++);
    for (const DegreeInfo& d : kDegreeTable) row.*d.member = static_cast<int>(query.Int(c++));
    row.world_size = query.Int(c++);
    for (const MetricInfo* metric : ColumnMetrics())
      row.*RowMemberOf(metric->name) = query.OptionalDouble(c++);
    if (!query.IsNull(c)) row.iterations = query.Int(c);
    ++c;
    row.throttled = !query.IsNull(c) && query.Int(c) != 0;
    ++c;
    if (!query.IsNull(c)) row.model_overrides = query.Text(c);
    ++c;
    row.profile_blocks = !query.IsNull(c) && query.Int(c) != 0;
    ++c;
    row.busy = !query.IsNull(c) && query.Int(c) != 0;
    ++c;
    if (!query.IsNull(c)) row.health_note = query.Text(c);
    ++c;
    if (!query.IsNull(c)) {  // absent before the command workload existed: the DiT worker
      const std::optional<Workload> workload = ParseWorkload(query.Text(c));
      if (!workload)
        throw StorageError(
            fmt::format("trial {}: unknown workload '{}'", row.trial_key, query.Text(c)));
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
    for (std::optional<double>* value : {&row.compute_share, &row.comm_share, &row.idle_share})
      *value = query.OptionalDouble(c++);
    if (!query.IsNull(c)) {
      try {
        row.profile =
            TrialTraceFromJson(ParseBoundedJson(query.Text(c), kMaxStoredJsonDepth, "JSON"));
      } catch (const std::exception& e) {
        throw StorageError(
            fmt::format("trial {}: its stored profile: {}", row.trial_key, e.what()));
      }
    }
    ++c;
    if (!query.IsNull(c)) row.run_dir = query.Text(c);
    ++c;
    if (!query.IsNull(c)) row.energy_note = query.Text(c);
    ++c;
    if (!query.IsNull(c)) row.quality = query.Text(c);
    ++c;
    if (!query.IsNull(c)) row.attention_ran = StripTerminalControls(query.Text(c));
    ++c;
    if (!query.IsNull(c)) row.step_kernels = StoredSteps(row.trial_key, query.Text(c));
    ++c;
    if (!query.IsNull(c)) row.computation = query.Text(c);
    ++c;
    rows.push_back(std::move(row));
  }
  ReadMetricValues(db_, rows);
  return rows;
}

std::vector<Sample> ResultsReader::Samples(std::int64_t campaign_id, const std::string& trial_key,
                                           int launch) {
  Statement query(db_, R"sql(
    SELECT s.rank, s.iteration, s.stage, s.ms, s.warmup, s.reused
    FROM samples s JOIN trials t ON t.id = s.trial_id
    WHERE t.campaign_id = ? AND t.trial_key = ? AND s.launch = ?
    ORDER BY s.iteration, s.rank, s.stage)sql");
  query.Bind(1, campaign_id).Bind(2, trial_key).Bind(3, launch);
  std::vector<Sample> samples;
  while (query.Step()) {
    samples.push_back(Sample{static_cast<int>(query.Int(0)), static_cast<int>(query.Int(1)),
                             query.Text(2), query.Double(3), query.Int(4) != 0, query.Int(5) != 0});
  }
  return samples;
}

std::map<std::string, std::vector<std::vector<double>>> ResultsReader::SlowestSeriesByLaunch(
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

}  // namespace ditbench
