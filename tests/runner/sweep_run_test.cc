#include "runner/sweep_run.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "experiments/worker_contract.h"
#include "storage/results_db.h"
#include "storage/statement.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

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
    return RunSweep(o, SweepEffects{launcher_, interrupt_, gpus_}, out_, err_);
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
  EXPECT_EQ(launcher_.started.size(), 2u);  // ulysses 3 (heads) and 4 (slots) never launch
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
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 0u);
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results")[0], "4");
}

TEST_F(SweepRunTest, RerunFailedRetriesOnlyFailures) {
  launcher_.fail_ulysses = 1;
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 1);
  launcher_.fail_ulysses = -1;
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 1);  // still failed: not retried without --rerun
  EXPECT_EQ(launcher_.started.size(), 0u);
  o.rerun = "failed";
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 1u);
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
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 1u);
  EXPECT_NE(out_.str().find("marked interrupted"), std::string::npos) << out_.str();
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'ok'")[0], "2");
}

TEST_F(SweepRunTest, NewCampaignRunsEverythingAgain) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0);
  launcher_.started.clear();
  o.fresh = true;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 2u);
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT campaign) FROM results")[0], "2");
}

TEST_F(SweepRunTest, DryRunPrintsThePlanAndRunsNothing) {
  auto o = Options(kSweep);
  o.dry_run = true;
  EXPECT_EQ(Run(o), 0);
  EXPECT_EQ(launcher_.started.size(), 0u);
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

// Four 1-rank trials (seeds 0..3) and one 2-rank trial.
constexpr const char* kSmallTrials = R"(name: s
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, repeats: 3}
matrix:
  seed: [0, 1, 2, 3]
include:
  - {ulysses: 2}
)";

TEST_F(SweepRunTest, ExclusivePolicyRunsOneTrialAtATime) {
  gpus_.gpus.assign(4, GpuInfo{"Fake GPU", ""});
  auto o = Options(kSmallTrials);
  o.gpus = "auto";
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 5u);
  EXPECT_EQ(launcher_.max_in_flight, 1);
  // Each trial takes the first GPUs, since it has the machine to itself.
  EXPECT_EQ(launcher_.started[0].devices, (std::vector<std::string>{"0"}));
  EXPECT_EQ(launcher_.started[4].devices, (std::vector<std::string>{"0", "1"}));
}

TEST_F(SweepRunTest, PackPolicyRunsTrialsSideBySideOnDisjointGpus) {
  gpus_.gpus.assign(2, GpuInfo{"Fake GPU", ""});
  auto o = Options(kSmallTrials);
  o.gpus = "auto";
  o.policy = "pack";
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 5u);
  EXPECT_EQ(launcher_.max_in_flight, 2);
  EXPECT_FALSE(launcher_.overlapping_devices);
  EXPECT_EQ(launcher_.started[0].devices, (std::vector<std::string>{"0"}));
  EXPECT_EQ(launcher_.started[1].devices, (std::vector<std::string>{"1"}));
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'ok'")[0], "5");
}

TEST_F(SweepRunTest, TrialsGetTheInheritedGpusNotTheFirstOnes) {
  gpus_.gpus.assign(8, GpuInfo{"Fake GPU", ""});
  gpus_.inherited = "4,GPU-5e1f";
  auto o = Options(kSmallTrials);
  o.gpus = "auto";
  o.policy = "pack";
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started[0].devices, (std::vector<std::string>{"4"}));
  EXPECT_EQ(launcher_.started[1].devices, (std::vector<std::string>{"GPU-5e1f"}));
  EXPECT_EQ(launcher_.started[4].devices, (std::vector<std::string>{"4", "GPU-5e1f"}));
  EXPECT_NE(out_.str().find("5 trials on 2 GPU(s)"), std::string::npos) << out_.str();
}

