// The SQL that takes a database of the current schema back to version 20 or 19, undoing what
// the later versions added (storage/schema.cc), for tests that build an older database from a
// new one.
#pragma once

#include <string>

#include "storage/results_view.h"

namespace ditbench::test {

inline std::string RewindToSchema20Sql() {
  return "ALTER TABLE samples DROP COLUMN reused; UPDATE schema_version SET version = 20;";
}

inline std::string RewindToSchema19Sql() {
  return RewindToSchema20Sql() +
         "DROP VIEW results; ALTER TABLE trial_metrics DROP COLUMN steps_json; "
         "ALTER TABLE trial_metrics DROP COLUMN attention_ran; " +
         ResultsView(19) + "UPDATE schema_version SET version = 19;";
}

}  // namespace ditbench::test
