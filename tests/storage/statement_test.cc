#include "storage/statement.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

namespace ditbench::statement_test {
namespace {

class StatementTest : public ::testing::Test {
 protected:
  SqliteConnection db_ = OpenSqlite(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
};

TEST_F(StatementTest, NamedParametersBindTheirOwnColumnsWhateverTheOrder) {
  Exec(db_.get(), "CREATE TABLE t (a INTEGER, b TEXT, c REAL, d REAL)");
  Statement insert(db_.get(), "INSERT INTO t (a, b, c, d) VALUES (:a, :b, :c, :d)");
  insert.Bind(":c", 2.5).Bind(":b", "text").Bind(":a", 7).BindNull(":d").Run();
  Statement read(db_.get(), "SELECT a, b, c, d FROM t");
  ASSERT_TRUE(read.Step());
  EXPECT_EQ(read.Int(0), 7);
  EXPECT_EQ(read.Text(1), "text");
  EXPECT_EQ(read.Double(2), 2.5);
  EXPECT_TRUE(read.IsNull(3));
}

TEST_F(StatementTest, AnUnknownParameterNameIsAnErrorNamingIt) {
  Exec(db_.get(), "CREATE TABLE t (a INTEGER)");
  Statement insert(db_.get(), "INSERT INTO t (a) VALUES (:a)");
  try {
    insert.Bind(":alpha", 1);
    FAIL() << "bound a parameter the statement does not have";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("no parameter ':alpha'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ditbench::statement_test