TEST_F(SweepRunTest, CtrlCKillsTheTrialInFlightAndExits130) {
  launcher_.interrupt = &interrupt_;
  launcher_.interrupt_at_start = 2;  // Ctrl-C while the second trial runs
  auto o = Options(kSmallTrials);
  EXPECT_EQ(Run(o), 130);
  EXPECT_EQ(launcher_.started.size(), 2u);  // nothing new starts after Ctrl-C
  EXPECT_EQ(launcher_.cancels, 1);
  EXPECT_EQ(Column("SELECT status FROM results ORDER BY status"),
            (std::vector<std::string>{"interrupted", "ok"}));
  EXPECT_EQ(Column("SELECT error FROM results WHERE status = 'interrupted'")[0],
            "interrupted by the user");
  EXPECT_NE(out_.str().find("run the same command again to resume"), std::string::npos);

  // The next run resumes: the interrupted trial and the rest run, the ok one does not.
  interrupt_.requested = false;
  launcher_.interrupt = nullptr;
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 4u);
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'ok'")[0], "5");
}

TEST_F(SweepRunTest, CtrlCWithSeveralInFlightCancelsEveryOne) {
  gpus_.gpus.assign(2, GpuInfo{"Fake GPU", ""});
  launcher_.interrupt = &interrupt_;
  launcher_.interrupt_at_start = 2;
  auto o = Options(kSmallTrials);
  o.gpus = "auto";
  o.policy = "pack";
  EXPECT_EQ(Run(o), 130);
  EXPECT_EQ(launcher_.started.size(), 2u);
  EXPECT_EQ(launcher_.cancels, 2);
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'interrupted'")[0], "2");
}

TEST_F(SweepRunTest, InterruptBeforeTheFirstTrialStartsNothing) {
  interrupt_.requested = true;
  EXPECT_EQ(Run(Options(kSmallTrials)), 130);
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results")[0], "0");
}

TEST_F(SweepRunTest, LaunchErrorIsAFailedTrialAndTheSweepGoesOn) {
  launcher_.launch_error_ulysses = 1;
  EXPECT_EQ(Run(Options(kSweep)), 1);
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 1")[0], "failed");
  EXPECT_EQ(Column("SELECT error FROM results WHERE ulysses = 1")[0],
            "cannot start worker: injected launch error");
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 2")[0], "ok");
}

TEST_F(SweepRunTest, LauncherThatThrowsFailsOnlyThatTrial) {
  launcher_.throw_ulysses = 1;
  EXPECT_EQ(Run(Options(kSweep)), 1);
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 1")[0], "failed");
  EXPECT_EQ(Column("SELECT error FROM results WHERE ulysses = 1")[0],
            "cannot start the trial: no free port (injected)");
  EXPECT_EQ(Column("SELECT status FROM results WHERE ulysses = 2")[0], "ok");
}

TEST_F(SweepRunTest, UnwritableRunFolderIsAFailedTrialAndTheSweepGoesOn) {
  auto o = Options(kSweep);
  o.run_root = dir_ / "runs";
  std::ofstream(dir_ / "runs") << "a file where the run folders should go";
  EXPECT_EQ(Run(o), 1);
  EXPECT_TRUE(launcher_.started.empty());
  auto errors = Column("SELECT error FROM results WHERE status = 'failed'");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("cannot prepare"), std::string::npos) << errors[0];
  EXPECT_EQ(Column("SELECT COUNT(*) FROM results WHERE status = 'skipped'")[0], "2");
}

TEST_F(SweepRunTest, GpuPositionOutsideTheInheritedSetIsAUsageError) {
  gpus_.gpus.assign(8, GpuInfo{"Fake GPU", ""});
  gpus_.inherited = "4,5";
  auto o = Options(kSweep);
  o.gpus = "0,2";
  EXPECT_EQ(Run(o), 2);
  EXPECT_NE(err_.str().find("CUDA_VISIBLE_DEVICES='4,5'"), std::string::npos) << err_.str();
}

TEST_F(SweepRunTest, UnknownPolicyIsAUsageError) {
  auto o = Options(kSweep);
  o.policy = "greedy";
  EXPECT_EQ(Run(o), 2);
  EXPECT_NE(err_.str().find("--policy 'greedy'"), std::string::npos) << err_.str();
}

}  // namespace
}  // namespace ditbench
