// Extra metrics in the narrow table metric_values (storage/metric_values.h, schema 18): written
// with the trial, read back into ResultRow::extra_metrics, selectable by name in `query`.
#include "storage/metric_values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "tests/support/schema_rewind.h"

#include "analysis/comparison.h"
#include "analysis/row_metrics.h"
#include "report/html_report.h"
#include "storage/results_db.h"
#include "storage/results_view.h"
#include "storage/schema.h"
#include "storage/statement.h"
#include "tests/support/results_db_fixture.h"
#include "tests/support/sample_results.h"

namespace ditbench::metric_values_test {
namespace {

using ::testing::HasSubstr;

class MetricValuesTest : public ResultsDbTest {
 protected:
  // A campaign with one ok trial of `ulysses` carrying `extra` and its declarations.
  std::int64_t Record(ResultsDb& db, const std::string& sweep, int ulysses,
                      std::map<std::string, double> extra,
                      std::map<std::string, MetricDeclaration> declared = {},
                      double latency_ms = 10) {
    const std::int64_t id = db.writer().ResumeOrCreateCampaign(test::MakeCampaign(sweep), false);
    TrialRecord trial = test::MakeTrial(test::MakeConfig(ulysses), TrialStatus::kOk, latency_ms);
    trial.metrics->extra = std::move(extra);
    trial.metrics->extra_declared = std::move(declared);
    db.writer().RecordTrial(id, trial);
    return id;
  }
};

TEST_F(MetricValuesTest, ExtraMetricsAreStoredOneRowEachAndReadBackWithTheirDeclarations) {
  auto db = ResultsDb::Open(DbPath());
  const std::int64_t id = Record(*db, "own", 1, {{"throughput", 42.5}, {"items", 7}},
                                 {{"throughput", {"images/s", "higher"}}});
  EXPECT_EQ(QueryText("SELECT count(*) FROM metric_values"), "2");
  EXPECT_EQ(QueryText("SELECT unit || ' ' || better FROM metric_values WHERE name = 'throughput'"),
            "images/s higher");
  const std::vector<ResultRow> rows = db->reader().Results({id});
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0].extra_metrics.size(), 2u);
  const ExtraMetric& throughput = rows[0].extra_metrics.at("throughput");
  EXPECT_DOUBLE_EQ(throughput.value, 42.5);
  EXPECT_EQ(throughput.hint, MetricHint::kRate);
  EXPECT_EQ(throughput.better, Better::kHigher);
  EXPECT_EQ(rows[0].extra_metrics.at("items").better, Better::kNone);
  EXPECT_EQ(rows[0].extra_metrics.at("items").hint, MetricHint::kUnknown);
}

// The column metrics go through the metric table (metrics/metric_table.h: MetricMember): each is
// written from its TrialMetrics member and read back into its ResultRow member, by the table.
TEST_F(MetricValuesTest, EveryColumnMetricIsWrittenAndReadBackThroughTheTable) {
  auto db = ResultsDb::Open(DbPath());
  const std::int64_t id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("cols"), false);
  TrialRecord trial = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 10);
  double value = 1;
  for (const MetricInfo* metric : ColumnMetrics()) SetMetric(*trial.metrics, *metric, value++);
  db->writer().RecordTrial(id, trial);
  const std::vector<ResultRow> rows = db->reader().Results({id});
  ASSERT_EQ(rows.size(), 1u);
  value = 1;
  for (const MetricInfo* metric : ColumnMetrics()) {
    EXPECT_EQ(MetricValue(rows[0], metric->name), value) << metric->name;
    EXPECT_EQ(QueryText(fmt::format("SELECT {} FROM results", metric->name)),
              QueryText(fmt::format("SELECT {:.1f}", value++)))
        << metric->name;
  }
  EXPECT_TRUE(rows[0].extra_metrics.empty());  // none of them is held by name
}

