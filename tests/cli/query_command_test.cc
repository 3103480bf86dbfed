#include "cli/query.h"

#include <cerrno>
#include <fstream>
#include <regex>
#include <sstream>

#include <CLI/CLI.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include "base/table_printers.h"

#include "cli/command.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::query_command_test {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Campaign 1 (sweep "sp"): bf16 at 1, 2, 4 GPUs (100, 50, 40 ms), an fp16 trial at 2048 px
// and a failed trial whose error has a comma and quotes. Campaign 2 (sweep "other"): one.
class QueryCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = ResultsDb::Open(DbPath());
    std::int64_t sp = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
    db->writer().RecordTrial(sp, test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 100));
    db->writer().RecordTrial(sp, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 50));
    db->writer().RecordTrial(sp, test::MakeTrial(test::MakeConfig(4), TrialStatus::kOk, 40));
    db->writer().RecordTrial(
        sp, test::MakeTrial(test::MakeConfig(2, 1, Precision::kFp16, 2048), TrialStatus::kOk, 120));
    db->writer().RecordTrial(sp, test::MakeTrial(test::MakeConfig(2, 2), TrialStatus::kFailed, 0,
                                                 "rank 1 exited with 3, said \"boom\""));
    std::int64_t other = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("other"), false);
    db->writer().RecordTrial(other, test::MakeTrial(test::MakeConfig(8), TrialStatus::kOk, 9));
  }

  std::filesystem::path DbPath() const { return dir_ / "results.db"; }

  QueryOptions Options() const {
    QueryOptions options;
    options.db = DbPath();
    return options;
  }

  int Run(const QueryOptions& options) {
    out_.str("");
    err_.str("");
    return RunQuery(options, out_, err_);
  }

  // The rows of a JSON query.
  nlohmann::json RunJson(QueryOptions options) {
    options.format = TableFormat::kJson;
    EXPECT_EQ(Run(options), kExitOk) << err_.str();
    return nlohmann::json::parse(out_.str());
  }

  static std::vector<double> Latencies(const nlohmann::json& rows) {
    std::vector<double> latencies;
    for (const auto& row : rows) latencies.push_back(row["latency_ms"].get<double>());
    return latencies;
  }

  test::TempDir dir_;
  std::ostringstream out_, err_;
};

TEST_F(QueryCommandTest, TablePrintsCompactColumnsForEveryTrial) {
  ASSERT_EQ(Run(Options()), kExitOk) << err_.str();
  std::string text = out_.str();
  EXPECT_THAT(text, StartsWith("campaign  trial_key         status  model"));
  EXPECT_THAT(text, HasSubstr("(6 rows)"));
  EXPECT_THAT(text, HasSubstr("rank 1 exited with 3"));
  EXPECT_THAT(text, Not(HasSubstr("spec_text")));
}

// Milliseconds share their decimals down the column ("100.00", not "100.0" under "40.00"; issue
// 34); a column of no known meaning keeps four significant digits.
// Two trials that differ only in a setting with no column of its own read apart: the default
// table gains `settings` (what is not at its default, as the report labels it), which can be
// filtered on; a database whose trials are all at their defaults shows no such column.
TEST_F(QueryCommandTest, ASettingWithoutAColumnOfItsOwnIsNamedInSettings) {
  EXPECT_EQ(Run(Options()), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), Not(HasSubstr("settings")));
  {
    auto db = ResultsDb::Open(DbPath());
    std::int64_t tiles = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("tiles"), false);
    for (int tile : {0, 128}) {
      TrialConfig config = test::MakeConfig(1);
      config.vae_tile = tile;
      db->writer().RecordTrial(tiles, test::MakeTrial(config, TrialStatus::kOk, 100 + tile));
    }
  }
  QueryOptions options = Options();
  options.sweep = "tiles";
  EXPECT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr(" settings "));
  EXPECT_THAT(out_.str(), HasSubstr("vae_tile=128"));
  options.where = {"settings=vae_tile=128"};
  EXPECT_THAT(Latencies(RunJson(options)), ElementsAre(228));
}

