// The report's columns for extra metrics (metrics/metric_table.h): one column per extra metric
// some row of a table has (a command's own numbers, built-in metrics without a column of their
// own), its header "name (unit)" with the table's description or the declared direction as a
// tooltip, each cell formatted by the metric's hint (unknown: 4 significant digits). Renders
// only: the names and values come from analysis/row_metrics.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/table.h"
#include "metrics/metric_table.h"
#include "storage/result_rows.h"

namespace ditbench {

// `value` of the table's metric `name` as every printer shows it (FormatMetric with the
// metric's hint: SSIM "1.0000", PSNR "35.2"), or "-" when unset. REQUIRES: `name` is a row of
// the metric table.
std::string MetricText(const std::optional<double>& value, std::string_view name);

class MetricColumns {
 public:
  // The extra metrics of `rows` shown in the report's group table (kShownInReportTable), in
  // ExtraMetricNames' order; none when no row has one.
  explicit MetricColumns(const std::vector<ResultRow>& rows);

  // One column per metric: "name (unit)", its description or declared direction as its
  // description, right-aligned, class "metric".
  std::vector<Column> Columns() const;
  // One cell per column: the value as its hint formats it, "-" where `row` has none.
  std::vector<Cell> CellsOf(const ResultRow& row) const;

 private:
  std::vector<std::string> names_;
  std::vector<ExtraMetric> displays_;
};

}  // namespace ditbench
