#include "report/group_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "analysis/speedup.h"
#include "report/chart_style.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

nlohmann::json OrNull(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Quantile(values, 0.5);
}

// The name of a row's series: its strategy and its other settings (SettingsLabel), with its
// campaign when the group spans several.
std::string SeriesName(const ResultRow& row, bool several_campaigns,
                       const CampaignLabels& campaigns) {
  const std::string settings = SettingsLabel(row);
  const std::string strategy = StrategyName(row);
  const std::string name =
      (strategy.empty() ? "1 rank" : strategy) + (settings.empty() ? "" : " " + settings);
  return several_campaigns ? fmt::format("{} ({})", name, CampaignName(campaigns, row.campaign))
                           : name;
}

// The datasets of a chart of series (speedup, memory, error): each coloured by its strategy
// (StrategyColor, the same in every chart of the page); series that share a strategy (other
// settings, other campaigns) differ in `style`, the point shape and dash the script draws.
nlohmann::json SeriesDataset(const std::string& name, const std::string& strategy,
                             nlohmann::json points, std::map<std::string, int>& styles) {
  return {{"label", name}, {"color", StrategyColor(strategy)},
          {"style", styles[strategy]++}, {"points", std::move(points)}};
}

// Where a zero output error sits on the log axis: a decade below the smallest error above 0
// (1e-9 when there is none), labelled "0 (exact)" by the script.
double ZeroErrorFloor(const std::vector<double>& errors) {
  double smallest = 0;
  for (double e : errors)
    if (e > 0 && (smallest == 0 || e < smallest)) smallest = e;
  if (smallest == 0) return 1e-9;
  return std::pow(10.0, std::floor(std::log10(smallest)) - 1);
}

bool SeveralCampaigns(const std::vector<ResultRow>& rows) {
  std::set<std::int64_t> campaigns;
  for (const ResultRow& row : rows)
    if (row.measured()) campaigns.insert(row.campaign);
  return campaigns.size() > 1;
}

// The segments of a stacked stage bar, in stacking order: name -> ms.
std::vector<std::pair<std::string, double>> Segments(const StageSummary& s) {
  std::vector<std::pair<std::string, double>> segments;
  if (s.blocks > 0) {
    segments.emplace_back("transformer blocks", s.blocks_ms);
    segments.emplace_back("steps outside blocks", std::max(0.0, s.steps_ms - s.blocks_ms));
  } else {
    segments.emplace_back("denoising steps", s.steps_ms);
  }
  const double decode = s.decode_ms.value_or(0);
  if (s.decode_ms) segments.emplace_back("VAE decode", decode);
  segments.emplace_back("rest of the iteration",
                        std::max(0.0, s.iteration_ms - s.steps_ms - decode));
  return segments;
}

}  // namespace

nlohmann::json LatencyChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows, const CampaignLabels& names) {
  std::vector<std::string> labels;
  nlohmann::json colors = nlohmann::json::array();  // per bar: its strategy's
  std::vector<std::int64_t> campaigns;
  for (const ResultRow& row : rows) {
    if (!row.measured()) continue;
    const std::string label = ConfigurationLabel(row);
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) {
      labels.push_back(label);
      colors.push_back(StrategyColor(StrategyName(row)));
    }
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
      const std::size_t i = std::find(labels.begin(), labels.end(), ConfigurationLabel(row)) -
                            labels.begin();
      median[i] = *row.latency_ms;
      low[i] = OrNull(row.ci_low_ms);
      high[i] = OrNull(row.ci_high_ms);
    }
    // Bars keep their strategy's colour; an older campaign's are paler (newest solid).
    const std::size_t age = campaigns.size() - 1 - c;
    datasets.push_back({{"label", CampaignName(names, campaigns[c])},
                        {"colors", colors},
                        {"alpha", std::max(0.25, 1.0 - 0.25 * static_cast<double>(age))},
                        {"data", median},
                        {"ci_low", low},
                        {"ci_high", high}});
  }
  return {{"id", id}, {"kind", "latency"}, {"title", title}, {"labels", labels},
          {"legend", campaigns.size() > 1}, {"datasets", datasets}};
}

