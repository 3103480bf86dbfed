#include "storage/results_db.h"

#include "metrics/trial_metrics.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/schema.h"
#include "storage/statement.h"
#include "tests/support/sample_results.h"
#include "tests/support/results_db_fixture.h"
#include "tests/support/temp_dir.h"

namespace ditbench::results_db_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(ResultsDbTest, NewDatabaseHasSchemaVersionWalAndResultsView) {
  auto db = ResultsDb::Open(DbPath());
  EXPECT_EQ(QueryText("SELECT max(version) FROM schema_version"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(QueryText("PRAGMA journal_mode"), "wal");
  ResultTable foreign_keys = test::ReadOnlySql(db->console(), "PRAGMA foreign_keys");
  ASSERT_EQ(foreign_keys.rows.size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(foreign_keys.rows[0][0]), 1);
  EXPECT_EQ(QueryText("SELECT type FROM sqlite_master WHERE name = 'results'"), "view");
}

TEST_F(ResultsDbTest, CampaignsCanBeExcludedIncludedAndLabelledWithoutLosingData) {
  auto db = ResultsDb::Open(DbPath());
  const std::int64_t first = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), true);
  const std::int64_t second = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), true);
  db->writer().RecordTrial(first, test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 10));
  db->writer().SetCampaignExcluded(first, true);
  db->writer().SetCampaignLabel(second, "after the driver update");
  std::vector<CampaignInfo> campaigns = db->reader().Campaigns();
  ASSERT_EQ(campaigns.size(), 2u);
  EXPECT_TRUE(campaigns[0].excluded);
  EXPECT_EQ(campaigns[0].trials, 1);
  EXPECT_FALSE(campaigns[1].excluded);
  EXPECT_EQ(campaigns[1].label, "after the driver update");
  EXPECT_EQ(db->reader().Results({first}).size(), 1u);  // excluded, not deleted
  db->writer().SetCampaignExcluded(first, false);
  db->writer().SetCampaignLabel(second, "");
  campaigns = db->reader().Campaigns();
  EXPECT_FALSE(campaigns[0].excluded);
  EXPECT_EQ(campaigns[1].label, "");
  try {
    db->writer().SetCampaignExcluded(9, true);
    FAIL() << "no campaign 9";
  } catch (const StorageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no campaign 9"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("known: 1, 2"));
  }
}

TEST_F(ResultsDbTest, ReopeningKeepsDataAndDoesNotMigrateAgain) {
  std::int64_t campaign = 0;
  {
    auto db = ResultsDb::Open(DbPath());
    campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
    db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 50));
  }
  auto db = ResultsDb::Open(DbPath());
  EXPECT_EQ(db->reader().TrialStatuses(campaign).size(), 1u);
  EXPECT_EQ(QueryText("SELECT count(*) FROM schema_version"), "1");
}

TEST_F(ResultsDbTest, CampaignEnvironmentIsMergedNotReplaced) {
  std::int64_t id = 0;
  {
    auto db = ResultsDb::Open(DbPath());
    CampaignRecord campaign = test::MakeCampaign("env");
    campaign.environment = {{"host_cpu", "EPYC"}, {"gpus", "cpu:2"}};
    id = db->writer().ResumeOrCreateCampaign(campaign, false);
    db->writer().UpdateCampaignEnvironment(id, {{"worker", {{"libtorch", "2.11.0"}}}});
  }
  EXPECT_EQ(QueryText("SELECT json_extract(environment_json, '$.host_cpu') FROM campaigns"), "EPYC");
  EXPECT_EQ(QueryText("SELECT json_extract(environment_json, '$.worker.libtorch') FROM campaigns"),
            "2.11.0");
  auto db = ResultsDb::Open(DbPath());
  EXPECT_THROW(db->writer().UpdateCampaignEnvironment(id + 100, {{"x", 1}}), StorageError);
}

TEST_F(ResultsDbTest, ThrottledTrialIsVisibleInResults) {
  {
    auto db = ResultsDb::Open(DbPath());
    auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("clocks"), false);
    TrialRecord trial = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 10.0);
    trial.metrics->throttled = true;
    trial.metrics->sm_clock_min_mhz = 1410;
    db->writer().RecordTrial(id, trial);
  }
  EXPECT_EQ(QueryText("SELECT throttled FROM results"), "1");
  EXPECT_EQ(QueryText("SELECT sm_clock_min_mhz FROM results"), "1410.0");
}

