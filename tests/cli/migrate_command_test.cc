#include "cli/migrate.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/command.h"
#include "runner/coordinator_lock.h"
#include "storage/results_db.h"
#include "storage/schema.h"
#include "tests/support/temp_dir.h"

namespace ditbench::migrate_command_test {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kFixtures = DITBENCH_FIXTURES;

class MigrateCommandTest : public ::testing::Test {
 protected:
  test::TempDir dir_;
  std::filesystem::path db_ = dir_ / "results.db";
  std::stringstream out_, err_;
};

// Readers refuse an old schema; `migrate` brings it forward without a sweep or a trial.
TEST_F(MigrateCommandTest, AnOldDatabaseBecomesReadableAndNothingElseHappens) {
  std::filesystem::copy_file(kFixtures / "results-v9.db", db_);
  EXPECT_THROW(ResultsDb::Open(db_, /*read_only=*/true), StorageError);
  try {
    ResultsDb::Open(db_, /*read_only=*/true);
  } catch (const StorageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("ditbench migrate --db"));
  }
  ASSERT_EQ(MigrateDatabase(db_, out_, err_), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("migrated from schema version 9 to " +
                                    std::to_string(kSchemaVersion)));
  auto db = ResultsDb::Open(db_, /*read_only=*/true);
  EXPECT_FALSE(db->reader().Campaigns().empty());
  out_.str("");
  ASSERT_EQ(MigrateDatabase(db_, out_, err_), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("already"));
}

TEST_F(MigrateCommandTest, AMissingFileIsNotCreated) {
  EXPECT_EQ(MigrateDatabase(db_, out_, err_), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("no results database at '" + db_.string() + "'"));
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(MigrateCommandTest, ADatabaseInUseByARunIsLeftAlone) {
  std::filesystem::copy_file(kFixtures / "results-v9.db", db_);
  LockHolder holder;
  auto lock = CoordinatorLock::TryAcquire(db_, &holder);
  ASSERT_TRUE(lock.has_value());
  EXPECT_EQ(MigrateDatabase(db_, out_, err_), kExitStorageFailed);
  EXPECT_THAT(err_.str(), HasSubstr("in use by another `ditbench run`"));
}

}  // namespace
}  // namespace ditbench::migrate_command_test
