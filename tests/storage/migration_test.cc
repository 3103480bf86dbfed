// Forward migration of a real schema-1 database (tests/fixtures/results-v1.db, written by the
// ditbench of main before key format v2; tests/fixtures/README.md says how).
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "experiments/sweep_expand.h"
#include "experiments/sweep_spec.h"
#include "storage/iso_time.h"
#include "storage/results_db.h"
#include "storage/schema.h"
#include "storage/statement.h"
#include "tests/support/results_db_fixture.h"
#include "tests/support/temp_dir.h"

namespace ditbench::migration_test {
namespace {

const std::filesystem::path kFixtures = DITBENCH_FIXTURES;

// Keys under key format v2 (identity texts hashed independently with Python's hashlib):
constexpr const char* kSeed0 = "f4343bb23be739ae";    // {"model":"pixart-alpha-tiny","resolution":256,"steps":2}
constexpr const char* kSkipped = "ef822c8abc069935";  // ... "seed":1, "ulysses":3
constexpr const char* kSeed7 = "aa2c5320e362d84c";    // ... "seed":7
constexpr const char* kTwoRanks = "c7227b6aa9a5f181"; // ... "seed":2, "ulysses":2
// Keys the three seed-0 trials had under key format v1.
constexpr const char* kV1Warmup1 = "bdaab0881d497e70";  // ok, warmup 1, repeats 3 (oldest)
constexpr const char* kV1Warmup2 = "a8e8a7e0b12950a3";  // ok, warmup 2, repeats 4
constexpr const char* kV1Warmup3 = "2f47e9acbefee58f";  // failed, warmup 3 (newest)

class MigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy_file(kFixtures / "results-v1.db", DbPath());
  }
  std::filesystem::path DbPath() const { return dir_ / "results.db"; }

  // Every row of `sql` (first column as text) through a separate read-only connection.
  std::vector<std::string> Column(const std::string& sql) {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READONLY);
    Statement statement(raw.get(), sql);
    std::vector<std::string> values;
    while (statement.Step()) values.push_back(statement.IsNull(0) ? "NULL" : statement.Text(0));
    return values;
  }

  // Runs `sql` on the schema-1 copy before it is migrated (to set up a collision).
  void Prepare(const std::string& sql) {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(), sql.c_str());
  }

  // warmup/repeats.min of the seed-0 trial kept by the migration.
  std::string KeptSeed0Policy() {
    ResultsDb::Open(DbPath());
    return Column(fmt::format("SELECT json_extract(policy_json, '$.warmup') || '/' || "
                              "json_extract(policy_json, '$.repeats.min') FROM trials "
                              "WHERE trial_key = '{}'",
                              kSeed0))
        .at(0);
  }

  test::TempDir dir_;
};

TEST_F(MigrationTest, FixtureIsAtSchemaOneAndRefusedReadOnly) {
  EXPECT_EQ(Column("SELECT max(version) FROM schema_version"), std::vector<std::string>{"1"});
  EXPECT_EQ(Column("SELECT count(*) FROM trials"), std::vector<std::string>{"6"});
  EXPECT_THROW(ResultsDb::Open(DbPath(), /*read_only=*/true), StorageError);
}

TEST_F(MigrationTest, SchemaFiveAddsCommandColumnsEmptyForBuiltInTrials) {
  ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT DISTINCT axes FROM results"), std::vector<std::string>{"{}"});
  EXPECT_EQ(Column("SELECT count(*) FROM results WHERE command IS NULL AND metrics IS NULL"),
            Column("SELECT count(*) FROM results"));
}

TEST_F(MigrationTest, SchemaElevenKeepsEveryCampaignIncludedAndUnlabelled) {
  auto db = ResultsDb::Open(DbPath());
  const std::vector<CampaignInfo> campaigns = db->reader().Campaigns();
  ASSERT_FALSE(campaigns.empty());
  for (const CampaignInfo& c : campaigns) {
    EXPECT_FALSE(c.excluded);
    EXPECT_EQ(c.label, "");
  }
  EXPECT_EQ(campaigns[0].trials, std::stoll(Column("SELECT count(*) FROM trials "
                                                   "WHERE campaign_id = 1").at(0)));
}