TEST_F(QueryCommandTest, TableAlignsTextLeftAndNumbersRight) {
  QueryOptions options = Options();
  options.campaign = 1;
  options.where = {"precision=bf16"};
  options.columns = {"trial_key", "latency_ms", "cov"};
  options.sort = "latency_ms";
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  auto line = [](const TrialConfig& config, const char* latency, const char* cov) {
    return fmt::format("{:<16}  {:>10}  {:>8}\n", TrialKey(config), latency, cov);
  };
  EXPECT_EQ(out_.str(), "trial_key         latency_ms       cov\n" +
                            line(test::MakeConfig(4), "40.00", "0.01235") +
                            line(test::MakeConfig(2), "50.00", "0.009901") +
                            line(test::MakeConfig(1), "100.00", "0.004975") +
                            line(test::MakeConfig(2, 2), "-", "-") + "(4 rows)\n");
}

// SSIM was "1.00" in query and "1.0000" in the report, PSNR "35.20" and "35.2" (issue 34): a
// metric of the metric table is printed as FormatMetric prints it, in every human format.
TEST_F(QueryCommandTest, PsnrAndSsimHaveTheMetricTablesFormat) {
  {
    auto db = ResultsDb::Open(DbPath());
    const std::int64_t id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("scope"), false);
    TrialRecord exact = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 50);
    exact.metrics->psnr = 35.0;
    exact.metrics->ssim = 1.0;
    db->writer().RecordTrial(id, exact);
    TrialRecord close = test::MakeTrial(test::MakeConfig(4), TrialStatus::kOk, 40);
    close.metrics->psnr = 31.26;
    close.metrics->ssim = 0.99934;
    db->writer().RecordTrial(id, close);
  }
  QueryOptions options = Options();
  options.sweep = "scope";
  options.columns = {"world_size", "psnr", "ssim"};
  options.sort = "world_size";
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "world_size  psnr    ssim\n"
            "         2  35.0  1.0000\n"
            "         4  31.3  0.9993\n"
            "(2 rows)\n");
  options.format = TableFormat::kMarkdown;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("| 2 | 35.0 | 1.0000 |"));
}

// A built-in metric of the metric table is a column of any database, empty where no trial has
// it: a script asking for reused_step_ms is not refused because no step was reused yet.
TEST_F(QueryCommandTest, ABuiltInMetricNoTrialHasIsAnEmptyColumnNotAnError) {
  {
    auto db = ResultsDb::Open(DbPath());
    const std::int64_t id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("cache"), false);
    db->writer().RecordTrial(id, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 50));
  }
  QueryOptions options = Options();
  options.sweep = "cache";
  options.columns = {"world_size", "reused_step_ms", "skipped_steps"};
  options.where = {"graph_capture_ms>=0"};
  EXPECT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "world_size  reused_step_ms  skipped_steps\n(0 rows)\n");
  options.where.clear();
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "world_size  reused_step_ms  skipped_steps\n"
            "         2               -              -\n"
            "(1 row)\n");
}

TEST_F(QueryCommandTest, FiltersBySweepCampaignAndStatus) {
  QueryOptions options = Options();
  options.sweep = "other";
  EXPECT_EQ(RunJson(options).size(), 1u);
  options = Options();
  options.campaign = 1;
  EXPECT_EQ(RunJson(options).size(), 5u);
  options.status = "failed";
  nlohmann::json rows = RunJson(options);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["status"], "failed");
}

TEST_F(QueryCommandTest, WhereComparesNumbersNumericallyAndCombinesWithAnd) {
  QueryOptions options = Options();
  options.where = {"resolution>1000", "latency_ms<=50", "precision=bf16"};
  options.sort = "latency_ms";
  EXPECT_THAT(Latencies(RunJson(options)), ElementsAre(9, 40, 50));
  options.where = {"resolution>=2048"};
  EXPECT_THAT(Latencies(RunJson(options)), ElementsAre(120));
  options.where = {"status!=ok"};
  nlohmann::json failed = RunJson(options);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_TRUE(failed[0]["latency_ms"].is_null());
}

TEST_F(QueryCommandTest, WhereValuesAreBoundNotPastedIntoSql) {
  QueryOptions options = Options();
  options.where = {"model=x' OR '1'='1"};
  EXPECT_TRUE(RunJson(options).empty());
  options.where = {"model=pixart-alpha\"; DROP TABLE trials; --"};
  EXPECT_TRUE(RunJson(options).empty());
  EXPECT_EQ(RunJson(Options()).size(), 6u);
}