// Every metric of the table is a column of the results view (schema 22): a column metric from
// trial_metrics, one held by name from metric_values.
TEST_F(MetricValuesTest, EveryMetricOfTheTableIsAColumnOfTheResultsView) {
  auto db = ResultsDb::Open(DbPath());
  Record(*db, "own", 1, {{"decode_ms", 12.5}, {"items", 7}});
  for (const MetricInfo& metric : MetricTable())
    EXPECT_EQ(
        QueryText(fmt::format("SELECT count(*) FROM pragma_table_info('results') WHERE name = '{}'",
                              metric.name)),
        "1")
        << metric.name;
  EXPECT_EQ(QueryText("SELECT decode_ms FROM results"), QueryText("SELECT 12.5"));
  EXPECT_EQ(QueryText("SELECT count(*) FROM results WHERE p95_ms IS NULL"), "1");
}

// A database whose view an older build made, before a metric was added to the table: read, it is
// not taken for an edited one; opened to write, its view is made again with the new column.
// A view edited otherwise is still refused (ResultsDbTest.*Edited*).
TEST_F(MetricValuesTest, TheViewOfAnOlderMetricTableIsMadeAgainOnOpen) {
  {
    auto db = ResultsDb::Open(DbPath());
    Record(*db, "own", 1, {{"decode_ms", 12.5}});
  }
  const std::string line =
      ",\n  (SELECT v.value FROM metric_values v WHERE v.trial_id = t.id AND v.name = "
      "'decode_ms') AS decode_ms";
  std::string older = ResultsView(kSchemaVersion);
  ASSERT_NE(older.find(line), std::string::npos);
  older.erase(older.find(line), line.size());
  {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(), "DROP VIEW results");
    Exec(raw.get(), older.c_str());
  }
  EXPECT_EQ(QueryText("SELECT count(*) FROM pragma_table_info('results') WHERE name = 'decode_ms'"),
            "0");
  {
    auto read_only = ResultsDb::Open(DbPath(), /*read_only=*/true);
    EXPECT_EQ(read_only->reader().Results({1}).size(), 1u);
  }
  { auto db = ResultsDb::Open(DbPath()); }
  EXPECT_EQ(QueryText("SELECT decode_ms FROM results"), QueryText("SELECT 12.5"));
}

TEST_F(MetricValuesTest, RecordingTheTrialAgainReplacesItsExtraMetrics) {
  auto db = ResultsDb::Open(DbPath());
  const std::int64_t id = Record(*db, "own", 1, {{"a", 1}, {"b", 2}});
  TrialRecord again = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 10);
  again.metrics->extra = {{"b", 3}};
  db->writer().RecordTrial(id, again);
  EXPECT_EQ(QueryText("SELECT group_concat(name || '=' || value) FROM metric_values"), "b=3.0");
}

TEST_F(MetricValuesTest, TheDropNoteIsStoredWithTheTrial) {
  auto db = ResultsDb::Open(DbPath());
  const std::int64_t id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("own"), false);
  TrialRecord trial = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 10);
  trial.metrics->extra_note = "metric 'a b' dropped: not a valid name";
  db->writer().RecordTrial(id, trial);
  EXPECT_EQ(QueryText("SELECT extra_note FROM trial_metrics"),
            "metric 'a b' dropped: not a valid name");
}

TEST_F(MetricValuesTest, AStoredNameThatIsNotAValidMetricNameIsSkippedOnRead) {
  auto db = ResultsDb::Open(DbPath());
  const std::int64_t id = Record(*db, "own", 1, {{"fine", 1}});
  {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(),
         "INSERT INTO metric_values (trial_id, name, value) "
         "SELECT trial_id, 'x\"; DROP TABLE trials; --', 5 FROM trial_metrics");
  }
  const std::vector<ResultRow> rows = db->reader().Results({id});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].extra_metrics.size(), 1u);
  ResultsQuery query;
  query.columns = {"trial_key", "fine"};
  EXPECT_EQ(db->console().QueryResults(query).rows.size(), 1u);  // the bad name is no column
  query.columns = {"x\"; DROP TABLE trials; --"};
  EXPECT_THROW(db->console().QueryResults(query), QueryError);
}