// What each step ran goes with the trial's metrics; the view shows the knobs and the kernels.
TEST_F(ResultsDbTest, WhatEachStepRanIsStoredAndReadBack) {
  TrialConfig config = test::MakeConfig(1);
  config.attention = AttentionBackend::kMath;
  config.schedule = {1, 0};
  std::int64_t id = 0;
  {
    auto db = ResultsDb::Open(DbPath());
    id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("steps"), false);
    TrialRecord trial = test::MakeTrial(config, TrialStatus::kOk, 10.0);
    trial.steps = {{0, "flash", "bf16"}, {1, "math", "bf16"}, {2, "cudnn+math", "bf16", false, 1}};
    db->writer().RecordTrial(id, trial);
    db->writer().RecordTrial(id, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 10.0));
  }
  EXPECT_EQ(QueryText("SELECT attention_ran FROM results WHERE attention = 'math'"),
            "cudnn+flash+math");
  EXPECT_EQ(QueryText("SELECT quant FROM results WHERE attention = 'math'"), "none");
  EXPECT_EQ(QueryText("SELECT schedule FROM results WHERE attention = 'math'"),
            "{\"high_precision_first\":1,\"high_precision_last\":0}");
  EXPECT_EQ(QueryText("SELECT count(*) FROM results WHERE attention = 'auto'"), "1");
  auto db = ResultsDb::Open(DbPath());
  for (const ResultRow& row : db->reader().Results({id})) {
    if (row.trial_key != TrialKey(config)) {
      EXPECT_TRUE(row.step_kernels.empty());
      EXPECT_EQ(row.attention_ran, "");
      continue;
    }
    ASSERT_EQ(row.step_kernels.size(), 3u);
    EXPECT_EQ(row.step_kernels[1].expert, 0);
    EXPECT_EQ(row.step_kernels[2], (StepKernels{2, "cudnn+math", "bf16", false, 1}));
    EXPECT_EQ(row.attention_ran, "cudnn+flash+math");
  }
}

// The database is untrusted: stored steps that are not what ditbench writes are refused with
// the trial named, and control characters never reach a terminal.
TEST_F(ResultsDbTest, StoredStepsAreCheckedWhenRead) {
  std::int64_t id = 0;
  {
    auto db = ResultsDb::Open(DbPath());
    id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("steps"), false);
    TrialRecord trial = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 10.0);
    trial.steps = {{0, "flash", "bf16"}};
    db->writer().RecordTrial(id, trial);
  }
  ExecSql(
      "UPDATE trial_metrics SET steps_json = "
      "'[{\"step\":0,\"attention\":\"fl\\u001b[31mash\",\"linear\":\"bf16\"}]'");
  {
    auto db = ResultsDb::Open(DbPath());
    const std::vector<ResultRow> rows = db->reader().Results({id});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].step_kernels[0].attention, "flash");
  }
  ExecSql(
      "UPDATE trial_metrics SET steps_json = "
      "'[{\"step\":0,\"attention\":\"flash\",\"linear\":\"bf16\",\"expert\":99}]'");
  try {
    ResultsDb::Open(DbPath())->reader().Results({id});
    ADD_FAILURE() << "an expert past kMaxExperts accepted";
  } catch (const StorageError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("its stored steps: an entry's expert is not an expert's index"));
  }
  ExecSql("UPDATE trial_metrics SET steps_json = '[{\"step\":\"zero\"}]'");
  auto db = ResultsDb::Open(DbPath());
  try {
    db->reader().Results({id});
    ADD_FAILURE() << "accepted";
  } catch (const StorageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("its stored steps: an entry is not {step, attention, linear}"));
  }
}

TEST_F(ResultsDbTest, EnergyIsStoredWithTheTrialAndItsLaunchAndReadBack) {
  const TrialConfig config = test::MakeConfig(1);
  std::int64_t id = 0;
  {
    auto db = ResultsDb::Open(DbPath());
    id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("energy"), false);
    TrialRecord trial = test::MakeTrial(config, TrialStatus::kOk, 10.0);
    trial.metrics->energy_j = 12.5;
    trial.metrics->joules_per_image = 6.25;
    db->writer().RecordTrial(id, trial);
    TrialRecord other = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 10.0);
    other.metrics->energy_note = "rank 0: no counter";
    db->writer().RecordTrial(id, other);
  }
  auto db = ResultsDb::Open(DbPath());
  const std::vector<ResultRow> rows = db->reader().Results({id});
  ASSERT_EQ(rows.size(), 2u);
  const ResultRow& measured = rows[0].trial_key == TrialKey(config) ? rows[0] : rows[1];
  const ResultRow& missing = &measured == &rows[0] ? rows[1] : rows[0];
  ASSERT_TRUE(measured.energy_j && measured.joules_per_image);
  EXPECT_DOUBLE_EQ(*measured.energy_j, 12.5);
  EXPECT_DOUBLE_EQ(*measured.joules_per_image, 6.25);
  EXPECT_EQ(measured.energy_note, "");
  EXPECT_FALSE(missing.energy_j.has_value());
  EXPECT_EQ(missing.energy_note, "rank 0: no counter");
  // The launch keeps its own, for replicates to summarise (metrics/launch_summary.h).
  const std::vector<LaunchMeasurement> launches = db->writer().Launches(id, TrialKey(config), -1);
  ASSERT_EQ(launches.size(), 1u);
  ASSERT_TRUE(launches[0].metrics && launches[0].metrics->energy_j);
  EXPECT_DOUBLE_EQ(*launches[0].metrics->energy_j, 12.5);
  EXPECT_DOUBLE_EQ(*launches[0].metrics->joules_per_image, 6.25);
}

