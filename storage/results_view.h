// The public `results` view (README.md, "The results view") as each schema version defines it:
// the migrations of storage/schema.cc drop the view and create it again at their version.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ditbench {

// The CREATE VIEW statement of the `results` view at schema version `version` (1 or later).
// From version 22 it ends with a column per metric of the metric table held by name
// (metrics/metric_table.h: decode_ms, p95_ms, ...), read from metric_values: the view follows
// the table of the build that created it.
std::string ResultsView(int version);

// `view_sql` (a results view's text) without the metric columns ResultsView(version >= 22) ends
// with, each exactly as it writes them. Two views equal without them are the views of two
// builds' metric tables: MigrateSchema creates a database's view again when its metric table
// had other rows, and the schema check reads such a view as this build's (storage/schema.h).
std::string WithoutMetricColumns(std::string_view view_sql);

// The names of the metric columns ResultsView(version >= 22) ends with.
std::vector<std::string> MetricColumnsOfView();

}  // namespace ditbench
