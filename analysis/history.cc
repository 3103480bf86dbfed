#include "analysis/history.h"
#include "base/user_error.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "analysis/campaign_roles.h"
#include "analysis/row_metrics.h"
#include "metrics/metric_table.h"

namespace ditbench {
namespace {

// The fingerprint's fields and where each is recorded, first found wins: a table, walked once.
struct FingerprintField {
  const char* name;
  std::vector<const char*> paths;  // JSON pointers into the campaign's environment
};
const std::vector<FingerprintField>& FingerprintFields() {
  static const std::vector<FingerprintField> fields = {
      {"driver", {"/worker/driver", "/worker/cuda_driver_api"}},
      {"cuda", {"/worker/cuda_runtime", "/worker/cuda"}},
      {"nccl", {"/worker/nccl"}},
      {"libtorch", {"/worker/libtorch", "/worker/torch"}},
      {"diffusers", {"/worker/diffusers"}},
      {"device", {"/worker/device"}},
  };
  return fields;
}

std::string Text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

bool IsGpuDevice(const std::string& device) { return !device.empty() && device != "cpu"; }

std::string Known(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

// Throws UserError unless `name` is a metric history follows (its row shown in history: a
// millisecond metric, lower better), naming those that are.
void RequireMillisecondMetric(const std::string& name) {
  const MetricInfo* metric = FindMetric(name);
  if (metric && (metric->shown_in & kShownInHistory)) return;
  std::vector<std::string> names;
  for (const MetricInfo* m : MetricsShownIn(kShownInHistory)) names.push_back(std::string(m->name));
  throw UserError(fmt::format("history --metric: '{}' is not a millisecond metric (one of {})",
                              name, fmt::join(names, ", ")));
}

// The change point `cp` of the key's series, with the builds and environment fields around it.
HistoryChange HistoryChangeAt(const KeyHistory& key, const ChangePoint& cp) {
  const HistoryPoint& good = key.points[cp.last_good];
  const HistoryPoint& bad = key.points[cp.first_bad];
  HistoryChange change;
  change.last_good = good.campaign;
  change.first_bad = bad.campaign;
  change.good_build = good.build;
  change.bad_build = bad.build;
  change.change = cp.change;
  change.campaigns_since = key.points.size() - cp.first_bad;
  for (std::size_t i = cp.last_good + 1; i < cp.first_bad; ++i)
    change.skipped.push_back(key.points[i].campaign);
  std::set<std::string> fields;
  for (const auto& [name, value] : good.environment) fields.insert(name);
  for (const auto& [name, value] : bad.environment) fields.insert(name);
  for (const std::string& name : fields) {
    const auto a = good.environment.find(name), b = bad.environment.find(name);
    const std::string va = a == good.environment.end() ? "(none)" : a->second;
    const std::string vb = b == bad.environment.end() ? "(none)" : b->second;
    if (va != vb) change.environment.push_back({name, va, vb});
  }
  return change;
}

// Finds the change points of the key's series `values` (one per point) under thresholds `t`,
// and fills in the key's levels, noise, edges, changes and first-to-latest shifts.
void AnalyseSeries(const std::vector<SeriesPoint>& values, const Thresholds& t, KeyHistory& key) {
  ChangePointPolicy policy;
  policy.min_effect_pct = t.policy.min_effect_pct;
  policy.confidence = t.policy.confidence;
  const ChangePointAnalysis analysis = FindChangePoints(values, policy);
  key.noise_pct = analysis.noise_pct;
  key.noise_from_intervals = analysis.noise_from_intervals;
  key.min_effect_pct = policy.min_effect_pct;
  for (const EdgeShift& e : analysis.edge_shifts)
    key.edges.push_back({key.points[e.index].campaign, e.latest, e.pct});
  key.busy_used = analysis.busy_used;
  for (std::size_t i = 0; i < key.points.size(); ++i) {
    key.points[i].use = analysis.use[i];
    key.points[i].level_ms = analysis.level[i];
  }
  for (const ChangePoint& cp : analysis.changes) key.changes.push_back(HistoryChangeAt(key, cp));
  const double first = key.points.front().level_ms, latest = key.points.back().level_ms;
  key.level_change_pct = first > 0 && latest > 0 ? (latest / first - 1) * 100 : 0;
  const double first_ms = key.points.front().latency_ms;
  const double latest_ms = key.points.back().latency_ms;
  key.first_to_latest_pct = first_ms > 0 && latest_ms > 0 ? (latest_ms / first_ms - 1) * 100 : 0;
}

}  // namespace

Fingerprint EnvironmentFingerprint(const CampaignInfo& campaign) {
  Fingerprint fingerprint;
  const nlohmann::json& env = campaign.record.environment;
  for (const FingerprintField& field : FingerprintFields()) {
    for (const char* path : field.paths) {
      const nlohmann::json::json_pointer pointer(path);
      if (env.is_object() && env.contains(pointer) && !env.at(pointer).is_null()) {
        fingerprint[field.name] = Text(env.at(pointer));
        break;
      }
    }
  }
  if (!campaign.record.host.empty()) fingerprint["host"] = campaign.record.host;
  if (!campaign.record.build.empty()) fingerprint["ditbench"] = campaign.record.build;
  return fingerprint;
}

std::string CampaignBuild(const CampaignInfo& campaign) {
  const nlohmann::json& env = campaign.record.environment;
  const nlohmann::json::json_pointer worker_build("/worker/build");
  if (env.is_object() && env.contains(worker_build) && env.at(worker_build).is_string() &&
      !env.at(worker_build).get<std::string>().empty())
    return env.at(worker_build).get<std::string>();
  return campaign.record.build;
}

std::vector<std::string> HistoryNotes(const KeyHistory& key) {
  std::vector<std::string> notes;
  for (const HistoryEdge& e : key.edges)
    notes.push_back(
        e.latest
            ? fmt::format("not a change point yet: campaign {}, the latest, is {:+.1f}% against "
                          "the level before it; a change must last 2 campaigns, so the "
                          "next campaign says whether this is one or a bad night",
                          e.campaign, e.pct)
            : fmt::format("campaign {}, the first, is {:+.1f}% against the level after it; "
                          "one campaign at the start cannot make a change point",
                          e.campaign, e.pct));
  if (!key.changes.empty()) return notes;
  if (key.noise_from_intervals)
    notes.push_back(fmt::format(
        "no change point: {} campaign{} cannot show one (a change must last 2 campaigns after "
        "2 before it); the noise shown is the measurements' own spread",
        key.points.size(), key.points.size() == 1 ? "" : "s"));
  else if (key.noise_pct >= key.min_effect_pct && key.min_effect_pct > 0)
    notes.push_back(fmt::format(
        "no change point: the series moves {:.1f}% from one campaign to the next (its noise), "
        "more than the {:.1f}% a change must reach, so a change of that size cannot be told "
        "from noise; quieter measurements (replicates, an idle machine) are needed",
        key.noise_pct, key.min_effect_pct));
  else
    notes.push_back("no change point");
  return notes;
}

History BuildHistory(const std::vector<CampaignInfo>& campaigns, const std::vector<ResultRow>& rows,
                     const HistoryOptions& options) {
  History history;
  history.metric = options.metric;
  RequireMillisecondMetric(options.metric);
  const bool latency = options.metric == "latency_ms";
  const auto value_of = [&](const ResultRow& row) -> std::optional<double> {
    return latency ? row.latency_ms : MetricValue(row, options.metric);
  };
  std::set<std::string> sweeps;
  std::map<std::int64_t, const CampaignInfo*> included;
  for (const CampaignInfo& c : campaigns) {
    sweeps.insert(c.record.sweep_name);
    if (!options.sweep.empty() && c.record.sweep_name != options.sweep) continue;
    const CampaignRole role = RoleOf(c);
    if (role == CampaignRole::kExcluded) {
      ++history.excluded;
      continue;
    }
    if (role == CampaignRole::kBisect) {
      ++history.bisections;
      continue;
    }
    history.campaigns.push_back(c);
    included[c.id] = &c;
  }
  if (!options.sweep.empty() && !sweeps.contains(options.sweep)) {
    throw UserError(fmt::format("no sweep named '{}' (known: {})", options.sweep, Known(sweeps)));
  }

  // Thresholds per device kind, learned from the included campaigns as compare learns them.
  std::vector<ResultRow> usable;
  for (const ResultRow& row : rows)
    if (included.contains(row.campaign)) usable.push_back(row);
  std::map<bool, Thresholds> thresholds;
  for (bool gpu : {false, true})
    thresholds[gpu] = LearnedThresholds(usable, gpu, {}).value_or(DefaultThresholds(gpu));

  // The series: ok rows by (sweep, key), in campaign order.
  std::map<std::pair<std::string, std::string>, std::vector<const ResultRow*>> series;
  std::set<std::string> keys;
  for (const ResultRow& row : usable) {
    keys.insert(row.trial_key);
    if (!options.only.empty() && row.trial_key != options.only) continue;
    const std::optional<double> value = value_of(row);
    if (!row.measured() || !value || *value <= 0) continue;
    series[{row.sweep, row.trial_key}].push_back(&row);
  }
  if (!options.only.empty() && !keys.contains(options.only)) {
    throw UserError(fmt::format(
        "'{}' is not a trial key of the selected campaigns ({} keys; `ditbench query` lists "
        "them)",
        options.only, keys.size()));
  }

  for (auto& [id, key_rows] : series) {
    std::sort(key_rows.begin(), key_rows.end(),
              [](const ResultRow* a, const ResultRow* b) { return a->campaign < b->campaign; });
    KeyHistory key;
    key.sweep = id.first;
    key.trial_key = id.second;
    key.label = TrialLabel(*key_rows.back());
    key.device = key_rows.back()->device;
    const Thresholds& t = thresholds[IsGpuDevice(key.device)];
    key.thresholds = t.Describe();
    std::vector<SeriesPoint> values;
    for (const ResultRow* row : key_rows) {
      const CampaignInfo& c = *included.at(row->campaign);
      HistoryPoint p;
      p.campaign = c.id;
      p.started_at = c.started_at;
      p.build = CampaignBuild(c);
      p.label = c.label;
      p.environment = EnvironmentFingerprint(c);
      p.latency_ms = *value_of(*row);
      if (latency) {
        p.ci_low_ms = row->ci_low_ms;
        p.ci_high_ms = row->ci_high_ms;
      }
      p.launches = row->launches;
      p.busy = row->busy;
      p.busy_note = row->health_note;
      key.points.push_back(p);
      values.push_back({p.latency_ms, p.ci_low_ms.value_or(0), p.ci_high_ms.value_or(0), p.busy});
    }
    AnalyseSeries(values, t, key);
    history.keys.push_back(std::move(key));
  }
  std::stable_sort(
      history.keys.begin(), history.keys.end(), [](const KeyHistory& a, const KeyHistory& b) {
        return std::tie(a.sweep, a.label, a.trial_key) < std::tie(b.sweep, b.label, b.trial_key);
      });
  return history;
}

History LoadHistory(ResultsReader& db, const HistoryOptions& options) {
  const std::vector<CampaignInfo> campaigns = db.Campaigns();
  std::vector<std::int64_t> ids;
  for (const CampaignInfo& c : campaigns)
    if (!c.excluded && (options.sweep.empty() || c.record.sweep_name == options.sweep))
      ids.push_back(c.id);
  return BuildHistory(campaigns, db.Results(ids), options);
}

std::vector<std::pair<const KeyHistory*, const HistoryChange*>> SlowerChanges(
    const History& history, double pct, std::size_t last) {
  std::vector<std::pair<const KeyHistory*, const HistoryChange*>> found;
  for (const KeyHistory& key : history.keys)
    for (const HistoryChange& change : key.changes)
      if (change.change.pct > pct && (last == 0 || change.campaigns_since <= last))
        found.emplace_back(&key, &change);
  return found;
}

}  // namespace ditbench
