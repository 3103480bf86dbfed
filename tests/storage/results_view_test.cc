// The results view (storage/results_view.cc): its leading contract columns, the axes, metrics
// and campaign it exposes, and the columns later schema versions added.
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

namespace ditbench::results_view_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Schema 14: the view splits a "WIDTHxHEIGHT" resolution into width and height, a square's
// number into both, and has a clip's frames (NULL for an image); Results() reads them.
TEST_F(ResultsDbTest, ResultsViewHasWidthHeightAndFrames) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("video"), false);
  TrialConfig square = test::MakeConfig(1);
  square.resolution = 256;
  TrialConfig wide = square;
  wide.resolution = 320;
  wide.height = 192;
  TrialConfig clip = square;
  clip.model = "wan2.1-t2v-tiny";
  clip.resolution = 832;
  clip.height = 480;
  clip.frames = 81;
  for (const TrialConfig& config : {square, wide, clip})
    db->writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, 10));
  EXPECT_EQ(QueryText("SELECT group_concat(resolution || ':' || width || ':' || height || ':' || "
                      "ifnull(frames, 'NULL'), ' ') FROM (SELECT * FROM results ORDER BY width)"),
            "256:256:256:NULL 320x192:320:192:NULL 832x480:832:480:81");
  std::map<std::int64_t, const ResultRow*> by_width;
  const std::vector<ResultRow> rows = db->reader().Results({campaign});
  for (const ResultRow& row : rows) by_width[row.resolution] = &row;
  ASSERT_EQ(by_width.size(), 3u);
  EXPECT_EQ(by_width[256]->height, 256);
  EXPECT_EQ(by_width[256]->resolution_label(), "256px");
  EXPECT_EQ(by_width[320]->height, 192);
  EXPECT_EQ(by_width[320]->resolution_label(), "320x192px");
  EXPECT_EQ(by_width[832]->frames, 81);
  EXPECT_EQ(by_width[832]->resolution_label(), "832x480px 81 frames");
}

TEST_F(ResultsDbTest, ResultsViewStartsWithTheContractColumns) {
  auto db = ResultsDb::Open(DbPath());
  std::vector<std::string> columns =
      test::ReadOnlySql(db->console(), "SELECT * FROM results LIMIT 0").columns;
  const std::vector<std::string>& contract = ResultsContractColumns();
  ASSERT_GE(columns.size(), contract.size());
  EXPECT_EQ(std::vector<std::string>(columns.begin(), columns.begin() + contract.size()),
            contract);
  EXPECT_EQ(contract.front(), "campaign");
  EXPECT_EQ(contract.back(), "error");
}

TEST_F(ResultsDbTest, ResultsViewExposesAxesMetricsAndCampaign) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign =
      db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp", "rev9"), false);
  TrialConfig config = test::MakeConfig(2, 2, Precision::kFp16, 2048);
  config.scope = Scope::kPipeline;
  TrialRecord trial = test::MakeTrial(config, TrialStatus::kOk, 30);
  trial.metrics->tflops = 12.5;
  db->writer().RecordTrial(campaign, trial);

  SqliteConnection raw = OpenSqlite(DbPath().string(), SQLITE_OPEN_READONLY);
  Statement row(raw.get(),
                "SELECT campaign, sweep, model, resolution, precision, scope, ulysses, ring, "
                "world_size, latency_ms, warmup, iterations, tflops, mfu, build, error, "
                "started_at FROM results");
  ASSERT_TRUE(row.Step());
  EXPECT_EQ(row.Int(0), campaign);
  EXPECT_EQ(row.Text(1), "sp");
  EXPECT_EQ(row.Text(2), "pixart-alpha");
  EXPECT_EQ(row.ColumnType(3), SQLITE_INTEGER);
  EXPECT_EQ(row.Int(3), 2048);
  EXPECT_EQ(row.Text(4), "fp16");
  EXPECT_EQ(row.Text(5), "pipeline");
  EXPECT_EQ(row.Int(6), 2);
  EXPECT_EQ(row.Int(7), 2);
  EXPECT_EQ(row.Int(8), 4);
  EXPECT_EQ(row.Double(9), 30);
  EXPECT_EQ(row.Int(10), 1);  // warm-up iterations run, from the metrics
  EXPECT_EQ(row.Int(11), 2);
  EXPECT_EQ(row.Double(12), 12.5);
  EXPECT_TRUE(row.IsNull(13));
  EXPECT_EQ(row.Text(14), "rev9");
  EXPECT_TRUE(row.IsNull(15));
  EXPECT_EQ(row.Text(16), "2023-11-14T22:13:20Z");
}

// Schema 13: the view shows each trial's vae_tile (0: the decode is not tiled) and graph mode.
TEST_F(ResultsDbTest, ResultsViewShowsVaeTileAndGraph) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t campaign =
      db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp", "rev9"), false);
  TrialConfig whole = test::MakeConfig(1, 1, Precision::kBf16, 256);
  whole.scope = Scope::kPipeline;
  TrialConfig tiled = whole;
  tiled.vae_tile = 128;
  db->writer().RecordTrial(campaign, test::MakeTrial(whole, TrialStatus::kOk, 30));
  db->writer().RecordTrial(campaign, test::MakeTrial(tiled, TrialStatus::kOk, 31));
  EXPECT_EQ(QueryText("SELECT group_concat(vae_tile, ',') FROM "
                      "(SELECT vae_tile FROM results ORDER BY vae_tile)"),
            "0,128");
  TrialConfig graphed = whole;
  graphed.graph = GraphMode::kCudaGraph;
  db->writer().RecordTrial(campaign, test::MakeTrial(graphed, TrialStatus::kOk, 29));
  EXPECT_EQ(QueryText("SELECT group_concat(graph, ',') FROM "
                      "(SELECT graph FROM results ORDER BY graph, vae_tile)"),
            "cuda_graph,eager,eager");
}

}  // namespace
}  // namespace ditbench::results_view_test
