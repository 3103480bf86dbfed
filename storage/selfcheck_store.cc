// SelfcheckStore (selfcheck_store.h): selfcheck verdicts per device.
#include "storage/selfcheck_store.h"

#include <sqlite3.h>

#include "base/untrusted_input.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

constexpr const char* kColumns =
    "id, device, build, host, started_at, rows_json, measurements_json";

SelfcheckRecord ReadRecord(const Statement& query) {
  SelfcheckRecord record;
  record.id = query.Int(0);
  record.device = query.Text(1);
  record.build = query.Text(2);
  record.host = query.Text(3);
  record.started_at = query.Text(4);
  record.rows = RowsFromJson(ParseStoredJson(query.Text(5)));
  if (!query.IsNull(6)) record.measurements = ParseStoredJson(query.Text(6));
  if (record.measurements.is_discarded()) {
    record.measurements = nullptr;
    record.measurements_unreadable = true;
  }
  return record;
}

}  // namespace

std::int64_t SelfcheckStore::Record(const SelfcheckRecord& record) {
  Statement insert(db_,
                   "INSERT INTO selfchecks (device, build, host, started_at, rows_json, "
                   "measurements_json) VALUES (?, ?, ?, ?, ?, ?)");
  insert.Bind(1, record.device).Bind(2, record.build).Bind(3, record.host);
  insert.Bind(4, record.started_at).Bind(5, RowsJson(record.rows).dump());
  if (record.measurements.is_null())
    insert.BindNull(6);
  else
    insert.Bind(6, record.measurements.dump());
  insert.Run();
  return sqlite3_last_insert_rowid(db_);
}

std::vector<SelfcheckRecord> SelfcheckStore::LatestPerDevice() {
  // The newest of each (device, host): the highest started_at, then the highest id.
  Statement query(db_, std::string("SELECT ") + kColumns + R"sql( FROM selfchecks s
    WHERE id = (SELECT id FROM selfchecks o WHERE o.device = s.device AND o.host = s.host
                ORDER BY started_at DESC, id DESC LIMIT 1)
    ORDER BY device, host)sql");
  std::vector<SelfcheckRecord> records;
  while (query.Step()) records.push_back(ReadRecord(query));
  return records;
}

std::optional<SelfcheckRecord> SelfcheckStore::LatestFor(const std::string& device,
                                                         const std::string& at) {
  Statement query(db_, std::string("SELECT ") + kColumns +
                           " FROM selfchecks WHERE device = ?1 AND (?2 = '' OR started_at <= ?2) "
                           "ORDER BY started_at DESC, id DESC LIMIT 1");
  query.Bind(1, device).Bind(2, at);
  if (!query.Step()) return std::nullopt;
  return ReadRecord(query);
}

}  // namespace ditbench
