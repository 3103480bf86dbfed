// The fixture of the ResultsDb tests: a database path in a fresh folder, and a read of one
// value over a separate connection.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "storage/statement.h"
#include "tests/support/temp_dir.h"

namespace ditbench {

class ResultsDbTest : public ::testing::Test {
 protected:
  std::filesystem::path DbPath() const { return dir_ / "results.db"; }

  // The first column of the first row of `sql` over a fresh connection, as text.
  std::string QueryText(const std::string& sql) {
    SqliteConnection db = OpenSqlite(DbPath().string(), SQLITE_OPEN_READONLY);
    Statement statement(db.get(), sql);
    return statement.Step() ? statement.Text(0) : "<no row>";
  }

  test::TempDir dir_;
};

}  // namespace ditbench
