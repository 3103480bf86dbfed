#include "report/comparison_html.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "analysis/row_metrics.h"
#include "base/table_printers.h"
#include "report/html_report.h"
#include "report/report_assets.h"

namespace ditbench {

namespace {

// Text a reader needs less often, in a cell that stays narrow: its first words as the summary
// of a <details> holding the rest (or `summary` when given).
std::string Folded(const std::string& text, const std::string& summary = "") {
  constexpr std::size_t kShown = 48;
  if (summary.empty() && text.size() <= kShown) return HtmlEscape(text);
  std::string head = summary;
  if (head.empty()) {
    const std::size_t cut = text.find_first_of(";(", 0);
    head = text.substr(0, std::min(cut == std::string::npos ? kShown : cut, kShown));
    while (!head.empty() && (head.back() & 0xC0) == 0x80) head.pop_back();  // whole characters
    if (!head.empty() && (head.back() & 0x80)) head.pop_back();
    head += "...";
  }
  return fmt::format("<details><summary>{}</summary><code>{}</code></details>", HtmlEscape(head),
                     HtmlEscape(text));
}

std::string SideIds(const CampaignSet& side) {
  std::string ids;
  for (std::int64_t id : side.campaigns) {
    if (!ids.empty()) ids += ',';
    ids += std::to_string(id);
  }
  return ids;
}

// The CI as a bar on a symmetric axis of +-`range` percent, with a tick at 0.
std::string CiBar(const ChangeEstimate& c, double range) {
  const auto x = [&](double pct) { return std::clamp(50 + 50 * pct / range, 0.0, 100.0); };
  const double left = x(c.low_pct), right = x(c.high_pct);
  return fmt::format("<div class=\"cibar\"><span style=\"left:{:.1f}%;width:{:.1f}%\"></span>"
                     "<i style=\"left:50%\"></i></div>",
                     left, std::max(1.0, right - left));
}

// What differs between the sides (build, device, host, environment) as a table, or a note that
// nothing does.
std::string DifferencesTable(const Comparison& comparison) {
  if (comparison.differences.empty())
    return "<p class=\"note\">Baseline and candidate have the same build, device, host and "
           "environment.</p>\n";
  Table table({{.name = "setting"}, {.name = "baseline"}, {.name = "candidate"}});
  for (const SettingDifference& d : comparison.differences) table.AddRow({d.setting, d.a, d.b});
  return "<p>What differs between baseline and candidate:</p>\n<div class=\"scroll\">" +
         HtmlTable(table) + "</div>\n";
}

// The compared metrics beside the latency (energy per image, a serving trial's p95, a
// program's own numbers), one row per trial and metric, each value formatted by its hint, with
// the verdict its row draws or its direction.
std::string MetricsTable(const Comparison& comparison) {
  Table table({{.name = "metric"},
               {.name = "baseline", .notes = true, .align = Align::kRight},
               {.name = "candidate", .notes = true, .align = Align::kRight},
               {.name = "candidate / baseline", .hint = ColumnHint::kNumber, .decimals = 3},
               {.name = "candidate is"},
               {.name = "configuration"},
               {.name = "trial"}});
  for (const ComparedTrial& t : comparison.trials)
    for (const ComparedMetric& m : t.metrics) {
      // A side measured on a busy machine says so beside its value, as its latency does.
      const auto value = [&](const std::optional<double>& v, bool busy) {
        return v ? Cell(FormatMetric(*v, m.display.hint), busy ? "busy" : "") : Cell();
      };
      table.AddRow({MetricHeader(m.name, m.display), value(m.a, t.a_busy), value(m.b, t.b_busy),
                    m.ratio() ? Cell(*m.ratio()) : Cell(), std::string(m.Judgement()), t.label,
                    t.trial_key});
    }
  return "<h3>Other metrics</h3><div class=\"scroll\">" +
         HtmlTable(table, {.table_class = "comparison"}) + "</div>\n";
}

// The matched trials `shown`, one row each; the intervals drawn on an axis of +-`range`%.
Table ComparisonTable(const std::vector<const ComparedTrial*>& shown, double range) {
  Table table({{.name = "verdict", .html_class = "verdict"},
               {.name = "change", .hint = ColumnHint::kPercent, .sign = true},
               {.name = "interval (coverage)", .align = Align::kRight, .html_class = "wrap"},
               {.name = fmt::format("interval on \u00b1{:.0f}%", range)},
               {.name = "baseline ms", .hint = ColumnHint::kMs, .decimals = 3},
               {.name = "candidate ms", .hint = ColumnHint::kMs, .decimals = 3},
               {.name = "launches", .align = Align::kRight},
               {.name = "configuration"},
               {.name = "trial"},
               {.name = "why", .html_class = "more"},
               {.name = "reproduce",
                .description = "runs the trial again from the candidate's sweep file; add --new "
                               "to measure it in a fresh campaign",
                .html_class = "more"}});
  for (const ComparedTrial* shown_trial : shown) {
    const ComparedTrial& t = *shown_trial;
    const LatencyChange& c = t.change;
    const std::string why = c.reason + "; " + t.thresholds;
    const std::string reproduce =
        t.run.sweep_path.empty() ? std::string("-") : ReproduceCommand(t.run, t.trial_key);
    table.AddRow(
        {Cell(VerdictText(t))
             .WithHtml({.css_class = fmt::format("verdict-{}", VerdictName(c.verdict))}),
         Cell(c.change.pct), Cell(IntervalText(c.change)),
         Cell("").WithHtml({.markup = c.change.Bounded() ? CiBar(c.change, range) : ""}),
         Cell(c.a_ms), Cell(c.b_ms), Cell(fmt::format("{}/{}", c.a_launches, c.b_launches)),
         Cell(t.label),
         Cell(t.trial_key).WithHtml({.markup = "<code>" + HtmlEscape(t.trial_key) + "</code>"}),
         // Secondary text folded, so a row stays one line and the table fits 1400 px: a busy
         // machine's process list no longer repeats at full length in every row.
         Cell(why).WithHtml({.markup = Folded(why)}),
         Cell(reproduce).WithHtml(
             {.markup = t.run.sweep_path.empty() ? "-" : Folded(reproduce, "command")})});
  }
  return table;
}

}  // namespace

std::string RenderComparisonSection(const Comparison& comparison, std::size_t max_rows) {
  std::string html = fmt::format(
      "<h2 id=\"comparison\">Comparison: campaign {} (baseline) vs {}</h2>\n{}",
      HtmlEscape(SideIds(comparison.a)), HtmlEscape(SideIds(comparison.b)),
      comparison.a_label.empty()
          ? std::string()
          : fmt::format("<p class=\"note\">Baseline: {}. Candidate: {}.</p>\n",
                        HtmlEscape(comparison.a_label), HtmlEscape(comparison.b_label)));
  html += DifferencesTable(comparison);
  std::map<Verdict, int> counts;
  double range = 10;
  for (const ComparedTrial& t : comparison.trials) {
    ++counts[t.change.verdict];
    if (t.change.change.Bounded())
      range = std::max(
          {range, std::abs(t.change.change.low_pct), std::abs(t.change.change.high_pct)});
  }
  range = std::min(range, 100.0);
  html += fmt::format(
      "<p>{} matched trials: <span class=\"verdict-slower\">{} slower</span>, "
      "<span class=\"verdict-faster\">{} faster</span>, {} same, "
      "<span class=\"verdict-inconclusive\">{} inconclusive</span>; {} unmatched{}.</p>\n",
      comparison.trials.size(), counts[Verdict::kSlower], counts[Verdict::kFaster],
      counts[Verdict::kSame], counts[Verdict::kInconclusive], comparison.unmatched.size(),
      HtmlEscape(NoiseFloorHeadline(comparison).empty() ? ""
                                                         : "; " + NoiseFloorHeadline(comparison)));
  if (!comparison.trials.empty()) {
    // The rows shown: every trial, or the first max_rows, verdicts other than `same` first.
    std::vector<const ComparedTrial*> shown;
    for (const ComparedTrial& t : comparison.trials)
      if (t.change.verdict != Verdict::kSame) shown.push_back(&t);
    for (const ComparedTrial& t : comparison.trials)
      if (t.change.verdict == Verdict::kSame) shown.push_back(&t);
    if (max_rows == 0 || shown.size() <= max_rows) {
      shown.clear();
      for (const ComparedTrial& t : comparison.trials) shown.push_back(&t);
    } else {
      shown.resize(max_rows);
    }
    html += "<div class=\"scroll\">" +
            HtmlTable(ComparisonTable(shown, range), {.table_class = "comparison"}) + "</div>\n";
    if (std::any_of(comparison.trials.begin(), comparison.trials.end(),
                    [](const ComparedTrial& t) { return !t.metrics.empty(); }))
      html += MetricsTable(comparison);
    if (shown.size() < comparison.trials.size()) {
      html += fmt::format(
          "<p class=\"note\">{} more matched trials not listed (the first {} are those not "
          "`same`, by change); <code>ditbench compare {} {}</code> lists every one.</p>\n",
          comparison.trials.size() - shown.size(), shown.size(),
          HtmlEscape(comparison.a.text), HtmlEscape(comparison.b.text));
    }
  }
  if (!comparison.unmatched.empty()) {
    html += fmt::format("<details><summary>{} unmatched trials</summary><ul>\n",
                        comparison.unmatched.size());
    for (const UnmatchedTrial& u : comparison.unmatched)
      html += fmt::format("<li><code>{}</code> {}: {}</li>\n", HtmlEscape(u.trial_key),
                          HtmlEscape(u.label), HtmlEscape(u.why));
    html += "</ul></details>\n";
  }
  return html;
}

std::string RenderComparisonPage(const Comparison& comparison) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>ditbench compare</title>\n<style>\n"
      "body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }\n"
      "table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }\n"
      "th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }\n"
      "td { white-space: nowrap; } td.num { text-align: right; "
      "font-variant-numeric: tabular-nums; }\nth { background: #f2f2f2; }\n"
      ".note { color: #555; font-size: 0.9em; }";
  html += kComparisonStyle;
  html += "</style>\n</head>\n<body>\n";
  html += RenderComparisonSection(comparison);
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace ditbench
