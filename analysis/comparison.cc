#include "analysis/comparison.h"
#include "analysis/campaign_labels.h"
#include "analysis/campaign_roles.h"
#include "analysis/row_metrics.h"
#include "analysis/selfcheck_comparison.h"
#include "base/untrusted_input.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/user_error.h"
#include "metrics/trial_metrics.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

constexpr double kGpuNoiseFloorPct = 5, kGpuMinEffectPct = 2;
constexpr double kCpuNoiseFloorPct = 35, kCpuMinEffectPct = 5;
constexpr double kLearnedFloorMinPct = 1;

bool IsGpu(const std::string& device) { return !device.empty() && device != "cpu"; }

std::vector<std::int64_t> ParseIds(std::string_view list, std::string_view whole) {
  std::vector<std::int64_t> ids;
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    std::int64_t id = 0;
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || id <= 0) {
      throw UserError(fmt::format(
          "campaign '{}': expected ID, ID,ID,... or DB:ID[,ID...] (campaign ids are positive "
          "integers)",
          whole));
    }
    ids.push_back(id);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return ids;
}

// Leaves of `json` as "a.b.c" -> text; arrays of scalars joined with "; ".
void Flatten(const nlohmann::json& json, const std::string& prefix,
             std::map<std::string, std::string>* out) {
  if (json.is_object()) {
    for (const auto& [key, value] : json.items())
      Flatten(value, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  std::string text;
  if (json.is_array()) {
    for (const auto& item : json) {
      if (!text.empty()) text += "; ";
      text += item.is_string() ? item.get<std::string>() : item.dump();
    }
  } else if (json.is_string()) {
    text = json.get<std::string>();
  } else if (!json.is_null()) {
    text = json.dump();
  }
  (*out)[prefix] = text;
}

// Settings of a side: several campaigns with different values list them all.
std::map<std::string, std::string> SideSettings(const std::vector<CampaignInfo>& campaigns,
                                                const std::vector<ResultRow>& rows) {
  std::map<std::string, std::set<std::string>> values;
  for (const CampaignInfo& c : campaigns) {
    values["build"].insert(c.record.build);
    values["host"].insert(c.record.host);
    values["sweep spec (sha256)"].insert(c.record.spec_hash.substr(0, 12));
    std::map<std::string, std::string> leaves;
    Flatten(c.record.environment, "", &leaves);
    for (const auto& [key, value] : leaves) values["environment." + key].insert(value);
  }
  for (const ResultRow& row : rows)
    if (!row.device.empty()) values["device"].insert(row.device);
  std::map<std::string, std::string> settings;
  for (const auto& [key, set] : values) {
    std::string joined;
    for (const std::string& v : set) {
      if (!joined.empty()) joined += " | ";
      joined += v;
    }
    if (joined.size() > 120) joined = joined.substr(0, 117) + "...";
    settings[key] = joined;
  }
  return settings;
}

std::vector<CampaignInfo> FindCampaigns(ResultsReader& db, const CampaignSet& set) {
  std::vector<CampaignInfo> all = db.Campaigns(), chosen;
  for (std::int64_t id : set.campaigns) {
    auto it =
        std::find_if(all.begin(), all.end(), [&](const CampaignInfo& c) { return c.id == id; });
    if (it == all.end()) {
      std::string known;
      for (const CampaignInfo& c : all)
        known += fmt::format("{}{} ({})", known.empty() ? "" : ", ", c.id, c.record.sweep_name);
      throw UserError(fmt::format("no campaign {} in {}; known: {}", id, set.db.string(),
                                  known.empty() ? "none" : known));
    }
    chosen.push_back(*it);
  }
  return chosen;
}

// One side's view of a trial: its rows (one per campaign) and its launches.
struct SideTrial {
  std::vector<const ResultRow*> rows;
  std::vector<std::vector<double>> launches;  // ok rows only
  std::vector<long long> sessions;            // the campaign of each launch
  std::string failure;                        // first non-ok status, with its campaign
};

std::map<std::string, SideTrial> LoadSide(ResultsReader& db, const CampaignSet& set,
                                          const std::vector<ResultRow>& rows) {
  std::map<std::string, SideTrial> trials;
  for (std::int64_t campaign : set.campaigns) {
    const std::map<std::string, std::vector<std::vector<double>>> series =
        db.SlowestSeriesByLaunch(campaign, kIterationStage);
    for (const ResultRow& row : rows) {
      if (row.campaign != campaign) continue;
      SideTrial& trial = trials[row.trial_key];
      trial.rows.push_back(&row);
      if (row.status == "ok") {
        // Every replicate of the campaign is a launch of its own.
        auto it = series.find(row.trial_key);
        if (it != series.end())
          for (const std::vector<double>& launch : it->second) {
            trial.launches.push_back(launch);
            trial.sessions.push_back(campaign);  // replicates of a campaign share its session
          }
      } else if (trial.failure.empty()) {
        trial.failure = set.campaigns.size() > 1
                            ? fmt::format("{} (in campaign {})", row.status, campaign)
                            : row.status;
      }
    }
  }
  return trials;
}

// A side's value of metric `name`: SideLatencyMs's estimator over its ok campaigns' values
// (each the median of that campaign's launches) when all are positive, else their median; or
// nothing when one of them has none.
std::optional<double> SideMetric(const SideTrial& side, std::string_view name) {
  std::vector<double> values;
  std::vector<long long> sessions;
  for (const ResultRow* row : side.rows) {
    if (row->status != "ok") continue;
    const std::optional<double> value = MetricValue(*row, name);
    if (!value) return std::nullopt;
    values.push_back(*value);
    sessions.push_back(row->campaign);
  }
  if (values.empty()) return std::nullopt;
  if (std::all_of(values.begin(), values.end(), [](double v) { return v > 0; }))
    return SideLatencyMs(values, sessions);
  return ReduceOverLaunches(LaunchReduction::kMedian, values);
}

// A serving trial's `quantile` of its request latencies on both sides (TailChange), or nothing
// for a trial that does not serve (no row of either side is a serving trial's).
std::optional<TailChange> CompareTail(const SideTrial& a, const SideTrial& b, double quantile) {
  const auto serves = [](const SideTrial& side) {
    return std::any_of(side.rows.begin(), side.rows.end(), [](const ResultRow* row) {
      return row->extra_metrics.contains("requests_per_s");
    });
  };
  if (!serves(a) || !serves(b)) return std::nullopt;
  const auto tail_of = [quantile](const SideTrial& side) {
    std::vector<double> latencies;
    for (const std::vector<double>& launch : side.launches)
      latencies.insert(latencies.end(), launch.begin(), launch.end());
    std::sort(latencies.begin(), latencies.end());
    return QuantileInterval(latencies, quantile);
  };
  TailChange tail{tail_of(a), tail_of(b), ""};
  if (!tail.a.bounded || !tail.b.bounded)
    tail.verdict = "not bounded";
  else if (tail.b.high < tail.a.low)
    tail.verdict = "faster";
  else if (tail.b.low > tail.a.high)
    tail.verdict = "slower";
  else
    tail.verdict = "inconclusive";
  return tail;
}

// The metrics compared beside the latency (ComparedMetric): the table's rows shown in compare,
// then the extra metrics of either side; those neither side has are left out.
std::vector<ComparedMetric> CompareMetrics(const SideTrial& a, const SideTrial& b) {
  std::vector<const ResultRow*> rows = a.rows;
  rows.insert(rows.end(), b.rows.begin(), b.rows.end());
  std::vector<std::string> names;
  for (const MetricInfo* m : MetricsShownIn(kShownInCompare))
    if (m->name != "latency_ms") names.emplace_back(m->name);  // the change itself
  for (const std::string& name : ExtraMetricNames(rows, kShownInCompare))
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  std::vector<ComparedMetric> metrics;
  for (const std::string& name : names) {
    ComparedMetric metric{name, MetricDisplay(rows, name), SideMetric(a, name), SideMetric(b, name),
                          std::nullopt};
    if (const MetricInfo* info = FindMetric(name); info && info->compare_quantile > 0)
      metric.verdict = CompareTail(a, b, info->compare_quantile);
    if (metric.a || metric.b || metric.verdict) metrics.push_back(std::move(metric));
  }
  return metrics;
}

// The settings that differ between the sides: the ones a performance engineer looks at first,
// then the rest alphabetically.
std::vector<SettingDifference> SettingDifferences(const std::vector<CampaignInfo>& a_campaigns,
                                                  const std::vector<ResultRow>& a_rows,
                                                  const std::vector<CampaignInfo>& b_campaigns,
                                                  const std::vector<ResultRow>& b_rows) {
  std::vector<SettingDifference> differences;
  const auto a_settings = SideSettings(a_campaigns, a_rows);
  const auto b_settings = SideSettings(b_campaigns, b_rows);
  std::set<std::string> keys;
  for (const auto& [key, value] : a_settings) keys.insert(key);
  for (const auto& [key, value] : b_settings) keys.insert(key);
  for (const std::string& key : keys) {
    auto ia = a_settings.find(key), ib = b_settings.find(key);
    const std::string va = ia == a_settings.end() ? "(none)" : ia->second;
    const std::string vb = ib == b_settings.end() ? "(none)" : ib->second;
    if (va != vb) differences.push_back({key, va, vb});
  }
  const std::vector<std::string> first = {"build", "device", "host", "sweep spec (sha256)"};
  std::stable_sort(differences.begin(), differences.end(),
                   [&](const SettingDifference& x, const SettingDifference& y) {
                     auto rank = [&](const std::string& s) {
                       return std::find(first.begin(), first.end(), s) - first.begin();
                     };
                     return rank(x.setting) < rank(y.setting);
                   });
  return differences;
}

// Too few timed iterations on a side for CompareLatency, which then leaves both latencies and
// the change at 0: the sides' real latencies (SideLatencyMs over their launch medians, what
// `query` shows) and their ratio are shown all the same, with no interval (infinite ends: no
// printer shows a +0.0% [+0.0, +0.0]) and the verdict inconclusive. Nothing when a side has a
// latency already, none at all, or one that is not positive.
void ShowTooFewIterations(const SideTrial& a, const SideTrial& b, int min_samples,
                          ComparedTrial* trial) {
  LatencyChange& c = trial->change;
  if (c.a_ms > 0 || c.b_ms > 0) return;
  const auto side = [](const SideTrial& s, std::size_t* count) -> std::optional<double> {
    std::vector<double> medians;
    std::vector<long long> sessions;
    for (std::size_t i = 0; i < s.launches.size(); ++i) {
      const std::vector<double>& launch = s.launches[i];
      if (launch.empty()) continue;
      if (std::any_of(launch.begin(), launch.end(), [](double ms) { return !(ms > 0); }))
        return std::nullopt;
      *count += launch.size();
      medians.push_back(Summarize(launch).median);
      sessions.push_back(s.sessions[i]);
    }
    if (medians.empty()) return std::nullopt;
    return SideLatencyMs(medians, sessions);
  };
  std::size_t a_count = 0, b_count = 0;
  const std::optional<double> a_ms = side(a, &a_count), b_ms = side(b, &b_count);
  if (!a_ms || !b_ms) return;
  if (a_count >= static_cast<std::size_t>(min_samples) &&
      b_count >= static_cast<std::size_t>(min_samples))
    return;
  c.a_ms = *a_ms;
  c.b_ms = *b_ms;
  c.change.pct = (c.b_ms / c.a_ms - 1) * 100;
  c.change.low_pct = -std::numeric_limits<double>::infinity();
  c.change.high_pct = std::numeric_limits<double>::infinity();
  c.verdict = Verdict::kInconclusive;
  trial->too_few =
      fmt::format("too few timed iterations: {} and {}, need {}", a_count, b_count, min_samples);
  c.reason = trial->too_few + " per side; the change is of the medians, with no interval";
}

// Marks a trial measured on a busy machine on either side, and says so in its reason.
void MarkBusy(const SideTrial& a, const SideTrial& b, ComparedTrial* trial) {
  const auto busy_note = [](const SideTrial& side) -> std::optional<std::string> {
    for (const ResultRow* row : side.rows)
      if (row->status == "ok" && row->busy)
        return row->health_note.empty() ? std::string("busy") : row->health_note;
    return std::nullopt;
  };
  const std::optional<std::string> a_note = busy_note(a), b_note = busy_note(b);
  trial->a_busy = a_note.has_value();
  trial->b_busy = b_note.has_value();
  if (!trial->busy()) return;
  trial->busy_note = a_note ? "A: " + *a_note : "";
  if (b_note) trial->busy_note += (a_note ? "; B: " : "B: ") + *b_note;
  trial->change.reason += "; measured on a busy machine (" + trial->busy_note +
                          "): do not trust this verdict, measure again on an idle machine";
}

// Marks a side whose output missed its quality gates, and says so in the reason.
void MarkBelowQuality(const SideTrial& a, const SideTrial& b, ComparedTrial* trial) {
  const auto below = [](const SideTrial& side) -> std::string {
    for (const ResultRow* row : side.rows)
      if (row->status == "ok" && row->below_quality()) return row->quality;
    return "";
  };
  trial->a_below_quality = below(a);
  trial->b_below_quality = below(b);
  for (const auto& [side, verdict] :
       {std::pair{"A", &trial->a_below_quality}, std::pair{"B", &trial->b_below_quality}})
    if (!verdict->empty())
      trial->change.reason += fmt::format("; {} is below quality ({})", side, *verdict);
}

}  // namespace

CampaignSet ParseCampaignSet(std::string_view text, const std::filesystem::path& default_db) {
  CampaignSet set;
  set.text = std::string(text);
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    set.db = default_db;
    set.campaigns = ParseIds(text, text);
  } else {
    if (colon == 0) {
      throw UserError(fmt::format("campaign '{}': empty database path", text));
    }
    set.db = std::string(text.substr(0, colon));
    set.campaigns = ParseIds(text.substr(colon + 1), text);
  }
  return set;
}

