// SqlConsole: `ditbench query` against the results database (storage/results_query.h): the
// typed query behind its filters, and `--sql`, one read-only statement as written. Meant for a
// read-only ResultsDb; `--sql` refuses any statement that sqlite3_stmt_readonly does not
// accept, whatever the connection.
//
// Made by ResultsDb::Open over its connection and borrowed from it (ResultsDb::console()): it
// must not outlive the ResultsDb. Errors: QueryError for a mistake in the query, StorageError
// for database trouble. Thread-safety: as ResultsDb.
#pragma once

#include <string>
#include <vector>

#include "storage/results_query.h"

struct sqlite3;

namespace ditbench {

class SqlConsole {
 public:
  SqlConsole(const SqlConsole&) = delete;
  SqlConsole& operator=(const SqlConsole&) = delete;

  // The rows of the `results` view matching a query (its columns in the view's order when
  // the query names none).
  ResultTable QueryResults(const ResultsQuery& query);
  // One read-only statement as written, its rows handed to `sink` as they come, within
  // `limits` (QueryError when it runs past them).
  void StreamReadOnlySql(const std::string& sql, const SqlLimits& limits, ResultSink& sink);

 private:
  friend class ResultsDb;
  explicit SqlConsole(sqlite3* db) : db_(db) {}
  sqlite3* db_;  // ResultsDb's connection, borrowed
};

}  // namespace ditbench