TEST_F(QueryCommandTest, QueryRejectsUnknownColumnWithSuggestion) {
  QueryOptions options = Options();
  options.where = {"latncy_ms<10"};
  EXPECT_EQ(Run(options), kExitUsage);
  std::string error = err_.str();
  EXPECT_THAT(error, StartsWith("ditbench query: error: unknown column 'latncy_ms' in --where"));
  EXPECT_THAT(error, HasSubstr("did you mean 'latency_ms'?"));
  EXPECT_THAT(error, HasSubstr("valid columns: campaign, sweep, trial_key"));
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1);
  EXPECT_TRUE(out_.str().empty());

  options = Options();
  options.columns = {"model", "ulyses"};
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("'ulyses' in --columns (did you mean 'ulysses'?)"));

  options = Options();
  options.sort = "\"; DROP TABLE trials; --";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("in --sort"));
}

TEST_F(QueryCommandTest, MalformedWhereAndUnknownStatusAreUsageErrors) {
  for (const char* bad : {"resolution", "=5", "resolution>", "model!bf16"}) {
    QueryOptions options = Options();
    options.where = {bad};
    EXPECT_EQ(Run(options), kExitUsage) << bad;
    EXPECT_THAT(err_.str(), HasSubstr("malformed --where")) << bad;
  }
  QueryOptions options = Options();
  options.status = "done";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("unknown status 'done'; valid statuses: pending, running"));
}

TEST_F(QueryCommandTest, UnknownSweepOrCampaignIsAnErrorListingTheKnownOnes) {
  QueryOptions options = Options();
  options.sweep = "othr";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_EQ(err_.str(), "ditbench query: error: unknown sweep 'othr' (did you mean 'other'?); "
                        "known sweeps: other, sp\n");
  EXPECT_TRUE(out_.str().empty());
  options = Options();
  options.campaign = 7;
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_EQ(err_.str(),
            "ditbench query: error: unknown campaign 7; known campaigns: 1 (sp), 2 (other)\n");
}

TEST_F(QueryCommandTest, WhereValuesAreTypedByColumn) {
  QueryOptions options = Options();
  options.where = {"latency_ms<abc"};
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--where latency_ms<abc: 'latency_ms' holds numbers and "
                                    "'abc' is not one"));
  options.where = {"resolution=1024px"};
  EXPECT_EQ(Run(options), kExitUsage);
  // A text column compares as text even when the value reads as a number.
  options.where = {"model=1024"};
  EXPECT_TRUE(RunJson(options).empty());
  options.where = {"resolution=2048.0"};
  EXPECT_EQ(RunJson(options).size(), 1u);
}

