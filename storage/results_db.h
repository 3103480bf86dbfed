// ResultsDb: the SQLite results database (schema in storage/schema.cc, docs/architecture.md):
// the one connection, and the objects that use it by role.
//
// WAL mode, foreign keys on, a busy timeout, and a schema_version table with forward
// migrations: a database newer than this build is refused with a clear message rather than
// misread. Every finished trial is committed in its own transaction, so a coordinator killed
// at any instant loses at most the trial in flight.
//
// The roles, each in its own header, so that a caller takes only the one it needs:
//   writer()          CampaignWriter: campaigns, trials and launches as `run` records them
//   reader()          ResultsReader: typed reads for the report, compare, history, searches
//   planner_history() PlannerHistory: what the planner reads and the fits it records
//   output_errors()   OutputErrorStore: output errors waiting for their 1-rank reference
//   selfchecks()      SelfcheckStore: `ditbench selfcheck`'s verdicts per device
//   console()         SqlConsole: `ditbench query` and its read-only `--sql`
// Each is borrowed from the ResultsDb and shares its connection (and so its transactions and
// its wait for another program's lock): it must not outlive it.
//
// Errors: every method throws StorageError (one line: what failed, the path, SQLite's message).
// Thread-safety: one ResultsDb (and its roles) per thread; SQLite itself serialises writers
// across processes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "storage/busy_wait.h"
#include "storage/campaign_writer.h"
#include "storage/output_error_store.h"
#include "storage/planner_history.h"
#include "storage/results_reader.h"
#include "storage/selfcheck_store.h"
#include "storage/sql_console.h"
#include "storage/sqlite_connection.h"
#include "storage/storage_error.h"

namespace ditbench {

// The schema version stored in the database at `path`, read without migrating or checking
// anything else (`ditbench migrate` says from which version it brought a database). Throws
// StorageError when `path` is not a database.
std::int64_t StoredSchemaVersion(const std::filesystem::path& path);

class ResultsDb {
 public:
  // Opens or creates the database at `path`. `read_only` never creates or migrates. A writer
  // waits for another program's lock as `wait` says, from the first statement on (migration
  // included).
  static std::unique_ptr<ResultsDb> Open(const std::filesystem::path& path,
                                         bool read_only = false, BusyWait wait = {});
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;
  ~ResultsDb();

  struct BusyState;  // the busy handler's context (results_db.cc)

  // The path the database was opened at, as given to Open.
  const std::filesystem::path& path() const { return path_; }

  // The roles over this connection (see above); valid while this ResultsDb lives.
  CampaignWriter& writer() { return writer_; }
  ResultsReader& reader() { return reader_; }
  PlannerHistory& planner_history() { return planner_history_; }
  OutputErrorStore& output_errors() { return output_errors_; }
  SelfcheckStore& selfchecks() { return selfchecks_; }
  SqlConsole& console() { return console_; }

 private:
  ResultsDb(SqliteConnection connection, std::filesystem::path path);
  std::unique_ptr<BusyState> busy_;  // declared before the connection: outlives it
  SqliteConnection connection_;
  std::filesystem::path path_;
  // Declared after the connection and the path they borrow.
  CampaignWriter writer_;
  ResultsReader reader_;
  PlannerHistory planner_history_;
  OutputErrorStore output_errors_;
  SelfcheckStore selfchecks_;
  SqlConsole console_;
};

}  // namespace ditbench