// Schema 14 (profiles and output quality): migrated trials were neither profiled nor
// compared as images, so every new column is NULL, and the rows read as before.
TEST_F(MigrationTest, SchemaFifteenAddsProfileAndQualityColumnsEmpty) {
  auto db = ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT count(*) FROM results WHERE psnr IS NULL AND ssim IS NULL AND "
                   "compute_share IS NULL AND comm_share IS NULL AND idle_share IS NULL AND "
                   "profile IS NULL"),
            Column("SELECT count(*) FROM results"));
  for (const ResultRow& row : db->reader().Results({1})) {
    EXPECT_FALSE(row.profile);
    EXPECT_FALSE(row.psnr);
  }
}

// Schema 16 (energy): migrated trials had no energy counter read, so energy_j,
// joules_per_image and energy_note are NULL in the view and in every launch, and the rows read
// as before.
TEST_F(MigrationTest, SchemaSixteenAddsEnergyColumnsEmpty) {
  auto db = ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT count(*) FROM results WHERE energy_j IS NULL AND "
                   "joules_per_image IS NULL AND energy_note IS NULL"),
            Column("SELECT count(*) FROM results"));
  EXPECT_EQ(Column("SELECT count(*) FROM launches WHERE energy_j IS NOT NULL OR "
                   "joules_per_image IS NOT NULL"),
            std::vector<std::string>{"0"});
  for (const ResultRow& row : db->reader().Results({1})) {
    EXPECT_FALSE(row.energy_j);
    EXPECT_FALSE(row.joules_per_image);
    EXPECT_EQ(row.energy_note, "");
  }
}

// Schema 17 (quality gates): migrated trials had no gate, so they have no verdict and none is
// below quality.
TEST_F(MigrationTest, SchemaSeventeenAddsAQualityVerdictEmpty) {
  auto db = ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT count(*) FROM results WHERE quality IS NULL AND quality_ok IS NULL"),
            Column("SELECT count(*) FROM results"));
  for (const ResultRow& row : db->reader().Results({1})) {
    EXPECT_EQ(row.quality, "");
    EXPECT_FALSE(row.below_quality());
  }
}

// Schema 20 (attention kernels, FP8 layers, schedules): every migrated trial ran SDPA's own
// kernel without FP8 or a schedule; what its steps ran was not recorded.
TEST_F(MigrationTest, SchemaTwentyShowsAutoAttentionAndNothingRecorded) {
  auto db = ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT count(*) FROM results WHERE attention = 'auto' AND quant = 'none' AND "
                   "schedule IS NULL AND attention_ran IS NULL AND step_kernels IS NULL"),
            Column("SELECT count(*) FROM results"));
  for (const ResultRow& row : db->reader().Results({1})) {
    EXPECT_TRUE(row.step_kernels.empty());
    EXPECT_EQ(row.attention_ran, "");
  }
}

// Schema 21 (`cache`): no migrated sample is of a reused step, and the column refuses others.
TEST_F(MigrationTest, SchemaTwentyOneMarksNoMigratedSampleReused) {
  auto db = ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT count(*) FROM samples WHERE reused = 0"),
            Column("SELECT count(*) FROM samples"));
  EXPECT_NE(Column("SELECT count(*) FROM samples"), std::vector<std::string>{"0"});
  for (const Sample& sample : db->reader().Samples(1,
                                                   Column("SELECT trial_key FROM trials "
                                                          "ORDER BY id LIMIT 1")[0],
                                                   0))
    EXPECT_FALSE(sample.reused);
}

TEST_F(MigrationTest, KeysAreRecomputedAndStatusesKept) {
  auto db = ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT max(version) FROM schema_version"),
            std::vector<std::string>{std::to_string(kSchemaVersion)});
  std::map<std::string, TrialStatus> expected = {{kSeed0, TrialStatus::kOk},
                                                 {kSkipped, TrialStatus::kSkipped},
                                                 {kSeed7, TrialStatus::kFailed},
                                                 {kTwoRanks, TrialStatus::kOk}};
  EXPECT_EQ(db->reader().TrialStatuses(1), expected);
  EXPECT_EQ(Column(fmt::format("SELECT error FROM trials WHERE trial_key = '{}'", kSkipped)),
            std::vector<std::string>{"4 heads are not divisible by ulysses=3"});
}