TEST_F(QueryCommandTest, SpeedupIsAgainstTheOneRankTrialOfTheSameGroup) {
  QueryOptions options = Options();
  options.campaign = 1;
  options.columns = {"world_size", "precision", "speedup"};
  options.sort = "speedup:desc";
  nlohmann::json rows = RunJson(options);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_DOUBLE_EQ(rows[0]["speedup"].get<double>(), 2.5);  // 100 ms / 40 ms
  EXPECT_DOUBLE_EQ(rows[1]["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(rows[2]["speedup"].get<double>(), 1.0);
  EXPECT_TRUE(rows[3]["speedup"].is_null());  // fp16: no fp16 1-rank trial
  EXPECT_TRUE(rows[4]["speedup"].is_null());  // failed
  options.where = {"speedup>=2"};
  EXPECT_EQ(RunJson(options).size(), 2u);
}

// Every knob of a trial's computation filters as its type, read from the stored computation
// (issue 51: `attention=math` was refused as not a number; cache, vae_parallel and the serving
// rate were no columns at all). A field a trial leaves out reads as its default.
class QueryKnobTest : public QueryCommandTest {
 protected:
  void SetUp() override {
    auto db = ResultsDb::Open(DbPath());
    const std::int64_t id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("knobs"), false);
    TrialConfig math = test::MakeConfig(2);
    math.attention = AttentionBackend::kMath;
    TrialConfig split = test::MakeConfig(2);
    split.vae_parallel = 2;
    TrialConfig cached = test::MakeConfig(1);
    cached.cache = {StepCache::Kind::kFbCache, 0.2, 1};
    std::vector<TrialConfig> served(2, test::MakeConfig(1));
    for (double rate : {2, 8}) {
      ServeLoad load;
      load.rate_per_s = rate;
      load.requests = 20;
      served[rate == 2 ? 0 : 1].serve = load;
    }
    int latency = 100;
    for (const TrialConfig& config :
         {test::MakeConfig(1), math, split, cached, served[0], served[1]})
      db->writer().RecordTrial(id, test::MakeTrial(config, TrialStatus::kOk, latency -= 10));
  }

  std::size_t Rows(const std::string& where) {
    QueryOptions options = Options();
    options.where = {where};
    return RunJson(options).size();
  }
};

TEST_F(QueryKnobTest, EveryKnobFiltersAsItsType) {
  EXPECT_EQ(Rows("attention=math"), 1u);
  EXPECT_EQ(Rows("attention=auto"), 5u);
  EXPECT_EQ(Rows("vae_parallel=2"), 1u);
  EXPECT_EQ(Rows("vae_parallel<2"), 5u);
  EXPECT_EQ(Rows("cache=none"), 5u);
  EXPECT_EQ(Rows("cache!=none"), 1u);
  EXPECT_EQ(Rows("cache.kind=fbcache"), 1u);
  EXPECT_EQ(Rows("cache.threshold>=0.2"), 1u);
  EXPECT_EQ(Rows("cache.warmup_steps=1"), 1u);  // a key json_tree quotes ("warmup_steps")
  EXPECT_EQ(Rows("serve=none"), 4u);
  EXPECT_EQ(Rows("serve.arrivals=poisson"), 2u);
  EXPECT_EQ(Rows("serve.rate>4"), 1u);
  EXPECT_EQ(Rows("serve.rate<10"), 2u);  // as numbers: as text, "2" < "10" would not hold
  EXPECT_EQ(Rows("quant=none"), 6u);
  EXPECT_EQ(Rows("graph=eager"), 6u);

  QueryOptions options = Options();
  options.where = {"serve.rate>=2"};
  options.columns = {"ulysses", "serve.rate", "cache.kind", "vae_parallel"};
  options.sort = "serve.rate:desc";
  const nlohmann::json rows = RunJson(options);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["serve.rate"], 8.0);
  EXPECT_TRUE(rows[0]["cache.kind"].is_null());
  EXPECT_EQ(rows[0]["vae_parallel"], 1);
  // The knobs are columns to name, not added to every query's output.
  EXPECT_FALSE(RunJson(Options())[0].contains("vae_parallel"));
}

TEST_F(QueryKnobTest, ANumberKnobRefusesTextAndAnUnknownColumnIsOneLineNamingTheKnobs) {
  QueryOptions options = Options();
  options.where = {"vae_parallel=two"};
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("'vae_parallel' holds numbers and 'two' is not one"));
  options.where = {"cache.threshold=high"};
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("'cache.threshold' holds numbers and 'high' is not one"));
  options.where = {"vae_paralel=2"};
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), StartsWith("ditbench query: error: unknown column 'vae_paralel' in "
                                     "--where (did you mean 'vae_parallel'?); valid columns: "));
  const std::string error = err_.str();
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1);
  std::vector<std::string> listed;
  std::istringstream list(error.substr(error.find("valid columns: ") + 15));
  for (std::string column; std::getline(list, column, ',');)
    listed.push_back(
        column.substr(column.find_first_not_of(' '),
                      column.find_last_not_of(" \n") + 1 - column.find_first_not_of(' ')));
  for (const char* knob : {"attention", "cache.kind", "serve.rate", "vae_parallel", "frames"})
    EXPECT_THAT(listed, Contains(knob));
}

TEST_F(QueryCommandTest, WhereAcceptsSpacesAroundOperators) {
  QueryOptions options = Options();
  options.where = {"precision = bf16", " resolution >= 1024 ", "latency_ms <50"};
  options.sort = "latency_ms";
  EXPECT_THAT(Latencies(RunJson(options)), ElementsAre(9, 40));
  options.where = {" = bf16"};
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("malformed --where"));
  options.where = {"precision =  "};
  EXPECT_EQ(Run(options), kExitUsage);
}

TEST_F(QueryCommandTest, SortDescendingPutsNullsLast) {
  QueryOptions options = Options();
  options.sort = "latency_ms:desc";
  options.columns = {"latency_ms"};
  nlohmann::json rows = RunJson(options);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0]["latency_ms"], 120.0);
  EXPECT_EQ(rows[4]["latency_ms"], 9.0);
  EXPECT_TRUE(rows[5]["latency_ms"].is_null());
}

