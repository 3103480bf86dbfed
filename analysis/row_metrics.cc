#include "analysis/row_metrics.h"

#include <algorithm>
#include <iterator>
#include <set>

#include <fmt/format.h>

namespace ditbench {
namespace {

// The metric table's rows that ResultRow has a column for.
struct RowColumn {
  std::string_view name;
  std::optional<double> ResultRow::*member;
};
constexpr RowColumn kRowColumns[] = {
    {"latency_ms", &ResultRow::latency_ms},
    {"ci_low_ms", &ResultRow::ci_low_ms},
    {"ci_high_ms", &ResultRow::ci_high_ms},
    {"rank0_ms", &ResultRow::rank0_ms},
    {"skew_ms", &ResultRow::skew_ms},
    {"cov", &ResultRow::cov},
    {"peak_mem_mb", &ResultRow::peak_mem_mb},
    {"tflops", &ResultRow::tflops},
    {"mfu", &ResultRow::mfu},
    {"comm_mb_per_step", &ResultRow::comm_mb_per_step},
    {"energy_j", &ResultRow::energy_j},
    {"joules_per_image", &ResultRow::joules_per_image},
    {"output_error", &ResultRow::output_error},
    {"psnr", &ResultRow::psnr},
    {"ssim", &ResultRow::ssim},
};

}  // namespace

std::optional<double> MetricValue(const ResultRow& row, std::string_view name) {
  for (const RowColumn& c : kRowColumns)
    if (c.name == name) return row.*c.member;
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

std::vector<std::string> ExtraMetricNames(const std::vector<const ResultRow*>& rows) {
  std::set<std::string> present;
  for (const ResultRow* row : rows)
    for (const auto& [name, metric] : row->extra_metrics)
      if (std::none_of(std::begin(kRowColumns), std::end(kRowColumns),
                       [&](const RowColumn& c) { return c.name == name; }))
        present.insert(name);  // a name with a column of its own is shown there
  std::vector<std::string> names;
  for (const MetricInfo& m : MetricTable())
    if (present.erase(std::string(m.name))) names.emplace_back(m.name);
  names.insert(names.end(), present.begin(), present.end());
  return names;
}

std::string MetricHeader(std::string_view name, const ExtraMetric& display) {
  return display.unit.empty() ? std::string(name) : fmt::format("{} ({})", name, display.unit);
}

}  // namespace ditbench
