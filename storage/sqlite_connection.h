// An owned SQLite connection: std::unique_ptr with a closer, so that it is move-only and
// released exactly once (sqlite3_close_v2 also defers the close until statements finish).
#pragma once

#include <memory>

struct sqlite3;

namespace ditbench {

struct SqliteCloser {
  void operator()(sqlite3* db) const noexcept;
};
using SqliteConnection = std::unique_ptr<sqlite3, SqliteCloser>;

}  // namespace ditbench
