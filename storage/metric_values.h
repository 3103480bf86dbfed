// A trial's extra metrics (metrics/metric_table.h) in the narrow table metric_values (schema
// version 18, storage/schema.cc): one row per name, with what the program declared about it.
// Storage's own helpers, called inside ResultsDb's transactions; they throw StorageError.
#pragma once

#include <cstdint>
#include <vector>

#include "contract/measurement_records.h"
#include "storage/result_rows.h"

struct sqlite3;

namespace ditbench {

// Replaces trial `trial_id`'s extra metrics with `m.extra` (and their declarations) and sets
// its extra_note. REQUIRES: the trial's trial_metrics row exists (the values belong to it).
void WriteMetricValues(sqlite3* db, std::int64_t trial_id, const TrialMetrics& m);

// Fills each row's extra_metrics from metric_values, matching on campaign and trial key. A
// stored name that is not a valid metric name, or a value that is not finite, is skipped (a
// database may have been written by hand). A name of the metric table takes the table's unit
// and direction. Also each row's metrics_note.
void ReadMetricValues(sqlite3* db, std::vector<ResultRow>& rows);

}  // namespace ditbench
