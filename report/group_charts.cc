#include "report/group_charts.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/comparison.h"

namespace ditbench {
namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string Strategy(const ResultRow& row) {
  std::string strategy;
  const std::pair<const char*, std::int64_t> axes[] = {
      {"ulysses", row.ulysses}, {"ring", row.ring}, {"pipefusion", row.pipefusion},
      {"cfg", row.cfg}, {"dp", row.dp}};
  for (const auto& [name, degree] : axes) {
    if (degree <= 1) continue;
    if (!strategy.empty()) strategy += '+';
    strategy += name;
  }
  return strategy;
}

nlohmann::json OrNull(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

}  // namespace

nlohmann::json LatencyChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows) {
  std::vector<std::string> labels;
  std::vector<std::int64_t> campaigns;
  for (const ResultRow& row : rows) {
    if (!row.measured()) continue;
    const std::string label = DegreesLabel(row);
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
    if (std::find(campaigns.begin(), campaigns.end(), row.campaign) == campaigns.end())
      campaigns.push_back(row.campaign);
  }
  if (labels.empty()) return nullptr;
  std::sort(campaigns.begin(), campaigns.end());
  nlohmann::json datasets = nlohmann::json::array();
  for (std::size_t c = 0; c < campaigns.size(); ++c) {
    nlohmann::json median(labels.size(), nullptr), low = median, high = median;
    for (const ResultRow& row : rows) {
      if (!row.measured() || row.campaign != campaigns[c]) continue;
      const std::size_t i = std::find(labels.begin(), labels.end(), DegreesLabel(row)) -
                            labels.begin();
      median[i] = *row.latency_ms;
      low[i] = OrNull(row.ci_low_ms);
      high[i] = OrNull(row.ci_high_ms);
    }
    datasets.push_back({{"label", fmt::format("campaign {}", campaigns[c])},
                        {"color", kPalette[c % std::size(kPalette)]},
                        {"data", median},
                        {"ci_low", low},
                        {"ci_high", high}});
  }
  return {{"id", id}, {"kind", "latency"}, {"title", title}, {"labels", labels},
          {"legend", campaigns.size() > 1}, {"datasets", datasets}};
}

nlohmann::json SpeedupChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows) {
  std::map<std::int64_t, double> baseline;  // campaign -> its 1-rank latency
  for (const ResultRow& row : rows)
    if (row.measured() && row.world_size == 1 && *row.latency_ms > 0)
      baseline.try_emplace(row.campaign, *row.latency_ms);
  std::map<std::string, nlohmann::json> lines;
  std::int64_t max_world = 1;
  const bool several = baseline.size() > 1;
  for (const ResultRow& row : rows) {
    if (!row.measured() || row.world_size <= 1 || *row.latency_ms <= 0) continue;
    auto it = baseline.find(row.campaign);
    if (it == baseline.end()) continue;
    const std::string name = several ? fmt::format("{} (campaign {})", Strategy(row), row.campaign)
                                     : Strategy(row);
    lines[name].push_back({{"x", row.world_size}, {"y", it->second / *row.latency_ms}});
    max_world = std::max(max_world, row.world_size);
  }
  if (lines.empty()) return nullptr;
  nlohmann::json datasets = nlohmann::json::array();
  std::size_t c = 0;
  for (auto& [name, points] : lines) {
    std::vector<nlohmann::json> sorted(points.begin(), points.end());
    std::sort(sorted.begin(), sorted.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return a["x"].get<std::int64_t>() < b["x"].get<std::int64_t>();
    });
    sorted.insert(sorted.begin(), nlohmann::json{{"x", 1}, {"y", 1.0}});
    datasets.push_back({{"label", name}, {"color", kPalette[c++ % std::size(kPalette)]},
                        {"points", sorted}});
  }
  return {{"id", id}, {"kind", "speedup"}, {"title", title}, {"max_world", max_world},
          {"datasets", datasets}};
}

const char* const kChartScript = R"js(
(function () {
  var charts = JSON.parse(document.getElementById('ditbench-charts').textContent);
  if (typeof Chart === 'undefined') return;
  // The 95% CI of each bar, drawn as a whisker with caps (visible when printed).
  var whiskers = {
    id: 'ciWhiskers',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx, y = chart.scales.y;
      chart.data.datasets.forEach(function (ds, d) {
        var meta = chart.getDatasetMeta(d);
        if (meta.hidden || !ds.ci_low) return;
        meta.data.forEach(function (bar, i) {
          var lo = ds.ci_low[i], hi = ds.ci_high[i];
          if (lo === null || hi === null || lo <= 0) return;
          var top = y.getPixelForValue(hi), bottom = y.getPixelForValue(lo);
          var half = Math.min(6, bar.width / 4);
          ctx.save();
          ctx.strokeStyle = '#222';
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.moveTo(bar.x, top); ctx.lineTo(bar.x, bottom);
          ctx.moveTo(bar.x - half, top); ctx.lineTo(bar.x + half, top);
          ctx.moveTo(bar.x - half, bottom); ctx.lineTo(bar.x + half, bottom);
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };
  function latency(c) {
    return {
      type: 'bar',
      data: {labels: c.labels, datasets: c.datasets.map(function (ds) {
        return {label: ds.label, data: ds.data, ci_low: ds.ci_low, ci_high: ds.ci_high,
                backgroundColor: ds.color};
      })},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {
          x: {title: {display: true, text: 'parallel configuration'}},
          y: {type: 'logarithmic',
              title: {display: true, text: 'median latency (ms, log scale); whiskers: 95% CI'}}
        },
        plugins: {
          legend: {display: c.legend},
          title: {display: true, text: c.title},
          tooltip: {callbacks: {afterLabel: function (t) {
            var ds = t.chart.data.datasets[t.datasetIndex];
            var lo = ds.ci_low[t.dataIndex], hi = ds.ci_high[t.dataIndex];
            if (lo === null || hi === null) return '';
            return '95% CI ' + lo.toFixed(2) + ' - ' + hi.toFixed(2) + ' ms';
          }}}
        }
      },
      plugins: [whiskers]
    };
  }
  function speedup(c) {
    var datasets = c.datasets.map(function (ds) {
      return {label: ds.label, data: ds.points, borderColor: ds.color, backgroundColor: ds.color,
              showLine: true};
    });
    datasets.push({label: 'ideal', data: [{x: 1, y: 1}, {x: c.max_world, y: c.max_world}],
                   borderColor: '#999', borderDash: [6, 4], pointRadius: 0, showLine: true});
    return {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: {type: 'linear', min: 1, title: {display: true, text: 'world size (ranks)'}},
                 y: {min: 0, title: {display: true, text: 'speedup vs 1 rank'}}},
        plugins: {title: {display: true, text: c.title}}
      }
    };
  }
  charts.forEach(function (c) {
    var canvas = document.getElementById(c.id);
    if (!canvas) return;
    new Chart(canvas, c.kind === 'speedup' ? speedup(c) : latency(c));
    canvas.setAttribute('data-drawn', '1');
  });
  document.body.setAttribute('data-charts-drawn', String(charts.length));
})();
)js";

}  // namespace ditbench
