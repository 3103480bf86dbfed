#include "report/history_output.h"

#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "base/user_error.h"
#include "report/history_section.h"
#include "storage/iso_time.h"

namespace ditbench {
namespace {

std::string Ms(double ms) { return fmt::format("{:.3f}", ms); }

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string Ids(const std::vector<std::int64_t>& ids) {
  std::string text;
  for (std::int64_t id : ids) text += fmt::format("{}{}", text.empty() ? "" : ", ", id);
  return text;
}

void WriteTable(const History& history, std::ostream& out) {
  out << fmt::format("{} campaign{}", history.campaigns.size(),
                     history.campaigns.size() == 1 ? "" : "s");
  if (history.excluded > 0) out << fmt::format(" ({} excluded)", history.excluded);
  if (history.bisections > 0)
    out << fmt::format(" ({} of `ditbench bisect` left out)", history.bisections);
  out << fmt::format(", {} trial key{}\n", history.keys.size(),
                     history.keys.size() == 1 ? "" : "s");
  std::size_t changed = 0;
  for (const KeyHistory& key : history.keys) changed += key.changes.empty() ? 0 : 1;
  out << fmt::format("{} with change points\n", changed);
  for (const KeyHistory& key : history.keys) {
    const HistoryPoint& latest = key.points.back();
    out << fmt::format("\n{}  {}  [{}]\n", ForTerminal(key.trial_key), ForTerminal(key.label),
                       ForTerminal(key.sweep));
    out << fmt::format("  latest {} ms (campaign {}, build {}), {} campaign{}, trend {:+.1f}% "
                       "since campaign {}, noise {:.1f}%\n",
                       Ms(latest.latency_ms), latest.campaign, ForTerminal(latest.build),
                       key.points.size(),
                       key.points.size() == 1 ? "" : "s", key.trend_pct,
                       key.points.front().campaign, key.noise_pct);
    if (key.changes.empty()) out << "  no change point\n";
    for (const HistoryChange& change : key.changes) out << "  change: " << ChangeText(change) << "\n";
    std::vector<std::int64_t> busy, disturbed;
    for (const HistoryPoint& p : key.points) {
      if (p.use == PointUse::kBusy) busy.push_back(p.campaign);
      if (p.use == PointUse::kDisturbed) disturbed.push_back(p.campaign);
    }
    if (!busy.empty()) out << "  busy (left out): campaigns " << Ids(busy) << "\n";
    if (key.busy_used)
      out << "  most campaigns were measured on a busy machine: busy ones took part\n";
    if (!disturbed.empty())
      out << "  disturbed (left out): campaigns " << Ids(disturbed) << "\n";
  }
}

void WriteCsv(const History& history, std::ostream& out) {
  out << "sweep,trial_key,campaign,started_at,build,latency_ms,ci_low_ms,ci_high_ms,launches,"
         "busy,use,level_ms,change_pct,change_low_pct,change_high_pct\n";
  for (const KeyHistory& key : history.keys) {
    for (const HistoryPoint& p : key.points) {
      const HistoryChange* change = nullptr;
      for (const HistoryChange& c : key.changes)
        if (c.first_bad == p.campaign) change = &c;
      out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                         CsvField(ForTerminal(key.sweep)), CsvField(ForTerminal(key.trial_key)),
                         p.campaign, IsoUtc(p.started_at), CsvField(ForTerminal(p.build)),
                         Ms(p.latency_ms), p.ci_low_ms ? Ms(*p.ci_low_ms) : "",
                         p.ci_high_ms ? Ms(*p.ci_high_ms) : "", p.launches, p.busy ? 1 : 0,
                         PointUseName(p.use), Ms(p.level_ms),
                         change ? fmt::format("{:.2f}", change->change.pct) : "",
                         change ? fmt::format("{:.2f}", change->change.low_pct) : "",
                         change ? fmt::format("{:.2f}", change->change.high_pct) : "");
    }
  }
}

nlohmann::json Optional(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

}  // namespace

std::string ChangeText(const HistoryChange& change) {
  std::string text = fmt::format("campaign {} (build {}) -> campaign {} (build {}): {:+.1f}% {}",
                                 change.last_good, ForTerminal(change.good_build),
                                 change.first_bad, ForTerminal(change.bad_build),
                                 change.change.pct, IntervalText(change.change));
  if (!change.skipped.empty())
    text += fmt::format("; left out between them: campaigns {}", Ids(change.skipped));
  std::string also;
  for (const SettingDifference& d : change.environment)
    also += fmt::format("{}{} {} -> {}", also.empty() ? "" : ", ", ForTerminal(d.setting),
                        ForTerminal(d.a), ForTerminal(d.b));
  return text + (also.empty() ? "; nothing else changed in the environment"
                              : "; also changed: " + also);
}

void WriteHistory(const History& history, const std::string& format, std::ostream& out) {
  if (format == "table") return WriteTable(history, out);
  if (format == "csv") return WriteCsv(history, out);
  if (format == "html") {
    out << RenderHistoryPage(history);
    return;
  }
  if (format != "json") {
    throw UserError(
        fmt::format("unknown --format '{}'; valid formats: table, csv, json, html", format));
  }
  nlohmann::json json = {{"format", "ditbench-history"},
                         {"version", kHistoryFormatVersion},
                         {"campaigns", nlohmann::json::array()},
                         {"excluded_campaigns", history.excluded},
                         {"bisect_campaigns", history.bisections},
                         {"keys", nlohmann::json::array()}};
  for (const CampaignInfo& c : history.campaigns)
    json["campaigns"].push_back({{"id", c.id},
                                 {"sweep", c.record.sweep_name},
                                 {"started_at", IsoUtc(c.started_at)},
                                 {"build", CampaignBuild(c)},
                                 {"label", c.label},
                                 {"environment", EnvironmentFingerprint(c)}});
  for (const KeyHistory& key : history.keys) {
    nlohmann::json k = {{"sweep", key.sweep},
                        {"trial_key", key.trial_key},
                        {"label", key.label},
                        {"device", key.device},
                        {"latest_ms", key.points.back().latency_ms},
                        {"trend_pct", key.trend_pct},
                        {"noise_pct", key.noise_pct},
                        {"busy_used", key.busy_used},
                        {"thresholds", key.thresholds},
                        {"points", nlohmann::json::array()},
                        {"changes", nlohmann::json::array()}};
    for (const HistoryPoint& p : key.points)
      k["points"].push_back({{"campaign", p.campaign},
                             {"started_at", IsoUtc(p.started_at)},
                             {"build", p.build},
                             {"latency_ms", p.latency_ms},
                             {"ci_low_ms", Optional(p.ci_low_ms)},
                             {"ci_high_ms", Optional(p.ci_high_ms)},
                             {"launches", p.launches},
                             {"busy", p.busy},
                             {"use", PointUseName(p.use)},
                             {"level_ms", p.level_ms}});
    for (const HistoryChange& c : key.changes) {
      nlohmann::json environment = nlohmann::json::array();
      for (const SettingDifference& d : c.environment)
        environment.push_back({{"setting", d.setting}, {"before", d.a}, {"after", d.b}});
      const bool bounded = c.change.Bounded();
      k["changes"].push_back({{"last_good", c.last_good},
                              {"first_bad", c.first_bad},
                              {"good_build", c.good_build},
                              {"bad_build", c.bad_build},
                              {"change_pct", c.change.pct},
                              {"ci_low_pct", bounded ? nlohmann::json(c.change.low_pct)
                                                     : nlohmann::json()},
                              {"ci_high_pct", bounded ? nlohmann::json(c.change.high_pct)
                                                      : nlohmann::json()},
                              {"ci_coverage", c.change.coverage},
                              {"skipped", c.skipped},
                              {"campaigns_since", c.campaigns_since},
                              {"environment", environment}});
    }
    json["keys"].push_back(std::move(k));
  }
  out << json.dump(2) << "\n";
}

}  // namespace ditbench
