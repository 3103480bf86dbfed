#include "report/planner_section.h"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/chart_style.h"
#include "report/html_text.h"

namespace ditbench {

namespace {

// A chart's number to 4 significant digits: plenty for a point on a log axis, and a page of
// thousands of points stays small.
double Rounded(double value) { return std::stod(fmt::format("{:.4g}", value)); }

}  // namespace

nlohmann::json PredictionChart(const DeviceFit& fit, const std::string& id) {
  if (fit.refused || fit.points.empty()) return nullptr;
  // One dataset per strategy, in the page's colour of that strategy.
  std::map<std::string, nlohmann::json> by_strategy;
  double low = 0, high = 0;
  bool any = false;
  for (const PredictionPoint& p : fit.points) {
    by_strategy[p.strategy].push_back({{"x", Rounded(p.predicted_ms)},
                                       {"y", Rounded(p.measured_ms)},
                                       {"lo", Rounded(p.low_ms)},
                                       {"hi", Rounded(p.high_ms)},
                                       {"label", p.label}});
    // The axes span the points, not their intervals: a fit of a few trials may give an
    // interval of millions of ms, which would squeeze every point into one corner (issue 51).
    // A whisker past the axes is cut at the plot's edge (the chart script).
    for (double v : {p.predicted_ms, p.measured_ms}) {
      if (v <= 0) continue;
      low = any ? std::min(low, v) : v;
      high = any ? std::max(high, v) : v;
      any = true;
    }
  }
  nlohmann::json datasets = nlohmann::json::array();
  for (auto& [strategy, points] : by_strategy)
    datasets.push_back({{"label", strategy.empty() ? "1 rank" : strategy},
                        {"color", StrategyColor(strategy)},
                        {"points", std::move(points)}});
  return {{"id", id},
          {"kind", "prediction"},
          {"title", fmt::format("Predicted (leave-one-out) against measured latency: {}",
                                fit.device)},
          {"identity_low", Rounded(low)},
          {"identity_high", Rounded(high)},
          {"datasets", datasets}};
}

std::string RenderPlannerSection(const PlannerView& view, nlohmann::json& charts) {
  if (view.devices.empty()) return "";
  std::string html =
      "<section id=\"planner\">\n<h2>Planner: predicted against measured</h2>\n"
      "<p class=\"note\">The planner's cost model (docs/planner.md) fitted on the database's ok "
      "trials of each device kind. Each point is a measured trial: x its latency predicted by "
      "a model fitted on the other trials (leave-one-out), with the 95% interval as a "
      "whisker (an arrowhead where it runs past the axes); y its measured latency. Points on the "
      "dashed line were predicted exactly. "
      "Each group's section below names the advisor's recommendation.</p>\n";
  for (const DeviceFit& fit : view.devices) {
    html += fmt::format("<h3>{}</h3>\n", HtmlEscape(fit.device));
    if (fit.refused) {
      html += fmt::format("<p class=\"planner-refused\">No cost model for '{}': {}.</p>\n",
                          HtmlEscape(fit.device), HtmlEscape(*fit.refused));
      continue;
    }
    nlohmann::json chart = PredictionChart(fit, fmt::format("chart-{}", charts.size()));
    html += fmt::format("<p class=\"note\">{}.</p>\n", HtmlEscape(fit.fitted));
    if (chart.is_null()) {
      html += fmt::format(
          "<p class=\"planner-refused\">No trial could be predicted from the others: leaving one "
          "out leaves {} trials, too few for a fit (measure more layouts to see this chart).</p>\n",
          fit.trials > 0 ? fit.trials - 1 : 0);
      continue;
    }
    html += fmt::format("<div class=\"chart\"><canvas id=\"{}\"></canvas></div>\n",
                        chart["id"].get<std::string>());
    charts.push_back(std::move(chart));
    html += fmt::format(
        "<p class=\"planner-error\">Leave-one-out error over {} of {} trials: median {:.1f}%, "
        "worst {:.1f}% ({}).{}</p>\n",
        fit.predicted, fit.trials, fit.median_abs_error * 100, fit.max_abs_error * 100,
        HtmlEscape(fit.worst),
        fit.points.size() < fit.predicted
            ? fmt::format(" Trials that differ only in seed are one point, the median of "
                          "each number over them ({} points).", fit.points.size())
            : "");
  }
  html += "</section>\n";
  return html;
}

std::string RenderRecommendations(const std::vector<GroupRecommendation>& recommendations) {
  std::string html;
  for (const GroupRecommendation& r : recommendations) {
    std::string line = fmt::format(
        "<p class=\"recommendation\"><strong>Advisor</strong> ({}, {} layouts ranked): "
        "<strong>{}</strong> <code>{}</code>, ",
        HtmlEscape(r.device), r.ranked, HtmlEscape(r.layout), HtmlEscape(r.trial_key));
    line += r.measured ? fmt::format("measured {:.4g} ms{}", r.latency_ms,
                                     r.busy ? "<span class=\"doubt\">busy</span>" : "")
                       : fmt::format("predicted {:.4g} ms [95%: {:.4g} – {:.4g}]", r.latency_ms,
                                     r.low_ms, r.high_ms);
    if (r.regret)
      line += fmt::format("; regret against the best measured trial {:+.1f}%", *r.regret * 100);
    if (r.decided) {
      line += "; decided: no other interval overlaps it";
    } else if (!r.to_measure.empty()) {
      std::vector<std::string> names;
      for (const std::string& t : r.to_measure) names.push_back(HtmlEscape(t));
      line += fmt::format("; measure next to decide: {}", fmt::join(names, ", "));
    }
    if (!r.below_quality.empty()) {
      std::vector<std::string> names;
      for (const std::string& t : r.below_quality) names.push_back(HtmlEscape(t));
      line += fmt::format("; <span class=\"below\">not recommended, below quality</span>: {}",
                          fmt::join(names, ", "));
    }
    html += line + ".</p>\n";
  }
  return html;
}

}  // namespace ditbench
