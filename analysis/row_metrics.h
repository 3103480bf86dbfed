// A result row's metrics by name, for printers that walk the metric table
// (metrics/metric_table.h) instead of naming each metric: the ResultRow column of a table row
// that has one, else the row's extra metric of that name (ResultRow::extra_metrics). A new
// measured metric stored as an extra metric needs nothing here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric_table.h"
#include "storage/result_rows.h"

namespace ditbench {

// `row`'s value of `name`; unset when the row has none.
std::optional<double> MetricValue(const ResultRow& row, std::string_view name);

// A served row's offered rate, requests a second: its load's `rate`, or for a share of
// capacity (`rate: {of_capacity: F, ...}`) the rate it came to when it ran (offered_per_s);
// nullopt for a closed loop, a trace, a share not run, or a row that serves nothing.
std::optional<double> OfferedRate(const ResultRow& row);

// How `name` is shown: the table's row for a name of the table, else what some row's extra
// metric declared (the first that declared a unit or direction), else no unit, kUnknown, and
// no direction. `value` is left 0.
ExtraMetric MetricDisplay(const std::vector<const ResultRow*>& rows, std::string_view name);

// The extra metrics some row has, shown after the fixed columns of a printer in `where` (one
// MetricShownIn bit): names of the table whose row is shown there first, in table order, then
// the program's own by name (always shown). A name with a ResultRow column of its own
// (latency_ms) is left out: MetricValue reads the column.
std::vector<std::string> ExtraMetricNames(const std::vector<const ResultRow*>& rows,
                                          MetricShownIn where);

// "name (unit)", or the name when it has no unit: a column header.
std::string MetricHeader(std::string_view name, const ExtraMetric& display);

}  // namespace ditbench
