#include "report/history_section.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/html_text.h"
#include "report/report_assets.h"
#include "storage/iso_time.h"

namespace ditbench {

namespace {

nlohmann::json ChartData(const KeyHistory& key, const std::string& id) {
  nlohmann::json chart = {{"id", id}};
  std::vector<std::string> labels, titles, builds, use;
  std::vector<double> values, levels;
  std::vector<nlohmann::json> low, high;
  for (const HistoryPoint& p : key.points) {
    labels.push_back(fmt::format("#{}", p.campaign));
    titles.push_back(fmt::format("campaign {}{}, {}", p.campaign,
                                 p.label.empty() ? "" : " (" + p.label + ")",
                                 IsoTime(p.started_at)));
    builds.push_back(p.build);
    use.push_back(PointUseName(p.use));
    values.push_back(p.latency_ms);
    levels.push_back(p.level_ms);
    low.push_back(p.ci_low_ms ? nlohmann::json(*p.ci_low_ms) : nlohmann::json());
    high.push_back(p.ci_high_ms ? nlohmann::json(*p.ci_high_ms) : nlohmann::json());
  }
  nlohmann::json changes = nlohmann::json::array();
  for (const HistoryChange& c : key.changes)
    changes.push_back({{"before", fmt::format("#{}", c.last_good)},
                       {"after", fmt::format("#{}", c.first_bad)},
                       {"pct", c.change.pct}});
  // The axis fits the points that take part (and the levels): a disturbed or busy point far
  // off is drawn at the edge as a triangle, its value in the tooltip, so that one bad night
  // does not flatten the steps that matter.
  double y_min = 0, y_max = 0;
  bool any = false;
  for (const HistoryPoint& p : key.points) {
    for (double v : {p.level_ms, p.use == PointUse::kUsed ? p.latency_ms : p.level_ms}) {
      if (v <= 0) continue;
      y_min = any ? std::min(y_min, v) : v;
      y_max = any ? std::max(y_max, v) : v;
      any = true;
    }
  }
  const double pad = std::max(0.1 * (y_max - y_min), 0.03 * y_max);
  y_min = std::max(0.0, y_min - pad);
  y_max += pad;
  std::vector<double> shown;
  for (double v : values) shown.push_back(any ? std::clamp(v, y_min, y_max) : v);
  chart["y_min"] = any ? nlohmann::json(y_min) : nlohmann::json();
  chart["y_max"] = any ? nlohmann::json(y_max) : nlohmann::json();
  chart["shown"] = shown;
  chart["labels"] = labels;
  chart["titles"] = titles;
  chart["builds"] = builds;
  chart["use"] = use;
  chart["values"] = values;
  chart["levels"] = levels;
  chart["low"] = low;
  chart["high"] = high;
  chart["changes"] = changes;
  return chart;
}

}  // namespace

std::string RenderHistorySection(const History& history) {
  std::vector<const KeyHistory*> keys;
  for (const KeyHistory& key : history.keys)
    if (key.points.size() >= kHistoryMinCampaigns) keys.push_back(&key);
  if (keys.empty()) return "";
  std::stable_sort(keys.begin(), keys.end(), [](const KeyHistory* a, const KeyHistory* b) {
    return (!a->changes.empty() || !a->edges.empty()) && b->changes.empty() && b->edges.empty();
  });
  std::size_t changed = 0;
  for (const KeyHistory* key : keys) changed += key->changes.empty() ? 0 : 1;

  std::string html = "<style>";
  html += kHistoryStyle;
  html += "</style>\n<section id=\"history\">\n<h2>History</h2>\n";
  html += fmt::format(
      "<p>{} trial key{} measured in {} or more of {} campaign{}{}; {} with a change point. Each "
      "chart: a campaign's latency with its interval, the level of each stretch between "
      "change points (orange), change points dashed (red: slower, green: faster); hollow "
      "grey points were measured on a busy machine or disturbed and take no part in finding "
      "change points (docs/measurement.md, \"History and change points\"). Hover a point for "
      "its build.</p>\n",
      keys.size(), keys.size() == 1 ? "" : "s", kHistoryMinCampaigns, history.campaigns.size(),
      history.campaigns.size() == 1 ? "" : "s",
      history.excluded ? fmt::format(" ({} excluded)", history.excluded) : "", changed);
  html += "<div class=\"history-grid\">\n";
  nlohmann::json charts = nlohmann::json::array();
  for (std::size_t i = 0; i < keys.size() && i < kHistoryCharts; ++i) {
    const KeyHistory& key = *keys[i];
    const std::string id = fmt::format("history-{}", i);
    std::string caption = HtmlEscape(key.label) + " <code>" + HtmlEscape(key.trial_key) +
                          "</code>";
    for (const HistoryChange& c : key.changes)
      caption += fmt::format("<br>{:+.1f}% from campaign {} (build {}, was {})", c.change.pct,
                             c.first_bad, HtmlEscape(c.bad_build), HtmlEscape(c.good_build));
    for (const HistoryEdge& e : key.edges)
      caption += fmt::format("<br>{:+.1f}% at campaign {}, the {}: not yet a change point", e.pct,
                             e.campaign, e.latest ? "latest" : "first");
    html += fmt::format(
        "<figure><div class=\"history-chart\"><canvas id=\"{}\"></canvas></div>"
        "<figcaption>{}</figcaption></figure>\n",
        id, caption);
    charts.push_back(ChartData(key, id));
  }
  html += "</div>\n";
  if (keys.size() > kHistoryCharts)
    html += fmt::format("<p>{} more keys not drawn; `ditbench history` lists them all.</p>\n",
                        keys.size() - kHistoryCharts);
  html += "<script type=\"application/json\" id=\"ditbench-history\">" + ScriptJson(charts) +
          "</script>\n<script>";
  html += kHistoryScript;
  html += "</script>\n</section>\n";
  return html;
}

std::string RenderHistoryPage(const History& history) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<title>ditbench history</title>\n<style>body { font-family: system-ui, "
                     "sans-serif; margin: 2em; color: #222; }</style>\n<script>\n";
  html.append(kChartJs, kChartJsSize);
  html += "\n</script>\n</head>\n<body>\n";
  const std::string section = RenderHistorySection(history);
  html += section.empty() ? fmt::format("<p>No trial key was measured in {} campaigns.</p>\n",
                                        kHistoryMinCampaigns)
                          : section;
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace ditbench
