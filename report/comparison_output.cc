#include "report/comparison_output.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

std::string SideText(const CampaignSet& side) {
  std::string ids;
  for (std::int64_t id : side.campaigns) {
    if (!ids.empty()) ids += ',';
    ids += std::to_string(id);
  }
  return fmt::format("campaign{} {} in {}", side.campaigns.size() > 1 ? "s" : "", ids,
                     side.db.string());
}

// "[low, high]", and the interval's coverage where it is below 95% (few launches).
std::string Ci(const ChangeEstimate& c) {
  std::string ci = fmt::format("[{:+.1f}, {:+.1f}]", c.low_pct, c.high_pct);
  if (c.CoversLessThan()) ci += fmt::format(" {:.0f}%", c.coverage * 100);
  return ci;
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
      out << fmt::format("  {:<{}}  A: {}\n  {:<{}}  B: {}\n", d.setting, width, d.a, "", width,
                         d.b);
    out << '\n';
  }
  std::map<std::string, int> counts;
  for (const ComparedTrial& t : comparison.trials) ++counts[VerdictName(t.change.verdict)];
  std::string summary;
  for (const char* v : {"slower", "faster", "same", "inconclusive"})
    if (counts[v]) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", counts[v], v);
  out << fmt::format("Matched trials: {}{}\n", comparison.trials.size(),
                     summary.empty() ? "" : " (" + summary + ")");
  if (!comparison.trials.empty()) {
    out << fmt::format("{:<12} {:>8} {:>20} {:>10} {:>10} {:>8}  {:<16}  {}\n", "verdict",
                       "change", "95% CI (%)", "A ms", "B ms", "launches", "trial key",
                       "configuration");
    for (const ComparedTrial& t : comparison.trials) {
      const LatencyChange& c = t.change;
      out << fmt::format("{:<12} {:>+7.1f}% {:>20} {:>10.3f} {:>10.3f} {:>8}  {:<16}  {}\n",
                         VerdictName(c.verdict), c.change.pct, Ci(c.change), c.a_ms, c.b_ms,
                         fmt::format("{}/{}", c.a_launches, c.b_launches), t.trial_key, t.label);
    }
  }
  if (!comparison.unmatched.empty()) {
    out << fmt::format("\nUnmatched trials: {}\n", comparison.unmatched.size());
    for (const UnmatchedTrial& u : comparison.unmatched)
      out << fmt::format("  {:<16}  {:<28}  {}\n", u.trial_key, u.why, u.label);
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
    out << "An interval marked with a percentage covers less than 95%: the widest that so few "
           "launches allow (3 and 3: 90%, each end a one-sided 95% bound).\n";
  }
  if (methods.count("iterations")) {
    out << "Trials with one launch per side are judged on their iterations against the noise "
           "floor (launch-to-launch variation is not visible in one launch); give each side "
           "several campaigns (A = 1,2,3) for the launch-level test.\n";
  }
}

void WriteCsv(const Comparison& comparison, std::ostream& out) {
  out << "trial_key,configuration,device,verdict,change_pct,ci_low_pct,ci_high_pct,a_ms,b_ms,"
         "a_launches,b_launches,method,thresholds,reason,ci_coverage\n";
  for (const ComparedTrial& t : comparison.trials) {
    const LatencyChange& c = t.change;
    out << fmt::format("{},{},{},{},{:.3f},{:.3f},{:.3f},{:.4f},{:.4f},{},{},{},{},{},{:.4f}\n",
                       t.trial_key, Csv(t.label), Csv(t.device), VerdictName(c.verdict),
                       c.change.pct, c.change.low_pct, c.change.high_pct, c.a_ms, c.b_ms,
                       c.a_launches, c.b_launches, ChangeMethodName(c.method),
                       Csv(t.thresholds), Csv(c.reason), c.change.coverage);
  }
  for (const UnmatchedTrial& u : comparison.unmatched)
    out << fmt::format("{},{},,unmatched,,,,,,,,,,{},\n", u.trial_key, Csv(u.label), Csv(u.why));
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
                         {"unmatched", nlohmann::json::array()}};
  for (const SettingDifference& d : comparison.differences)
    json["differences"].push_back({{"setting", d.setting}, {"a", d.a}, {"b", d.b}});
  for (const ComparedTrial& t : comparison.trials) {
    const LatencyChange& c = t.change;
    json["trials"].push_back({{"trial_key", t.trial_key},
                              {"configuration", t.label},
                              {"device", t.device},
                              {"verdict", VerdictName(c.verdict)},
                              {"change_pct", c.change.pct},
                              {"ci_low_pct", c.change.low_pct},
                              {"ci_high_pct", c.change.high_pct},
                              {"ci_coverage", c.change.coverage},
                              {"a_ms", c.a_ms},
                              {"b_ms", c.b_ms},
                              {"a_launches", c.a_launches},
                              {"b_launches", c.b_launches},
                              {"method", ChangeMethodName(c.method)},
                              {"thresholds", t.thresholds},
                              {"reason", c.reason}});
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
