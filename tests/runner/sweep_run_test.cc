#include "runner/sweep_run.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "experiments/worker_contract.h"
#include "storage/results_db.h"
#include "storage/statement.h"
#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

// Writes plausible rank files instead of starting processes; trials whose ulysses degree is in
// `fail_ulysses` exit with code 1 on rank 0.
class FakeLauncher final : public Launcher {
 public:
  LaunchOutcome Run(const LaunchRequest& request) override {
    ++launches;
    TrialFile trial = ReadTrialFile(request.run_dir / "trial.json");
    LaunchOutcome outcome;
    outcome.ranks.resize(request.world_size, RankExit{true});
    if (trial.config.ulysses == fail_ulysses) {
      outcome.ranks[0].exit_code = 1;
      outcome.first_failed_rank = 0;
      std::ofstream(RankLogPath(request.run_dir, 0)) << "boom: injected failure\n";
      return outcome;
    }
    for (int r = 0; r < request.world_size; ++r) {
      RankResult result;
      result.rank = r;
      result.world_size = request.world_size;
      result.device = "cpu";
      result.samples = {{r, 0, "iteration", 50.0, true}};
      for (int i = 1; i <= trial.config.repeats.min; ++i)
        result.samples.push_back({r, i, "iteration", 10.0 + r + i, false});
      result.peak_mem_mb = 10;
      WriteFileAtomically(RankResultPath(request.run_dir, r), ToJson(result).dump());
    }
    return outcome;
  }
  int launches = 0;
  int fail_ulysses = -1;
};

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
    return RunSweep(o, launcher_, out_, err_);
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
  FakeLauncher launcher_;
  std::stringstream out_, err_;
};

constexpr const char* kSweep = R"(name: s
defaults: {model: pixart-alpha-tiny, steps: 2, warmup: 1, repeats: 3}
matrix:
  resolution: [256]
  ulysses: [1, 2, 3, 4]
)";

TEST_F(SweepRunTest, InvalidTrialsAreStoredAsSkippedWithTheirReason) {
  EXPECT_EQ(Run(Options(kSweep)), 0) << err_.str();
  EXPECT_EQ(launcher_.launches, 2);  // ulysses 3 (heads) and 4 (slots) never launch
  auto statuses = Column("SELECT status FROM results ORDER BY ulysses");
  EXPECT_EQ(statuses, (std::vector<std::string>{"ok", "ok", "skipped", "skipped"}));
  auto errors = Column("SELECT error FROM results WHERE status = 'skipped' ORDER BY ulysses");
  EXPECT_NE(errors[0].find("heads are not divisible by ulysses=3"), std::string::npos);
  EXPECT_NE(errors[1].find("exceeds the 2 CPU slots"), std::string::npos);
}

TEST_F(SweepRunTest, FailingTrialIsRecordedAndTheSweepGoesOn) {
  launcher_.fail_ulysses = 1;
  EXPECT_EQ(Run(Options(kSweep)), 1);
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 1")[0], "failed");
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 2")[0], "ok");
  EXPECT_NE(Column("SELECT error FROM results WHERE ulysses = 1")[0].find("injected failure"),
            std::string::npos);
}

TEST_F(SweepRunTest, SecondRunStartsNoTrial) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  launcher_.launches = 0;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.launches, 0);
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results")[0], "4");
}

TEST_F(SweepRunTest, RerunFailedRetriesOnlyFailures) {
  launcher_.fail_ulysses = 1;
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 1);
  launcher_.fail_ulysses = -1;
  launcher_.launches = 0;
  EXPECT_EQ(Run(o), 1);  // still failed: not retried without --rerun
  EXPECT_EQ(launcher_.launches, 0);
  o.rerun = "failed";
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.launches, 1);
}

TEST_F(SweepRunTest, TrialLeftRunningByADeadCoordinatorRunsAgain) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  {
    SqliteConnection db = OpenSqlite(o.db.string(), SQLITE_OPEN_READWRITE);
    ASSERT_EQ(sqlite3_exec(db.get(),
                           "UPDATE trials SET status = 'running' WHERE trial_key IN "
                           "(SELECT trial_key FROM results WHERE ulysses = 2)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  launcher_.launches = 0;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.launches, 1);
  EXPECT_NE(out_.str().find("marked interrupted"), std::string::npos) << out_.str();
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'ok'")[0], "2");
}

TEST_F(SweepRunTest, NewCampaignRunsEverythingAgain) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  launcher_.launches = 0;
  o.fresh = true;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.launches, 2);
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT campaign) FROM results")[0], "2");
}

TEST_F(SweepRunTest, DryRunPrintsThePlanAndRunsNothing) {
  auto o = Options(kSweep);
  o.dry_run = true;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.launches, 0);
  EXPECT_FALSE(std::filesystem::exists(o.db));
  EXPECT_NE(out_.str().find("invalid: 4 heads are not divisible by ulysses=3"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("4 trials, 2 to run"), std::string::npos) << out_.str();
}

TEST_F(SweepRunTest, SpecErrorExitsTwoWithLocation) {
  EXPECT_EQ(Run(Options("name: s\nmatrix:\n  ulyses: [1]\n")), 2);
  EXPECT_NE(err_.str().find("sweep.yaml:3:3:"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("did you mean 'ulysses'"), std::string::npos) << err_.str();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "results.db"));
}

TEST_F(SweepRunTest, BadGpusOptionIsAUsageError) {
  auto o = Options(kSweep);
  o.gpus = "cpu:x";
  EXPECT_EQ(Run(o), 2);
  EXPECT_NE(err_.str().find("--gpus"), std::string::npos);
}

}  // namespace
}  // namespace ditbench
