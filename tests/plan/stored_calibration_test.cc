// Which stored selfcheck calibrates `plan` (plan/stored_calibration.h): this host's newest of
// the device, only when its worker and host-load rows passed, and why not otherwise.
#include "plan/stored_calibration.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "storage/results_db.h"
#include "storage/selfcheck_store.h"
#include "storage/statement.h"
#include "tests/support/temp_dir.h"

namespace ditbench::stored_calibration_test {
namespace {

nlohmann::json Calibrated(const std::string& device) {
  SelfcheckMeasurements m;
  m.device = device == "cpu" ? "cpu" : "cuda:0";
  SelfcheckCalibration c;
  c.model = "pixart-alpha-tiny";
  c.build_ms = 2;
  c.forward.push_back({"fp32", 192, 2, 1, 1, 18432, 0.093, 2.0});
  c.forward.push_back({"fp32", 384, 2, 1, 1, 73728, 0.622, 8.0});
  m.calibration = c;
  m.launch_wall_s = 0.5;
  return SelfcheckJson(m);
}

SelfcheckRecord Check(const std::string& device, const std::string& host, const std::string& at,
                      SelfcheckVerdict host_load = SelfcheckVerdict::kPass) {
  SelfcheckRecord r;
  r.device = device;
  r.build = "b1";
  r.host = host;
  r.started_at = at;
  r.rows = {{"worker", SelfcheckVerdict::kPass, "cpu, 6 s", ""},
            {"host load", host_load, "load 1.9",
             host_load == SelfcheckVerdict::kPass ? "" : "a compiler used 1.8 cores"}};
  r.measurements = Calibrated(device);
  return r;
}

class StoredCalibrationTest : public ::testing::Test {
 protected:
  std::int64_t Store(const SelfcheckRecord& record) {
    return ResultsDb::Open(path_)->selfchecks().Record(record);
  }
  test::TempDir dir_;
  std::filesystem::path path_ = dir_ / "results.db";
};

TEST_F(StoredCalibrationTest, NoDatabaseOrNoSelfcheckOfThisHostIsTheUncalibratedPrior) {
  StoredCalibration none = LoadCalibration(path_, "cpu", "node1");
  EXPECT_FALSE(none.calibration);
  EXPECT_NE(none.why_not.find("no database at"), std::string::npos) << none.why_not;
  EXPECT_NE(none.why_not.find("`ditbench selfcheck --db"), std::string::npos) << none.why_not;
  Store(Check("cpu", "node2", "2026-11-27T10:00:00.000Z"));  // every CPU is "cpu"
  none = LoadCalibration(path_, "cpu", "node1");
  EXPECT_FALSE(none.calibration);
  EXPECT_NE(none.why_not.find("no selfcheck of 'cpu' on this host"), std::string::npos)
      << none.why_not;
}

TEST_F(StoredCalibrationTest, ThisHostsNewestSelfcheckCalibratesAndNamesItself) {
  Store(Check("cpu", "node1", "2026-11-26T10:00:00.000Z"));
  const std::int64_t newest = Store(Check("cpu", "node1", "2026-11-27T10:00:00.000Z"));
  const StoredCalibration stored = LoadCalibration(path_, "cpu", "node1");
  ASSERT_TRUE(stored.calibration) << stored.why_not;
  EXPECT_EQ(stored.calibration->source, "selfcheck #" + std::to_string(newest) +
                                            " of cpu on node1, build b1, 2026-11-27T10:00");
  EXPECT_NEAR(stored.calibration->startup_s, 0.502, 1e-12);
  EXPECT_TRUE(stored.calibration->CpuTflops("fp32", 2, 5e4));
}

TEST_F(StoredCalibrationTest, ASelfcheckBesideAnotherLoadIsNotUsedAndSaysWhy) {
  Store(Check("cpu", "node1", "2026-11-27T10:00:00.000Z", SelfcheckVerdict::kWarn));
  const StoredCalibration stored = LoadCalibration(path_, "cpu", "node1");
  EXPECT_FALSE(stored.calibration);
  EXPECT_NE(stored.why_not.find("did not pass its host load row (a compiler used 1.8 cores)"),
            std::string::npos)
      << stored.why_not;
}

TEST_F(StoredCalibrationTest, AGpuKindIsCalibratedByAnotherHostsCheckWhenThisOneHasNone) {
  Store(Check("NVIDIA H100 80GB HBM3", "gpu7", "2026-11-27T10:00:00.000Z"));
  const StoredCalibration stored = LoadCalibration(path_, "NVIDIA H100 80GB HBM3", "gpu1");
  ASSERT_TRUE(stored.calibration) << stored.why_not;
  EXPECT_NE(stored.calibration->source.find("on gpu7"), std::string::npos);
  EXPECT_TRUE(stored.calibration->rates.empty());  // GPU compute stays the prior's
}

// The host, build and reasons come from the database: no terminal escape survives into them.
TEST_F(StoredCalibrationTest, TextFromTheDatabaseReachesTheTerminalEscaped) {
  SelfcheckRecord hostile =
      Check("NVIDIA H100 80GB HBM3", "gpu\x1b]0;owned\x07", "2026-11-27T10:00:00.000Z");
  hostile.build = "b\x1b[2J1";
  Store(hostile);
  const StoredCalibration stored = LoadCalibration(path_, "NVIDIA H100 80GB HBM3", "gpu1");
  ASSERT_TRUE(stored.calibration) << stored.why_not;
  EXPECT_EQ(stored.calibration->source.find('\x1b'), std::string::npos);
  SelfcheckRecord busy = Check("cpu", "node1", "2026-11-27T10:00:00.000Z", SelfcheckVerdict::kWarn);
  busy.rows[1].reason = "load \x1b[31mred";
  Store(busy);
  const StoredCalibration refused = LoadCalibration(path_, "cpu", "node1");
  ASSERT_FALSE(refused.calibration);
  EXPECT_EQ(refused.why_not.find('\x1b'), std::string::npos);
  EXPECT_NE(refused.why_not.find("red"), std::string::npos) << refused.why_not;
}

TEST_F(StoredCalibrationTest, StoredMeasurementsOfAnotherShapeAreNotUsedAndSaySo) {
  SelfcheckRecord bad = Check("cpu", "node1", "2026-11-27T10:00:00.000Z");
  bad.measurements["calibration"]["forward"][0]["ms"] = "slow";
  Store(bad);
  const StoredCalibration stored = LoadCalibration(path_, "cpu", "node1");
  EXPECT_FALSE(stored.calibration);
  EXPECT_NE(stored.why_not.find("could not be read"), std::string::npos) << stored.why_not;
  EXPECT_NE(stored.why_not.find("calibration.forward[].ms"), std::string::npos) << stored.why_not;
}

// A stored selfcheck whose forwards took 1e-300 ms calibrated `plan` to estimate a multi-hour
// trial at 1 s, still saying "calibrated by selfcheck" (issue 49). Figures out of their
// physical bounds are not used, and the plan says which.
TEST_F(StoredCalibrationTest, StoredFiguresOutOfPhysicalBoundsAreNotUsedAndSayWhich) {
  for (double ms : {1e-300, 1e300}) {
    SelfcheckRecord bad = Check("cpu", "node1", "2026-11-27T10:00:00.000Z");
    bad.measurements["calibration"]["forward"][1]["ms"] = ms;
    Store(bad);
    const StoredCalibration stored = LoadCalibration(path_, "cpu", "node1");
    EXPECT_FALSE(stored.calibration) << ms;
    EXPECT_NE(
        stored.why_not.find(fmt::format(
            "its stored figures are out of physical bounds: calibration.forward[1].ms {:g} ms",
            ms)),
        std::string::npos)
        << stored.why_not;
  }
}

// Measurements stored as text that does not parse were reported as "stored no measurements".
TEST_F(StoredCalibrationTest, StoredMeasurementsThatDoNotParseAreNotCalledAbsent) {
  const std::int64_t id = Store(Check("cpu", "node1", "2026-11-27T10:00:00.000Z"));
  {
    SqliteConnection raw = OpenSqlite(path_.string(), SQLITE_OPEN_READWRITE);
    const std::string sql = fmt::format(
        "UPDATE selfchecks SET measurements_json = '{{\"timing\": [' WHERE id = {}", id);
    Exec(raw.get(), sql.c_str());
  }
  const StoredCalibration stored = LoadCalibration(path_, "cpu", "node1");
  EXPECT_FALSE(stored.calibration);
  EXPECT_NE(stored.why_not.find("stored measurements that do not parse as JSON"), std::string::npos)
      << stored.why_not;
  EXPECT_EQ(stored.why_not.find("stored no measurements"), std::string::npos) << stored.why_not;
}

}  // namespace
}  // namespace ditbench::stored_calibration_test
