// The one error type of the storage layer: a line naming what failed, the database file and
// SQLite's message.
#pragma once

#include <stdexcept>

#include "base/exit_codes.h"

namespace ditbench {

class StorageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A mistake in a query: an unknown column or status, a malformed --sql statement.
class QueryError : public StorageError {
 public:
  using StorageError::StorageError;
};

// No file where a database was named for reading: the user named a path that is not there
// (exit 2, kExitUsage), unlike a file that is there and cannot be read (exit 3).
class MissingDatabaseError : public StorageError {
 public:
  using StorageError::StorageError;
};

// A database of an older schema, opened for reading, which cannot migrate it: `ditbench
// migrate` (or a `run`, which migrates) brings it up to date.
class OlderSchemaError : public StorageError {
 public:
  using StorageError::StorageError;
};

// A table or view that ditbench owns is not the one it creates (its SQL was edited by hand, e.g.
// a `results` view that never finishes): the database failed, not the command (exit 3,
// kExitStorageFailed), and it is refused before anything reads it.
class EditedSchemaError : public StorageError {
 public:
  using StorageError::StorageError;
};

// The exit code of every command that stops on `e` (README "Exit codes", one convention for
// all of them; tests/cli/exit_convention_test.cc): the user's mistakes (a query that is not
// valid, a path with no database) kExitUsage; a database that failed or cannot be read
// (damaged, foreign, newer, edited by hand, a full disk) kExitStorageFailed.
inline int StorageErrorExit(const StorageError& e) {
  if (dynamic_cast<const QueryError*>(&e) || dynamic_cast<const MissingDatabaseError*>(&e))
    return kExitUsage;
  return kExitStorageFailed;
}

}  // namespace ditbench
