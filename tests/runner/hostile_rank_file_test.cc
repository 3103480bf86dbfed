// A worker that writes garbage is a `failed` trial, and the sweep goes on: each case is a real
// sweep (RunSweep with the real LocalLauncher and SQLite) of tests/fixtures/hostile_worker.py
// over ulysses [2, 1], whose two-rank trial leaves one hostile file behind (a number out of
// range, JSON nested too deep, a FIFO, an .npy header that lies, ranks that disagree). The
// two-rank trial must be `failed` with a reason naming the file and the field, and the
// one-rank trial `ok`: nothing a worker writes may stop, hang or exhaust the coordinator.
#include <cctype>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "launch/local_launcher.h"
#include "runner/sweep_run.h"
#include "storage/statement.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::hostile_rank_file_test {
namespace {

struct HostileCase {
  const char* name;      // hostile_worker.py's CASE
  const char* file;      // the file the reason must name
  const char* field;     // and what it must say about it
};

std::ostream& operator<<(std::ostream& out, const HostileCase& c) { return out << c.name; }

class HostileRankFileTest : public ::testing::TestWithParam<HostileCase> {
 protected:
  int Run(const std::string& name) {
    std::ofstream(dir_ / "sweep.yaml")
        << "name: hostile\n"
           "workload: command\n"
           "command: [python3, " DITBENCH_HOSTILE_WORKER ", " << name << "]\n"
           "defaults: {model: pixart-alpha-tiny, steps: 2, warmup: 1, repeats: 3, timeout: 60s}\n"
           "matrix:\n"
           "  ulysses: [2, 1]\n";
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "results.db";
    o.gpus = "cpu:2";
    LocalLauncher launcher(CurrentEnvironment());
    return RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out_, err_);
  }
  // status and error of each trial, by world size
  std::vector<std::pair<std::string, std::string>> Trials() {
    SqliteConnection db = OpenSqlite((dir_ / "results.db").string(), SQLITE_OPEN_READONLY);
    Statement statement(db.get(),
                        "SELECT status, COALESCE(error, '') FROM results ORDER BY world_size");
    std::vector<std::pair<std::string, std::string>> trials;
    while (statement.Step()) trials.emplace_back(statement.Text(0), statement.Text(1));
    return trials;
  }
  test::TempDir dir_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::stringstream out_, err_;
};

TEST_P(HostileRankFileTest, IsOneFailedTrialNamingTheFileAndTheSweepGoesOn) {
  const HostileCase& c = GetParam();
  EXPECT_EQ(Run(c.name), 1) << out_.str() << err_.str();  // 1: a trial failed
  const auto trials = Trials();
  ASSERT_EQ(trials.size(), 2u) << out_.str() << err_.str();
  EXPECT_EQ(trials[0].first, "ok") << trials[0].second;
  EXPECT_EQ(trials[1].first, "failed") << out_.str() << err_.str();
  const std::string& reason = trials[1].second;
  EXPECT_NE(reason.find(c.file), std::string::npos) << reason;
  EXPECT_NE(reason.find(c.field), std::string::npos) << reason;
  EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;  // one line
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HostileRankFileTest,
    ::testing::Values(
        HostileCase{"iteration_negative", "/rank0.json", "'samples[1].iteration' is -1;"},
        HostileCase{"iteration_3e9", "/rank0.json", "'samples[1].iteration' is 3000000000;"},
        HostileCase{"iteration_1e300", "/rank0.json", "'samples[1].iteration' is 1e+300;"},
        HostileCase{"environment_3000_deep", "/rank0.json",
                    "'environment' is nested more than 32 levels deep"},
        HostileCase{"environment_100000_deep", "/rank0.json",
                    "'environment' is nested more than 32 levels deep"},
        HostileCase{"rank_file_fifo", "/rank0.json", "is a FIFO; expected a regular file"},
        HostileCase{"log_fifo", "rank 0 has no readable result file", "(no log)"},
        HostileCase{"output_fifo", "/output.npy", "is a FIFO; expected a regular file"},
        HostileCase{"output_500m_floats", "/output.npy",
                    "the header's shape (500000000) does not match the 0 bytes"},
        HostileCase{"output_4gb_header", "/output.npy",
                    "the .npy header length is 4294967295 bytes"},
        HostileCase{"output_1e12_floats", "/output.npy",
                    "the header's shape (1000000, 1000000) does not match"},
        HostileCase{"ms_negative", "/rank0.json", "'samples[1].ms' is -6.0;"},
        HostileCase{"ms_zero", "/rank0.json", "'samples[1].ms' is 0.0;"},
        HostileCase{"ms_1e308", "/rank0.json", "'samples[1].ms' is 1e+308;"},
        HostileCase{"rank_missing_iteration", "/rank1.json",
                    "'samples' has no timed iteration 3, which rank 0 timed"},
        HostileCase{"duplicate_iteration", "/rank0.json",
                    "'samples[2].iteration' is 1; expected one 'iteration' sample per iteration"},
        HostileCase{"too_few_iterations", "/rank0.json",
                    "'samples' has 2 timed iterations; expected at least 3 (repeats.min)"},
        HostileCase{"clocks_not_numbers", "/rank0.json", "'clocks.sm_mhz_min' is \"fast\";"},
        HostileCase{"world_size_3e9", "/rank0.json", "'world_size' is 3000000000;"},
        HostileCase{"energy_negative", "/rank0.json", "'energy.joules' is -2.5;"},
        HostileCase{"energy_window_short", "/rank0.json",
                    "'energy.window_ms' is 0.5; expected at least the 3 ms of timed iterations"},
        HostileCase{"energy_1e9_joules", "/rank0.json",
                    "'energy.joules' is 1000000000.0; expected at most 5000 W"},
        HostileCase{"energy_text", "/rank0.json", "'energy.joules' is \"lots\";"}),
    [](const ::testing::TestParamInfo<HostileCase>& info) {
      std::string name;  // iteration_negative: IterationNegative
      bool upper = true;
      for (const char ch : std::string(info.param.name)) {
        if (ch == '_') {
          upper = true;
          continue;
        }
        name += upper ? static_cast<char>(std::toupper(ch)) : ch;
        upper = false;
      }
      return name;
    });

}  // namespace
}  // namespace ditbench::hostile_rank_file_test
