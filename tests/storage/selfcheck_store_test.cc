// `ditbench selfcheck`'s verdicts in the database (storage/selfcheck_store.h, schema 19): a
// round trip, the newest per device, the newest before a time, and the migration from 18.
#include "storage/selfcheck_store.h"

#include <sqlite3.h>

#include <gtest/gtest.h>

#include "tests/support/schema_rewind.h"

#include "storage/results_db.h"
#include "storage/schema.h"
#include "tests/support/temp_dir.h"

namespace ditbench::selfcheck_store_test {
namespace {

SelfcheckRecord Check(const std::string& device, const std::string& at, SelfcheckVerdict clocks) {
  SelfcheckRecord r;
  r.device = device;
  r.build = "b1";
  r.host = "node1";
  r.started_at = at;
  r.rows = {{"worker", SelfcheckVerdict::kPass, "ok", ""},
            {"clocks", clocks, "SM 1410 of 1980 MHz", "hw thermal"}};
  r.measurements = {{"format", "ditbench-selfcheck"}, {"version", 1}};
  return r;
}

class SelfcheckStoreTest : public ::testing::Test {
 protected:
  test::TempDir dir_;
  std::filesystem::path path_ = dir_ / "results.db";
};

TEST_F(SelfcheckStoreTest, ARecordReadsBackWithItsRowsAndMeasurements) {
  auto db = ResultsDb::Open(path_);
  const auto id =
      db->selfchecks().Record(Check("H100", "2026-11-01T10:00:00.000Z", SelfcheckVerdict::kWarn));
  const auto latest = db->selfchecks().LatestPerDevice();
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].id, id);
  EXPECT_EQ(latest[0].device, "H100");
  EXPECT_EQ(latest[0].build, "b1");
  EXPECT_EQ(latest[0].host, "node1");
  ASSERT_EQ(latest[0].rows.size(), 2u);
  EXPECT_EQ(latest[0].rows[1].verdict, SelfcheckVerdict::kWarn);
  EXPECT_EQ(latest[0].rows[1].reason, "hw thermal");
  EXPECT_EQ(latest[0].measurements.at("format"), "ditbench-selfcheck");
}

TEST_F(SelfcheckStoreTest, TheNewestCheckOfEachDeviceWinsAndLatestForHonoursTheTime) {
  auto db = ResultsDb::Open(path_);
  auto& store = db->selfchecks();
  store.Record(Check("H100", "2026-11-01T10:00:00.000Z", SelfcheckVerdict::kWarn));
  store.Record(Check("H100", "2026-11-03T10:00:00.000Z", SelfcheckVerdict::kPass));
  store.Record(Check("cpu", "2026-11-02T10:00:00.000Z", SelfcheckVerdict::kSkip));
  const auto latest = store.LatestPerDevice();
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].device, "H100");
  EXPECT_EQ(latest[0].rows[1].verdict, SelfcheckVerdict::kPass);
  EXPECT_EQ(latest[1].device, "cpu");
  const auto before = store.LatestFor("H100", "2026-11-02T00:00:00.000Z");
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->rows[1].verdict, SelfcheckVerdict::kWarn);
  EXPECT_EQ(store.LatestFor("H100")->rows[1].verdict, SelfcheckVerdict::kPass);
  EXPECT_FALSE(store.LatestFor("H100", "2026-10-01T00:00:00.000Z").has_value());
  EXPECT_FALSE(store.LatestFor("A100").has_value());
}

TEST_F(SelfcheckStoreTest, AVersion18DatabaseIsMigratedAndGainsTheTable) {
  ResultsDb::Open(path_).reset();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  const std::string rewind = test::RewindToSchema19Sql() +
                             "DROP TABLE selfchecks; UPDATE schema_version SET version = 18;";
  ASSERT_EQ(sqlite3_exec(raw, rewind.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  EXPECT_EQ(StoredSchemaVersion(path_), 18);
  EXPECT_THROW(ResultsDb::Open(path_, /*read_only=*/true), StorageError);
  auto db = ResultsDb::Open(path_);
  EXPECT_EQ(StoredSchemaVersion(path_), kSchemaVersion);
  EXPECT_TRUE(db->selfchecks().LatestPerDevice().empty());
  db->selfchecks().Record(Check("cpu", "2026-11-02T10:00:00.000Z", SelfcheckVerdict::kPass));
  EXPECT_EQ(db->selfchecks().LatestPerDevice().size(), 1u);
}

TEST_F(SelfcheckStoreTest, HandEditedRowsAreDroppedNotThrown) {
  {
    auto db = ResultsDb::Open(path_);
    db->selfchecks().Record(Check("cpu", "2026-11-02T10:00:00.000Z", SelfcheckVerdict::kPass));
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(raw, "UPDATE selfchecks SET rows_json = 'not json', measurements_json = '{'",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(raw);
  auto db = ResultsDb::Open(path_, /*read_only=*/true);
  const auto latest = db->selfchecks().LatestPerDevice();
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_TRUE(latest[0].rows.empty());
}

}  // namespace
}  // namespace ditbench::selfcheck_store_test
