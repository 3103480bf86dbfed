// CheckSchemaComplete (schema.h): a database's tables and views against the ones this build
// creates, by name, columns and SQL text.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <sqlite3.h>

#include "storage/results_view.h"
#include "storage/schema.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

// One table or view as sqlite_master and SQLite report it.
struct SchemaObject {
  std::string type;  // "table" or "view"
  std::string sql;   // its CREATE statement as stored (ALTER TABLE edits it in place)
  std::vector<std::string> columns;
};

// Every table and view of a database, by name.
using SchemaShape = std::map<std::string, SchemaObject>;

// Only names and the stored text are read: nothing here runs a view, so an edited view that
// would never finish is refused before any reader touches it.
SchemaShape ReadShape(sqlite3* db) {
  SchemaShape shape;
  Statement objects(db,
                    "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY name");
  while (objects.Step()) {
    SchemaObject& object = shape[objects.Text(0)];
    object.type = objects.Text(1);
    if (!objects.IsNull(2)) object.sql = objects.Text(2);
  }
  for (auto& [name, object] : shape) {
    Statement columns(db, "SELECT name FROM pragma_table_info(?)");
    columns.Bind(1, name);
    while (columns.Step()) object.columns.push_back(columns.Text(0));
  }
  return shape;
}

// The shape this build creates: the migrations run once on an in-memory database, so the
// expectation can never drift from the schema itself. A database migrated from any older
// version ran the same statements, so its text is the same.
const SchemaShape& ExpectedShape() {
  static const SchemaShape shape = [] {
    SqliteConnection memory = OpenSqlite(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    MigrateSchema(memory.get());
    return ReadShape(memory.get());
  }();
  return shape;
}

// Whether `actual` is the object this build creates: a view exactly its text (a view is what a
// reader runs); a table its text, or its text with columns added by ALTER TABLE ADD COLUMN
// (which writes ", <column>" after the last column, before any table constraint), as a user may
// add for their own notes: a column's definition cannot hold a query, so no reader runs one.
bool SameObject(const SchemaObject& expected, const SchemaObject& actual) {
  const std::string& want = expected.sql;
  const std::string& have = actual.sql;
  if (have == want) return true;
  // The results view of another build's metric table (storage/results_view.h).
  if (expected.type == "view" && WithoutMetricColumns(have) == WithoutMetricColumns(want))
    return true;
  if (expected.type != "table" || have.size() <= want.size()) return false;
  // `have` is `want` with text inserted at some i: want[0, i) + ", ..." + want[i, end).
  std::size_t prefix = 0, suffix = 0;
  while (prefix < want.size() && have[prefix] == want[prefix]) ++prefix;
  while (suffix < want.size() && have[have.size() - 1 - suffix] == want[want.size() - 1 - suffix])
    ++suffix;
  for (std::size_t i = want.size() - suffix; i <= prefix; ++i)
    if (have[i] == ',') return true;
  return false;
}

}  // namespace

void CheckSchemaComplete(sqlite3* db) {
  const SchemaShape actual = ReadShape(db);
  for (const auto& [name, expected] : ExpectedShape()) {
    auto found = actual.find(name);
    if (found == actual.end() || found->second.type != expected.type) {
      throw StorageError(fmt::format(
          "results database '{}' is damaged: {} '{}' is missing (schema version {} expects it)",
          DbFile(db), expected.type, name, kSchemaVersion));
    }
    const auto& have = found->second.columns;
    const std::vector<std::string> metric_columns = MetricColumnsOfView();
    for (const auto& column : expected.columns) {
      const bool metric = expected.type == "view" &&
                          std::find(metric_columns.begin(), metric_columns.end(), column) !=
                              metric_columns.end();  // another build's metric table: no reader
      if (!metric && std::find(have.begin(), have.end(), column) == have.end()) {
        throw StorageError(fmt::format(
            "results database '{}' is damaged: {} '{}' lacks column '{}' (schema version {} "
            "expects it)",
            DbFile(db), expected.type, name, column, kSchemaVersion));
      }
    }
    if (!SameObject(expected, found->second)) {
      throw EditedSchemaError(fmt::format(
          "results database '{}' was edited: {} '{}' is not the one ditbench creates for schema "
          "version {}; refused unread (restore the database from a backup)",
          DbFile(db), expected.type, name, kSchemaVersion));
    }
  }
}

}  // namespace ditbench
