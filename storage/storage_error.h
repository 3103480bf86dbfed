// The one error type of the storage layer: a line naming what failed, the database file and
// SQLite's message.
#pragma once

#include <stdexcept>

namespace ditbench {

class StorageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A table or view that ditbench owns is not the one it creates (its SQL was edited by hand, e.g.
// a `results` view that never finishes): the database failed, not the command (exit 3,
// kExitStorageFailed), and it is refused before anything reads it.
class EditedSchemaError : public StorageError {
 public:
  using StorageError::StorageError;
};

}  // namespace ditbench
