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
      nlohmann::json point = {{"x", Median(values.first)},
                              {"y", error > 0 ? error : floor},
                              {"world", world},
                              {"exact", error == 0}};
      if (const Trust& trust = doubts[name][world]; !trust.plain()) point["doubt"] = trust.Names();
      points.push_back(std::move(point));
    }
    datasets.push_back(SeriesDataset(name, strategy_of[name], points, styles));
  }
  return {{"id", id}, {"kind", "error"}, {"title", title}, {"zero_floor", floor},
          {"datasets", datasets}};
}

}  // namespace ditbench
