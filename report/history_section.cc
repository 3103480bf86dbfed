#include "report/history_section.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/html_text.h"
#include "storage/iso_time.h"

namespace ditbench {

// Chart.js, compiled into the report library (report/CMakeLists.txt).
extern const char kChartJs[];
extern const std::size_t kChartJsSize;

namespace {

constexpr const char* kHistoryStyle = R"css(
.history-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr));
  gap: 1em; max-width: 1400px; }
.history-chart { position: relative; height: 240px; }
.history-grid figure { margin: 0; }
.history-grid figcaption { font-size: 0.85em; color: #444; overflow-wrap: anywhere; }
)css";

// Draws every chart in <script id="ditbench-history">: points with interval whiskers, the
// stepped segment levels, change points as dashed vertical lines with their size.
constexpr const char* kHistoryScript = R"js(
(function () {
  var element = document.getElementById('ditbench-history');
  if (!element || typeof Chart === 'undefined') return;
  var charts = JSON.parse(element.textContent);
  var marks = {
    id: 'historyMarks',
    afterDatasetsDraw: function (chart) {
      var c = chart.options.history, ctx = chart.ctx, x = chart.scales.x, y = chart.scales.y;
      var meta = chart.getDatasetMeta(0), area = chart.chartArea;
      ctx.save();
      ctx.beginPath();
      ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
      ctx.clip();
      meta.data.forEach(function (point, i) {
        var lo = c.low[i], hi = c.high[i];
        if (lo === null || hi === null) return;
        ctx.strokeStyle = '#555'; ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(point.x, y.getPixelForValue(hi));
        ctx.lineTo(point.x, y.getPixelForValue(lo));
        ctx.stroke();
      });
      c.changes.forEach(function (change) {
        var px = (x.getPixelForValue(change.before) + x.getPixelForValue(change.after)) / 2;
        ctx.strokeStyle = change.pct > 0 ? '#b42318' : '#1a7f37';
        ctx.setLineDash([5, 4]); ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.moveTo(px, y.top); ctx.lineTo(px, y.bottom); ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = ctx.strokeStyle; ctx.font = '12px system-ui, sans-serif';
        ctx.fillText((change.pct > 0 ? '+' : '') + change.pct.toFixed(1) + '%', px + 3,
                     y.top + 12);
      });
      ctx.restore();
    }
  };
  charts.forEach(function (c) {
    var canvas = document.getElementById(c.id);
    if (!canvas) return;
    var colours = c.use.map(function (u) { return u === 'used' ? '#1f5fa8' : '#999'; });
    new Chart(canvas, {
      type: 'line',
      data: {labels: c.labels, datasets: [
        {label: 'latency', data: c.shown, showLine: false, pointRadius: 3,
         pointStyle: c.shown.map(function (v, i) {
           return v === c.values[i] ? 'circle' : 'triangle'; }),
         pointBackgroundColor: c.use.map(function (u, i) {
           return u === 'used' ? colours[i] : 'rgba(0,0,0,0)'; }),
         pointBorderColor: colours},
        {label: 'level', data: c.levels, stepped: 'middle', pointRadius: 0,
         borderColor: '#f28e2b', borderWidth: 2}
      ]},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        history: c,
        scales: {x: {ticks: {maxRotation: 0, autoSkip: true, maxTicksLimit: 8}},
                 y: {min: c.y_min, max: c.y_max, title: {display: true, text: 'latency (ms)'}}},
        plugins: {
          legend: {display: false},
          tooltip: {callbacks: {
            title: function (items) { return c.titles[items[0].dataIndex]; },
            label: function (t) {
              var v = t.datasetIndex === 0 ? c.values[t.dataIndex] : c.levels[t.dataIndex];
              return (t.datasetIndex === 0 ? 'latency ' : 'level ') + v.toFixed(2) + ' ms';
            },
            afterLabel: function (t) {
              var i = t.dataIndex, text = 'build ' + c.builds[i];
              if (c.low[i] !== null && c.high[i] !== null)
                text += '\ninterval ' + c.low[i].toFixed(2) + ' - ' + c.high[i].toFixed(2) + ' ms';
              if (c.use[i] !== 'used') text += '\n' + c.use[i] + ': left out of change points';
              return text;
            }}}
        }
      },
      plugins: [marks]
    });
    canvas.setAttribute('data-drawn', '1');
  });
})();
)js";

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
    return !a->changes.empty() && b->changes.empty();
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