nlohmann::json SpeedupChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows, const CampaignLabels& names) {
  const OneRankBaselines baselines(rows);
  std::map<std::string, nlohmann::json> lines;
  std::map<std::string, std::string> strategy_of;
  std::int64_t max_world = 1;
  const bool several = SeveralCampaigns(rows);
  for (const ResultRow& row : rows) {
    if (row.world_size <= 1) continue;
    const std::optional<Speedup> speedup = SpeedupOf(baselines, row);
    if (!speedup) continue;
    const std::string name = SeriesName(row, several, names);
    strategy_of[name] = StrategyName(row);
    nlohmann::json point = {{"x", row.world_size}, {"y", speedup->value}};
    // A doubtful point is drawn hollow with its doubts in the tooltip (analysis/trust.h).
    if (!speedup->trust.plain()) point["doubt"] = speedup->trust.Names();
    lines[name].push_back(std::move(point));
    max_world = std::max(max_world, row.world_size);
  }
  if (lines.empty()) return nullptr;
  nlohmann::json datasets = nlohmann::json::array();
  std::map<std::string, int> styles;
  for (auto& [name, points] : lines) {
    std::vector<nlohmann::json> sorted(points.begin(), points.end());
    std::sort(sorted.begin(), sorted.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return a["x"].get<std::int64_t>() < b["x"].get<std::int64_t>();
    });
    sorted.insert(sorted.begin(), nlohmann::json{{"x", 1}, {"y", 1.0}});
    datasets.push_back(SeriesDataset(name, strategy_of[name], sorted, styles));
  }
  return {{"id", id}, {"kind", "speedup"}, {"title", title}, {"max_world", max_world},
          {"datasets", datasets}};
}

nlohmann::json StageChart(const std::string& id, const std::string& title,
                          const std::vector<ResultRow>& rows,
                          const std::vector<ResultRow>& unfolded, const StagesByTrial& stages,
                          const CampaignLabels& names) {
  const bool several = SeveralCampaigns(rows);
  auto label_of = [&](const ResultRow& row) {
    return several ? fmt::format("{}: {}", CampaignName(names, row.campaign),
                                 ConfigurationLabel(row))
                   : ConfigurationLabel(row);
  };
  // Per bar (campaign and configuration), per segment, the values of its trials.
  std::map<std::string, std::map<std::string, std::vector<double>>> values;
  std::vector<std::string> segment_order;
  for (const ResultRow& row : unfolded) {
    auto found = stages.find({row.campaign, row.trial_key});
    if (!row.measured() || found == stages.end()) continue;
    for (const auto& [segment, ms] : Segments(found->second)) {
      values[label_of(row)][segment].push_back(ms);
      if (std::find(segment_order.begin(), segment_order.end(), segment) == segment_order.end())
        segment_order.push_back(segment);
    }
  }
  if (values.empty()) return nullptr;
  std::vector<std::string> labels;
  for (const ResultRow& row : rows) {
    const std::string label = label_of(row);
    if (values.count(label) && std::find(labels.begin(), labels.end(), label) == labels.end())
      labels.push_back(label);
  }
  // Segments in a fixed order: the steps first, the rest of the iteration last.
  const std::vector<std::string> order = {"transformer blocks", "steps outside blocks",
                                          "denoising steps", "VAE decode",
                                          "rest of the iteration"};
  nlohmann::json datasets = nlohmann::json::array();
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::string& segment = order[k];
    if (std::find(segment_order.begin(), segment_order.end(), segment) == segment_order.end())
      continue;
    nlohmann::json data = nlohmann::json::array();
    for (const std::string& label : labels) {
      auto found = values[label].find(segment);
      data.push_back(found == values[label].end() ? nlohmann::json(nullptr)
                                                  : nlohmann::json(Median(found->second)));
    }
    datasets.push_back({{"label", segment}, {"color", StageColor(segment)}, {"data", data}});
  }
  return {{"id", id}, {"kind", "stages"}, {"title", title}, {"labels", labels},
          {"datasets", datasets}};
}

