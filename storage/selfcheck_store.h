// SelfcheckStore: `ditbench selfcheck`'s verdicts per device (schema version 19, table
// selfchecks), written by the command and read by `env`, the report and `compare`.
//
// Made by ResultsDb::Open over its connection and borrowed from it
// (ResultsDb::selfchecks()): it must not outlive the ResultsDb. Errors: every method throws
// StorageError. Thread-safety: as ResultsDb. Stored JSON is read as untrusted: a row of another
// shape is dropped (RowsFromJson), measurements that do not parse read as null.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/selfcheck_row.h"

struct sqlite3;

namespace ditbench {

struct SelfcheckRecord {
  std::int64_t id = 0;  // set when read back
  std::string device;   // as trials.device: the GPU's name, or "cpu"
  std::string build;    // the coordinator's build id
  std::string host;
  std::string started_at;  // ISO 8601 UTC (storage/iso_time.h)
  std::vector<SelfcheckRow> rows;
  nlohmann::json measurements;  // SelfcheckJson, or null when the worker gave none
  // Read back: measurements_json held text that does not parse as JSON (measurements is null).
  bool measurements_unreadable = false;
};

class SelfcheckStore {
 public:
  SelfcheckStore(const SelfcheckStore&) = delete;
  SelfcheckStore& operator=(const SelfcheckStore&) = delete;

  // Stores one check; returns its id.
  std::int64_t Record(const SelfcheckRecord& record);

  // The newest check of each (device, host), ordered by device then host.
  std::vector<SelfcheckRecord> LatestPerDevice();

  // The newest check of `device` started at or before `at` (ISO 8601; empty: any time), on
  // any host.
  std::optional<SelfcheckRecord> LatestFor(const std::string& device, const std::string& at = "");

 private:
  friend class ResultsDb;
  explicit SelfcheckStore(sqlite3* db) : db_(db) {}
  sqlite3* db_;  // ResultsDb's connection, borrowed
};

}  // namespace ditbench
