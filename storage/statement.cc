#include "storage/statement.h"

#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "base/terminal_text.h"

namespace ditbench {

void SqliteCloser::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }

std::string SqliteErrorText(sqlite3* db, std::string_view what) {
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  const char* message = db ? sqlite3_errmsg(db) : "out of memory";
  return fmt::format("{} ({}): {}", what, file && *file ? file : ":memory:", message);
}

SqliteConnection OpenSqlite(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  SqliteConnection db(raw);
  if (rc != SQLITE_OK) {
    throw StorageError(fmt::format("cannot open results database '{}': {}", path,
                                   raw ? sqlite3_errmsg(raw) : "out of memory"));
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

void Exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    const char* file = sqlite3_db_filename(db, "main");
    throw StorageError(fmt::format("SQL failed ({}): {}", file && *file ? file : ":memory:",
                                   text));
  }
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, &tail);
  if (rc != SQLITE_OK) {
    std::string text = SqliteErrorText(db, "cannot prepare SQL");
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    throw StorageError(text);
  }
  if (stmt_ == nullptr) throw StorageError("cannot prepare SQL: no statement in the text");
  if (tail) tail_.assign(tail, sql.data() + sql.size());
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      tail_(std::move(other.tail_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    tail_ = std::move(other.tail_);
  }
  return *this;
}

void Statement::Check(int rc, std::string_view what) const {
  if (rc != SQLITE_OK) throw StorageError(SqliteErrorText(db_, what));
}

Statement& Statement::Bind(int index, std::int64_t value) {
  Check(sqlite3_bind_int64(stmt_, index, value), "cannot bind parameter");
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  Check(sqlite3_bind_double(stmt_, index, value), "cannot bind parameter");
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  Check(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                            SQLITE_UTF8),
        "cannot bind parameter");
  return *this;
}

Statement& Statement::Bind(int index, const std::optional<double>& value) {
  return value ? Bind(index, *value) : BindNull(index);
}

int Statement::Parameter(std::string_view name) const {
  const int index = sqlite3_bind_parameter_index(stmt_, std::string(name).c_str());
  if (index == 0) {
    throw StorageError(fmt::format("no parameter '{}' in the statement: {}", name,
                                   sqlite3_sql(stmt_)));
  }
  return index;
}

Statement& Statement::BindNull(int index) {
  Check(sqlite3_bind_null(stmt_, index), "cannot bind parameter");
  return *this;
}

bool Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string text = SqliteErrorText(db_, "SQL failed");
  sqlite3_reset(stmt_);
  throw StorageError(text);
}

void Statement::Run() {
  while (Step()) {
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }

std::string Statement::ColumnName(int column) const {
  const char* name = sqlite3_column_name(stmt_, column);
  return name ? name : "";
}

int Statement::ColumnType(int column) const { return sqlite3_column_type(stmt_, column); }

bool Statement::IsNull(int column) const { return ColumnType(column) == SQLITE_NULL; }

std::int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::Double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (!text) return {};
  // The database is untrusted (another program, another version may have written it): its
  // text is handed on as valid UTF-8, so that no output (JSON above all) fails on a byte.
  return ValidUtf8(std::string_view(reinterpret_cast<const char*>(text),
                                    static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))));
}

std::optional<double> Statement::OptionalDouble(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Double(column);
}

bool Statement::ReadOnly() const { return sqlite3_stmt_readonly(stmt_) != 0; }

Transaction::Transaction(sqlite3* db) : db_(db) { Exec(db_, "BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::Commit() {
  Exec(db_, "COMMIT");
  open_ = false;
}

}  // namespace ditbench
