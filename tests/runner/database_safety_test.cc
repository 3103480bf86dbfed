// `run` against trouble from outside: another program holding the database's write lock, a
// rerun cut short, a database deleted or emptied under its run folders.
#include <sqlite3.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/exit_codes.h"
#include "runner/sweep_run.h"
#include "storage/statement.h"
#include "tests/support/sweep_run_fixture.h"

namespace ditbench::database_safety_test {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSweep = R"(name: s
defaults: {model: pixart-alpha-tiny, steps: 2, warmup: 1, repeats: 3}
matrix:
  resolution: [256]
  ulysses: [1, 2]
)";

// An ostream that keeps what is written and calls `on_marker` once, as soon as `marker`
// appears in it: the test's reaction to what a user would read.
class WatchedOutput : public std::stringbuf {
 public:
  WatchedOutput(std::string marker, std::function<void()> on_marker)
      : marker_(std::move(marker)), on_marker_(std::move(on_marker)) {}

 protected:
  int sync() override {
    if (!seen_ && str().find(marker_) != std::string::npos) {
      seen_ = true;
      on_marker_();
    }
    return 0;
  }

 private:
  std::string marker_;
  std::function<void()> on_marker_;
  bool seen_ = false;
};

class DatabaseSafetyTest : public test::SweepRunTest {
 protected:
  // Every file under `folder` with its size, in order.
  static std::map<std::string, std::uintmax_t> Files(const std::filesystem::path& folder) {
    std::map<std::string, std::uintmax_t> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
      if (entry.is_regular_file()) files[entry.path().string()] = entry.file_size();
    return files;
  }
  // RunSweep with `out` as its console.
  int RunWith(const RunOptions& o, std::ostream& out) {
    err_.str("");
    return RunSweep(o, SweepEffects{launcher_, interrupt_, gpus_, health_}, out, err_);
  }
};

// Another program inside BEGIN IMMEDIATE for longer than SQLite's old 5 s timeout ended the
// run with "database is locked" and left the finished trial `running`. Now `run` waits, says
// so, and records every trial once the lock is released (released here as soon as `run` says
// it waits: no timing in the test).
TEST_F(DatabaseSafetyTest, AnOutsideWriteLockDelaysTheRunAndLosesNoTrial) {
  const RunOptions o = Options(kSweep);
  SqliteConnection outside;
  launcher_.on_start = [&](const LaunchRequest&) {
    if (outside) return;
    outside = OpenSqlite(o.db.string(), SQLITE_OPEN_READWRITE);
    Exec(outside.get(), "BEGIN IMMEDIATE");  // held until `run` says it waits
  };
  WatchedOutput console("is locked by another program",
                        [&] { Exec(outside.get(), "COMMIT"); });
  std::ostream out(&console);
  EXPECT_EQ(RunWith(o, out), 0) << err_.str() << console.str();
  EXPECT_THAT(console.str(), HasSubstr("results database '" + o.db.string() +
                                       "' is locked by another program"));
  EXPECT_EQ(Column("SELECT status FROM results ORDER BY ulysses"),
            (std::vector<std::string>{"ok", "ok"}));
}

// Ctrl-C while `run` waits for another program's lock: the finished trial cannot be recorded
// now. Its rank files and outcome are in its run folder, and the next run records it from
// there instead of running it again.
TEST_F(DatabaseSafetyTest, AFinishedTrialThatCouldNotBeRecordedIsRecordedByTheNextRun) {
  const RunOptions o = Options(kSweep);
  SqliteConnection outside;
  launcher_.on_start = [&](const LaunchRequest&) {
    if (outside) return;
    outside = OpenSqlite(o.db.string(), SQLITE_OPEN_READWRITE);
    Exec(outside.get(), "BEGIN IMMEDIATE");
  };
  WatchedOutput console("is locked by another program", [&] { interrupt_.requested = true; });
  std::ostream out(&console);
  EXPECT_EQ(RunWith(o, out), kExitInterrupted);
  EXPECT_THAT(err_.str(), HasSubstr("database is locked"));
  Exec(outside.get(), "COMMIT");
  ASSERT_EQ(launcher_.started.size(), 1u);
  const auto first = launcher_.started[0];
  EXPECT_EQ(Column("SELECT status FROM results"), std::vector<std::string>{"running"});

  interrupt_.requested = false;
  launcher_.on_start = nullptr;
  launcher_.started.clear();
  EXPECT_EQ(Run(o), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("trial " + first.trial_key +
                                    " finished before its coordinator could record it: "
                                    "recorded ok from " + first.run_dir.string()));
  ASSERT_EQ(launcher_.started.size(), 1u);  // only the other trial ran
  EXPECT_NE(launcher_.started[0].trial_key, first.trial_key);
  EXPECT_EQ(Column("SELECT status FROM results ORDER BY ulysses"),
            (std::vector<std::string>{"ok", "ok"}));
  EXPECT_EQ(Column("SELECT count(*) FROM samples s JOIN trials t ON t.id = s.trial_id WHERE "
                   "t.trial_key = '" + first.trial_key + "'"),
            std::vector<std::string>{"4"});  // 1 warm-up + 3 timed iterations, one rank
}