TEST_F(MigrationTest, CollidingTrialsKeepTheOkOneThenTheNewest) {
  auto db = ResultsDb::Open(DbPath());
  // Three seed-0 trials share one key now. The failed one is the newest, but ok comes first;
  // of the two ok ones the newer (warmup 2, repeats 4) is kept.
  const std::string kept = fmt::format(
      "SELECT json_extract(policy_json, '$.warmup') || '/' || "
      "json_extract(policy_json, '$.repeats.min') FROM trials WHERE trial_key = '{}'",
      kSeed0);
  EXPECT_EQ(Column(kept), std::vector<std::string>{"2/4"});
  EXPECT_EQ(Column(fmt::format(
                "SELECT old_trial_key || ':' || status || ':' || trial_key || ':' || "
                "(kept_trial_id = (SELECT id FROM trials WHERE trial_key = '{}')) "
                "FROM superseded_trials ORDER BY old_trial_key",
                kSeed0)),
            (std::vector<std::string>{fmt::format("{}:failed:{}:1", kV1Warmup3, kSeed0),
                                      fmt::format("{}:ok:{}:1", kV1Warmup1, kSeed0)}));
  EXPECT_EQ(Column(fmt::format(
                "SELECT latency_ms FROM superseded_trials WHERE old_trial_key = '{}'",
                kV1Warmup1)),
            std::vector<std::string>{"12.0"});
  EXPECT_EQ(Column(fmt::format("SELECT count(*) FROM trials WHERE trial_key = '{}'",
                               kV1Warmup2)),
            std::vector<std::string>{"0"});
}

TEST_F(MigrationTest, SamplesOfKeptTrialsStayAndTheOthersGo) {
  auto db = ResultsDb::Open(DbPath());
  // Kept seed-0 trial: (2 warm-up + 4 timed) iterations x (iteration + 2 steps), one rank.
  std::vector<Sample> samples = db->reader().Samples(1, kSeed0);
  ASSERT_EQ(samples.size(), 18u);
  EXPECT_EQ(samples.front().stage, "iteration");
  EXPECT_TRUE(samples.front().warmup);
  EXPECT_DOUBLE_EQ(samples.front().ms, 10);  // the fake worker: 10 + iteration + rank
  EXPECT_DOUBLE_EQ(samples.back().ms, 7.5);  // iteration 5, step 1: 15 / 2
  EXPECT_EQ(db->reader().Samples(1, kTwoRanks).size(), 24u);
  // 54 samples before: the superseded ok trial's 12 are gone with it.
  EXPECT_EQ(Column("SELECT count(*) FROM samples"), std::vector<std::string>{"42"});
  EXPECT_EQ(Column("SELECT count(*) FROM trial_metrics"), std::vector<std::string>{"2"});
}

TEST_F(MigrationTest, EveryRecordedTrialBecomesItsOwnFirstLaunch) {
  auto db = ResultsDb::Open(DbPath());
  // Schema 5: one launch per trial that ran (the skipped one has none), with its status and
  // median; samples belong to launch 0; the view counts one launch of one asked for.
  EXPECT_EQ(Column("SELECT t.status || ':' || l.launch || ':' || l.status FROM launches l "
                   "JOIN trials t ON t.id = l.trial_id ORDER BY t.status"),
            (std::vector<std::string>{"failed:0:failed", "ok:0:ok", "ok:0:ok"}));
  EXPECT_EQ(Column("SELECT count(*) FROM launches l JOIN trial_metrics m ON "
                   "m.trial_id = l.trial_id WHERE l.latency_ms = m.latency_ms"),
            std::vector<std::string>{"2"});
  EXPECT_EQ(Column("SELECT count(*) FROM samples WHERE launch != 0"),
            std::vector<std::string>{"0"});
  EXPECT_EQ(Column("SELECT DISTINCT launches || '/' || replicates || ' ' || ci_scope FROM "
                   "results WHERE status = 'ok'"),
            std::vector<std::string>{"1/1 iterations"});
  const std::map<std::string, std::map<int, TrialStatus>> launches = db->reader().LaunchStatuses(1);
  EXPECT_EQ(launches.at(kSeed7).at(0), TrialStatus::kFailed);
  EXPECT_FALSE(launches.count(kSkipped));
}

