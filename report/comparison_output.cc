#include "report/comparison_output.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/row_metrics.h"
#include "base/terminal_text.h"
#include "report/comparison_html.h"

namespace ditbench {
namespace {

std::string Csv(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    quoted += c;
    if (c == '"') quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string Joules(const std::optional<double>& joules) {
  return joules ? fmt::format("{:.4g}", *joules) : "-";
}

std::string OptionalCsv(const std::optional<double>& value) {
  return value ? fmt::format("{:.6g}", *value) : "";
}

nlohmann::json OptionalJson(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

// The compared metrics (ComparedTrial::metrics) that have no section of their own, one line
// per trial and metric, each value formatted by its hint; energy per image has its section.
void WriteOtherMetrics(const Comparison& comparison, std::ostream& out) {
  bool header = false;
  for (const ComparedTrial& t : comparison.trials) {
    for (const ComparedMetric& m : t.metrics) {
      if (m.name == "joules_per_image") continue;  // "Energy per image" above
      if (!header) {
        out << fmt::format("\nOther metrics:\n{:<24} {:>12} {:>12} {:>8} {:<7} {:<16}  {}\n",
                           "metric", "A", "B", "B / A", "B is", "trial key", "configuration");
        header = true;
      }
      const auto value = [&](const std::optional<double>& v) {
        return v ? FormatMetric(*v, m.display.hint) : std::string("-");
      };
      out << fmt::format("{:<24} {:>12} {:>12} {:>8} {:<7} {:<16}  {}\n",
                         ForTerminal(MetricHeader(m.name, m.display)), value(m.a), value(m.b),
                         m.ratio() ? fmt::format("{:.3f}", *m.ratio()) : "-", m.Direction(),
                         ForTerminal(t.trial_key), ForTerminal(t.label));
    }
  }
  if (header)
    out << "A, B: each side's value as `ditbench query` shows it, the geometric mean over a "
           "side's campaigns; better or worse by the metric's direction (none declared: no "
           "word); no verdict is drawn from them.\n";
}

// Every compared metric of a trial by name: {"a", "b", "ratio", "better"}.
nlohmann::json MetricsJson(const ComparedTrial& t) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const ComparedMetric& m : t.metrics)
    metrics[m.name] = {{"a", OptionalJson(m.a)},
                       {"b", OptionalJson(m.b)},
                       {"ratio", OptionalJson(m.ratio())},
                       {"unit", m.display.unit},
                       {"better", std::string(BetterName(m.display.better))}};
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
  std::map<std::string, int> counts;
  for (const ComparedTrial& t : comparison.trials) ++counts[VerdictName(t.change.verdict)];
  std::string summary;
  for (const char* v : {"slower", "faster", "same", "inconclusive"})
    if (counts[v]) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", counts[v], v);
  const std::string floor = NoiseFloorHeadline(comparison);
  out << fmt::format("Matched trials: {}{}{}\n", comparison.trials.size(),
                     summary.empty() ? "" : " (" + summary + ")",
                     floor.empty() ? "" : "; " + floor);
  if (!comparison.trials.empty()) {
    std::size_t verdict_width = 12;
    for (const ComparedTrial& t : comparison.trials)
      verdict_width = std::max(verdict_width, VerdictText(t).size());
    out << fmt::format("{:<{}} {:>8} {:>20} {:>10} {:>10} {:>8}  {:<16}  {}\n", "verdict",
                       verdict_width, "change", "interval (%)", "A ms", "B ms", "launches",
                       "trial key", "configuration");
    for (const ComparedTrial& t : comparison.trials) {
      const LatencyChange& c = t.change;
      out << fmt::format("{:<{}} {:>+7.1f}% {:>20} {:>10.3f} {:>10.3f} {:>8}  {:<16}  {}\n",
                         VerdictText(t), verdict_width, c.change.pct, IntervalText(c.change),
                         c.a_ms, c.b_ms, fmt::format("{}/{}", c.a_launches, c.b_launches),
                         ForTerminal(t.trial_key), ForTerminal(t.label));
    }
    out << "change = B ms / A ms - 1; A ms, B ms: the trial's latency_ms as `ditbench query` "
           "shows it (the median of its launch medians), the geometric mean over a side's "
           "campaigns; interval: its confidence, the percentage after it.\n";
  }
  if (AnyEnergy(comparison)) {
    out << fmt::format("\nEnergy per image:\n{:>12} {:>12} {:>8}  {:<16}  {}\n", "A J/image",
                       "B J/image", "B / A", "trial key", "configuration");
    for (const ComparedTrial& t : comparison.trials) {
      if (!t.a_joules_per_image && !t.b_joules_per_image) continue;
      out << fmt::format("{:>12} {:>12} {:>8}  {:<16}  {}\n", Joules(t.a_joules_per_image),
                         Joules(t.b_joules_per_image),
                         t.energy_ratio() ? fmt::format("{:.3f}", *t.energy_ratio()) : "-",
                         ForTerminal(t.trial_key), ForTerminal(t.label));
    }
    out << "J/image: joules of every rank's GPU over the timed iterations per image (NVML; "
           "docs/measurement.md), the geometric mean over a side's campaigns; no verdict is "
           "drawn from it.\n";
  }
  WriteOtherMetrics(comparison, out);
  if (!comparison.unmatched.empty()) {
    out << fmt::format("\nUnmatched trials: {}\n", comparison.unmatched.size());
    for (const UnmatchedTrial& u : comparison.unmatched)
      out << fmt::format("  {:<16}  {:<28}  {}\n", ForTerminal(u.trial_key), u.why,
                         ForTerminal(u.label));
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

void WriteCsv(const Comparison& comparison, std::ostream& out) {
  out << "trial_key,configuration,device,verdict,change_pct,ci_low_pct,ci_high_pct,a_ms,b_ms,"
         "a_launches,b_launches,method,thresholds,reason,ci_coverage,ci_bounded,a_busy,b_busy,"
         "a_joules_per_image,b_joules_per_image,energy_ratio\n";
  for (const ComparedTrial& t : comparison.trials) {
    const LatencyChange& c = t.change;
    // An interval the data cannot bound leaves its ends empty (ci_bounded 0).
    const bool bounded = c.change.Bounded();
    out << fmt::format("{},{},{},{},{:.3f},{},{},{:.4f},{:.4f},{},{},{},{},{},{:.4f},{:d},{:d},"
                       "{:d},{},{},{}\n",
                       t.trial_key, Csv(t.label), Csv(t.device), VerdictName(c.verdict),
                       c.change.pct, bounded ? fmt::format("{:.3f}", c.change.low_pct) : "",
                       bounded ? fmt::format("{:.3f}", c.change.high_pct) : "", c.a_ms, c.b_ms,
                       c.a_launches, c.b_launches, ChangeMethodName(c.method),
                       Csv(t.thresholds), Csv(c.reason), c.change.coverage, bounded, t.a_busy,
                       t.b_busy, OptionalCsv(t.a_joules_per_image),
                       OptionalCsv(t.b_joules_per_image), OptionalCsv(t.energy_ratio()));
  }
  for (const UnmatchedTrial& u : comparison.unmatched)
    out << fmt::format("{},{},,unmatched,,,,,,,,,,{},,,,,,,\n", u.trial_key, Csv(u.label),
                       Csv(u.why));
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
         {"a_joules_per_image", OptionalJson(t.a_joules_per_image)},
         {"b_joules_per_image", OptionalJson(t.b_joules_per_image)},
         {"energy_ratio", OptionalJson(t.energy_ratio())},
         {"metrics", MetricsJson(t)}});
  }
  for (const UnmatchedTrial& u : comparison.unmatched)
    json["unmatched"].push_back(
        {{"trial_key", u.trial_key}, {"configuration", u.label}, {"why", u.why}});
  out << json.dump(2) << '\n';
}

}  // namespace

void WriteComparison(const Comparison& comparison, const std::string& format, std::ostream& out) {
  if (format == "table") {
    WriteTable(comparison, out);
  } else if (format == "csv") {
    WriteCsv(comparison, out);
  } else if (format == "json") {
    WriteJson(comparison, out);
  } else if (format == "html") {
    out << RenderComparisonPage(comparison);
  } else {
    throw std::invalid_argument(
        fmt::format("--format '{}': expected table, csv, json or html", format));
  }
}

}  // namespace ditbench
