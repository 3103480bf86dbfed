// The fixture of the ResultsDb tests: a database path in a fresh folder, a read of one value
// over a separate connection, and `query --sql`'s statement collected into a table.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "storage/sql_console.h"
#include "storage/statement.h"
#include "tests/support/temp_dir.h"

namespace ditbench {

namespace test {

// One read-only statement through SqlConsole::StreamReadOnlySql (what `query --sql` runs, with
// its default limits), its rows collected.
inline ResultTable ReadOnlySql(SqlConsole& console, const std::string& sql) {
  struct Collect final : ResultSink {
    void Columns(const std::vector<std::string>& names) override { table.columns = names; }
    void Row(const std::vector<ResultCell>& cells) override { table.rows.push_back(cells); }
    ResultTable table;
  } collect;
  console.StreamReadOnlySql(sql, SqlLimits{}, collect);
  return std::move(collect.table);
}

}  // namespace test

class ResultsDbTest : public ::testing::Test {
 protected:
  std::filesystem::path DbPath() const { return dir_ / "results.db"; }

  // The first column of the first row of `sql` over a fresh connection, as text.
  std::string QueryText(const std::string& sql) {
    SqliteConnection db = OpenSqlite(DbPath().string(), SQLITE_OPEN_READONLY);
    Statement statement(db.get(), sql);
    return statement.Step() ? statement.Text(0) : "<no row>";
  }

  // Runs `sql` over a fresh read-write connection: a database another program changed.
  void ExecSql(const std::string& sql) {
    SqliteConnection db = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Statement statement(db.get(), sql);
    statement.Run();
  }

  test::TempDir dir_;
};

}  // namespace ditbench
