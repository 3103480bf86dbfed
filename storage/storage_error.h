// The one error type of the storage layer: a line naming what failed, the database file and
// SQLite's message.
#pragma once

#include <stdexcept>

namespace ditbench {

class StorageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ditbench