TEST_F(ResultsDbTest, NewerSchemaIsRefused) {
  ResultsDb::Open(DbPath());
  {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(), "UPDATE schema_version SET version = 99");
  }
  for (bool read_only : {false, true}) {
    try {
      ResultsDb::Open(DbPath(), read_only);
      FAIL() << "opened a database with a newer schema";
    } catch (const StorageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("schema version 99, newer than this build supports (" +
                                      std::to_string(kSchemaVersion) + ")"));
      EXPECT_THAT(e.what(), HasSubstr(DbPath().string()));
    }
  }
}

// A hand-edited version outside 0..kSchemaVersion is one line, not an index into the
// migrations (a negative one used to crash `run`).
TEST_F(ResultsDbTest, OutOfRangeSchemaVersionIsRefusedInOneLine) {
  ResultsDb::Open(DbPath());
  for (const char* version : {"-5", "9223372036854775807"}) {
    {
      SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
      Exec(raw.get(), fmt::format("UPDATE schema_version SET version = {}", version).c_str());
    }
    for (bool read_only : {false, true}) {
      try {
        ResultsDb::Open(DbPath(), read_only);
        FAIL() << "opened a database with schema version " << version;
      } catch (const StorageError& e) {
        EXPECT_THAT(e.what(), HasSubstr(version));
        EXPECT_THAT(e.what(), HasSubstr(DbPath().string()));
        EXPECT_THAT(std::string(e.what()), Not(HasSubstr("\n")));
      }
    }
  }
}

// Another program inside BEGIN IMMEDIATE used to make a record fail after 5 s ("database is
// locked"). Now the writer waits with backoff, says so, and records once the lock is gone.
TEST_F(ResultsDbTest, AnotherProgramsWriteLockDelaysARecordAndLosesNothing) {
  SqliteConnection other;  // the other program, once the database exists
  std::vector<std::string> waits;
  BusyWait wait;
  wait.report_after = std::chrono::milliseconds(0);
  wait.waiting = [&](const std::filesystem::path& path) {
    waits.push_back(path.string());
    Exec(other.get(), "COMMIT");  // the other program ends its transaction
  };
  auto db = ResultsDb::Open(DbPath(), /*read_only=*/false, wait);
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  other = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
  Exec(other.get(),
       "BEGIN IMMEDIATE; INSERT INTO sweeps (name, created_at) "
       "VALUES ('held', '2026-01-01T00:00:00.000Z')");
  db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 50));
  EXPECT_THAT(waits, ElementsAre(DbPath().string()));
  EXPECT_EQ(QueryText("SELECT count(*) FROM trials WHERE status = 'ok'"), "1");
  EXPECT_EQ(QueryText("SELECT count(*) FROM sweeps WHERE name = 'held'"), "1");
}

TEST_F(ResultsDbTest, AWaitForAnotherProgramsLockEndsWhenToldToGiveUp) {
  int asked = 0;
  BusyWait wait;
  wait.give_up = [&] { return ++asked > 3; };
  auto db = ResultsDb::Open(DbPath(), /*read_only=*/false, wait);
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  SqliteConnection other = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
  Exec(other.get(), "BEGIN IMMEDIATE");
  EXPECT_THROW(db->writer().RecordTrial(campaign,
                                        test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 50)),
               StorageError);
  EXPECT_EQ(asked, 4);
  Exec(other.get(), "ROLLBACK");
}

// A rerun of a measured trial starts: the measurement stays until the new one replaces it,
// and an interrupted rerun records nothing over it.
TEST_F(ResultsDbTest, ARerunKeepsTheOldMeasurementUntilANewOneReplacesIt) {
  auto db = ResultsDb::Open(DbPath());
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  const TrialConfig config = test::MakeConfig(2);
  db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, 50));
  TrialRecord rerun = test::MakeTrial(config, TrialStatus::kRunning, 0);
  rerun.metrics.reset();
  db->writer().MarkRunning(campaign, rerun);
  EXPECT_EQ(QueryText("SELECT status || ' ' || latency_ms FROM results"), "ok 50.0");
  rerun.status = TrialStatus::kInterrupted;
  TrialOutcome interrupted;
  interrupted.status = TrialStatus::kInterrupted;
  db->writer().RecordLaunch(campaign, rerun, interrupted);
  EXPECT_EQ(QueryText("SELECT status || ' ' || latency_ms FROM results"), "ok 50.0");
  const TrialRecord measured = test::MakeTrial(config, TrialStatus::kOk, 40);
  TrialOutcome ok;
  ok.status = TrialStatus::kOk;
  ok.metrics = measured.metrics;
  db->writer().RecordLaunch(campaign, measured, ok);
  EXPECT_EQ(QueryText("SELECT status || ' ' || latency_ms FROM results"), "ok 40.0");
}

