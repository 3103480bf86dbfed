// PlannerHistory (planner_history.h): the planner's reads and its recorded fits.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <sqlite3.h>

#include "base/untrusted_input.h"
#include "storage/iso_time.h"
#include "storage/planner_history.h"
#include "storage/results_reader.h"
#include "storage/statement.h"

namespace ditbench {

std::vector<CampaignInfo> PlannerHistory::Campaigns() { return StoredCampaigns(db_); }

std::unordered_map<std::string, PlannerHistory::Measurement>
PlannerHistory::NewestOkMeasurements() {
  // The trial's wall time from its ISO 8601 start and end (storage/iso_time.h). Each key keeps
  // its row of the highest campaign (a key is in a campaign once: UNIQUE (campaign_id,
  // trial_key)).
  Statement query(db_, fmt::format(R"sql(
    SELECT r.trial_key, r.campaign, r.latency_ms, r.peak_mem_mb, r.warmup, r.iterations, {}
    FROM results r JOIN trials t ON t.campaign_id = r.campaign AND t.trial_key = r.trial_key
    WHERE r.status = 'ok' AND r.latency_ms > 0 AND COALESCE(r.iterations, 1) > 0)sql",
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

std::vector<PlannerHistory::StepCacheObservation> PlannerHistory::StepCacheObservations() {
  Statement query(db_, R"sql(
    SELECT t.config_json, t.policy_json, m.value
    FROM trials t JOIN metric_values m ON m.trial_id = t.id
    WHERE t.status = 'ok' AND m.name = 'skipped_steps' AND json_valid(t.config_json)
      AND json_extract(t.config_json, '$.cache') IS NOT NULL)sql");
  std::vector<StepCacheObservation> observations;
  while (query.Step()) {
    nlohmann::json config = ParseStoredJson(query.Text(0));
    if (!config.is_object()) continue;  // the database is untrusted: nothing to learn
    if (!query.IsNull(1)) {
      const auto policy = ParseStoredJson(query.Text(1));
      if (policy.is_object()) config.update(policy);
    }
    observations.push_back({std::move(config), query.Double(2)});
  }
  return observations;
}

std::vector<PlannerHistory::ObservedTrial> PlannerHistory::ObservedTrials(
    const std::string& device, std::size_t* busy_only, const std::vector<std::int64_t>& left_out) {
  Statement query(db_, fmt::format(R"sql(
    SELECT r.trial_key, t.config_json, t.policy_json, r.latency_ms, r.comm_mb_per_step,
           r.warmup, r.iterations, {}, r.output_error, r.campaign, COALESCE(r.busy, 0),
           t.placement_json,
           CASE WHEN t.device = 'cpu' AND json_valid(c.environment_json)
                THEN COALESCE(json_extract(c.environment_json, '$.worker.cpu_count'),
                              json_extract(c.environment_json, '$.cpu_count')) END,
           r.psnr, r.ssim
    FROM results r JOIN trials t ON t.campaign_id = r.campaign AND t.trial_key = r.trial_key
      JOIN campaigns c ON c.id = r.campaign
    WHERE r.status = 'ok' AND r.latency_ms > 0 AND COALESCE(r.iterations, 1) > 0
      AND (?1 = '' OR t.device = ?1)
      AND r.campaign NOT IN (SELECT value FROM json_each(?2))
    ORDER BY r.campaign DESC, r.trial_key)sql",
                                   SecondsBetweenSql("t.started_at", "t.finished_at")));
  query.Bind(1, device);
  query.Bind(2, nlohmann::json(left_out).dump());
  std::vector<ObservedTrial> trials;
  std::set<std::string> seen;              // the newest campaign's measurement of each key
  std::set<std::string> busy;              // keys with a measurement on a busy machine
  std::vector<ObservedTrial> busy_trials;  // the newest busy measurement of each such key
  while (query.Step()) {
    const bool on_busy_machine = query.Int(10) != 0;
    if (on_busy_machine && !busy.insert(query.Text(0)).second) continue;
    if (!on_busy_machine && !seen.insert(query.Text(0)).second) continue;
    ObservedTrial o;
    o.trial_key = query.Text(0);
    o.config = ParseStoredJson(query.Text(1));
    if (!o.config.is_object()) continue;
    if (!query.IsNull(2)) {
      const auto policy = ParseStoredJson(query.Text(2));
      if (policy.is_object()) o.config.update(policy);
    }
    o.latency_ms = query.Double(3);
    o.comm_mb_per_step = query.OptionalDouble(4);
    if (!query.IsNull(5) && !query.IsNull(6) && !query.IsNull(7)) {
      const double iterations = static_cast<double>(query.Int(5) + query.Int(6));
      o.startup_s = std::max(0.0, query.Double(7) - iterations * o.latency_ms / 1000);
    }
    o.output_error = query.OptionalDouble(8);
    o.campaign = query.Int(9);
    if (!query.IsNull(11)) o.placement = ParseStoredJson(query.Text(11));
    if (o.placement.is_discarded()) o.placement = nullptr;
    if (!query.IsNull(12) && query.Int(12) > 0) o.cpu_cores = static_cast<int>(query.Int(12));
    o.psnr = query.OptionalDouble(13);
    o.ssim = query.OptionalDouble(14);
    o.busy = on_busy_machine;
    (on_busy_machine ? busy_trials : trials).push_back(std::move(o));
  }
  // A key measured only on a busy machine is returned flagged busy; one measured quietly too,
  // only quietly.
  std::size_t busy_only_keys = 0;
  for (ObservedTrial& o : busy_trials) {
    if (seen.count(o.trial_key)) continue;
    ++busy_only_keys;
    trials.push_back(std::move(o));
  }
  if (busy_only) *busy_only = busy_only_keys;
  std::sort(trials.begin(), trials.end(), [](const ObservedTrial& a, const ObservedTrial& b) {
    return a.trial_key < b.trial_key;
  });
  return trials;
}

void PlannerHistory::RecordModelFit(const ModelFitRecord& fit) {
  Statement insert(db_, R"sql(
    INSERT INTO model_fits (device, fitted_at, trials, median_abs_error, max_abs_error,
                            terms_json, predictions_json)
    VALUES (?, ?, ?, ?, ?, ?, ?))sql");
  insert.Bind(1, fit.device)
      .Bind(2, IsoUtc(fit.fitted_at))
      .Bind(3, fit.trials)
      .Bind(4, fit.median_abs_error)
      .Bind(5, fit.max_abs_error)
      .Bind(6, fit.terms.dump())
      .Bind(7, fit.predictions.dump())
      .Run();
}

}  // namespace ditbench
