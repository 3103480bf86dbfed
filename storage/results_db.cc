// ResultsDb's connection (results_db.h): opening, the schema check and migration on open, and
// how a writer waits for another program's lock. The roles over it live beside it:
// campaign_writer.cc, results_reader.cc, planner_history.cc, output_error_store.cc,
// selfcheck_store.cc and sql_console.cc.
#include "storage/results_db.h"

#include <algorithm>
#include <chrono>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "storage/schema.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

// An absolute path as the path of a file: URI (RFC 3986): '%', '?' and '#' escaped.
std::string UriPath(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  std::string uri;
  for (char c : (ec ? path : absolute).string()) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri;
}

// A database in WAL mode needs its -shm file even to be read. Where the folder cannot be
// written (read-only media, a results archive mounted read-only) and no writer is running (no
// -wal file), nothing can change under us: open it immutable, which needs no -shm.
SqliteConnection OpenForReading(const std::filesystem::path& path) {
  SqliteConnection db = OpenSqlite(path.string(), SQLITE_OPEN_READONLY);
  const int rc = sqlite3_exec(db.get(), "SELECT count(*) FROM sqlite_master", nullptr, nullptr,
                              nullptr);
  if ((rc & 0xff) != SQLITE_CANTOPEN) return db;
  std::error_code ec;
  if (std::filesystem::exists(path.string() + "-wal", ec)) return db;  // a writer: report it
  const std::string uri = fmt::format("file:{}?immutable=1", UriPath(path));
  return OpenSqlite(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

}  // namespace

struct ResultsDb::BusyState {
  BusyWait wait;
  std::filesystem::path path;
  std::chrono::milliseconds waited{0};  // in the current wait
  bool reported = false;                // `waiting` called in the current wait
};

namespace {

// SQLite's busy handler: sleeps with backoff and says whether to try again. `count` is 0 at
// the first retry of each statement, which starts a new wait.
extern "C" int RetryWhileBusy(void* context, int count) {
  auto& state = *static_cast<ResultsDb::BusyState*>(context);
  if (count == 0) {
    state.waited = std::chrono::milliseconds(0);
    state.reported = false;
  }
  if (state.wait.give_up && state.wait.give_up()) return 0;
  if (!state.reported && state.waited >= state.wait.report_after) {
    state.reported = true;
    if (state.wait.waiting) state.wait.waiting(state.path);
  }
  const auto pause = std::chrono::milliseconds(1LL << std::min(count, 10));
  std::this_thread::sleep_for(pause);
  state.waited += pause;
  return 1;
}

// Refuses fts3_tokenizer at prepare time: its two-argument form installs a tokenizer from a
// pointer the SQL gives (a way to run any code), its one-argument form prints an address.
extern "C" int RefuseTokenizerFunction(void*, int action, const char*, const char* function,
                                       const char*, const char*) {
  if (action == SQLITE_FUNCTION && function && sqlite3_stricmp(function, "fts3_tokenizer") == 0)
    return SQLITE_DENY;
  return SQLITE_OK;
}

// A read-only connection runs `query --sql`'s statements, which are the user's or a script's:
// SQLite's own switch turns the tokenizer off (FTS3_TOKENIZER, compiled in by Debian), and an
// authorizer refuses the function by name, whatever SQLite build is linked.
void RefuseUnsafeFunctions(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_set_authorizer(db, RefuseTokenizerFunction, nullptr);
}

}  // namespace

std::int64_t StoredSchemaVersion(const std::filesystem::path& path) {
  SqliteConnection raw = OpenSqlite(path.string(), SQLITE_OPEN_READONLY);
  return ReadSchemaVersion(raw.get());
}

std::unique_ptr<ResultsDb> ResultsDb::Open(const std::filesystem::path& path, bool read_only,
                                           BusyWait wait) {
  if (read_only) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw MissingDatabaseError(fmt::format("no results database at '{}'", path.string()));
    }
  }
  SqliteConnection db = read_only ? OpenForReading(path)
                                  : OpenSqlite(path.string(),
                                               SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  auto busy = std::make_unique<BusyState>();
  busy->path = path;
  busy->wait = std::move(wait);
  if (read_only) {
    sqlite3_busy_timeout(db.get(), 5000);
  } else {  // a writer waits for another program's lock, with backoff (BusyWait)
    sqlite3_busy_handler(db.get(), RetryWhileBusy, busy.get());
  }
  Exec(db.get(), "PRAGMA foreign_keys = ON");
  if (read_only) {
    RefuseUnsafeFunctions(db.get());
    CheckSchemaForReading(db.get());
  } else {
    Exec(db.get(), "PRAGMA journal_mode = WAL");
    MigrateSchema(db.get());
  }
  // Before anything is run or read: a damaged schema would otherwise surface only when a
  // finished trial is written.
  CheckSchemaComplete(db.get());
  auto results = std::unique_ptr<ResultsDb>(new ResultsDb(std::move(db), path));
  results->busy_ = std::move(busy);
  return results;
}

ResultsDb::ResultsDb(SqliteConnection connection, std::filesystem::path path)
    : connection_(std::move(connection)),
      path_(std::move(path)),
      writer_(connection_.get(), path_),
      reader_(connection_.get(), path_),
      planner_history_(connection_.get()),
      output_errors_(connection_.get()),
      selfchecks_(connection_.get()),
      console_(connection_.get()) {}

ResultsDb::~ResultsDb() = default;  // the connection closes before the busy state goes

}  // namespace ditbench
