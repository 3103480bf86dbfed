#include "report/metric_columns.h"

#include <fmt/format.h>

#include "analysis/row_metrics.h"

namespace ditbench {

std::string MetricText(const std::optional<double>& value, std::string_view name) {
  return value ? FormatMetric(*value, FindMetric(name)->hint) : std::string("-");
}

MetricColumns::MetricColumns(const std::vector<ResultRow>& rows) {
  std::vector<const ResultRow*> pointers;
  for (const ResultRow& row : rows) pointers.push_back(&row);
  names_ = ExtraMetricNames(pointers, kShownInReportTable);
  for (const std::string& name : names_) displays_.push_back(MetricDisplay(pointers, name));
}

std::vector<Column> MetricColumns::Columns() const {
  std::vector<Column> columns;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    const MetricInfo* info = FindMetric(names_[i]);
    std::string title = info ? std::string(info->description) : "the program's own number";
    if (displays_[i].better != Better::kNone)
      title += fmt::format("; {} is better", BetterName(displays_[i].better));
    columns.push_back({.name = MetricHeader(names_[i], displays_[i]),
                       .align = Align::kRight,
                       .description = std::move(title),
                       .html_class = "metric"});
  }
  return columns;
}

std::vector<Cell> MetricColumns::CellsOf(const ResultRow& row) const {
  std::vector<Cell> cells;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    auto metric = row.extra_metrics.find(names_[i]);
    cells.push_back(metric == row.extra_metrics.end()
                        ? std::string("-")
                        : FormatMetric(metric->second.value, displays_[i].hint));
  }
  return cells;
}

}  // namespace ditbench