// --sql's memory is capped: a statement that needs more ends with one line, not bad_alloc.
TEST_F(ResultsDbTest, ReadOnlySqlPastItsMemoryCapIsStopped) {
  ResultsDb::Open(DbPath());
  auto db = ResultsDb::Open(DbPath(), /*read_only=*/true);
  struct : ResultSink {
    void Columns(const std::vector<std::string>&) override {}
    void Row(const std::vector<ResultCell>&) override {}
  } ignore;
  SqlLimits limits;
  limits.heap_bytes = std::int64_t{16} << 20;
  try {  // about 200 MB of text in one value
    db->console().StreamReadOnlySql(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) "
        "SELECT length(group_concat(printf('%0100d', x))) FROM c",
        limits, ignore);
    FAIL() << "ran past its memory cap";
  } catch (const QueryError& e) {
    EXPECT_THAT(e.what(), HasSubstr("needed more than 16 MiB of memory"));
  }
  // The cap is lifted after.
  EXPECT_EQ(test::ReadOnlySql(db->console(), "SELECT 1").rows.size(), 1u);
}

TEST_F(ResultsDbTest, ForeignDatabaseIsRefused) {
  {
    SqliteConnection raw =
        OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    Exec(raw.get(), "CREATE TABLE recipes (name TEXT)");
  }
  EXPECT_THROW(
      {
        try {
          ResultsDb::Open(DbPath());
        } catch (const StorageError& e) {
          EXPECT_THAT(e.what(), HasSubstr("not a ditbench results database"));
          throw;
        }
      },
      StorageError);
}

TEST_F(ResultsDbTest, ReadOnlyOpenOfMissingFileFailsWithoutCreatingIt) {
  EXPECT_THROW(ResultsDb::Open(DbPath(), /*read_only=*/true), StorageError);
  EXPECT_FALSE(std::filesystem::exists(DbPath()));
}

TEST_F(ResultsDbTest, ReadOnlyHandleCannotWrite) {
  ResultsDb::Open(DbPath());
  auto db = ResultsDb::Open(DbPath(), /*read_only=*/true);
  EXPECT_THROW(db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false), StorageError);
}

TEST_F(ResultsDbTest, ResumeReturnsNewestCampaignOfTheSweepUnlessFresh) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t first = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  EXPECT_EQ(db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false), first);
  std::int64_t second = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), true);
  EXPECT_NE(second, first);
  EXPECT_EQ(db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false), second);
  std::int64_t other = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("other"), false);
  EXPECT_NE(other, second);
  EXPECT_EQ(QueryText("SELECT count(*) FROM sweeps"), "2");
}

TEST_F(ResultsDbTest, FinishCampaignStampsTimeAndResumeClearsIt) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t id =
      db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp", "rev1+dirty"), false);
  db->writer().FinishCampaign(id);
  std::vector<CampaignInfo> campaigns = db->reader().Campaigns();
  ASSERT_EQ(campaigns.size(), 1u);
  EXPECT_EQ(campaigns[0].id, id);
  EXPECT_EQ(campaigns[0].record.sweep_name, "sp");
  EXPECT_EQ(campaigns[0].record.build, "rev1+dirty");
  EXPECT_EQ(campaigns[0].record.environment["gpus"], 0);
  ASSERT_TRUE(campaigns[0].finished_at.has_value());
  EXPECT_GE(*campaigns[0].finished_at, campaigns[0].started_at);

  db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  EXPECT_FALSE(db->reader().Campaigns()[0].finished_at.has_value());
  EXPECT_THROW(db->writer().FinishCampaign(id + 100), StorageError);
}

TEST_F(ResultsDbTest, MarkRunningAsInterruptedOnlyTouchesRunningTrialsOfTheCampaign) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t a = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("a"), false);
  std::int64_t b = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("b"), false);
  TrialRecord ok = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 100);
  TrialRecord running = test::MakeTrial(test::MakeConfig(2), TrialStatus::kPending, 0);
  db->writer().RecordTrial(a, ok);
  db->writer().MarkRunning(a, running);
  db->writer().MarkRunning(b, running);

  EXPECT_EQ(db->writer().MarkRunningAsInterrupted(
                a, [](const std::string&, std::int64_t) { return true; }),
            1);
  std::map<std::string, TrialStatus> statuses = db->reader().TrialStatuses(a);
  EXPECT_EQ(statuses.at(ok.trial_key), TrialStatus::kOk);
  EXPECT_EQ(statuses.at(running.trial_key), TrialStatus::kInterrupted);
  EXPECT_EQ(db->reader().TrialStatuses(b).at(running.trial_key), TrialStatus::kRunning);
  EXPECT_TRUE(db->reader().TrialStatuses(a + 100).empty());
}

