// `ditbench query`: reads the `results` view of a results database, read-only.
//
// Filters, columns and sort keys name columns of the view; they are checked against it
// (unknown names are a usage error with a "did you mean"). Values are bound as SQL
// parameters, never pasted into the SQL text. --sql runs one read-only statement as given.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "base/table_printers.h"

namespace ditbench {

struct QueryOptions {
  std::filesystem::path db = "results.db";
  std::optional<std::string> sweep;
  std::optional<std::int64_t> campaign;
  std::optional<std::string> status;
  // Each "column<op>value" with op one of = != < > <= >=; all must hold. A value that reads
  // as a number is compared as a number.
  std::vector<std::string> where;
  // Empty: a compact set for `table` and `markdown`, every column for `csv` and `json`.
  std::vector<std::string> columns;
  std::string sort;            // "column" or "column:desc"; empty: campaign, group, latency
  TableFormat format = TableFormat::kText;  // any of kTableFormats
  std::string sql;             // when set, replaces all of the above but db and format
  // --sql is stopped after this long (storage SqlLimits; SQLite's memory is capped at 1 GiB
  // meanwhile). Its csv and json rows are written as they come, not held.
  double timeout_s = 300;
};

// Runs the query and prints the rows to `out`. Returns kExitOk, or kExitUsage after printing
// one line "ditbench query: error: ..." to `err` (missing database, unknown column, malformed
// filter, a --sql statement that is not read-only, fails or runs past its limits), or
// kExitTrialsFailed after "ditbench query: error: cannot write ..." when `out` failed (a full
// disk: the real cause is named).
int RunQuery(const QueryOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ditbench