namespace {

// How the campaign `id` of the database `db` ran (empty when unknown).
CampaignRun RunOf(const std::vector<CampaignInfo>& campaigns, std::int64_t id,
                  const std::string& db) {
  for (const CampaignInfo& c : campaigns)
    if (c.id == id) return CampaignRunOf(c, db);
  return {};
}

}  // namespace

std::optional<double> ComparedMetric::ratio() const {
  if (!a || !b || *a == 0) return std::nullopt;
  return *b / *a;
}

std::string_view ComparedMetric::Direction() const {
  if (!a || !b || *a == *b || display.better == Better::kNone) return "";
  return (*b < *a) == (display.better == Better::kLower) ? "better" : "worse";
}

std::string_view ComparedMetric::Judgement() const {
  return verdict ? std::string_view(verdict->verdict) : Direction();
}

const ComparedMetric* ComparedTrial::Metric(std::string_view name) const {
  for (const ComparedMetric& metric : metrics)
    if (metric.name == name) return &metric;
  return nullptr;
}

Thresholds DefaultThresholds(bool gpu) {
  Thresholds t;
  t.policy.noise_floor_pct = gpu ? kGpuNoiseFloorPct : kCpuNoiseFloorPct;
  t.policy.min_effect_pct = gpu ? kGpuMinEffectPct : kCpuMinEffectPct;
  t.source = gpu ? "gpu default" : "cpu default";
  return t;
}

