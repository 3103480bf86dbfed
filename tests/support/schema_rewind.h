// The SQL that takes a database of the current schema back to version 19, undoing what
// version 20 added (storage/schema.cc), for tests that build an older database from a new one.
#pragma once

#include <string>

#include "storage/results_view.h"

namespace ditbench::test {

inline std::string RewindToSchema19Sql() {
  return "DROP VIEW results; ALTER TABLE trial_metrics DROP COLUMN steps_json; "
         "ALTER TABLE trial_metrics DROP COLUMN attention_ran; " +
         ResultsView(19) + "UPDATE schema_version SET version = 19;";
}

}  // namespace ditbench::test
