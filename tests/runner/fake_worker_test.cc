// Failure classification end to end, without LibTorch: the real coordinator (RunSweep with the
// real LocalLauncher) runs tests/fixtures/fake_worker.sh as the worker, which keeps or breaks
// the worker contract in one way per case. Each case checks what the database says.
#include <signal.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "launch/local_launcher.h"
#include "runner/sweep_run.h"
#include "storage/results_db.h"
#include "storage/statement.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::fake_worker_test {
namespace {

struct Stored {
  std::string status;
  std::string error;
};

class FakeWorkerTest : public ::testing::Test {
 protected:
  // Runs a one-trial, two-rank sweep with the fake worker in `mode`; returns the exit code.
  int Run(const std::string& mode, const std::string& timeout = "30s") {
    std::ofstream(dir_ / "sweep.yaml")
        << "name: fake\n"
           "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, "
           "repeats: 3, ulysses: 2, timeout: " << timeout << "}\n";
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "results.db";
    o.gpus = "cpu:2";
    o.worker = worker_;
    LocalLauncher launcher({"PATH=/usr/bin:/bin", "FAKE_WORKER_MODE=" + mode});
    return RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out_, err_);
  }
  Stored Result() {
    SqliteConnection db = OpenSqlite((dir_ / "results.db").string(), SQLITE_OPEN_READONLY);
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db.get(), "SELECT status, error, run_dir FROM results", -1,
                                 &stmt, nullptr),
              SQLITE_OK);
    Stored stored;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      auto text = [&](int i) {
        auto t = sqlite3_column_text(stmt, i);
        return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
      };
      stored = {text(0), text(1)};
      run_dir_ = text(2);
    }
    EXPECT_NE(sqlite3_step(stmt), SQLITE_ROW) << "one trial expected";
    sqlite3_finalize(stmt);
    return stored;
  }
  // Ranks that slept until killed must be gone (reaped by us, so kill() finds no process).
  // In the failing modes rank 1 fails only once rank 0 sleeps, so a sleeper is always there to
  // check; at a timeout a rank may be killed before it wrote its pid (`require_one` false).
  void ExpectSleepersDead(bool require_one = true) {
    int checked = 0;
    for (int r = 0; r < 2; ++r) {
      std::ifstream in(std::filesystem::path(run_dir_) / ("sleeper" + std::to_string(r) + ".pid"));
      pid_t pid = 0;
      if (!(in >> pid)) continue;
      ++checked;
      EXPECT_NE(kill(pid, 0), 0) << "rank " << r << " (pid " << pid << ") outlived its trial";
    }
    if (require_one) {
      EXPECT_GT(checked, 0) << "no sleeping rank left its pid";
    }
  }

  test::TempDir dir_;
  std::filesystem::path worker_ = DITBENCH_FAKE_WORKER;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::stringstream out_, err_;
  std::string run_dir_;
};

TEST_F(FakeWorkerTest, ResultFilesFromEveryRankMakeAnOkTrial) {
  EXPECT_EQ(Run("ok"), 0) << out_.str() << err_.str();
  auto r = Result();
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.error, "");
}

TEST_F(FakeWorkerTest, ExitOneIsFailedWithTheWorkersOwnWords) {
  EXPECT_EQ(Run("failed"), 1);
  auto r = Result();
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.error, "rank 1 exited with code 1: the model diverged");
  ExpectSleepersDead();
}

TEST_F(FakeWorkerTest, SignalDeathIsCrashedWithTheLastLogLine) {
  EXPECT_EQ(Run("crash"), 1);
  auto r = Result();
  EXPECT_EQ(r.status, "crashed");
  EXPECT_NE(r.error.find("rank 1 killed by signal 11"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("fake worker: about to crash"), std::string::npos) << r.error;
  ExpectSleepersDead();
}

TEST_F(FakeWorkerTest, RanksThatNeverEndAreKilledAtTheTimeout) {
  EXPECT_EQ(Run("timeout", "0.5"), 1);
  auto r = Result();
  EXPECT_EQ(r.status, "timeout");
  EXPECT_NE(r.error.find("timed out after"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("all ranks killed"), std::string::npos) << r.error;
  ExpectSleepersDead(/*require_one=*/false);
}

TEST_F(FakeWorkerTest, ExitThreeIsOom) {
  EXPECT_EQ(Run("oom"), 1);
  auto r = Result();
  EXPECT_EQ(r.status, "oom");
  EXPECT_EQ(r.error, "rank 1 exited with code 3: CUDA out of memory (fake)");
  ExpectSleepersDead();
}

TEST_F(FakeWorkerTest, ExitTwoIsAnInvalidConfiguration) {
  EXPECT_EQ(Run("invalid"), 1);
  auto r = Result();
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.error,
            "rank 1 exited with code 2 (invalid configuration): 24 heads are not divisible by "
            "ulysses=5 (fake)");
  ExpectSleepersDead();
}

TEST_F(FakeWorkerTest, MissingResultFileIsFailed) {
  EXPECT_EQ(Run("missing"), 1);
  auto r = Result();
  EXPECT_EQ(r.status, "failed");
  EXPECT_NE(r.error.find("result file is missing or bad"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("rank0.json: cannot read"), std::string::npos) << r.error;
}

TEST_F(FakeWorkerTest, MalformedResultFileIsFailed) {
  EXPECT_EQ(Run("malformed"), 1);
  auto r = Result();
  EXPECT_EQ(r.status, "failed");
  EXPECT_NE(r.error.find("result file is missing or bad"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("not valid JSON"), std::string::npos) << r.error;
}

TEST_F(FakeWorkerTest, WorkerThatCannotStartIsAFailedTrialNotTheEndOfTheSweep) {
  worker_ = dir_ / "not-executable.sh";
  std::ofstream(worker_) << "#!/bin/sh\nexit 0\n";
  std::filesystem::permissions(worker_, std::filesystem::perms::owner_read);
  EXPECT_EQ(Run("ok"), 1) << err_.str();
  auto r = Result();
  EXPECT_EQ(r.status, "failed");
  EXPECT_NE(r.error.find("cannot start"), std::string::npos) << r.error;
  EXPECT_NE(out_.str().find("done: 1 ran (0 ok, 1 failed)"), std::string::npos) << out_.str();
}

}  // namespace
}  // namespace ditbench::fake_worker_test