std::string Thresholds::Describe() const {
  return fmt::format("{} (noise floor {:.1f}%, minimum effect {:.1f}%)", source,
                     policy.noise_floor_pct, policy.min_effect_pct);
}

std::optional<Thresholds> LearnedThresholds(const std::vector<ResultRow>& rows, bool gpu,
                                            const std::vector<std::int64_t>& excluded) {
  // Group the usable rows by what makes two of them an A/A pair: key, build, device. A row
  // measured on a busy machine says nothing about the quiet machine's noise.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> groups;
  int left_out = 0;
  for (const ResultRow& row : rows) {
    if (!row.measured() || *row.latency_ms <= 0 || IsGpu(row.device) != gpu) continue;
    if (std::find(excluded.begin(), excluded.end(), row.campaign) != excluded.end()) continue;
    if (row.busy) {
      ++left_out;
      continue;
    }
    groups[{row.trial_key, row.build, row.device}].push_back(*row.latency_ms);
  }
  std::vector<double> changes;
  for (auto& [group, latencies] : groups) {
    // An outlier (a measurement kOutlierFactor off the median of its trial's, which takes at
    // least 3 to tell which one is off) is a disturbance, not noise.
    if (latencies.size() >= 3) {
      const double median = Summarize(latencies).median;
      const auto kept_end = std::remove_if(latencies.begin(), latencies.end(), [&](double v) {
        return std::abs(std::log(v / median)) > std::log(kOutlierFactor);
      });
      left_out += static_cast<int>(latencies.end() - kept_end);
      latencies.erase(kept_end, latencies.end());
    }
    for (std::size_t i = 0; i < latencies.size(); ++i)
      for (std::size_t j = i + 1; j < latencies.size(); ++j)
        changes.push_back(std::abs(std::log(latencies[j] / latencies[i])));
  }
  if (changes.size() < static_cast<std::size_t>(kMinAaPairs)) return std::nullopt;
  std::sort(changes.begin(), changes.end());
  Thresholds t = DefaultThresholds(gpu);
  const double cap = kLearnedFloorCap * t.policy.noise_floor_pct;
  const double learned = std::expm1(Quantile(changes, kLearnedFloorQuantile)) * 100;
  t.policy.noise_floor_pct = std::clamp(learned, kLearnedFloorMinPct, cap);
  t.policy.min_effect_pct = std::min(t.policy.min_effect_pct, t.policy.noise_floor_pct);
  t.source = fmt::format("learned from {} A/A pairs", changes.size());
  if (left_out > 0)
    t.source += fmt::format(" ({} measurement{} left out: busy or outlier)", left_out,
                            left_out == 1 ? "" : "s");
  if (learned > cap) t.source += fmt::format(", capped at {:.1f}% ({:.1f}% learned)", cap, learned);
  return t;
}

