// ResultsDb's reads and writes for the planner's cost model (results_db.h, schema version 12).
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <sqlite3.h>

#include "base/untrusted_input.h"
#include "storage/iso_time.h"
#include "storage/results_db.h"
#include "storage/statement.h"

namespace ditbench {

std::vector<ResultsDb::ObservedTrial> ResultsDb::ObservedTrials(
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
    WHERE r.status = 'ok' AND r.latency_ms IS NOT NULL AND r.latency_ms > 0
      AND (?1 = '' OR t.device = ?1)
      AND r.campaign NOT IN (SELECT value FROM json_each(?2))
    ORDER BY r.campaign DESC, r.trial_key)sql",
                                   SecondsBetweenSql("t.started_at", "t.finished_at")));
  query.Bind(1, device);
  query.Bind(2, nlohmann::json(left_out).dump());
  std::vector<ObservedTrial> trials;
  std::set<std::string> seen;  // the newest campaign's measurement of each key
  std::set<std::string> busy;  // keys with a measurement on a busy machine
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
  std::sort(trials.begin(), trials.end(),
            [](const ObservedTrial& a, const ObservedTrial& b) { return a.trial_key < b.trial_key; });
  return trials;
}

void ResultsDb::RecordModelFit(const ModelFitRecord& fit) {
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

std::optional<ResultsDb::ModelFitRecord> ResultsDb::NewestModelFit(const std::string& device) {
  Statement query(db_, fmt::format(R"sql(
    SELECT device, {}, trials, median_abs_error, max_abs_error, terms_json, predictions_json
    FROM model_fits WHERE ?1 = '' OR device = ?1 ORDER BY id DESC LIMIT 1)sql",
                                   UnixSecondsSql("fitted_at")));
  query.Bind(1, device);
  if (!query.Step()) return std::nullopt;
  ModelFitRecord fit;
  fit.device = query.Text(0);
  fit.fitted_at = query.Double(1);
  fit.trials = query.Int(2);
  fit.median_abs_error = query.OptionalDouble(3);
  fit.max_abs_error = query.OptionalDouble(4);
  fit.terms = ParseStoredJson(query.Text(5));
  fit.predictions = ParseStoredJson(query.Text(6));
  if (!fit.terms.is_array()) fit.terms = nlohmann::json::array();
  if (!fit.predictions.is_array()) fit.predictions = nlohmann::json::array();
  return fit;
}

void ResultsDb::RecordSearchReason(std::int64_t campaign_id, const std::string& trial_key,
                                   int launch, const std::string& reason) {
  Statement insert(db_, R"sql(
    INSERT INTO search_reasons (campaign_id, trial_key, launch, step, reason, recorded_at)
    VALUES (?1, ?2, ?3,
            (SELECT COALESCE(max(step) + 1, 0) FROM search_reasons WHERE campaign_id = ?1),
            ?4, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))sql");
  insert.Bind(1, campaign_id).Bind(2, trial_key).Bind(3, launch).Bind(4, reason).Run();
}

std::vector<ResultsDb::SearchReason> ResultsDb::SearchReasons(std::int64_t campaign_id) {
  Statement query(db_, R"sql(
    SELECT trial_key, launch, step, reason FROM search_reasons WHERE campaign_id = ?
    ORDER BY step)sql");
  query.Bind(1, campaign_id);
  std::vector<SearchReason> reasons;
  while (query.Step())
    reasons.push_back({query.Text(0), static_cast<int>(query.Int(1)), query.Int(2), query.Text(3)});
  return reasons;
}

}  // namespace ditbench
