// The results database schema: tables, the public `results` view, and forward migrations.
//
// The version history is in storage/schema.cc, beside the migrations.
// A database with a lower version is migrated forward, one transaction per step. A newer one,
// or a file that is not a ditbench database, is refused with StorageError.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct sqlite3;

namespace ditbench {

// The version this build writes: the number of migrations in storage/schema.cc. Databases with
// a lower version are migrated forward on open (MigrateSchema).
extern const int kSchemaVersion;

// The schema version recorded in `db`: 0 when the database has no schema_version table. As
// stored: a table edited by hand may hold any integer (MigrateSchema and
// CheckSchemaForReading refuse one outside 0..kSchemaVersion).
std::int64_t ReadSchemaVersion(sqlite3* db);

// The file `db` was opened from, for messages: ":memory:" for an in-memory database.
std::string DbFile(sqlite3* db);

// Brings `db` to kSchemaVersion. REQUIRES: opened for writing. Throws StorageError for a
// newer schema, a negative version, or a database that holds other tables but no
// schema_version.
void MigrateSchema(sqlite3* db);

// Throws StorageError unless `db` is exactly at kSchemaVersion (for read-only opens, which
// never migrate).
void CheckSchemaForReading(sqlite3* db);

// Throws StorageError naming the first table, view or column that this build's schema has
// and `db` lacks (a column dropped by hand, a view deleted), and EditedSchemaError naming the
// first of them whose stored SQL is not the text this build creates (a view edited by hand,
// which a reader would otherwise run). Extra objects, and columns added to a table by ALTER
// TABLE ADD COLUMN, are allowed. Reads sqlite_master only: nothing in `db` is run.
// REQUIRES: `db` at kSchemaVersion.
void CheckSchemaComplete(sqlite3* db);

// The contract columns of the `results` view, in order (README.md, "The results view"). The
// view has these first, then extras (p99_ms, min_ms, ..., run_dir).
const std::vector<std::string>& ResultsContractColumns();

}  // namespace ditbench
