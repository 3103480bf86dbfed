// A coordinator that dies mid-trial, with real processes: the real RunSweep and LocalLauncher
// in a forked child run tests/fixtures/fake_worker.sh, whose ranks sleep until killed. The
// child is then killed (SIGKILL: no destructor, no handler runs) or hung up on (SIGHUP: the
// Ctrl-C path). No rank may outlive it, and the next run records each trial exactly once.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "base/exit_codes.h"
#include "launch/interrupt.h"
#include "launch/local_launcher.h"
#include "runner/sweep_run.h"
#include "storage/statement.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::coordinator_death_test {
namespace {

using Clock = std::chrono::steady_clock;

// Two trials of two ranks each, run one at a time.
constexpr const char* kSweep =
    "name: death\n"
    "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, repeats: 3, "
    "ulysses: 2, timeout: 10m}\n"
    "matrix:\n"
    "  seed: [0, 1]\n";

// Gone: no such process, or a zombie waiting for a reaper that is not us.
bool Gone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

class CoordinatorDeathTest : public ::testing::Test {
 protected:
  CoordinatorDeathTest() {
    std::ofstream(dir_ / "sweep.yaml") << kSweep;
    options_.sweep = dir_ / "sweep.yaml";
    options_.db = dir_ / "results.db";
    options_.gpus = "cpu:2";
    options_.worker = DITBENCH_FAKE_WORKER;
  }

  // Forks a coordinator running the sweep with ranks that sleep until killed; returns once
  // both ranks of its first trial have written their pids (bounded wait).
  pid_t StartSleepingCoordinator() {
    const pid_t child = fork();
    if (child == 0) {
      std::ofstream log(dir_ / "coordinator.log");
      signal(SIGHUP, SIG_DFL);  // as from a terminal, even if the test runner ignores it
      SignalInterrupt interrupt;
      test::FakeGpuDiscovery gpus;
      LocalLauncher launcher({"PATH=/usr/bin:/bin", "FAKE_WORKER_MODE=timeout"});
      _exit(RunSweep(options_, SweepEffects{launcher, interrupt, gpus}, log, log));
    }
    const auto give_up = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < give_up && Sleepers().size() < 2)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return child;
  }

  // The pids of every rank that has gone to sleep so far, in any trial folder.
  std::vector<pid_t> Sleepers() const {
    std::vector<pid_t> pids;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(dir_ / "results.runs", ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      const auto name = it->path().filename().string();
      if (name.rfind("sleeper", 0) != 0 || it->path().extension() != ".pid") continue;
      pid_t pid = 0;
      if (std::ifstream(it->path()) >> pid) pids.push_back(pid);
    }
    return pids;
  }

  // True once every pid is gone, polling for at most two seconds.
  static bool AllGoneWithinTwoSeconds(const std::vector<pid_t>& pids) {
    const auto give_up = Clock::now() + std::chrono::seconds(2);
    while (true) {
      bool all = true;
      for (pid_t pid : pids) all = all && Gone(pid);
      if (all) return true;
      if (Clock::now() >= give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  std::vector<std::string> Column(const std::string& sql) {
    SqliteConnection db = OpenSqlite(options_.db.string(), SQLITE_OPEN_READONLY);
    Statement statement(db.get(), sql);
    std::vector<std::string> values;
    while (statement.Step()) values.push_back(statement.IsNull(0) ? "NULL" : statement.Text(0));
    return values;
  }

  int RunToTheEnd() {
    LocalLauncher launcher({"PATH=/usr/bin:/bin", "FAKE_WORKER_MODE=ok"});
    return RunSweep(options_, SweepEffects{launcher, interrupt_, gpus_}, out_, err_);
  }

  test::TempDir dir_;
  RunOptions options_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::stringstream out_, err_;
};

TEST_F(CoordinatorDeathTest, KilledCoordinatorLeavesNoRankAndARerunRecordsEachTrialOnce) {
  const pid_t coordinator = StartSleepingCoordinator();
  ASSERT_GT(coordinator, 0);
  const std::vector<pid_t> ranks = Sleepers();
  ASSERT_EQ(ranks.size(), 2u) << "the first trial's ranks never went to sleep";

  // While it runs, a second coordinator on the database is refused and changes nothing.
  EXPECT_EQ(RunToTheEnd(), kExitStorageFailed);
  EXPECT_NE(err_.str().find("(pid " + std::to_string(coordinator) + " on "), std::string::npos)
      << err_.str();
  EXPECT_EQ(Column("SELECT status FROM results"), std::vector<std::string>{"running"});

  ASSERT_EQ(kill(coordinator, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(coordinator, &status, 0), coordinator);
  EXPECT_TRUE(AllGoneWithinTwoSeconds(ranks)) << "a rank outlived its coordinator";

  err_.str("");
  EXPECT_EQ(RunToTheEnd(), 0) << err_.str() << out_.str();
  EXPECT_NE(out_.str().find("1 trial(s) left running by a coordinator that is gone marked "
                            "interrupted"),
            std::string::npos)
      << out_.str();
  EXPECT_EQ(Column("SELECT COUNT(*) FROM trials"), std::vector<std::string>{"2"});
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT trial_key) FROM trials"), std::vector<std::string>{"2"});
  EXPECT_EQ(Column("SELECT status FROM results"), (std::vector<std::string>{"ok", "ok"}));
}

TEST_F(CoordinatorDeathTest, HangupEndsTheRunLikeCtrlC) {
  const pid_t coordinator = StartSleepingCoordinator();
  ASSERT_GT(coordinator, 0);
  const std::vector<pid_t> ranks = Sleepers();
  ASSERT_EQ(ranks.size(), 2u) << "the first trial's ranks never went to sleep";

  ASSERT_EQ(kill(coordinator, SIGHUP), 0);
  int status = 0;
  ASSERT_EQ(waitpid(coordinator, &status, 0), coordinator);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_TRUE(AllGoneWithinTwoSeconds(ranks));
  EXPECT_EQ(Column("SELECT status FROM results"), std::vector<std::string>{"interrupted"});

  EXPECT_EQ(RunToTheEnd(), 0) << err_.str() << out_.str();
  EXPECT_EQ(Column("SELECT COUNT(*) FROM trials"), std::vector<std::string>{"2"});
  EXPECT_EQ(Column("SELECT status FROM results"), (std::vector<std::string>{"ok", "ok"}));
}

// A run started under `nohup` keeps ignoring SIGHUP: the user asked it to outlive the terminal.
TEST(SignalInterruptTest, HangupIsCaughtUnlessTheRunStartedWithItIgnored) {
  for (const bool ignored : {false, true}) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      signal(SIGHUP, ignored ? SIG_IGN : SIG_DFL);  // whatever the test runner inherited
      SignalInterrupt interrupt;
      raise(SIGHUP);
      _exit(interrupt.Requested() ? 1 : 0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), ignored ? 0 : 1) << (ignored ? "nohup" : "plain");
  }
}

}  // namespace
}  // namespace ditbench::coordinator_death_test
