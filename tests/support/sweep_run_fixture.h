// The fixture of the sweep loop's tests: RunSweep over a fake launcher, interrupt source and
// GPU discovery, a sweep file and a database in a temporary folder.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "runner/sweep_run.h"
#include "storage/statement.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::test {

class SweepRunTest : public ::testing::Test {
 protected:
  RunOptions Options(const std::string& yaml) {
    std::ofstream(dir_ / "sweep.yaml") << yaml;
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "results.db";
    o.gpus = "cpu:2";
    o.worker = "/bin/true";  // never started by the fake
    return o;
  }
  int Run(const RunOptions& o) {
    out_.str("");
    err_.str("");
    return RunSweep(o, SweepEffects{launcher_, interrupt_, gpus_, health_}, out_, err_);
  }
  std::vector<std::string> Column(const std::string& sql) {
    SqliteConnection db = OpenSqlite((dir_ / "results.db").string(), SQLITE_OPEN_READONLY);
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
    std::vector<std::string> values;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      auto text = sqlite3_column_text(stmt, 0);
      values.push_back(text ? reinterpret_cast<const char*>(text) : "NULL");
    }
    sqlite3_finalize(stmt);
    return values;
  }
  test::TempDir dir_;
  test::FakeLauncher launcher_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  const HealthProbe* health_ = nullptr;
  std::stringstream out_, err_;
};

}  // namespace ditbench::test
