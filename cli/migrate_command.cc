// `ditbench migrate`: see cli/migrate.h.
#include "cli/migrate.h"

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/escaped_error.h"
#include "runner/coordinator_lock.h"
#include "storage/results_db.h"
#include "storage/schema.h"
#include "storage/storage_error.h"

namespace ditbench {

int MigrateDatabase(const std::filesystem::path& db, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(db, ec)) {
    err << "ditbench migrate: error: no results database at '" << db.string() << "'\n";
    return kExitUsage;
  }
  try {
    // Declared before the database, so that the database closes first (coordinator_lock.h).
    std::optional<CoordinatorLock> lock = LockForCommand(db, "migrate", err);
    if (!lock) return kExitStorageFailed;  // held by a run, or the lock file cannot be made
    const std::int64_t before = StoredSchemaVersion(db);
    ResultsDb::Open(db);  // migrates, then checks the schema is complete
    if (before == kSchemaVersion) {
      out << fmt::format("'{}' is at schema version {} already: nothing to do\n", db.string(),
                         kSchemaVersion);
    } else {
      out << fmt::format("'{}' migrated from schema version {} to {}\n", db.string(), before,
                         kSchemaVersion);
    }
  } catch (const StorageError& e) {  // damaged, foreign or too new: README "Exit codes"
    err << "ditbench migrate: error: " << e.what() << "\n";
    return StorageErrorExit(e);
  } catch (...) {
    return ReportEscapedError("ditbench migrate", err);
  }
  return kExitOk;
}

std::function<int()> DefineMigrateCommand(CLI::App& sub) {
  auto db = std::make_shared<std::string>("results.db");
  sub.add_option("--db", *db, "Results database to migrate")->capture_default_str();
  return [db] { return MigrateDatabase(*db, std::cout, std::cerr); };
}

}  // namespace ditbench
