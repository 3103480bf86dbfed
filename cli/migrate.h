// `ditbench migrate --db FILE`: brings a results database to this build's schema and does
// nothing else (no sweep, no trial). `query`, `report` and `compare` open databases read-only
// and never migrate; an older database sends the user here.
#pragma once

#include <filesystem>
#include <iosfwd>

namespace ditbench {

// Migrates `db` forward (storage/schema.h) under the coordinator lock (runner/coordinator_lock.h),
// one transaction per step. Prints one line to `out` saying from which version to which (or
// that it was current). Returns kExitOk, or kExitUsage after one line on `err`: no such file,
// a coordinator holds the database, a newer, foreign or damaged database.
int MigrateDatabase(const std::filesystem::path& db, std::ostream& out, std::ostream& err);

}  // namespace ditbench