TEST_F(QueryCommandTest, JsonPreservesNumericTypesAndNulls) {
  QueryOptions options = Options();
  options.status = "ok";
  options.sweep = "other";
  nlohmann::json rows = RunJson(options);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0]["resolution"].is_number_integer());
  EXPECT_EQ(rows[0]["resolution"], 1024);
  EXPECT_TRUE(rows[0]["latency_ms"].is_number_float());
  EXPECT_TRUE(rows[0]["mfu"].is_null());
  EXPECT_TRUE(rows[0]["error"].is_null());
  EXPECT_EQ(rows[0]["sweep"], "other");
  // Keys keep the view's column order (campaign first), not alphabetical order.
  EXPECT_LT(out_.str().find("\"campaign\""), out_.str().find("\"batch\""));
}

TEST_F(QueryCommandTest, MarkdownIsAPipeTableOfTheCompactColumns) {
  QueryOptions options = Options();
  options.format = TableFormat::kMarkdown;
  options.status = "failed";
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  const std::string text = out_.str();
  EXPECT_THAT(text, StartsWith("| campaign | trial\\_key | status | model | resolution |"));
  const std::size_t header_end = text.find('\n');
  const std::string header = text.substr(0, header_end);
  const std::string rule =
      text.substr(header_end + 1, text.find('\n', header_end + 1) - header_end - 1);
  EXPECT_EQ(std::count(header.begin(), header.end(), '|'),
            std::count(rule.begin(), rule.end(), '|'));
  EXPECT_THAT(rule, StartsWith("| ---: | --- | --- | --- | ---: |"));
  EXPECT_THAT(text, HasSubstr("| failed |"));
  EXPECT_THAT(text, HasSubstr("rank 1 exited with 3, said \"boom\""));
  EXPECT_THAT(text, Not(HasSubstr("rows)")));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);  // header, rule, one row
}

TEST_F(QueryCommandTest, CsvQuotesFieldsPerRfc4180) {
  QueryOptions options = Options();
  options.format = TableFormat::kCsv;
  options.status = "failed";
  options.columns = {"status", "world_size", "latency_ms", "error"};
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "status,world_size,latency_ms,error\r\n"
            "failed,4,,\"rank 1 exited with 3, said \"\"boom\"\"\"\r\n");
}

TEST_F(QueryCommandTest, SqlRunsReadOnlyStatements) {
  QueryOptions options = Options();
  options.sql = "SELECT precision, count(*) AS n FROM results GROUP BY precision ORDER BY 1";
  options.format = TableFormat::kCsv;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "precision,n\r\nbf16,5\r\nfp16,1\r\n");
}

TEST_F(QueryCommandTest, CampaignAndTrialTimesReadAsIso8601Utc) {
  {
    auto db = ResultsDb::Open(DbPath());
    db->writer().FinishCampaign(1);
  }
  QueryOptions options = Options();
  options.sql = "SELECT id, started_at, finished_at FROM campaigns ORDER BY id";
  options.format = TableFormat::kCsv;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  const std::regex expected(R"(id,started_at,finished_at\r\n)"
                            R"(1,(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z),)"
                            R"((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\r\n)"
                            R"(2,(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z),\r\n)");
  EXPECT_TRUE(std::regex_match(out_.str(), expected)) << out_.str();
  // The trials' own times, as MakeTrial wrote them (unix 1700000000 and 60 s later).
  options.sql = "SELECT DISTINCT started_at, finished_at FROM trials";
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "started_at,finished_at\r\n"
                        "2023-11-14T22:13:20.000Z,2023-11-14T22:14:20.000Z\r\n");
}

TEST_F(QueryCommandTest, SqlRejectsWritesAndSecondStatements) {
  QueryOptions options = Options();
  options.sql = "DELETE FROM trials";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--sql must be a read-only statement"));
  options.sql = "SELECT 1; DELETE FROM trials";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("exactly one statement"));
  options.sql = "SELEC nonsense";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("ditbench query: error: cannot prepare SQL"));
  options.sql = "SELECT 1";
  options.sweep = "sp";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("cannot be combined"));
  EXPECT_EQ(RunJson(Options()).size(), 6u);
}

// fts3_tokenizer's two-argument form installs a tokenizer from a pointer in the SQL (code
// execution); its one-argument form reveals an address. Both are refused on the read-only
// connection.
TEST_F(QueryCommandTest, SqlRefusesTheFts3TokenizerFunction) {
  QueryOptions options = Options();
  options.sql = "SELECT fts3_tokenizer('simple', x'0000000000000000')";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("not authorized"));
  options.sql = "SELECT hex(fts3_tokenizer('simple'))";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("not authorized"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("7F")));
}