nlohmann::json MemoryChart(const std::string& id, const std::string& title,
                           const std::vector<ResultRow>& rows, const CampaignLabels& names) {
  const OneRankBaselines baselines(rows);
  const bool several = SeveralCampaigns(rows);
  std::map<std::string, std::map<std::int64_t, std::vector<double>>> lines;  // name -> world
  std::map<std::string, std::vector<double>> one_rank;  // name -> its baselines' peaks
  std::map<std::string, std::string> strategy_of;
  for (const ResultRow& row : rows) {
    if (!row.measured() || !row.peak_mem_mb || row.world_size == 1) continue;
    const std::string name = SeriesName(row, several, names);
    strategy_of[name] = StrategyName(row);
    lines[name][row.world_size].push_back(*row.peak_mem_mb);
    const ResultRow* baseline = baselines.For(row);
    if (baseline && baseline->peak_mem_mb) one_rank[name].push_back(*baseline->peak_mem_mb);
  }
  if (lines.empty()) return nullptr;
  nlohmann::json datasets = nlohmann::json::array();
  std::map<std::string, int> styles;
  for (const auto& [name, by_world] : lines) {
    nlohmann::json points = nlohmann::json::array();
    if (auto base = one_rank.find(name); base != one_rank.end())
      points.push_back({{"x", 1}, {"y", Median(base->second)}});
    for (const auto& [world, peaks] : by_world)
      points.push_back({{"x", world}, {"y", Median(peaks)}});
    datasets.push_back(SeriesDataset(name, strategy_of[name], points, styles));
  }
  return {{"id", id}, {"kind", "memory"}, {"title", title}, {"datasets", datasets}};
}

