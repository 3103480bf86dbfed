// A campaign written by the release before ISO 8601 times (schema 9,
// tests/fixtures/results-v9.db) is resumed by this build after its migration.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/iso_time.h"
#include "tests/support/sweep_run_fixture.h"

namespace ditbench::sweep_run_migration_test {
namespace {

using ::testing::HasSubstr;
using test::SweepRunTest;

const std::filesystem::path kFixtures = DITBENCH_FIXTURES;

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(SweepRunTest, CampaignOfASchemaNineDatabaseIsResumedAfterItsMigration) {
  RunOptions o = Options(ReadText(kFixtures / "fixture-v9.yaml"));
  std::filesystem::copy_file(kFixtures / "results-v9.db", o.db);
  EXPECT_EQ(Run(o), 1) << err_.str();  // the failed trial is kept, so still failed
  EXPECT_TRUE(launcher_.started.empty()) << out_.str();
  EXPECT_THAT(out_.str(), HasSubstr("campaign 1 of sweep 'fixture-v9'"));
  EXPECT_THAT(out_.str(), HasSubstr("4 already recorded"));
  EXPECT_EQ(Column("SELECT count(DISTINCT campaign) FROM results")[0], "1");

  // Retried: the failed trial's two launches run, and their times are stored as ISO text.
  o.rerun = Rerun::kFailed;
  EXPECT_EQ(Run(o), 0) << err_.str() << out_.str();
  EXPECT_EQ(launcher_.started.size(), 2u);
  EXPECT_EQ(Column(std::string("SELECT count(*) FROM launches WHERE started_at GLOB '") +
                   kIsoUtcGlob + "' AND finished_at GLOB '" + kIsoUtcGlob + "'")[0],
            "6");
  EXPECT_EQ(Column(std::string("SELECT finished_at > started_at AND finished_at GLOB '") +
                   kIsoUtcGlob + "' FROM campaigns")[0],
            "1");
}

}  // namespace
}  // namespace ditbench::sweep_run_migration_test