TEST_F(QueryCommandTest, MissingDatabaseIsOneLineError) {
  QueryOptions options = Options();
  options.db = dir_ / "nope.db";
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_EQ(err_.str(), "ditbench query: error: no results database at '" +
                            options.db.string() + "'\n");
  EXPECT_FALSE(std::filesystem::exists(options.db));
}

TEST_F(QueryCommandTest, TrialsMeasuredOnABusyMachineAreWarnedAboutOnStderr) {
  EXPECT_EQ(Run(Options()), kExitOk);
  EXPECT_EQ(err_.str(), "");  // nothing busy: no warning
  {
    auto db = ResultsDb::Open(DbPath());
    std::int64_t sp = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
    TrialRecord busy = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 100);
    busy.health = {{"busy", true}, {"note", "load 3.00 on 2 cores; others used 1.00 cores"}};
    db->writer().RecordTrial(sp, busy);
  }
  QueryOptions options = Options();
  options.format = TableFormat::kCsv;
  EXPECT_EQ(Run(options), kExitOk);
  EXPECT_THAT(err_.str(), StartsWith("ditbench query: warning: 1 of 6 trial(s) were measured "
                                     "while other work ran on the machine (column busy), e.g. "));
  EXPECT_THAT(err_.str(), HasSubstr("load 3.00 on 2 cores; others used 1.00 cores"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("warning")));  // the CSV stays clean
  options.where = {"busy=1"};
  options.format = TableFormat::kJson;
  EXPECT_EQ(RunJson(options).size(), 1u);
  options.where = {"world_size>1"};  // the filters apply to the warning too
  EXPECT_EQ(Run(options), kExitOk);
  EXPECT_EQ(err_.str(), "");
}

// A speedup's doubts go with the figure in every format: "(busy)" beside it where a person
// reads it, speedup_note in CSV and JSON (speedup_trust stays a column of its own).
TEST_F(QueryCommandTest, ASpeedupCarriesItsDoubtsInEveryFormat) {
  std::int64_t campaign = 0;
  {
    auto db = ResultsDb::Open(DbPath());
    campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("busy"), false);
    db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 100));
    TrialRecord busy = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 50);
    busy.health = {{"busy", true}, {"note", "load 3.00 on 2 cores"}};
    db->writer().RecordTrial(campaign, busy);
  }
  QueryOptions options = Options();
  options.campaign = campaign;
  options.columns = {"world_size", "speedup", "speedup_trust"};
  options.where = {"world_size=2"};
  options.format = TableFormat::kText;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("2.00x (busy)"));
  options.format = TableFormat::kMarkdown;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("2.00x (busy)"));
  options.format = TableFormat::kCsv;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("speedup_note"));
  const nlohmann::json rows = RunJson(options);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].value("speedup_note", ""), "busy");
  // Asked without speedup_trust, the speedup still carries its doubts, and no column is added.
  options.columns = {"world_size", "speedup"};
  options.format = TableFormat::kText;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("2.00x (busy)"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("speedup_trust")));
}

TEST_F(QueryCommandTest, EmptyResultStillPrintsHeader) {
  QueryOptions options = Options();
  options.where = {"resolution=1"};
  options.columns = {"trial_key", "latency_ms"};
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "trial_key  latency_ms\n(0 rows)\n");
}

TEST_F(QueryCommandTest, CommandLineOptionsReachTheQuery) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand("query");
  std::function<int()> run = DefineQueryCommand(*sub);
  app.parse("query --db " + DbPath().string() +
                " --sweep sp --where ulysses>1 --where precision=bf16 --columns "
                "trial_key,latency_ms --sort latency_ms:desc --format csv",
            false);
  ::testing::internal::CaptureStdout();
  int code = run();
  std::string text = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, kExitOk);
  EXPECT_EQ(text, "trial_key,latency_ms\r\n" + TrialKey(test::MakeConfig(2)) + ",50\r\n" +
                      TrialKey(test::MakeConfig(4)) + ",40\r\n" +
                      TrialKey(test::MakeConfig(2, 2)) + ",\r\n");
}

// An output whose writes all fail as on a full disk, counting what it was asked to write.
class FullDisk : public std::streambuf {
 public:
  std::size_t asked = 0;