Comparison CompareCampaigns(ResultsReader& a_db, const CampaignSet& a, ResultsReader& b_db,
                            const CampaignSet& b, const CompareSettings& settings,
                            SelfcheckStore* a_checks, SelfcheckStore* b_checks) {
  Comparison comparison{a, b, {}, {}, {}, {}, {}, {}};
  const std::vector<CampaignInfo> a_campaigns = FindCampaigns(a_db, a);
  const std::vector<CampaignInfo> b_campaigns = FindCampaigns(b_db, b);
  for (const CampaignInfo& c : a_campaigns)
    comparison.a_label += (comparison.a_label.empty() ? "" : ", ") + CampaignLabel(c);
  for (const CampaignInfo& c : b_campaigns)
    comparison.b_label += (comparison.b_label.empty() ? "" : ", ") + CampaignLabel(c);
  const std::vector<ResultRow> a_rows = a_db.Results(a.campaigns);
  const std::vector<ResultRow> b_rows = b_db.Results(b.campaigns);

  comparison.differences = SettingDifferences(a_campaigns, a_rows, b_campaigns, b_rows);
  if (a_checks != nullptr && b_checks != nullptr) {
    for (auto& d : SelfcheckDifferences(SideChecks(*a_checks, a_campaigns, a_rows),
                                        SideChecks(*b_checks, b_campaigns, b_rows)))
      comparison.differences.push_back(std::move(d));
  }

  // Thresholds per device kind: learned from side A's database, else the defaults.
  // Neither excluded campaigns nor `ditbench bisect`'s feed a noise floor (campaign_roles.h).
  const std::set<std::int64_t> answering = AnsweringCampaigns(a_db.Campaigns());
  std::vector<std::int64_t> all_ids(answering.begin(), answering.end()), excluded = a.campaigns;
  if (&a_db == &b_db) excluded.insert(excluded.end(), b.campaigns.begin(), b.campaigns.end());
  const std::vector<ResultRow> history = a_db.Results(all_ids);
  const auto thresholds_for = [&](bool gpu) {
    Thresholds t = LearnedThresholds(history, gpu, excluded).value_or(DefaultThresholds(gpu));
    if (settings.noise_floor_pct || settings.min_effect_pct) t.source = "given";
    if (settings.noise_floor_pct) t.policy.noise_floor_pct = *settings.noise_floor_pct;
    if (settings.min_effect_pct) t.policy.min_effect_pct = *settings.min_effect_pct;
    return t;
  };
  const Thresholds gpu = thresholds_for(true), cpu = thresholds_for(false);

  const std::map<std::string, SideTrial> a_trials = LoadSide(a_db, a, a_rows);
  const std::map<std::string, SideTrial> b_trials = LoadSide(b_db, b, b_rows);
  for (const auto& [key, at] : a_trials) {
    const std::string label = TrialLabel(*at.rows.front());
    auto ib = b_trials.find(key);
    if (ib == b_trials.end()) {
      comparison.unmatched.push_back({key, label, "only in A"});
      continue;
    }
    const SideTrial& bt = ib->second;
    if (at.launches.empty() || bt.launches.empty()) {
      std::string why;
      if (at.launches.empty()) {
        why = "A: ";
        why += at.failure.empty() ? "no samples" : at.failure;
      }
      if (bt.launches.empty()) {
        if (!why.empty()) why += ", ";
        why += "B: ";
        why += bt.failure.empty() ? "no samples" : bt.failure;
      }
      comparison.unmatched.push_back({key, label, why});
      continue;
    }
    const std::string device = bt.rows.front()->device;
    const Thresholds& t = IsGpu(device) ? gpu : cpu;
    ComparedTrial trial;
    trial.trial_key = key;
    trial.label = label;
    trial.device = device;
    trial.change = CompareLatency(at.launches, bt.launches, t.policy, at.sessions, bt.sessions);
    ShowTooFewIterations(at, bt, t.policy.min_samples, &trial);
    trial.thresholds = t.Describe();
    trial.metrics = CompareMetrics(at, bt);
    trial.run = RunOf(b_campaigns, bt.rows.back()->campaign, b_db.path().string());
    comparison.thresholds[IsGpu(device) ? "gpu" : "cpu"] = t;
    MarkBusy(at, bt, &trial);
    MarkBelowQuality(at, bt, &trial);
    comparison.trials.push_back(std::move(trial));
  }
  for (const auto& [key, bt] : b_trials)
    if (!a_trials.count(key))
      comparison.unmatched.push_back({key, TrialLabel(*bt.rows.front()), "only in B"});
  std::stable_sort(comparison.trials.begin(), comparison.trials.end(),
                   [](const ComparedTrial& x, const ComparedTrial& y) {
                     return x.change.change.pct > y.change.change.pct;
                   });
  return comparison;
}