TEST_F(ResultsDbTest, OnlyADeadCoordinatorsTrialsBecomeInterrupted) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("a"), false);
  TrialRecord live = test::MakeTrial(test::MakeConfig(1), TrialStatus::kPending, 0);
  live.coordinator_host = "box";
  live.coordinator_pid = 111;
  TrialRecord dead = test::MakeTrial(test::MakeConfig(2), TrialStatus::kPending, 0);
  dead.coordinator_host = "box";
  dead.coordinator_pid = 222;
  db->writer().MarkRunning(campaign, live);
  db->writer().MarkRunning(campaign, dead);
  EXPECT_EQ(QueryText("SELECT coordinator_pid FROM trials WHERE trial_key = '" + live.trial_key +
                      "'"),
            "111");

  std::vector<std::string> asked, still_running;
  auto gone = [&](const std::string& host, std::int64_t pid) {
    asked.push_back(host + ":" + std::to_string(pid));
    return pid == 222;
  };
  EXPECT_EQ(db->writer().MarkRunningAsInterrupted(campaign, gone, &still_running), 1);
  EXPECT_THAT(still_running, ElementsAre(live.trial_key));
  EXPECT_EQ(asked.size(), 2u);
  std::map<std::string, TrialStatus> statuses = db->reader().TrialStatuses(campaign);
  EXPECT_EQ(statuses.at(live.trial_key), TrialStatus::kRunning);
  EXPECT_EQ(statuses.at(dead.trial_key), TrialStatus::kInterrupted);
}

TEST_F(ResultsDbTest, DroppedColumnOrViewIsAnErrorAtOpen) {
  { auto db = ResultsDb::Open(DbPath()); }
  {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(), "ALTER TABLE samples DROP COLUMN ms");
  }
  EXPECT_THAT([&] { ResultsDb::Open(DbPath()); },
              ::testing::ThrowsMessage<StorageError>(HasSubstr("table 'samples' lacks column 'ms'")));
  EXPECT_THAT([&] { ResultsDb::Open(DbPath(), /*read_only=*/true); },
              ::testing::ThrowsMessage<StorageError>(HasSubstr("is damaged")));
  {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(), "ALTER TABLE samples ADD COLUMN ms REAL NOT NULL DEFAULT 0");
    Exec(raw.get(), "DROP VIEW results");
  }
  EXPECT_THAT([&] { ResultsDb::Open(DbPath()); },
              ::testing::ThrowsMessage<StorageError>(HasSubstr("view 'results' is missing")));
}

// A `results` view edited by hand (here into one that never ends) ran in every reader: the
// view's stored SQL is compared with the one this build creates, before anything reads it, by
// readers and writers alike.
TEST_F(ResultsDbTest, AnEditedResultsViewIsRefusedAtOpenNamingIt) {
  { auto db = ResultsDb::Open(DbPath()); }
  const std::string view = QueryText("SELECT sql FROM sqlite_master WHERE name = 'results'");
  {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(), "DROP VIEW results");
    // The same columns, and a condition that never finishes.
    const std::string endless =
        view.substr(0, view.rfind(';') == std::string::npos ? view.size() : view.rfind(';')) +
        " WHERE (WITH RECURSIVE forever(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM forever) "
        "SELECT max(n) FROM forever) > 0";
    Exec(raw.get(), endless.c_str());
  }
  for (bool read_only : {true, false}) {
    EXPECT_THAT([&] { ResultsDb::Open(DbPath(), read_only); },
                ::testing::ThrowsMessage<EditedSchemaError>(
                    HasSubstr("view 'results' is not the one ditbench creates for schema version")))
        << (read_only ? "read-only" : "writer");
  }
}

TEST_F(ResultsDbTest, ExtraColumnsAreNotDamage) {
  { auto db = ResultsDb::Open(DbPath()); }
  {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(), "ALTER TABLE trials ADD COLUMN my_notes TEXT");
  }
  EXPECT_NO_THROW(ResultsDb::Open(DbPath()));
}

// `cache`: every rank's per-step reused flag is stored with its sample and read back.
TEST_F(ResultsDbTest, AReusedStepSampleIsStoredAndReadBack) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("cache"), false);
  const TrialConfig config = test::MakeConfig(2);
  TrialRecord trial = test::MakeTrial(config, TrialStatus::kOk, 50);
  for (int rank = 0; rank < 2; ++rank) {
    trial.samples.push_back({rank, 1, "step:0", 20, false});
    trial.samples.push_back({rank, 1, "step:1", 2, false, /*reused=*/true});
  }
  db->writer().RecordTrial(campaign, trial);
  EXPECT_EQ(QueryText("SELECT group_concat(rank || stage, ' ') FROM samples WHERE reused = 1"),
            "0step:1 1step:1");
  int reused = 0;
  for (const Sample& s : db->reader().Samples(campaign, TrialKey(config))) {
    EXPECT_EQ(s.reused, s.stage == "step:1") << s.rank << " " << s.stage;
    reused += s.reused;
  }
  EXPECT_EQ(reused, 2);
}