nlohmann::json OutputErrorChart(const std::string& id, const std::string& title,
                                const std::vector<ResultRow>& rows, const CampaignLabels& names) {
  const OneRankBaselines baselines(rows);
  const bool several = SeveralCampaigns(rows);
  // name -> world size -> (speedups, errors)
  std::map<std::string, std::map<std::int64_t, std::pair<std::vector<double>, std::vector<double>>>>
      series;
  std::map<std::string, std::string> strategy_of;
  std::map<std::string, std::map<std::int64_t, Trust>> doubts;
  std::vector<double> errors;
  for (const ResultRow& row : rows) {
    if (row.world_size <= 1) continue;
    if (!row.output_error || *row.output_error < 0) continue;
    const std::optional<Speedup> speedup = SpeedupOf(baselines, row);
    if (!speedup) continue;
    const std::string name = SeriesName(row, several, names);
    strategy_of[name] = StrategyName(row);
    auto& point = series[name][row.world_size];
    point.first.push_back(speedup->value);
    if (!speedup->trust.plain()) doubts[name][row.world_size].Add(speedup->trust);
    point.second.push_back(*row.output_error);
    errors.push_back(*row.output_error);
  }
  if (series.empty()) return nullptr;
  // A log axis has no 0: an exact strategy's points sit on the axis floor, labelled.
  const double floor = ZeroErrorFloor(errors);
  nlohmann::json datasets = nlohmann::json::array();
  std::map<std::string, int> styles;
  for (const auto& [name, by_world] : series) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& [world, values] : by_world) {
      const double error = Median(values.second);
      nlohmann::json point = {{"x", Median(values.first)}, {"y", error > 0 ? error : floor},
                              {"world", world}, {"exact", error == 0}};
      if (const Trust& trust = doubts[name][world]; !trust.plain()) point["doubt"] = trust.Names();
      points.push_back(std::move(point));
    }
    datasets.push_back(SeriesDataset(name, strategy_of[name], points, styles));
  }
  return {{"id", id}, {"kind", "error"}, {"title", title}, {"zero_floor", floor},
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
  // '#4e79a7' at opacity `alpha` (1: as it is).
  function faded(color, alpha) {
    if (alpha >= 1) return color;
    var n = parseInt(color.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + alpha + ')';
  }
  // Series of one strategy share its colour; the second, third... differ in shape and dash.
  var shapes = ['circle', 'triangle', 'rect', 'rectRot', 'star', 'crossRot'];
  function series(ds) {
    var style = ds.style || 0;
    return {label: ds.label, data: ds.points, borderColor: ds.color, backgroundColor: ds.color,
            pointStyle: shapes[style % shapes.length], pointRadius: 4,
            borderDash: style ? [6, 3] : [], showLine: true};
  }
  // Many series: the legend goes to the right, so that it leaves the plot its height.
  function legendFor(count) {
    return count > 4 ? {position: 'right', labels: {boxWidth: 24}} : {position: 'top'};
  }
  function latency(c) {
    return {
      type: 'bar',
      data: {labels: c.labels, datasets: c.datasets.map(function (ds) {
        return {label: ds.label, data: ds.data, ci_low: ds.ci_low, ci_high: ds.ci_high,
                backgroundColor: ds.colors.map(function (col) { return faded(col, ds.alpha); }),
                borderColor: ds.colors, borderWidth: 1};
      })},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {
          x: {title: {display: true, text: 'parallel configuration'}},
          y: {type: 'logarithmic',
              title: {display: true, text: 'median latency (ms, log scale); whiskers: 95% CI'}}
        },
        plugins: {
          // Campaigns by opacity (the bars' colours are their strategies'): grey swatches.
          legend: {display: c.legend, labels: {generateLabels: function (chart) {
            return chart.data.datasets.map(function (ds, i) {
              return {text: ds.label, fillStyle: faded('#555555', c.datasets[i].alpha),
                      strokeStyle: '#555555', lineWidth: 1, datasetIndex: i,
                      hidden: !chart.isDatasetVisible(i)};
            });
          }}},
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
    var datasets = c.datasets.map(series);
    datasets.push({label: 'ideal', data: [{x: 1, y: 1}, {x: c.max_world, y: c.max_world}],
                   borderColor: '#999', borderDash: [6, 4], pointRadius: 0, showLine: true});
    return {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: {type: 'linear', min: 1, title: {display: true, text: 'world size (ranks)'}},
                 y: {min: 0, title: {display: true, text: 'speedup vs 1 rank'}}},
        plugins: {title: {display: true, text: c.title}, legend: legendFor(datasets.length)}
      }
    };
  }
  function stages(c) {
    return {
      type: 'bar',
      data: {labels: c.labels, datasets: c.datasets.map(function (ds) {
        return {label: ds.label, data: ds.data, backgroundColor: ds.color};
      })},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: {stacked: true, title: {display: true, text: 'parallel configuration'}},
                 y: {stacked: true, min: 0,
                     title: {display: true,
                             text: c.y_title || 'median ms per iteration (slowest rank)'}}},
        plugins: {title: {display: true, text: c.title}}
      }
    };
  }
  // A scatter of one series per strategy, points joined.
  function lines(c, x, y) {
    return {
      type: 'scatter',
      data: {datasets: c.datasets.map(series)},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: x, y: y},
        plugins: {title: {display: true, text: c.title}, legend: legendFor(c.datasets.length)}
      }
    };
  }
  function steps(c) {
    return lines(c, {type: 'linear', min: 0, ticks: {precision: 0},
                     title: {display: true, text: 'denoising step'}},
                 {min: 0, title: {display: true, text: 'median ms (slowest rank)'}});
  }
  function memory(c) {
    return lines(c, {type: 'linear', min: 1, title: {display: true, text: 'world size (ranks)'}},
                 {min: 0, title: {display: true, text: 'peak memory per rank (MB)'}});
  }
  function outputError(c) {
    // An error of exactly 0 sits on the axis floor (zero_floor), labelled "0 (exact)".
    var floor = c.zero_floor;
    var atFloor = function (v) { return Math.abs(v - floor) < 1e-6 * floor; };
    var config = lines(c, {type: 'linear', min: 0,
                           title: {display: true, text: 'speedup vs 1 rank'}},
                       {type: 'logarithmic', min: floor, title: {display: true,
                        text: 'output error (rel. L2 vs 1 rank, log scale)'},
                        afterBuildTicks: function (axis) {
                          if (!axis.ticks.some(function (t) { return atFloor(t.value); }))
                            axis.ticks.unshift({value: floor});
                        },
                        // 1e-6, 2e-6, 5e-6, 1e-5: the rest of the log ticks unlabelled.
                        ticks: {callback: function (v) {
                          if (atFloor(v)) return '0 (exact)';
                          var text = Number(v).toExponential(0);
                          return /^[125]e/.test(text) && Math.abs(Number(text) - v) < 1e-3 * v
                                 ? text : '';
                        }}});
    config.options.plugins.tooltip = {callbacks: {label: function (t) {
      var p = t.raw;
      return t.dataset.label + ', ' + p.world + ' ranks: ' + p.x.toFixed(2) + 'x, error ' +
             (p.exact ? '0 (exact)' : p.y.toExponential(2));
    }}};
    return config;
  }
  // The Planner section's scatter (report/planner_section.h): a measured trial per point, x its
  // leave-one-out prediction with the 95% interval as a horizontal whisker, y its measurement,
  // log-log, with the identity line.
  var intervals = {
    id: 'predictionIntervals',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx, x = chart.scales.x;
      chart.data.datasets.forEach(function (ds, d) {
        var meta = chart.getDatasetMeta(d);
        if (meta.hidden || ds.identity) return;
        meta.data.forEach(function (point, i) {
          var p = ds.data[i];
          if (!(p.lo > 0) || !(p.hi > 0)) return;
          var left = x.getPixelForValue(p.lo), right = x.getPixelForValue(p.hi);
          ctx.save();
          ctx.strokeStyle = ds.borderColor; ctx.lineWidth = 1;
          ctx.beginPath();
          ctx.moveTo(left, point.y); ctx.lineTo(right, point.y);
          ctx.moveTo(left, point.y - 3); ctx.lineTo(left, point.y + 3);
          ctx.moveTo(right, point.y - 3); ctx.lineTo(right, point.y + 3);
          ctx.stroke();
          ctx.restore();
        });
      });
    }
  };
  function prediction(c) {
    var datasets = c.datasets.map(function (ds) {
      return {label: ds.label, data: ds.points, borderColor: ds.color, backgroundColor: ds.color,
              pointRadius: 4, showLine: false};
    });
    datasets.push({label: 'predicted = measured', identity: true,
                   data: [{x: c.identity_low, y: c.identity_low},
                          {x: c.identity_high, y: c.identity_high}],
                   borderColor: '#999', borderDash: [6, 4], pointRadius: 0, showLine: true});
    var axis = function (text) {
      return {type: 'logarithmic', min: c.identity_low / 1.2, max: c.identity_high * 1.2,
              title: {display: true, text: text}};
    };
    return {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: axis('predicted latency, leave-one-out (ms, log scale); whiskers: 95% interval'),
                 y: axis('measured latency (ms, log scale)')},
        plugins: {
          title: {display: true, text: c.title}, legend: legendFor(datasets.length),
          tooltip: {callbacks: {label: function (t) {
            var p = t.raw;
            if (t.dataset.identity) return 'predicted = measured';
            return [p.label, 'predicted ' + p.x.toFixed(2) + ' ms [' + p.lo.toFixed(2) + ' - ' +
                    p.hi.toFixed(2) + '], measured ' + p.y.toFixed(2) + ' ms'];
          }}}
        }
      },
      plugins: [intervals]
    };
  }
  // The Pareto chart (report/quality_section.h): a point per configuration, speedup against
  // output quality; the front dashed, its points larger, below-quality points a red cross;
  // each point named beside it, so that a printed page needs no tooltip.
  var pointNames = {
    id: 'pointNames',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      chart.data.datasets.forEach(function (ds, d) {
        var meta = chart.getDatasetMeta(d);
        if (meta.hidden || !ds.named) return;
        meta.data.forEach(function (point, i) {
          // Near the right edge the name goes to the left of its point.
          var left = point.x > chart.chartArea.right - 0.2 * chart.chartArea.width;
          ctx.save();
          ctx.fillStyle = ds.data[i].below ? '#b42318' : '#333';
          ctx.font = '11px system-ui, sans-serif';
          ctx.textAlign = left ? 'right' : 'left';
          ctx.fillText(ds.data[i].name, point.x + (left ? -8 : 8), point.y - 6);
          ctx.restore();
        });
      });
    }
  };
  function pareto(c) {
    var ok = c.points.filter(function (p) { return !p.below; });
    var below = c.points.filter(function (p) { return p.below; });
    var atExact = function (v) { return Math.abs(v - c.exact_at) < 1e-6 * Math.abs(c.exact_at); };
    var datasets = [
      {label: 'Pareto front', data: c.front, borderColor: '#777', borderDash: [6, 4],
       pointRadius: 0, showLine: true},
      {label: 'meets its quality gates (or has none)', data: ok, named: true, showLine: false,
       backgroundColor: ok.map(function (p) { return p.color; }),
       borderColor: ok.map(function (p) { return p.front ? '#222' : p.color; }),
       borderWidth: ok.map(function (p) { return p.front ? 2 : 1; }),
       pointRadius: ok.map(function (p) { return p.front ? 7 : 4; })},
      {label: 'below quality (never the winner)', data: below, named: true, showLine: false,
       pointStyle: 'crossRot', pointRadius: 9, borderWidth: 3, borderColor: '#b42318',
       backgroundColor: '#b42318'}
    ];
    var x = {type: c.log_x ? 'logarithmic' : 'linear', title: {display: true, text: c.x_title},
             // The exact output's tick replaces the regular ticks it would crowd.
             afterBuildTicks: function (axis) {
               var ticks = axis.ticks.filter(function (t) { return !atExact(t.value); });
               var step = ticks.length > 1 ? Math.abs(ticks[1].value - ticks[0].value) : 0;
               axis.ticks = ticks.filter(function (t) {
                 return c.log_x ? t.value > c.exact_at * 3 : t.value < c.exact_at - 0.6 * step;
               }).concat([{value: c.exact_at}]).sort(function (a, b) { return a.value - b.value; });
             },
             ticks: {callback: function (v) {
               if (atExact(v)) return c.log_x ? '0 (exact)' : 'inf (exact)';
               if (!c.log_x) return v;
               var text = Number(v).toExponential(0);
               return /^[125]e/.test(text) && Math.abs(Number(text) - v) < 1e-3 * v ? text : '';
             }}};
    if (c.log_x) x.min = c.exact_at / 2;
    else x.max = c.exact_at + 4;
    return {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        scales: {x: x, y: {min: 0, title: {display: true, text: 'speedup vs 1 rank'}}},
        plugins: {
          title: {display: true, text: c.title}, legend: {position: 'top'},
          tooltip: {callbacks: {label: function (t) {
            var p = t.raw;
            if (p.label === undefined) return 'Pareto front';
            return p.label + ': ' + p.y.toFixed(2) + 'x, ' +
                   (p.exact ? 'exact' : (c.log_x ? 'error ' + p.x.toExponential(2)
                                                 : 'PSNR ' + p.x.toFixed(1) + ' dB')) +
                   (p.below ? ' (' + p.quality + ')' : '');
          }}}
        }
      },
      plugins: [pointNames]
    };
  }
  var kinds = {latency: latency, speedup: speedup, stages: stages, memory: memory,
               error: outputError, prediction: prediction, steps: steps, pareto: pareto};
  charts.forEach(function (c) {
    var canvas = document.getElementById(c.id);
    if (!canvas || !kinds[c.kind]) return;
    new Chart(canvas, kinds[c.kind](c));
    canvas.setAttribute('data-drawn', '1');
  });
  document.body.setAttribute('data-charts-drawn', String(charts.length));
})();
)js";

}  // namespace ditbench