// A run whose database failed in the middle (here: a trigger another program added makes
// every write of samples fail as a full disk does) exited 1, the code for "some trials
// failed", and left the trial `running` with no word on what happens next. It now exits
// kExitStorageFailed and names the trial the next run records from its run folder.
TEST_F(DatabaseSafetyTest, ARunStoppedByItsDatabaseHasItsOwnExitCodeAndNamesTheTrialToRecord) {
  const RunOptions o = Options(kSweep);
  launcher_.on_start = [&](const LaunchRequest&) {
    if (launcher_.started.size() != 1) return;  // while the first trial runs
    SqliteConnection outside = OpenSqlite(o.db.string(), SQLITE_OPEN_READWRITE);
    Exec(outside.get(), "CREATE TRIGGER full_disk BEFORE INSERT ON samples BEGIN "
                        "SELECT RAISE(ABORT, 'database or disk is full'); END");
  };
  const int code = Run(o);
  EXPECT_EQ(code, kExitStorageFailed) << err_.str();
  EXPECT_NE(code, kExitTrialsFailed);
  EXPECT_THAT(err_.str(), HasSubstr("database or disk is full"));
  ASSERT_EQ(launcher_.started.size(), 1u);
  const auto& first = launcher_.started[0];
  EXPECT_THAT(err_.str(), HasSubstr("ditbench run: trial " + first.trial_key +
                                    " finished but is not recorded; the next `ditbench run` "
                                    "records it from " + first.run_dir.string() + "\n"));
  EXPECT_EQ(Column("SELECT status FROM results"), std::vector<std::string>{"running"});
}

// --rerun all used to delete the old result when the trial started again: interrupted, the
// trial had neither. The old result now stays until a new measurement replaces it.
TEST_F(DatabaseSafetyTest, AnInterruptedRerunKeepsTheOldResult) {
  auto o = Options(kSweep);
  ASSERT_EQ(Run(o), 0) << err_.str();
  const auto before = Column("SELECT latency_ms FROM results ORDER BY ulysses");
  const auto samples = Column("SELECT count(*) FROM samples");
  ASSERT_EQ(before.size(), 2u);
  o.rerun = Rerun::kAll;
  launcher_.interrupt = &interrupt_;
  launcher_.interrupt_at_start = launcher_.started.size() + 1;  // Ctrl-C during the rerun
  EXPECT_EQ(Run(o), 130) << err_.str();
  EXPECT_EQ(Column("SELECT status FROM results ORDER BY ulysses"),
            (std::vector<std::string>{"ok", "ok"}));
  EXPECT_EQ(Column("SELECT latency_ms FROM results ORDER BY ulysses"), before);
  EXPECT_EQ(Column("SELECT count(*) FROM samples"), samples);
}

// A database deleted or truncated to zero bytes used to start "campaign 1" again and
// overwrite the old campaign 1's run folders.
TEST_F(DatabaseSafetyTest, ALostDatabaseDoesNotReuseTheOldRunFolders) {
  for (const bool truncate : {false, true}) {
    SCOPED_TRACE(truncate ? "truncated" : "deleted");
    auto o = Options(kSweep);
    ASSERT_EQ(Run(o), 0) << err_.str();
    const auto campaign = dir_ / "results.runs" / "1";
    const auto files = Files(campaign);
    ASSERT_FALSE(files.empty());
    std::filesystem::remove(o.db.string() + "-wal");
    std::filesystem::remove(o.db.string() + "-shm");
    if (truncate) {
      std::ofstream(o.db, std::ios::trunc).flush();
    } else {
      std::filesystem::remove(o.db);
    }
    launcher_.started.clear();
    EXPECT_EQ(Run(o), 2);
    EXPECT_THAT(err_.str(), HasSubstr("holds the trials of campaign(s) 1 that '" +
                                      o.db.string() + "' does not know"));
    EXPECT_THAT(err_.str(), HasSubstr("--run-dir"));
    EXPECT_TRUE(launcher_.started.empty());
    EXPECT_EQ(Files(campaign), files);  // the old campaign 1's files, untouched
    std::filesystem::remove_all(dir_ / "results.runs");  // the user moves it away
    EXPECT_EQ(Run(o), 0) << err_.str();
    std::filesystem::remove_all(dir_ / "results.runs");
    std::filesystem::remove(o.db);
  }
}

}  // namespace
}  // namespace ditbench::database_safety_test
