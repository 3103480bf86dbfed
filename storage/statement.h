// Move-only RAII types over the SQLite C API, shared by storage, query and report.
//
// Errors: every failing call throws StorageError with one line naming what failed, the
// database file and SQLite's message. Destructors never throw.
// Thread-safety: none; use a handle from one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "storage/sqlite_connection.h"
#include "storage/storage_error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ditbench {

// Opens `path` (flags as for sqlite3_open_v2). Throws StorageError naming the path.
SqliteConnection OpenSqlite(const std::string& path, int flags);

// Runs one or more statements with no parameters and no result rows.
void Exec(sqlite3* db, const char* sql);

// "<what> (<db file>): <sqlite message>", for StorageError messages.
std::string SqliteErrorText(sqlite3* db, std::string_view what);

// One prepared statement. The connection must outlive it.
class Statement {
 public:
  // Prepares the first statement of `sql`. Throws StorageError.
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite. Text is copied.
  Statement& Bind(int index, std::int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, std::int64_t{value}); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& Bind(int index, const std::optional<double>& value);
  Statement& BindNull(int index);
  // Named parameters (":name" in the SQL), bound as above. Throws StorageError naming the
  // parameter when the statement has none by that name.
  template <typename T>
  Statement& Bind(std::string_view name, T&& value) {
    return Bind(Parameter(name), std::forward<T>(value));
  }
  Statement& BindNull(std::string_view name) { return BindNull(Parameter(name)); }
  // Binds `text`, or NULL when it is empty (a text column that means "none" when empty).
  Statement& BindTextOrNull(std::string_view name, const std::string& text) {
    return text.empty() ? BindNull(name) : Bind(name, std::string_view(text));
  }
  int Parameter(std::string_view name) const;

  // Advances: true when a row is available, false when done. Throws on error.
  [[nodiscard]] bool Step();
  // Runs to completion, ignoring rows.
  void Run();
  // Resets for re-execution and clears the bindings.
  void Reset();

  int ColumnCount() const;
  std::string ColumnName(int column) const;
  int ColumnType(int column) const;  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, ...
  bool IsNull(int column) const;
  std::int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;  // made valid UTF-8 (base/terminal_text.h)
  std::optional<double> OptionalDouble(int column) const;

  // True when the statement cannot change the database (sqlite3_stmt_readonly).
  bool ReadOnly() const;
  // The SQL text after the prepared statement (a second statement, or whitespace).
  const std::string& tail() const { return tail_; }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  void Check(int rc, std::string_view what) const;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string tail_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless Commit() was called.
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void Commit();

 private:
  sqlite3* db_;
  bool open_ = true;
};

}  // namespace ditbench