TEST_F(MigrationTest, ResultsViewReadsTheMigratedRows) {
  ResultsDb::Open(DbPath());
  auto db = ResultsDb::Open(DbPath(), /*read_only=*/true);  // now at the current version
  ResultTable table = test::ReadOnlySql(
      db->console(),
      "SELECT trial_key, status, model, resolution, steps, ulysses, world_size, latency_ms, "
      "iterations, warmup, profile_blocks, workload FROM results ORDER BY trial_key");
  ASSERT_EQ(table.rows.size(), 4u);
  auto text = [](const ResultCell& cell) {
    if (std::holds_alternative<std::monostate>(cell)) return std::string("NULL");
    if (auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
    if (auto* d = std::get_if<double>(&cell)) return nlohmann::json(*d).dump();
    return std::get<std::string>(cell);
  };
  std::vector<std::string> rows;
  for (const auto& row : table.rows) {
    std::string line;
    for (const auto& cell : row) {
      if (!line.empty()) line += ' ';
      line += text(cell);
    }
    rows.push_back(line);
  }
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "aa2c5320e362d84c failed pixart-alpha-tiny 256 2 1 1 NULL NULL NULL 0 dit",
                      "c7227b6aa9a5f181 ok pixart-alpha-tiny 256 2 2 2 13.0 3 1 0 dit",
                      "ef822c8abc069935 skipped pixart-alpha-tiny 256 2 3 3 NULL NULL NULL 0 dit",
                      "f4343bb23be739ae ok pixart-alpha-tiny 256 2 1 1 13.5 4 2 0 dit"}));
  const std::vector<std::string> columns =
      test::ReadOnlySql(db->console(), "SELECT * FROM results LIMIT 0").columns;
  const std::vector<std::string>& contract = ResultsContractColumns();
  ASSERT_GE(columns.size(), contract.size());
  EXPECT_EQ(std::vector<std::string>(columns.begin(), columns.begin() + contract.size()),
            contract);
}

TEST_F(MigrationTest, TheSweepResumesOnTheMigratedKeys) {
  auto db = ResultsDb::Open(DbPath());
  ParseResult parsed = ParseSweepFile(kFixtures / "fixture-v1.yaml");
  ASSERT_TRUE(parsed.ok());
  std::map<std::string, TrialStatus> statuses = db->reader().TrialStatuses(1);
  std::set<std::string> planned;
  for (const TrialConfig& config : ExpandSweep(parsed.spec, 2).trials) {
    planned.insert(TrialKey(config));
    EXPECT_TRUE(statuses.contains(TrialKey(config))) << CanonicalText(config);
  }
  EXPECT_EQ(planned.size(), 4u);  // the three seed-0 trials are one computation now
}

TEST_F(MigrationTest, MigratingTwiceChangesNothing) {
  ResultsDb::Open(DbPath());
  const auto before = Column("SELECT trial_key || policy_json || config_json FROM trials");
  ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT trial_key || policy_json || config_json FROM trials"), before);
  EXPECT_EQ(Column("SELECT count(*) FROM superseded_trials"), std::vector<std::string>{"2"});
}

TEST_F(MigrationTest, UnreadableStoredConfigStopsTheMigrationAndChangesNothing) {
  {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(), "UPDATE trials SET config_json = '{\"model\": 3}' WHERE id = 4");
  }
  try {
    ResultsDb::Open(DbPath());
    FAIL() << "migrated a trial whose configuration cannot be read";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot migrate trial 4 (key 98ca8682274c6a89)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(Column("SELECT max(version) FROM schema_version"), std::vector<std::string>{"1"});
  EXPECT_EQ(Column("SELECT count(*) FROM trials"), std::vector<std::string>{"6"});
  EXPECT_EQ(Column("SELECT count(*) FROM sqlite_master WHERE name = 'superseded_trials'"),
            std::vector<std::string>{"0"});
}

// The seed-0 trials of the fixture: row 1 ok (warmup 1, repeats 3), row 2 ok (warmup 2,
// repeats 4), row 3 failed (warmup 3, repeats 3), finished in that order.
TEST_F(MigrationTest, NewestFinishedOkTrialIsKeptWhateverItsRowId) {
  Prepare("UPDATE trials SET finished_at = finished_at + 1000 WHERE id = 1");
  EXPECT_EQ(KeptSeed0Policy(), "1/3");
}

TEST_F(MigrationTest, EqualFinishTimesKeepTheLastInserted) {
  Prepare("UPDATE trials SET finished_at = 5 WHERE id IN (1, 2)");
  EXPECT_EQ(KeptSeed0Policy(), "2/4");
}