TEST_F(ResultsDbTest, RecordTrialReplacesSamplesInOneTransaction) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  TrialConfig config = test::MakeConfig(2);
  db->writer().MarkRunning(campaign, test::MakeTrial(config, TrialStatus::kPending, 0));
  db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, 50));
  EXPECT_EQ(db->reader().Samples(campaign, TrialKey(config)).size(), 6u);

  TrialRecord again = test::MakeTrial(config, TrialStatus::kOk, 40);
  again.samples.resize(2);
  db->writer().RecordTrial(campaign, again);

  std::vector<Sample> samples = db->reader().Samples(campaign, TrialKey(config));
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].ms, 80);
  EXPECT_TRUE(samples[0].warmup);
  EXPECT_EQ(QueryText("SELECT count(*) FROM trials"), "1");
  EXPECT_EQ(QueryText("SELECT count(*) FROM trial_metrics"), "1");
  EXPECT_EQ(QueryText("SELECT latency_ms FROM results"), "40.0");
}

TEST_F(ResultsDbTest, RecordTrialIsAtomicWhenASampleIsRejected) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  TrialConfig config = test::MakeConfig(2);
  db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, 50));

  TrialRecord bad = test::MakeTrial(config, TrialStatus::kFailed, 0, "should not land");
  bad.samples.push_back({0, 0, "iteration", 1.0, false});
  bad.samples.push_back({-1, 1, "iteration", 1.0, false});  // violates CHECK (rank >= 0)
  EXPECT_THROW(db->writer().RecordTrial(campaign, bad), StorageError);

  EXPECT_EQ(db->reader().TrialStatuses(campaign).at(TrialKey(config)), TrialStatus::kOk);
  EXPECT_EQ(db->reader().Samples(campaign, TrialKey(config)).size(), 6u);
  EXPECT_EQ(QueryText("SELECT latency_ms FROM results"), "50.0");
  // The connection is usable afterwards (the transaction was rolled back, not left open).
  db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, 45));
  EXPECT_EQ(QueryText("SELECT latency_ms FROM results"), "45.0");
}

TEST_F(ResultsDbTest, CoordinatorKilledMidTransactionLeavesNoPartialTrial) {
  std::int64_t campaign = 0;
  TrialConfig config = test::MakeConfig(2);
  {
    auto db = ResultsDb::Open(DbPath());
    campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
    db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 100));
  }
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child writes half a trial inside a transaction and dies without committing.
    // (A second connection, as a second coordinator process would have.)
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Transaction transaction(raw.get());
    Exec(raw.get(),
         "INSERT INTO trials (campaign_id, trial_key, config_json, status, world_size) "
         "VALUES (1, 'half', '{}', 'ok', 2)");
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));

  auto db = ResultsDb::Open(DbPath());
  std::map<std::string, TrialStatus> statuses = db->reader().TrialStatuses(campaign);
  EXPECT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses.count("half"), 0u);
  db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, 50));  // not locked
  EXPECT_EQ(db->reader().TrialStatuses(campaign).size(), 2u);
}

// A launch that did not finish (interrupted) is marked running again; a measured one is kept
// (ARerunKeepsTheOldMeasurementUntilANewOneReplacesIt).
TEST_F(ResultsDbTest, MarkRunningMarksAnUnfinishedLaunchRunning) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  TrialConfig config = test::MakeConfig(1);
  db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kInterrupted, 0));
  db->writer().MarkRunning(campaign, test::MakeTrial(config, TrialStatus::kOk, 50));
  EXPECT_TRUE(db->reader().Samples(campaign, TrialKey(config)).empty());
  EXPECT_EQ(QueryText("SELECT status || ':' || ifnull(latency_ms, 'null') FROM results"),
            "running:null");
}

TEST_F(ResultsDbTest, SkippedTrialHasNullMetricsAndItsReason) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(3), TrialStatus::kSkipped, 0,
                                                     "16 heads not divisible by ulysses 3"));
  EXPECT_EQ(QueryText("SELECT status || '|' || error || '|' || ifnull(latency_ms, 'null') "
                      "FROM results"),
            "skipped|16 heads not divisible by ulysses 3|null");
}

TEST_F(ResultsDbTest, SamplesComeBackOrderedByIterationThenRank) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  TrialRecord trial = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 10);
  db->writer().RecordTrial(campaign, trial);
  std::vector<int> order;
  for (const Sample& s : db->reader().Samples(campaign, trial.trial_key)) {
    order.push_back(s.iteration * 10 + s.rank);
  }
  EXPECT_THAT(order, ElementsAre(0, 1, 10, 11, 20, 21));
}

