#include "report/history_output.h"

#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/table_printers.h"
#include "base/terminal_text.h"
#include "report/history_section.h"
#include "storage/iso_time.h"

namespace ditbench {
namespace {

std::string Ms(double ms) { return fmt::format("{:.3f}", ms); }

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
    const HistoryPoint& first = key.points.front();
    out << fmt::format("  {}latest {} ms (campaign {}, build {}), {} campaign{}, noise {:.1f}%{}\n",
                       history.metric == "latency_ms" ? "" : history.metric + ": ",
                       Ms(latest.latency_ms), latest.campaign, ForTerminal(latest.build),
                       key.points.size(), key.points.size() == 1 ? "" : "s", key.noise_pct,
                       key.noise_from_intervals ? " (the measurements' own spread)" : "");
    out << fmt::format(
        "  first -> latest: {} -> {} ms ({:+.1f}%), campaign {} -> {}; level "
        "change {:+.1f}% (the fitted level of the latest segment against the "
        "first's)\n",
        Ms(first.latency_ms), Ms(latest.latency_ms), key.first_to_latest_pct, first.campaign,
        latest.campaign, key.level_change_pct);
    for (const HistoryChange& change : key.changes) out << "  change: " << ChangeText(change) << "\n";
    for (const std::string& note : HistoryNotes(key)) out << "  " << note << "\n";
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

// One row per point; the text is made safe for a terminal, since CSV is often read in one.
void WriteCsv(const History& history, std::ostream& out) {
  const Column ms{.name = "", .hint = ColumnHint::kMs, .decimals = 3, .data_decimals = 3};
  const Column pct{.name = "", .hint = ColumnHint::kPercent, .decimals = 2, .data_decimals = 2};
  auto named = [](Column column, const char* name) {
    column.name = name;
    return column;
  };
  Table table({{.name = "sweep"},
               {.name = "trial_key"},
               {.name = "campaign", .hint = ColumnHint::kCount},
               {.name = "started_at"},
               {.name = "build"},
               named(ms, history.metric.c_str()),
               named(ms, "ci_low_ms"),
               named(ms, "ci_high_ms"),
               {.name = "launches", .hint = ColumnHint::kCount},
               {.name = "busy", .hint = ColumnHint::kCount},
               {.name = "use"},
               named(ms, "level_ms"),
               named(pct, "change_pct"),
               named(pct, "change_low_pct"),
               named(pct, "change_high_pct")});
  auto optional = [](const std::optional<double>& value) { return value ? Cell(*value) : Cell(); };
  for (const KeyHistory& key : history.keys) {
    for (const HistoryPoint& p : key.points) {
      const HistoryChange* change = nullptr;
      for (const HistoryChange& c : key.changes)
        if (c.first_bad == p.campaign) change = &c;
      table.AddRow({ForTerminal(key.sweep), ForTerminal(key.trial_key), p.campaign,
                    IsoUtc(p.started_at), ForTerminal(p.build), p.latency_ms, optional(p.ci_low_ms),
                    optional(p.ci_high_ms), p.launches, p.busy ? 1 : 0,
                    std::string(PointUseName(p.use)), p.level_ms,
                    change ? Cell(change->change.pct) : Cell(),
                    change ? Cell(change->change.low_pct) : Cell(),
                    change ? Cell(change->change.high_pct) : Cell()});
    }
  }
  PrintCsv(table, out, {.line_end = "\n"});
}

// One row per trial key: its first and latest measurement and their change, the fitted level's
// change, the noise and the change points; a number from a busy measurement says so.
// HistoryNotes in one cell.
std::string Notes(const KeyHistory& key) {
  std::string text;
  for (const std::string& note : HistoryNotes(key)) text += (text.empty() ? "" : "; ") + note;
  return text;
}

Table KeyTable(const History& history) {
  Table table(
      {{.name = "sweep"},
       {.name = "trial key"},
       {.name = "configuration"},
       {.name = "campaigns", .hint = ColumnHint::kCount},
       {.name = "first ms", .hint = ColumnHint::kMs, .decimals = 3, .notes = true},
       {.name = "latest ms", .hint = ColumnHint::kMs, .decimals = 3, .notes = true},
       {.name = "first to latest", .hint = ColumnHint::kPercent, .sign = true, .notes = true},
       {.name = "level change", .hint = ColumnHint::kPercent, .sign = true, .notes = true},
       {.name = "noise", .hint = ColumnHint::kPercent},
       {.name = "change points", .hint = ColumnHint::kCount},
       {.name = "notes"}});
  for (const KeyHistory& key : history.keys) {
    const HistoryPoint& first = key.points.front();
    const HistoryPoint& latest = key.points.back();
    const std::string busy = "busy";
    table.AddRow({key.sweep, key.trial_key, key.label, key.points.size(),
                  Cell(first.latency_ms, first.busy ? busy : ""),
                  Cell(latest.latency_ms, latest.busy ? busy : ""),
                  Cell(key.first_to_latest_pct, first.busy || latest.busy ? busy : ""),
                  Cell(key.level_change_pct, key.busy_used ? "busy points used" : ""),
                  key.noise_pct, key.changes.size(), Notes(key)});
  }
  return table;
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

namespace {

void WriteJson(const History& history, std::ostream& out) {
  nlohmann::json json = {
      {"format", "ditbench-history"},           {"version", kHistoryFormatVersion},
      {"campaigns", nlohmann::json::array()},   {"excluded_campaigns", history.excluded},
      {"bisect_campaigns", history.bisections}, {"metric", history.metric},
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
                        {"first_ms", key.points.front().latency_ms},
                        {"first_to_latest_pct", key.first_to_latest_pct},
                        {"level_change_pct", key.level_change_pct},
                        {"trend_pct", key.level_change_pct},  // version 1's name for it
                        {"noise_pct", key.noise_pct},
                        {"noise_from_intervals", key.noise_from_intervals},
                        {"edges", nlohmann::json::array()},
                        {"notes", HistoryNotes(key)},
                        {"busy_used", key.busy_used},
                        {"thresholds", key.thresholds},
                        {"points", nlohmann::json::array()},
                        {"changes", nlohmann::json::array()}};
    for (const HistoryPoint& p : key.points)
      k["points"].push_back({{"campaign", p.campaign},
                             {"started_at", IsoUtc(p.started_at)},
                             {"build", p.build},
                             {history.metric, p.latency_ms},
                             {"ci_low_ms", Optional(p.ci_low_ms)},
                             {"ci_high_ms", Optional(p.ci_high_ms)},
                             {"launches", p.launches},
                             {"busy", p.busy},
                             {"use", PointUseName(p.use)},
                             {"level_ms", p.level_ms}});
    for (const HistoryEdge& e : key.edges)
      k["edges"].push_back({{"campaign", e.campaign}, {"latest", e.latest}, {"pct", e.pct}});
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

}  // namespace

void WriteHistory(const History& history, TableFormat format, std::ostream& out) {
  PrintAs(
      format,
      {{TableFormat::kText, [&](std::ostream& o) { WriteTable(history, o); }},
       {TableFormat::kCsv, [&](std::ostream& o) { WriteCsv(history, o); }},
       {TableFormat::kJson, [&](std::ostream& o) { WriteJson(history, o); }},
       {TableFormat::kHtml, [&](std::ostream& o) { o << RenderHistoryPage(history); }}},
      [&] { return KeyTable(history); }, out);
}

}  // namespace ditbench
