#include "report/comparison_output.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/row_metrics.h"
#include "base/table_printers.h"
#include "base/terminal_text.h"
#include "report/comparison_html.h"

namespace ditbench {
namespace {

// Energy per image of each side and their ratio, from the compared metric (positive values
// only): CSV's and JSON's columns a_joules_per_image, b_joules_per_image and energy_ratio, kept
// for scripts that read them; every metric is also in JSON's "metrics".
struct EnergyColumns {
  std::optional<double> a, b, ratio;
};
EnergyColumns EnergyOf(const ComparedTrial& t) {
  const ComparedMetric* metric = t.Metric("joules_per_image");
  if (!metric) return {};
  const auto positive = [](std::optional<double> v) { return v && *v > 0 ? v : std::nullopt; };
  EnergyColumns energy{positive(metric->a), positive(metric->b), std::nullopt};
  if (energy.a && energy.b) energy.ratio = *energy.b / *energy.a;
  return energy;
}

// A CSV number as compare has always written it: six significant digits, "" for none.
Cell SixDigits(const std::optional<double>& value) {
  return value ? Cell(fmt::format("{:.6g}", *value)) : Cell();
}

nlohmann::json OptionalJson(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

// The compared metrics (ComparedTrial::metrics), one line per trial and metric, each value
// formatted by its hint, with the verdict its row draws (p95_ms) or its direction.
void WriteOtherMetrics(const Comparison& comparison, std::ostream& out) {
  bool header = false;
  for (const ComparedTrial& t : comparison.trials) {
    for (const ComparedMetric& m : t.metrics) {
      if (!header) {
        out << fmt::format("\nOther metrics:\n{:<24} {:>12} {:>12} {:>8} {:<7} {:<16}  {}\n",
                           "metric", "A", "B", "B / A", "B is", "trial key", "configuration");
        header = true;
      }
      // A side measured on a busy machine says so beside its value, as its latency does.
      const auto value = [&](const std::optional<double>& v, bool busy) {
        return v ? FormatMetric(*v, m.display.hint) + (busy ? " (busy)" : "") : std::string("-");
      };
      out << fmt::format("{:<24} {:>12} {:>12} {:>8} {:<7} {:<16}  {}\n",
                         ForTerminal(MetricHeader(m.name, m.display)), value(m.a, t.a_busy),
                         value(m.b, t.b_busy), m.ratio() ? fmt::format("{:.3f}", *m.ratio()) : "-",
                         m.Judgement(), ForTerminal(t.trial_key), ForTerminal(t.label));
    }
  }
  if (header)
    out << "A, B: each side's value as `ditbench query` shows it, the geometric mean over a "
           "side's campaigns. B is: the verdict the metric table draws for the metric (a "
           "serving trial's p95: by the sides' order-statistic intervals over their pooled "
           "requests), else better or worse by its direction (none declared: no word).\n";
}

// Every compared metric of a trial by name: {"a", "b", "ratio", "better"}.
nlohmann::json MetricsJson(const ComparedTrial& t) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const ComparedMetric& m : t.metrics)
    metrics[m.name] = {
        {"a", OptionalJson(m.a)},
        {"b", OptionalJson(m.b)},
        {"ratio", OptionalJson(m.ratio())},
        {"unit", m.display.unit},
        {"better", std::string(BetterName(m.display.better))},
        {"verdict", m.verdict ? nlohmann::json(m.verdict->verdict) : nlohmann::json()}};
  return metrics;
}

std::string SideText(const CampaignSet& side) {
  std::string ids;
  for (std::int64_t id : side.campaigns) {
    if (!ids.empty()) ids += ',';
    ids += std::to_string(id);
  }
  return fmt::format("campaign{} {} in {}", side.campaigns.size() > 1 ? "s" : "", ids,
                     side.db.string());
}

// The matched trials, sorted by change: what the table and Markdown show.
Table TrialTable(const Comparison& comparison) {
  Table table(
      {{.name = "verdict", .min_width = 12},
       {.name = "change", .hint = ColumnHint::kPercent, .sign = true, .min_width = 8, .gap = 1},
       {.name = "interval (%)", .align = Align::kRight, .min_width = 20, .gap = 1},
       {.name = "A ms",
        .hint = ColumnHint::kMs,
        .decimals = 3,
        .notes = true,
        .min_width = 10,
        .gap = 1},
       {.name = "B ms",
        .hint = ColumnHint::kMs,
        .decimals = 3,
        .notes = true,
        .min_width = 10,
        .gap = 1},
       {.name = "launches", .align = Align::kRight, .min_width = 8, .gap = 1},
       {.name = "trial key", .min_width = 16},
       {.name = "configuration"}});
  for (const ComparedTrial& t : comparison.trials) {
    const LatencyChange& c = t.change;
    // A side measured on a busy machine: its figure says so in every format.
    table.AddRow({VerdictText(t), c.change.pct, IntervalText(c.change),
                  Cell(c.a_ms, t.a_busy ? "busy" : ""), Cell(c.b_ms, t.b_busy ? "busy" : ""),
                  fmt::format("{}/{}", c.a_launches, c.b_launches), t.trial_key, t.label});
  }
  return table;
}

// "Matched trials: 4 (1 slower, 3 same); noise floor 5.0% (per device)": the headline.
std::string Headline(const Comparison& comparison) {
  std::map<std::string, int> counts;
  for (const ComparedTrial& t : comparison.trials) ++counts[VerdictName(t.change.verdict)];
  std::string summary;
  for (const char* v : {"slower", "faster", "same", "inconclusive"})
    if (counts[v]) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", counts[v], v);
  const std::string floor = NoiseFloorHeadline(comparison);
  return fmt::format("Matched trials: {}{}{}", comparison.trials.size(),
                     summary.empty() ? "" : " (" + summary + ")",
                     floor.empty() ? "" : "; " + floor);
}

// The trials measured on one side only (or failed on one), and why.
Table UnmatchedTable(const Comparison& comparison) {
  Table unmatched({{.name = "trial key", .min_width = 16},
                   {.name = "why", .min_width = 28},
                   {.name = "configuration"}});
  for (const UnmatchedTrial& u : comparison.unmatched)
    unmatched.AddRow({u.trial_key, u.why, u.label});
  return unmatched;
}

// The sides, the headline with the noise floor, the matched trials, the unmatched ones: what
// the table shows first, as Markdown.
void WriteMarkdown(const Comparison& comparison, std::ostream& out) {
  out << "A: " << MarkdownText(SideText(comparison.a))
      << "  \nB: " << MarkdownText(SideText(comparison.b)) << "\n\n"
      << MarkdownText(Headline(comparison)) << "\n\n";
  if (!comparison.trials.empty()) PrintMarkdown(TrialTable(comparison), out);
  if (!comparison.unmatched.empty()) {
    out << fmt::format("\nUnmatched trials: {}\n\n", comparison.unmatched.size());
    PrintMarkdown(UnmatchedTable(comparison), out);
  }
}

void WriteTable(const Comparison& comparison, std::ostream& out) {
  out << "A: " << SideText(comparison.a) << "\nB: " << SideText(comparison.b) << "\n\n";
  if (comparison.differences.empty()) {
    out << "A and B have the same build, device, host and environment.\n\n";
  } else {
    std::size_t width = 7;
    for (const auto& d : comparison.differences) width = std::max(width, d.setting.size());
    out << "Differences between A and B:\n";
    for (const auto& d : comparison.differences)
      out << fmt::format("  {:<{}}  A: {}\n  {:<{}}  B: {}\n", ForTerminal(d.setting), width,
                         ForTerminal(d.a), "", width, ForTerminal(d.b));
    out << '\n';
  }
  out << Headline(comparison) << '\n';
  if (!comparison.trials.empty()) {
    PrintText(TrialTable(comparison), out);
    out << "change = B ms / A ms - 1; A ms, B ms: the trial's latency_ms as `ditbench query` "
           "shows it (the median of its launch medians), the geometric mean over a side's "
           "campaigns; interval: its confidence, the percentage after it.\n";
  }
  WriteOtherMetrics(comparison, out);
  if (!comparison.unmatched.empty()) {
    out << fmt::format("\nUnmatched trials: {}\n", comparison.unmatched.size());
    PrintText(UnmatchedTable(comparison), out, {.indent = "  ", .header = false});
  }
  std::set<std::string> thresholds, methods;
  for (const ComparedTrial& t : comparison.trials) {
    thresholds.insert(t.thresholds);
    methods.insert(ChangeMethodName(t.change.method));
  }
  if (!thresholds.empty()) {
    out << "\nThresholds: ";
    std::string joined;
    for (const std::string& t : thresholds) {
      if (!joined.empty()) joined += "; ";
      joined += t;
    }
    out << joined << '\n';
  }
  if (std::any_of(comparison.trials.begin(), comparison.trials.end(),
                  [](const ComparedTrial& t) { return t.change.change.CoversLessThan(); })) {
    out << "An interval below 95% is the widest that so few launches allow (3 and 3: 90%, "
           "each end a one-sided 95% bound).\n";
  }
  if (std::any_of(comparison.trials.begin(), comparison.trials.end(),
                  [](const ComparedTrial& t) { return !t.change.change.Bounded(); })) {
    out << fmt::format("\"data cannot bound it\": the interval's ends are more than {:.0f}x "
                       "apart (too few launches, or one far off the others).\n",
                       ChangeEstimate::kMaxBoundedSpan);
  }
  std::vector<const ComparedTrial*> busy;
  for (const ComparedTrial& t : comparison.trials)
    if (t.busy()) busy.push_back(&t);
  if (!busy.empty()) {
    out << fmt::format("{} trial{} measured on a busy machine (\"busy A\", \"busy B\"): do not "
                       "trust {} verdict; --fail-on-regression skips {} unless --strict.\n",
                       busy.size(), busy.size() == 1 ? " was" : "s were",
                       busy.size() == 1 ? "its" : "their", busy.size() == 1 ? "it" : "them");
    for (const ComparedTrial* t : busy)
      out << fmt::format("  {:<16}  {}\n", ForTerminal(t->trial_key),
                         ForTerminal(t->busy_note, kConsoleErrorBytes));
  }
  for (const ComparedTrial& t : comparison.trials)
    for (const auto& [side, verdict] : {std::pair{"A", &t.a_below_quality},
                                        std::pair{"B", &t.b_below_quality}})
      if (!verdict->empty())
        out << fmt::format("  {:<16}  {} is below quality ({}): its output missed the sweep's "
                           "quality gates\n", t.trial_key, side, *verdict);
  if (methods.count("iterations")) {
    out << "Trials with one launch per side are judged on their iterations against the noise "
           "floor (launch-to-launch variation is not visible in one launch); give each side "
           "several campaigns (A = 1,2,3) for the launch-level test.\n";
  }
}

// One row per trial, matched (sorted by change) then unmatched (verdict "unmatched", the
// reason why, the rest empty). Versioned by the header (new columns only appended).
Table CsvTable(const Comparison& comparison) {
  auto number = [](const char* name, int decimals) {
    return Column{
        .name = name, .hint = ColumnHint::kNumber, .decimals = decimals, .data_decimals = decimals};
  };
  auto count = [](const char* name) { return Column{.name = name, .hint = ColumnHint::kCount}; };
  Table table({{.name = "trial_key"},
               {.name = "configuration"},
               {.name = "device"},
               {.name = "verdict"},
               number("change_pct", 3),
               number("ci_low_pct", 3),
               number("ci_high_pct", 3),
               number("a_ms", 4),
               number("b_ms", 4),
               count("a_launches"),
               count("b_launches"),
               {.name = "method"},
               {.name = "thresholds"},
               {.name = "reason"},
               number("ci_coverage", 4),
               count("ci_bounded"),
               count("a_busy"),
               count("b_busy"),
               {.name = "a_joules_per_image"},
               {.name = "b_joules_per_image"},
               {.name = "energy_ratio"}});
  for (const ComparedTrial& t : comparison.trials) {
    const LatencyChange& c = t.change;
    // An interval the data cannot bound leaves its ends empty (ci_bounded 0).
    const bool bounded = c.change.Bounded();
    table.AddRow({t.trial_key,
                  t.label,
                  t.device,
                  std::string(VerdictName(c.verdict)),
                  c.change.pct,
                  bounded ? Cell(c.change.low_pct) : Cell(),
                  bounded ? Cell(c.change.high_pct) : Cell(),
                  c.a_ms,
                  c.b_ms,
                  c.a_launches,
                  c.b_launches,
                  std::string(ChangeMethodName(c.method)),
                  t.thresholds,
                  c.reason,
                  c.change.coverage,
                  bounded ? 1 : 0,
                  t.a_busy ? 1 : 0,
                  t.b_busy ? 1 : 0,
                  SixDigits(EnergyOf(t).a),
                  SixDigits(EnergyOf(t).b),
                  SixDigits(EnergyOf(t).ratio)});
  }
  for (const UnmatchedTrial& u : comparison.unmatched) {
    std::vector<Cell> row(table.columns().size());
    row[0] = u.trial_key;
    row[1] = u.label;
    row[3] = "unmatched";
    row[13] = u.why;
    table.AddRow(std::move(row));
  }
  return table;
}

nlohmann::json SideJson(const CampaignSet& side) {
  return {{"db", side.db.string()}, {"campaigns", side.campaigns}, {"text", side.text}};
}

void WriteJson(const Comparison& comparison, std::ostream& out) {
  nlohmann::json json = {{"format", "ditbench-compare"},
                         {"version", kCompareFormatVersion},
                         {"a", SideJson(comparison.a)},
                         {"b", SideJson(comparison.b)},
                         {"differences", nlohmann::json::array()},
                         {"trials", nlohmann::json::array()},
                         {"unmatched", nlohmann::json::array()},
                         {"noise_floor", nlohmann::json::object()}};
  for (const auto& [kind, t] : comparison.thresholds)
    json["noise_floor"][kind] = {{"pct", t.policy.noise_floor_pct}, {"source", t.source}};
  for (const SettingDifference& d : comparison.differences)
    json["differences"].push_back({{"setting", d.setting}, {"a", d.a}, {"b", d.b}});
  for (const ComparedTrial& t : comparison.trials) {
    const LatencyChange& c = t.change;
    const bool bounded = c.change.Bounded();  // else the ends are null
    json["trials"].push_back(
        {{"trial_key", t.trial_key},
         {"configuration", t.label},
         {"device", t.device},
         {"verdict", VerdictName(c.verdict)},
         {"change_pct", c.change.pct},
         {"ci_low_pct", bounded ? nlohmann::json(c.change.low_pct) : nlohmann::json()},
         {"ci_high_pct", bounded ? nlohmann::json(c.change.high_pct) : nlohmann::json()},
         {"ci_bounded", bounded},
         {"a_busy", t.a_busy},
         {"b_busy", t.b_busy},
         {"a_below_quality",
          t.a_below_quality.empty() ? nlohmann::json() : nlohmann::json(t.a_below_quality)},
         {"b_below_quality",
          t.b_below_quality.empty() ? nlohmann::json() : nlohmann::json(t.b_below_quality)},
         {"ci_coverage", c.change.coverage},
         {"a_ms", c.a_ms},
         {"b_ms", c.b_ms},
         {"a_launches", c.a_launches},
         {"b_launches", c.b_launches},
         {"method", ChangeMethodName(c.method)},
         {"thresholds", t.thresholds},
         {"reason", c.reason},
         {"a_joules_per_image", OptionalJson(EnergyOf(t).a)},
         {"b_joules_per_image", OptionalJson(EnergyOf(t).b)},
         {"energy_ratio", OptionalJson(EnergyOf(t).ratio)},
         {"metrics", MetricsJson(t)}});
  }
  for (const UnmatchedTrial& u : comparison.unmatched)
    json["unmatched"].push_back(
        {{"trial_key", u.trial_key}, {"configuration", u.label}, {"why", u.why}});
  out << json.dump(2) << '\n';
}

}  // namespace

void WriteComparison(const Comparison& comparison, TableFormat format, std::ostream& out) {
  PrintAs(
      format,
      {{TableFormat::kText, [&](std::ostream& o) { WriteTable(comparison, o); }},
       {TableFormat::kCsv,
        [&](std::ostream& o) { PrintCsv(CsvTable(comparison), o, {.line_end = "\n"}); }},
       {TableFormat::kMarkdown, [&](std::ostream& o) { WriteMarkdown(comparison, o); }},
       {TableFormat::kJson, [&](std::ostream& o) { WriteJson(comparison, o); }},
       {TableFormat::kHtml, [&](std::ostream& o) { o << RenderComparisonPage(comparison); }}},
      [&] { return CsvTable(comparison); }, out);
}

}  // namespace ditbench