TEST_F(ResultsDbTest, SlowestSeriesByLaunchReducesRanksPerIterationOfEveryOkLaunch) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  TrialRecord two = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 10);
  two.samples.push_back({1, 1, "iteration", 30, false});  // rank 1 slower at iteration 1
  two.replicates = 3;
  db->writer().RecordTrial(campaign, two);
  TrialRecord second = two;  // launch 1: another series
  second.launch = 1;
  second.samples = {{0, 1, "iteration", 7, false}, {1, 1, "iteration", 8, false},
                    {0, 0, "iteration", 99, true}};
  db->writer().RecordLaunch(campaign, second, TrialOutcome{TrialStatus::kOk, "", two.metrics});
  TrialRecord failed = second;  // launch 2 failed: left out
  failed.launch = 2;
  failed.status = TrialStatus::kFailed;
  failed.samples = {{0, 1, "iteration", 1000, false}};
  failed.metrics.reset();
  db->writer().RecordLaunch(campaign, failed, TrialOutcome{TrialStatus::kOk, "", two.metrics});
  db->writer().RecordTrial(campaign,
                           test::MakeTrial(test::MakeConfig(1), TrialStatus::kFailed, 0, "x"));

  const auto series = db->reader().SlowestSeriesByLaunch(campaign, "iteration");
  ASSERT_EQ(series.size(), 1u);  // the failed trial has none
  EXPECT_THAT(series.at(two.trial_key),
              ElementsAre(ElementsAre(30, 11), ElementsAre(8)));
  // The same as the one definition applied to each ok launch's samples (metrics/trial_metrics.h).
  for (int launch = 0; launch < 2; ++launch) {
    const std::vector<Sample> samples = db->reader().Samples(campaign, two.trial_key, launch);
    EXPECT_EQ(SlowestSeries(samples, "iteration"), series.at(two.trial_key)[launch]);
  }
}

// With replicates each launch reports the machine's health over its own window: a quiet last
// launch must not hide a disturbed first one (the trial's median covers both).
TEST_F(ResultsDbTest, ABusyEarlierLaunchKeepsTheTrialBusy) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  TrialRecord first = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 10);
  first.replicates = 2;
  first.health = {{"busy", true}, {"note", "others used 1.2 cores: cc1plus 1.2"}};
  db->writer().RecordTrial(campaign, first);
  TrialRecord second = first;
  second.launch = 1;
  second.health = {{"busy", false}, {"note", ""}};
  db->writer().RecordLaunch(campaign, second, TrialOutcome{TrialStatus::kOk, "", first.metrics});
  EXPECT_EQ(QueryText("SELECT busy FROM results"), "1");
  EXPECT_EQ(QueryText("SELECT health_note FROM results"),
            "others used 1.2 cores: cc1plus 1.2 (an earlier launch)");
  // A fresh first launch (a rerun) starts afresh.
  TrialRecord rerun = first;
  rerun.health = {{"busy", false}, {"note", ""}};
  db->writer().RecordTrial(campaign, rerun);
  EXPECT_EQ(QueryText("SELECT busy FROM results"), "0");
}

// The planner learns from idle measurements only, and says how many keys it had to leave out.
// A key measured quietly comes with its quiet measurement (not a newer busy one); a key measured
// only on a busy machine comes flagged busy, and is counted (the planner fits on busy ones only
// when a device has no quiet measurement: plan/fitted_model.h).
TEST_F(ResultsDbTest, ObservedTrialsPreferQuietMeasurementsAndFlagBusyOnlyOnes) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t older = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  TrialRecord idle_then = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 10);
  idle_then.health = {{"busy", false}, {"note", ""}};
  db->writer().RecordTrial(older, idle_then);
  std::int64_t newer = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), true);
  TrialRecord busy_now = idle_then;  // the same key, measured again on a busy machine
  busy_now.metrics->latency_ms = 30;
  busy_now.health = {{"busy", true}, {"note", "others used 1.2 cores: cc1plus 1.2"}};
  db->writer().RecordTrial(newer, busy_now);
  TrialRecord busy_only = test::MakeTrial(test::MakeConfig(4), TrialStatus::kOk, 20);
  busy_only.health = busy_now.health;
  db->writer().RecordTrial(newer, busy_only);

  std::size_t left_out = 99;
  const auto observed = db->planner_history().ObservedTrials("", &left_out);
  ASSERT_EQ(observed.size(), 2u);
  const auto quiet = observed[0].trial_key == idle_then.trial_key ? observed[0] : observed[1];
  const auto busy = observed[0].trial_key == idle_then.trial_key ? observed[1] : observed[0];
  EXPECT_EQ(quiet.trial_key, idle_then.trial_key);
  EXPECT_EQ(quiet.latency_ms, 10);  // the idle older measurement, not the busy newer one
  EXPECT_FALSE(quiet.busy);
  EXPECT_EQ(busy.trial_key, busy_only.trial_key);
  EXPECT_TRUE(busy.busy);
  EXPECT_EQ(left_out, 1u);  // the key measured only on a busy machine
  // A campaign left out (a bisect or excluded one) is not read at all.
  EXPECT_EQ(db->planner_history().ObservedTrials("", nullptr, {older, newer}).size(), 0u);
}

