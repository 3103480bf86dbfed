#include "runner/coordinator_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include <sqlite3.h>

#include "machine/host_info.h"
#include "storage/statement.h"
#include "tests/support/temp_dir.h"

namespace ditbench::coordinator_lock_test {
namespace {

class CoordinatorLockTest : public ::testing::Test {
 protected:
  test::TempDir dir_;
  std::filesystem::path db_ = dir_ / "results.db";
};

TEST_F(CoordinatorLockTest, SecondHolderIsRefusedAndToldWhoHoldsIt) {
  LockHolder holder;
  auto first = CoordinatorLock::TryAcquire(db_, &holder);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(std::filesystem::exists(dir_ / "results.db.lock"));
  EXPECT_TRUE(std::filesystem::exists(db_));  // created empty, to be locked

  auto second = CoordinatorLock::TryAcquire(db_, &holder);  // a second open file: refused
  EXPECT_FALSE(second.has_value());
  EXPECT_EQ(holder.pid, getpid());
  EXPECT_EQ(holder.host, Hostname());
  EXPECT_EQ(holder.started.size(), 20u) << holder.started;  // 2026-11-22T01:02:03Z
  EXPECT_NE(holder.Describe().find("pid " + std::to_string(getpid()) + " on "),
            std::string::npos);
}

// The lock follows the file: every other name of the database meets it.
TEST_F(CoordinatorLockTest, SymlinkHardLinkAndOtherSpellingsMeetTheSameLock) {
  LockHolder holder;
  auto first = CoordinatorLock::TryAcquire(db_, &holder);
  ASSERT_TRUE(first.has_value());
  std::filesystem::create_directory(dir_ / "elsewhere");
  std::filesystem::create_symlink(db_, dir_ / "elsewhere" / "alias.db");
  std::filesystem::create_hard_link(db_, dir_ / "elsewhere" / "hard.db");
  EXPECT_FALSE(CoordinatorLock::TryAcquire(dir_ / "elsewhere" / "alias.db", &holder));
  EXPECT_EQ(holder.pid, getpid());  // a symlink finds the note beside the file
  holder = {};
  EXPECT_FALSE(CoordinatorLock::TryAcquire(dir_ / "elsewhere" / "hard.db", &holder));
  EXPECT_FALSE(
      CoordinatorLock::TryAcquire(dir_ / "elsewhere" / ".." / "results.db", &holder));
  first.reset();
  EXPECT_TRUE(CoordinatorLock::TryAcquire(dir_ / "elsewhere" / "hard.db", &holder));
}

// SQLite's own locks and this one never meet: a writer on another connection is not blocked
// by a held coordinator lock, and closing that connection keeps the lock.
TEST_F(CoordinatorLockTest, TheLockLeavesSqliteAlone) {
  LockHolder holder;
  auto lock = CoordinatorLock::TryAcquire(db_, &holder);
  ASSERT_TRUE(lock.has_value());
  {
    SqliteConnection db = OpenSqlite(db_.string(), SQLITE_OPEN_READWRITE);
    Exec(db.get(), "BEGIN IMMEDIATE; CREATE TABLE t (x); INSERT INTO t VALUES (1); COMMIT;");
  }
  EXPECT_FALSE(CoordinatorLock::TryAcquire(db_, &holder));
}

TEST_F(CoordinatorLockTest, AnEmptyDatabaseTheLockCreatedGoesWithIt) {
  LockHolder holder;
  { auto lock = CoordinatorLock::TryAcquire(db_, &holder); }
  EXPECT_FALSE(std::filesystem::exists(db_));
  std::ofstream(db_) << "";  // a file the lock did not create stays
  { auto lock = CoordinatorLock::TryAcquire(db_, &holder); }
  EXPECT_TRUE(std::filesystem::exists(db_));
}

TEST_F(CoordinatorLockTest, ReleasingOrMovingTheLockBehavesLikeOneLock) {
  LockHolder holder;
  auto first = CoordinatorLock::TryAcquire(db_, &holder);
  ASSERT_TRUE(first.has_value());
  CoordinatorLock moved = std::move(*first);
  first.reset();  // the moved-from lock releases nothing
  EXPECT_FALSE(CoordinatorLock::TryAcquire(db_, &holder).has_value());
  { CoordinatorLock gone = std::move(moved); }
  EXPECT_TRUE(CoordinatorLock::TryAcquire(db_, &holder).has_value());
}

TEST_F(CoordinatorLockTest, AKilledHolderLeavesNoLockBehind) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    LockHolder unused;
    auto lock = CoordinatorLock::TryAcquire(db_, &unused);
    char byte = lock ? 'y' : 'n';
    [[maybe_unused]] auto n = write(ready[1], &byte, 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(byte, 'y');
  LockHolder holder;
  EXPECT_FALSE(CoordinatorLock::TryAcquire(db_, &holder).has_value());
  EXPECT_EQ(holder.pid, child);
  EXPECT_FALSE(CoordinatorGone(holder.host, holder.pid));
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(CoordinatorLock::TryAcquire(db_, &holder).has_value());
  EXPECT_TRUE(CoordinatorGone(Hostname(), child));
}

TEST(CoordinatorGoneTest, ThisProcessAndUnknownPidsCountAsGone) {
  EXPECT_TRUE(CoordinatorGone(Hostname(), getpid()));  // a pid reused by the new coordinator
  EXPECT_TRUE(CoordinatorGone(Hostname(), 0));
  EXPECT_FALSE(CoordinatorGone(Hostname(), getppid()));
  EXPECT_TRUE(CoordinatorGone("another-host.invalid", getppid()));
}

}  // namespace
}  // namespace ditbench::coordinator_lock_test
