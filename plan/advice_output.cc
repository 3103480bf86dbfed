#include "plan/advice_output.h"

#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/configuration_group.h"
#include "base/table_printers.h"

namespace ditbench {
namespace {

// "measured", "measured (busy)" (only on a busy machine: its number carries the slowdown) or
// "predicted".
std::string Source(const AdvisedTrial& t) {
  if (!t.measured) return "predicted";
  return t.busy ? "measured (busy)" : "measured";
}

// The measured speedup against its 1-rank reference with its doubts as its note: "14.85x
// (busy, borrowed baseline)" where a person reads it, "speedup_note" in a data format; the
// reference named first where it is not the trial's own computation ("2.50x (vs 1 rank without
// cache)"); none when unmeasured.
Cell SpeedupCell(const AdvisedTrial& t) {
  if (!t.speedup) return Cell();
  const bool own = t.speedup_reference.empty() || t.speedup_reference == "1 rank";
  std::string note = own ? "" : "vs " + t.speedup_reference;
  if (!t.speedup_trust.empty()) note += (note.empty() ? "" : ", ") + t.speedup_trust;
  return Cell(*t.speedup, note);
}

std::string Value(const CostPrediction& p, bool measured) {
  if (measured) return fmt::format("{:.4g}", p.value);
  return fmt::format("{:.4g} [{:.4g}, {:.4g}]", p.value, p.low, p.high);
}

nlohmann::json Json(const CostPrediction& p) {
  return {{"value", p.value}, {"low", p.low}, {"high", p.high}};
}

// A group's ranked trials, leader first, then its excluded ones (their reason in the objective
// column): what the table shows under the group and Markdown in rows of its own.
std::vector<Column> AdviceColumns(const Advice& advice) {
  return {{.name = "rank", .hint = ColumnHint::kCount, .min_width = 4},
          {.name = "trial", .min_width = 16},
          {.name = "layout", .min_width = 28},
          {.name = std::string(ObjectiveName(advice.objective)) + " [95% interval]",
           .min_width = 36,
           .gap = 1},
          {.name = "source", .align = Align::kRight, .min_width = 15, .gap = 1},
          {.name = "P(beats leader)", .min_width = 16},
          {.name = "speedup", .hint = ColumnHint::kRatio, .notes = true}};
}

std::vector<std::vector<Cell>> AdviceRows(const GroupAdvice& g) {
  std::vector<std::vector<Cell>> rows;
  for (std::size_t i = 0; i < g.ranked.size(); ++i) {
    const AdvisedTrial& t = g.ranked[i];
    rows.push_back({i + 1, t.trial->key, ConfigurationLabel(t.trial->config),
                    Value(t.objective, t.measured), Source(t),
                    i == 0 ? std::string("leader") : fmt::format("{:.0f}%", t.p_beats_leader * 100),
                    SpeedupCell(t)});
  }
  for (const AdvisedTrial& t : g.excluded) {
    rows.push_back(
        {"", t.trial->key, ConfigurationLabel(t.trial->config),
         "excluded: " + (IsBelowQuality(t.quality) ? t.quality + " (below quality)"
                         : t.quality.starts_with(kQualityUnchecked)
                             ? t.quality
                             : fmt::format("output error {:.3g}", t.output_error.value_or(0))),
         "", "", SpeedupCell(t)});
  }
  return rows;
}

}  // namespace

void WriteAdviceTable(const Advice& advice, std::ostream& out) {
  out << "objective: " << ObjectiveName(advice.objective) << " (" << ObjectiveUnit(advice.objective)
      << "); " << advice.estimates_from << "\n";
  for (const GroupAdvice& g : advice.groups) {
    out << "\n" << (g.label.empty() ? g.group : g.label) << "\n";
    if (g.ranked.empty()) {
      out << "  no trial to rank\n";
      continue;
    }
    Table table(AdviceColumns(advice));
    for (std::vector<Cell>& row : AdviceRows(g)) table.AddRow(std::move(row));
    PrintText(table, out, {.indent = "  "});
    const AdvisedTrial& lead = g.ranked.front();
    out << fmt::format("  recommendation: {} ({}, {})", ConfigurationLabel(lead.trial->config),
                       lead.trial->key, Source(lead));
    if (g.regret)
      out << fmt::format("; regret against the best measured trial {:+.1f}%", *g.regret * 100);
    else
      out << "; nothing measured yet";
    out << "\n";
    if (g.decided) {
      out << "  decided: the leader is measured and no other interval overlaps it\n";
    } else {
      out << "  measure next:";
      for (std::size_t i : g.to_measure)
        out << fmt::format(" {} ({}{})", g.ranked[i].trial->key,
                           ConfigurationLabel(g.ranked[i].trial->config),
                           g.ranked[i].busy ? ", again on a quiet machine" : "");
      out << "\n";
    }
  }
}

namespace {

Table AdviceTable(const Advice& advice) {
  std::vector<Column> columns = AdviceColumns(advice);
  columns.insert(columns.begin(), Column{.name = "group"});
  Table table(std::move(columns));
  for (const GroupAdvice& g : advice.groups) {
    for (std::vector<Cell>& row : AdviceRows(g)) {
      row.insert(row.begin(), g.label.empty() ? g.group : g.label);
      table.AddRow(std::move(row));
    }
  }
  return table;
}

}  // namespace

void WriteAdvice(const Advice& advice, TableFormat format, const std::string& sweep,
                 const std::string& device, std::ostream& out) {
  PrintAs(
      format,
      {{TableFormat::kText, [&](std::ostream& o) { WriteAdviceTable(advice, o); }},
       {TableFormat::kJson, [&](std::ostream& o) { WriteAdviceJson(advice, sweep, device, o); }}},
      [&] { return AdviceTable(advice); }, out);
}

void WriteAdviceJson(const Advice& advice, const std::string& sweep, const std::string& device,
                     std::ostream& out) {
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupAdvice& g : advice.groups) {
    nlohmann::json ranked = nlohmann::json::array(), excluded = nlohmann::json::array();
    const auto entry = [&](const AdvisedTrial& t) {
      nlohmann::json j = {{"trial_key", t.trial->key},
                          {"layout", ConfigurationLabel(t.trial->config)},
                          {"world_size", t.trial->config.world_size()},
                          {"source", Source(t)},
                          {"latency_ms", Json(t.latency_ms)},
                          {"objective", Json(t.objective)},
                          {"p_beats_leader", t.p_beats_leader}};
      if (t.output_error) j["output_error"] = *t.output_error;
      if (t.speedup) j["speedup"] = *t.speedup;
      if (!t.speedup_trust.empty()) j["speedup_trust"] = t.speedup_trust;
      if (t.speedup) j["speedup_reference"] = t.speedup_reference;
      if (!t.quality.empty()) j["quality"] = t.quality;
      return j;
    };
    for (const AdvisedTrial& t : g.ranked) ranked.push_back(entry(t));
    for (const AdvisedTrial& t : g.excluded) excluded.push_back(entry(t));
    nlohmann::json to_measure = nlohmann::json::array();
    for (std::size_t i : g.to_measure) to_measure.push_back(g.ranked[i].trial->key);
    groups.push_back({{"group", g.group},
                      {"label", g.label},
                      {"ranked", ranked},
                      {"excluded", excluded},
                      {"recommendation", g.ranked.empty() ? nlohmann::json()
                                                          : nlohmann::json(g.ranked[0].trial->key)},
                      {"regret", g.regret ? nlohmann::json(*g.regret) : nlohmann::json()},
                      {"measure_next", to_measure},
                      {"decided", g.decided}});
  }
  out << nlohmann::json{{"format", "ditbench-advice"},
                        {"version", 1},
                        {"sweep", sweep},
                        {"device", device},
                        {"objective", ObjectiveName(advice.objective)},
                        {"unit", ObjectiveUnit(advice.objective)},
                        {"estimates_from", advice.estimates_from},
                        {"groups", groups}}
             .dump(2)
      << "\n";
}

}  // namespace ditbench
