#include "analysis/row_metrics.h"

#include <algorithm>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ditbench {

std::optional<double> OfferedRate(const ResultRow& row) {
  const nlohmann::json computation = nlohmann::json::parse(row.computation, nullptr, false);
  if (!computation.is_object()) return std::nullopt;
  const auto serve = computation.find("serve");
  if (serve == computation.end() || !serve->is_object()) return std::nullopt;
  const auto rate = serve->find("rate");
  if (rate == serve->end()) return std::nullopt;
  if (rate->is_number()) return rate->get<double>();
  if (rate->is_object()) return MetricValue(row, "offered_per_s");
  return std::nullopt;
}

std::optional<double> MetricValue(const ResultRow& row, std::string_view name) {
  if (const auto member = RowMemberOf(name)) return row.*member;
  auto extra = row.extra_metrics.find(std::string(name));
  if (extra == row.extra_metrics.end()) return std::nullopt;
  return extra->second.value;
}

ExtraMetric MetricDisplay(const std::vector<const ResultRow*>& rows, std::string_view name) {
  if (FindMetric(name)) return ExtraMetricOf(name, 0, {});
  for (const ResultRow* row : rows) {
    auto extra = row->extra_metrics.find(std::string(name));
    if (extra == row->extra_metrics.end()) continue;
    if (extra->second.unit.empty() && extra->second.better == Better::kNone) continue;
    ExtraMetric display = extra->second;
    display.value = 0;
    return display;
  }
  return {};
}

std::vector<std::string> ExtraMetricNames(const std::vector<const ResultRow*>& rows,
                                          MetricShownIn where) {
  std::set<std::string> present;
  for (const ResultRow* row : rows)
    for (const auto& [name, metric] : row->extra_metrics)
      if (!RowMemberOf(name)) present.insert(name);  // a column metric is shown in its column
  std::vector<std::string> names;
  for (const MetricInfo& m : MetricTable())
    if (present.erase(std::string(m.name)) && (m.shown_in & where)) names.emplace_back(m.name);
  names.insert(names.end(), present.begin(), present.end());
  return names;
}

std::string MetricHeader(std::string_view name, const ExtraMetric& display) {
  return display.unit.empty() ? std::string(name) : fmt::format("{} ({})", name, display.unit);
}

}  // namespace ditbench