TEST_F(MetricValuesTest, QuerySelectsFiltersAndSortsAnExtraMetricByName) {
  auto db = ResultsDb::Open(DbPath());
  Record(*db, "own", 1, {{"items", 5}});
  const std::int64_t id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("own"), false);
  TrialRecord two = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 6);
  two.metrics->extra = {{"items", 9}};
  db->writer().RecordTrial(id, two);
  ResultsQuery query;
  query.columns = {"ulysses", "items"};
  query.conditions = {{"items", ">", "6"}};
  const ResultTable table = db->console().QueryResults(query);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(std::get<double>(table.rows[0][1]), 9.0);
  query.conditions.clear();
  query.sort_column = "items";
  query.descending = true;
  const ResultTable sorted = db->console().QueryResults(query);
  ASSERT_EQ(sorted.rows.size(), 2u);
  EXPECT_EQ(std::get<std::int64_t>(sorted.rows[0][0]), 2);
}

// Schema 18 copies the numbers older versions kept in trial_metrics.extra_json, valid names
// only; a database without any starts with the table empty.
TEST_F(MetricValuesTest, MigrationToSchemaEighteenCopiesValidExtraJsonNumbers) {
  {
    auto db = ResultsDb::Open(DbPath());
    Record(*db, "own", 1, {});
  }
  {
    SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READWRITE);
    Exec(raw.get(), test::RewindToSchema19Sql().c_str());
    Exec(raw.get(), R"sql(
      DROP TABLE selfchecks;
      DROP TABLE metric_values;
      ALTER TABLE trial_metrics DROP COLUMN extra_note;
      UPDATE trial_metrics SET extra_json = '{"items": 4, "bad name": 1, "label": "x"}';
      UPDATE schema_version SET version = 17;)sql");
  }
  auto db = ResultsDb::Open(DbPath());
  EXPECT_EQ(QueryText("SELECT max(version) FROM schema_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(QueryText("SELECT group_concat(name || '=' || value) FROM metric_values"), "items=4.0");
}

TEST_F(MetricValuesTest, TheReportHasAColumnPerExtraMetricFormattedByItsHint) {
  {
    auto db = ResultsDb::Open(DbPath());
    Record(*db, "own", 1, {{"throughput", 1234.567}, {"odd", 123456.0}},
           {{"throughput", {"images/s", "higher"}}});
  }
  const std::string html = RenderHtmlReport({DbPath(), {}, {}, {}, {}});
  EXPECT_THAT(html, HasSubstr(">throughput (images/s)</th>"));
  EXPECT_THAT(html, HasSubstr("higher is better"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num metric\">1235</td>"));
  EXPECT_THAT(html, HasSubstr(">odd</th>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num metric\">1.235e+05</td>"));  // 4 digits
}

TEST_F(MetricValuesTest, CompareShowsExtraMetricsWithTheDeclaredDirectionOnly) {
  auto db = ResultsDb::Open(DbPath());
  const std::map<std::string, MetricDeclaration> higher = {{"throughput", {"images/s", "higher"}}};
  const std::int64_t a = Record(*db, "a", 1, {{"throughput", 10}, {"items", 4}}, higher);
  const std::int64_t b = Record(*db, "b", 1, {{"throughput", 8}, {"items", 5}}, higher);
  const Comparison comparison =
      CompareCampaigns(db->reader(), {DbPath(), {a}, "1"}, db->reader(), {DbPath(), {b}, "2"});
  ASSERT_EQ(comparison.trials.size(), 1u);
  const std::vector<ComparedMetric>& metrics = comparison.trials[0].metrics;
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].name, "items");  // a program's own, by name
  EXPECT_EQ(metrics[0].Direction(), "");
  EXPECT_EQ(metrics[1].name, "throughput");
  ASSERT_TRUE(metrics[1].ratio());
  EXPECT_DOUBLE_EQ(*metrics[1].ratio(), 0.8);
  EXPECT_EQ(metrics[1].Direction(), "worse");
}

}  // namespace
}  // namespace ditbench::metric_values_test