 protected:
  int_type overflow(int_type) override {
    ++asked;
    errno = ENOSPC;
    return traits_type::eof();
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    asked += static_cast<std::size_t>(n);
    errno = ENOSPC;
    return 0;
  }
};

// Counts what is written and throws it away.
class CountingSink : public std::streambuf {
 public:
  std::size_t bytes = 0;

 protected:
  int_type overflow(int_type c) override {
    ++bytes;
    return c;
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<std::size_t>(n);
    return n;
  }
};

constexpr const char* kEndless =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) ";

// An infinite recursive CTE used to run for ever: it is stopped at --timeout.
TEST_F(QueryCommandTest, AnEndlessSqlStatementIsStoppedAtItsTimeLimit) {
  QueryOptions options = Options();
  options.sql = std::string(kEndless) + "SELECT count(*) FROM c";
  options.timeout_s = 0.2;
  EXPECT_EQ(Run(options), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--sql ran past its time limit"));
}

// Rows of --sql in csv or json are written as they come (they used to be held in memory until
// the statement ended: an endless or huge result ended in std::bad_alloc, or never).
TEST_F(QueryCommandTest, SqlRowsAreStreamedAsTheyCome) {
  for (const char* format : {"csv", "json"}) {
    QueryOptions options = Options();
    options.sql = std::string(kEndless) + "SELECT x FROM c";
    options.format = *ParseTableFormat(format);
    options.timeout_s = 0.2;
    CountingSink counted;
    std::ostream out(&counted);
    err_.str("");
    EXPECT_EQ(RunQuery(options, out, err_), kExitUsage) << format;
    EXPECT_GT(counted.bytes, 0u) << format;  // rows went out before the limit stopped it
  }
}

TEST_F(QueryCommandTest, StreamedJsonReadsAsTheBufferedJson) {
  QueryOptions options = Options();
  options.sql = "SELECT trial_key, latency_ms, error FROM results ORDER BY trial_key";
  const nlohmann::json streamed = RunJson(options);
  ASSERT_EQ(streamed.size(), 6u);
  EXPECT_TRUE(streamed[0].contains("latency_ms"));
  options.sql = "SELECT 1 WHERE 0";
  EXPECT_EQ(RunJson(options), nlohmann::json::array());
  EXPECT_EQ(out_.str(), "[]\n");
}

// A full disk used to truncate the output silently and exit 0.
TEST_F(QueryCommandTest, AnOutputThatCannotBeWrittenFailsWithItsCause) {
  for (const char* format : {"table", "csv", "json"}) {
    for (const bool sql : {false, true}) {
      QueryOptions options = Options();
      options.format = *ParseTableFormat(format);
      if (sql) options.sql = "SELECT * FROM results";
      FullDisk full;
      std::ostream out(&full);
      err_.str("");
      EXPECT_EQ(RunQuery(options, out, err_), kExitTrialsFailed) << format << sql;
      EXPECT_THAT(err_.str(), HasSubstr("cannot write the query's rows: No space left on device"));
    }
  }
}

// An error that is neither the user's query nor the database (here the output stream throws)
// exits 1 as an internal error, as every command does (README "Exit codes"); it used to exit
// 2, as a usage error.
TEST_F(QueryCommandTest, AnUnexpectedErrorExitsOneAsEveryCommandDoes) {
  FullDisk full;
  std::ostream out(&full);
  out.exceptions(std::ios::badbit);
  EXPECT_EQ(RunQuery(Options(), out, err_), kExitTrialsFailed);
  EXPECT_THAT(err_.str(), StartsWith("ditbench query: internal error: "));
  err_.str("");
  QueryOptions options = Options();
  options.columns = {"no_such_column"};
  std::ostringstream fine;
  EXPECT_EQ(RunQuery(options, fine, err_), kExitUsage);  // the user's mistake stays 2
}

// `ditbench report` wiring, over the same database.
using ReportCommandTest = QueryCommandTest;

TEST_F(ReportCommandTest, WritesTheFileOrFailsWithUsageCode) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand("report");
  std::function<int()> run = DefineReportCommand(*sub);
  std::filesystem::path out = dir_ / "r.html";
  app.parse("report --db " + DbPath().string() + " --sweep sp -o " + out.string(), false);
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run(), kExitOk);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "wrote " + out.string() + "\n");
  EXPECT_TRUE(std::filesystem::exists(out));

  CLI::App again;
  CLI::App* sub_again = again.add_subcommand("report");
  std::function<int()> run_again = DefineReportCommand(*sub_again);
  again.parse("report --db " + DbPath().string() + " --sweep nope", false);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_again(), kExitUsage);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              StartsWith("ditbench report: error: no sweep named 'nope'"));
}

}  // namespace
}  // namespace ditbench::query_command_test