// The sharing factor of a measured trial (machine/rank_sharing.h) is derived from what the
// database recorded where it ran, not from the planning host: its placement and the host's cores.
TEST_F(ResultsDbTest, ObservedTrialsCarryThePlacementAndTheCoresOfTheirHost) {
  auto db = ResultsDb::Open(DbPath());
  CampaignRecord record = test::MakeCampaign("sp");
  record.environment = {{"cpu_count", 8}, {"worker", {{"cpu_count", 2}}}};
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(record, false);
  TrialRecord cpu = test::MakeTrial(test::MakeConfig(4), TrialStatus::kOk, 10);
  cpu.placement = {{"concurrent_trials", 0}, {"slots", {0, 1, 2, 3}}};
  db->writer().RecordTrial(campaign, cpu);
  TrialRecord gpu = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 10);
  gpu.device = "NVIDIA H100 80GB HBM3";
  gpu.placement = {{"slots", {0, 1}}, {"devices", {"0", "1"}}};
  db->writer().RecordTrial(campaign, gpu);
  TrialRecord unplaced = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 10);
  db->writer().RecordTrial(campaign, unplaced);

  const auto observed = db->planner_history().ObservedTrials("");
  ASSERT_EQ(observed.size(), 3u);
  for (const auto& o : observed) {
    if (o.trial_key == cpu.trial_key) {
      EXPECT_EQ(o.placement, cpu.placement);
      EXPECT_EQ(o.cpu_cores, 2);  // the worker's host, where the ranks ran
    } else if (o.trial_key == gpu.trial_key) {
      EXPECT_EQ(o.placement, gpu.placement);
      EXPECT_FALSE(o.cpu_cores);  // a GPU trial's ranks share no cores
    } else {
      EXPECT_TRUE(o.placement.is_null());
      EXPECT_EQ(o.cpu_cores, 2);
    }
  }
  // A campaign whose environment names only the coordinator's cores.
  record.environment = {{"cpu_count", 8}};
  campaign = db->writer().ResumeOrCreateCampaign(record, true);
  db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(8), TrialStatus::kOk, 10));
  std::optional<int> cores;
  for (const auto& o : db->planner_history().ObservedTrials("cpu"))
    if (o.trial_key == TrialKey(test::MakeConfig(8))) cores = o.cpu_cores;
  EXPECT_EQ(cores, 8);
}

TEST_F(ResultsDbTest, ResultRowCarriesModelOverrides) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  TrialConfig config = test::MakeConfig(1);
  config.model = "pixart-alpha-tiny";
  config.model_overrides = {{"depth", 8}};
  db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, 10));
  db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 10));
  std::vector<ResultRow> rows = db->reader().Results({campaign});
  ASSERT_EQ(rows.size(), 2u);
  int with_overrides = 0;
  for (const ResultRow& row : rows) {
    if (row.model_overrides.empty()) continue;
    ++with_overrides;
    EXPECT_EQ(row.model, "pixart-alpha-tiny");
    EXPECT_THAT(row.model_overrides, HasSubstr("\"depth\":8"));
  }
  EXPECT_EQ(with_overrides, 1);
}

TEST_F(ResultsDbTest, ConfigIsStoredSplitIntoComputationAndPolicy) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
  TrialConfig config = test::MakeConfig(2);
  config.warmup = 3;
  db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, 50));
  EXPECT_EQ(QueryText("SELECT json_extract(policy_json, '$.warmup') FROM trials"), "3");
  EXPECT_EQ(QueryText("SELECT json_type(config_json, '$.warmup') IS NULL AND "
                      "json_type(config_json, '$.repeats') IS NULL FROM trials"),
            "1");
  EXPECT_EQ(QueryText("SELECT json_extract(config_json, '$.ulysses') FROM trials"), "2");

  // The same computation measured differently later: the same row, the newer policy.
  config.warmup = 7;
  config.repeats = {20, 40, 0.01, 60};
  ASSERT_EQ(TrialKey(config), TrialKey(test::MakeConfig(2)));
  db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, 49));
  EXPECT_EQ(QueryText("SELECT count(*) FROM trials"), "1");
  EXPECT_EQ(QueryText("SELECT json_extract(policy, '$.warmup') || '/' || "
                      "json_extract(policy, '$.repeats.max') || '/' || latency_ms FROM results"),
            "7/40/49.0");
}

TEST_F(ResultsDbTest, QueriesQuoteNamesBindValuesAndRefuseUnknownOperators) {
  {
    auto db = ResultsDb::Open(DbPath());
    std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
    db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 100));
    db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 50));
  }
  auto db = ResultsDb::Open(DbPath(), /*read_only=*/true);
  ResultsQuery query;
  query.columns = {"ulysses", "latency_ms"};
  query.conditions = {{"latency_ms", "<", "75"}};
  ResultTable table = db->console().QueryResults(query);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(table.rows[0][0]), 2);
  query.conditions = {{"sweep", "=", "sp' OR '1'='1"}};  // a value, never SQL
  EXPECT_TRUE(db->console().QueryResults(query).rows.empty());
  query.conditions = {{"ulysses", "= 1 OR 1 =", "1"}};
  EXPECT_THROW(db->console().QueryResults(query), QueryError);
  query.conditions = {};
  query.sort_column = "latency_ms\" DESC --";
  EXPECT_THROW(db->console().QueryResults(query), QueryError);
  EXPECT_THROW(test::ReadOnlySql(db->console(), "SELECT 1; DELETE FROM trials"), QueryError);
}

}  // namespace
}  // namespace ditbench::results_db_test