RegressionCheck FindRegressions(const Comparison& comparison, double pct, bool strict) {
  RegressionCheck check;
  for (const ComparedTrial& trial : comparison.trials) {
    if (trial.change.verdict != Verdict::kSlower || !(trial.change.change.pct > pct)) continue;
    (trial.busy() && !strict ? check.skipped_busy : check.regressions).push_back(&trial);
  }
  return check;
}

std::string IntervalText(const ChangeEstimate& change) {
  if (!change.Bounded()) return "data cannot bound it";
  return fmt::format("[{:+.1f}, {:+.1f}] {:.0f}%", change.low_pct, change.high_pct,
                     change.coverage * 100);
}

std::string VerdictText(const ComparedTrial& trial) {
  std::string text = VerdictName(trial.change.verdict);
  if (!trial.too_few.empty()) text += " (" + trial.too_few + ")";
  for (const ComparedMetric& metric : trial.metrics) {
    if (!metric.verdict) continue;  // "p95 slower": the metric's name without its unit
    const std::string_view name = metric.name;
    text += fmt::format(", {} {}", name.substr(0, name.rfind("_ms")), metric.verdict->verdict);
  }
  if (trial.busy()) text += ", busy " + trial.BusySides();
  if (!trial.BelowQualitySides().empty()) text += ", below quality " + trial.BelowQualitySides();
  return text;
}

std::string NoiseFloorHeadline(const Comparison& comparison) {
  std::string text;
  for (const auto& [kind, t] : comparison.thresholds) {
    text += text.empty() ? "noise floor " : ", ";
    if (comparison.thresholds.size() > 1) text += kind + " ";
    text += fmt::format("{:.1f}% ({})", t.policy.noise_floor_pct, t.source);
  }
  return text;
}

std::string ComparedTrial::BelowQualitySides() const {
  const bool a = !a_below_quality.empty(), b = !b_below_quality.empty();
  if (a && b) return "A and B";
  return a ? "A" : b ? "B" : "";
}

std::string ComparedTrial::BusySides() const {
  if (a_busy && b_busy) return "A and B";
  return a_busy ? "A" : b_busy ? "B" : "";
}

}  // namespace ditbench