TEST_F(MigrationTest, UnfinishedCountsAsOldest) {
  Prepare("UPDATE trials SET finished_at = NULL WHERE id = 2");
  EXPECT_EQ(KeptSeed0Policy(), "1/3");
}

TEST_F(MigrationTest, WithoutAnOkTrialTheNewestOfTheRestIsKept) {
  Prepare("DELETE FROM trial_metrics WHERE trial_id IN (1, 2); "
          "UPDATE trials SET status = 'interrupted' WHERE id IN (1, 2)");
  EXPECT_EQ(KeptSeed0Policy(), "3/3");
  EXPECT_EQ(Column(fmt::format("SELECT status FROM trials WHERE trial_key = '{}'", kSeed0)),
            std::vector<std::string>{"failed"});
}

// Every time column after migration: ISO 8601 UTC text with milliseconds.
constexpr std::pair<const char*, const char*> kTimeColumns[] = {
    {"sweeps", "created_at"},     {"campaigns", "started_at"}, {"campaigns", "finished_at"},
    {"trials", "started_at"},     {"trials", "finished_at"},   {"launches", "started_at"},
    {"launches", "finished_at"},  {"superseded_trials", "finished_at"}};

TEST_F(MigrationTest, ChainFromSchemaOneEndsWithIsoTimes) {
  ResultsDb::Open(DbPath());
  for (const auto& [table, column] : kTimeColumns) {
    EXPECT_EQ(Column(fmt::format("SELECT count(*) FROM {0} WHERE {1} IS NOT NULL AND "
                                 "(typeof({1}) != 'text' OR {1} NOT GLOB '{2}')",
                                 table, column, kIsoUtcGlob)),
              std::vector<std::string>{"0"})
        << table << "." << column;
  }
  EXPECT_EQ(Column("SELECT count(*) FROM superseded_trials WHERE finished_at IS NOT NULL"),
            std::vector<std::string>{"2"});
}

// A database written by the release before ISO times (schema 9): tests/fixtures/results-v9.db,
// made by main's `ditbench run` with the fake worker (tests/fixtures/README.md).
class MigrationFromNineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy_file(kFixtures / "results-v9.db", DbPath());
  }
  std::filesystem::path DbPath() const { return dir_ / "results.db"; }

  // (rowid, value) of every row of a column, as text, through a read-only connection.
  std::vector<std::pair<std::int64_t, std::string>> Rows(const std::string& table,
                                                          const std::string& column) {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READONLY);
    Statement statement(raw.get(), fmt::format("SELECT rowid, typeof({1}), {1} FROM {0} "
                                               "ORDER BY rowid", table, column));
    std::vector<std::pair<std::int64_t, std::string>> rows;
    while (statement.Step()) {
      std::string value = statement.IsNull(2) ? "NULL" : statement.Text(2);
      if (statement.Text(1) == "real") value = IsoUtc(statement.Double(2));  // as it should be
      rows.emplace_back(statement.Int(0), value);
    }
    return rows;
  }
  std::vector<std::string> Column(const std::string& sql) {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READONLY);
    Statement statement(raw.get(), sql);
    std::vector<std::string> values;
    while (statement.Step()) values.push_back(statement.IsNull(0) ? "NULL" : statement.Text(0));
    return values;
  }

  test::TempDir dir_;
};

TEST_F(MigrationFromNineTest, FixtureIsAtSchemaNineWithUnixSeconds) {
  EXPECT_EQ(Column("SELECT max(version) FROM schema_version"), std::vector<std::string>{"9"});
  EXPECT_EQ(Column("SELECT DISTINCT typeof(started_at) FROM campaigns"),
            std::vector<std::string>{"real"});
  EXPECT_EQ(Column("SELECT count(*) FROM launches"), std::vector<std::string>{"5"});
  EXPECT_THROW(ResultsDb::Open(DbPath(), /*read_only=*/true), StorageError);
}

// Schema 14 adds width, height and frames to the view: a square image's trials read its
// resolution as both sides, and frames NULL.
TEST_F(MigrationFromNineTest, ImagesReadAsSquaresWithoutFrames) {
  const auto before = Column("SELECT trial_key || ' ' || resolution FROM results ORDER BY trial_key");
  ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT trial_key || ' ' || resolution FROM results ORDER BY trial_key"), before);
  EXPECT_EQ(Column("SELECT DISTINCT (width = resolution AND height = resolution) || ' ' || "
                   "ifnull(frames, 'NULL') FROM results"),
            std::vector<std::string>{"1 NULL"});
}