namespace ditbench::query_command_test {
namespace {

// The command fits the planner's cost model (plan/planner_view.h): the page has its section,
// here saying why no model was fitted on the fixture's few trials.
TEST_F(ReportCommandTest, ThePageHasThePlannerSection) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand("report");
  std::function<int()> run = DefineReportCommand(*sub);
  const std::filesystem::path out = dir_ / "r.html";
  app.parse("report --db " + DbPath().string() + " -o " + out.string(), false);
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run(), kExitOk);
  ::testing::internal::GetCapturedStdout();
  std::ifstream in(out);
  const std::string html{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_THAT(html, HasSubstr("<section id=\"planner\">"));
  EXPECT_THAT(html, HasSubstr("No cost model for 'cpu': "));
}

// `report -o /dev/full` used to say "wrote" (or, failing, "Success"); now the real cause and
// exit 1, and nothing claims to have written.
TEST_F(ReportCommandTest, AnOutputThatCannotBeWrittenFailsWithItsCause) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand("report");
  std::function<int()> run = DefineReportCommand(*sub);
  app.parse("report --db " + DbPath().string() + " --sweep sp -o /dev/full", false);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run(), kExitTrialsFailed);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("cannot write '/dev/full': No space left on device"));
  EXPECT_EQ(std::filesystem::status(std::filesystem::path("/dev/full")).type(),
            std::filesystem::file_type::character);  // written in place, never replaced
}

// Issue 51: p90 and p99 were printed for trials too small to bound them while p95 was
// withheld. Every percentile column follows one rule (PercentileBounded): 40 samples show p90,
// and withhold p95 and p99 with the reason, in every format; a trial of 400 shows all three.
TEST_F(QueryCommandTest, APercentileItsSamplesCannotBoundIsWithheldWithTheReason) {
  {
    auto db = ResultsDb::Open(DbPath());
    std::int64_t tails = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("tails"), false);
    for (int n : {40, 400}) {
      TrialRecord trial = test::MakeTrial(test::MakeConfig(n == 40 ? 1 : 2), TrialStatus::kOk, 10);
      trial.metrics->iterations = n;
      trial.metrics->extra["p95_ms"] = 10.5;
      db->writer().RecordTrial(tails, trial);
    }
  }
  QueryOptions options = Options();
  options.sweep = "tails";
  options.columns = {"world_size", "p90_ms", "p95_ms", "p99_ms"};
  options.sort = "world_size";
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), Not(HasSubstr("iterations")));
  EXPECT_THAT(out_.str(),
              HasSubstr("11.00  (withheld: 40 samples, a 95% interval of p95 needs 72)"));
  EXPECT_THAT(out_.str(), HasSubstr("(withheld: 40 samples, a 95% interval of p99 needs 368)"));
  EXPECT_THAT(out_.str(), HasSubstr("(2 rows)"));
  options.format = TableFormat::kCsv;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), StartsWith("world_size,p90_ms,p90_ms_note,p95_ms,p95_ms_note,p99_ms,"
                                     "p99_ms_note\r\n1,11,,,\"withheld: 40 samples, a 95% "
                                     "interval of p95 needs 72\",,\"withheld: 40 samples, a 95% "
                                     "interval of p99 needs 368\"\r\n2,11,,10.5,,11,\r\n"));
  options.format = TableFormat::kMarkdown;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("| 1 | 11.00 | (withheld: 40 samples, a 95% interval of p95 "
                                    "needs 72) |"));
  const nlohmann::json rows = RunJson(options);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0]["p99_ms"].is_null());
  EXPECT_EQ(rows[0]["p99_ms_note"], "withheld: 40 samples, a 95% interval of p99 needs 368");
  EXPECT_EQ(rows[1]["p99_ms"], 11.0);
  EXPECT_EQ(rows[1]["p95_ms"], 10.5);
  EXPECT_TRUE(rows[1]["p99_ms_note"].is_null());
}

}  // namespace
}  // namespace ditbench::query_command_test
