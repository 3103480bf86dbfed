// Typed queries of the `results` view for `ditbench query` (SqlConsole::QueryResults,
// implemented in storage/sql_console.cc: the only place their SQL is built).
//
// Column names (filters, columns, sort) are checked against the view and quoted; values are
// bound as parameters, never pasted into the SQL text. StreamReadOnlySql runs exactly one
// statement that sqlite3_stmt_readonly accepts. Mistakes in the query itself throw
// QueryError (one line, with "did you mean" for a misspelled column); database trouble
// throws StorageError.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "storage/storage_error.h"

namespace ditbench {

// `column op value`; op one of = != < > <= >=. Values are typed by the column: text columns
// (sweep, status, model, precision, ...) compare as text; every other column holds numbers,
// and a value that does not read fully as a number is a QueryError.
struct ResultsCondition {
  std::string column, op, value;
};

// What the analysis layer derives for one stored trial, which storage only joins to the view:
// its speedup as the report shows it (analysis/speedup.h) with its doubts ("busy, borrowed
// baseline"; "" when none), and its settings label (analysis/configuration_group.h:
// SettingsLabel, "graph=cuda_graph vae_tile=128"; "" when every setting is at its default), so
// that a sweep over any setting reads apart in `query` with no column of its own.
struct DerivedRowValues {
  std::int64_t campaign = 0;
  std::string trial_key;
  std::optional<double> speedup;
  std::string trust;
  std::string settings;
};

// An unknown sweep or campaign is a QueryError naming the known ones. Besides the view's
// columns, `speedup`, `speedup_trust` and `settings` may be selected, filtered and sorted on:
// the values in `derived` (NULL for a trial it does not name).
struct ResultsQuery {
  std::optional<std::string> sweep;
  std::optional<std::int64_t> campaign;
  std::optional<std::string> status;
  std::vector<ResultsCondition> conditions;  // all must hold
  std::vector<std::string> columns;          // empty: every column of the view
  std::string sort_column;                   // empty: campaign, group, latency, trial key
  bool descending = false;
  std::vector<DerivedRowValues> derived;  // filled by the caller from analysis/
};

using ResultCell = std::variant<std::monostate, std::int64_t, double, std::string>;

struct ResultTable {
  std::vector<std::string> columns;
  std::vector<std::vector<ResultCell>> rows;
};

// Bounds on one --sql statement (SqlConsole::StreamReadOnlySql): past `time` it is stopped, and
// SQLite's memory (process-wide: sqlite3_hard_heap_limit64) is capped at `heap_bytes` while it
// runs; either ends it with a QueryError saying which. An infinite recursive CTE ends so.
struct SqlLimits {
  std::chrono::milliseconds time{std::chrono::minutes(5)};
  std::int64_t heap_bytes = std::int64_t{1} << 30;
};

// Receives a statement's result as SQLite produces it, so that nothing but one row is held:
// Columns once, then Row per row. May throw (an output that cannot be written): the statement
// is then abandoned and the exception passes through.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  virtual void Columns(const std::vector<std::string>& names) = 0;
  virtual void Row(const std::vector<ResultCell>& cells) = 0;
};

// The reads themselves are SqlConsole's (storage/sql_console.h).

}  // namespace ditbench