TEST_F(MigrationFromNineTest, EveryTimeBecomesIsoTextOfTheSameInstant) {
  std::map<std::string, std::vector<std::pair<std::int64_t, std::string>>> before;
  for (const auto& [table, column] : kTimeColumns)
    before[std::string(table) + "." + column] = Rows(table, column);
  const auto view_before = Column("SELECT started_at || ' ' || finished_at FROM results "
                                  "ORDER BY trial_key");
  ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT max(version) FROM schema_version"),
            std::vector<std::string>{std::to_string(kSchemaVersion)});
  for (const auto& [table, column] : kTimeColumns) {
    const std::string name = std::string(table) + "." + column;
    EXPECT_EQ(Rows(table, column), before[name]) << name;
    EXPECT_EQ(Column(fmt::format("SELECT count(*) FROM {0} WHERE {1} IS NOT NULL AND "
                                 "(typeof({1}) != 'text' OR {1} NOT GLOB '{2}')",
                                 table, column, kIsoUtcGlob)),
              std::vector<std::string>{"0"})
        << name;
  }
  EXPECT_EQ(Column("SELECT count(*) FROM campaigns WHERE started_at IS NULL OR "
                   "finished_at IS NULL"),
            std::vector<std::string>{"0"});
  // The public view's times read as before (whole seconds, Z).
  EXPECT_EQ(Column("SELECT started_at || ' ' || finished_at FROM results ORDER BY trial_key"),
            view_before);
  // The schema refuses a time that is not ISO 8601 text.
  SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
  EXPECT_THROW(Exec(raw.get(), "UPDATE campaigns SET finished_at = 1795365708.2"), StorageError);
}

TEST_F(MigrationFromNineTest, ReadersSeeTheSameTimesAndDurationsAsBefore) {
  // What schema 9 held, in unix seconds.
  const double started = std::stod(Column("SELECT started_at FROM campaigns").at(0));
  const double finished = std::stod(Column("SELECT finished_at FROM campaigns").at(0));
  const auto wall = Column("SELECT t.finished_at - t.started_at FROM trials t "
                           "WHERE trial_key = 'f4343bb23be739ae'");
  const auto counted = Column("SELECT warmup + iterations FROM results "
                              "WHERE trial_key = 'f4343bb23be739ae'");
  auto db = ResultsDb::Open(DbPath());
  const std::vector<CampaignInfo> campaigns = db->reader().Campaigns();
  ASSERT_EQ(campaigns.size(), 1u);
  EXPECT_NEAR(campaigns[0].started_at, started, 1e-3);
  ASSERT_TRUE(campaigns[0].finished_at);
  EXPECT_NEAR(*campaigns[0].finished_at, finished, 1e-3);
  // plan's startup estimate: the trial's wall time less its iterations at the median.
  const auto all = db->planner_history().NewestOkMeasurements();
  ASSERT_TRUE(all.count("f4343bb23be739ae"));
  const auto* measured = &all.at("f4343bb23be739ae");
  ASSERT_TRUE(measured->startup_s);
  const double iterations = std::stod(counted.at(0));
  EXPECT_NEAR(*measured->startup_s,
              std::max(0.0, std::stod(wall.at(0)) - iterations * measured->latency_ms / 1000),
              2e-3);
  // New times are written as ISO text too.
  db->writer().FinishCampaign(campaigns[0].id);
  EXPECT_EQ(Column(fmt::format("SELECT finished_at GLOB '{}' FROM campaigns", kIsoUtcGlob)),
            std::vector<std::string>{"1"});
  EXPECT_GE(*db->reader().Campaigns()[0].finished_at, finished);
}

// Schema 13's vae_tile column reads the migrated trials' configurations (none was tiled).
TEST_F(MigrationTest, SchemaThirteenShowsVaeTileOfMigratedTrials) {
  ResultsDb::Open(DbPath());
  EXPECT_EQ(Column("SELECT DISTINCT vae_tile FROM results"), std::vector<std::string>{"0"});
}

}  // namespace
}  // namespace ditbench::migration_test
