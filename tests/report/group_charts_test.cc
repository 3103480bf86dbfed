// The report's per-group charts (report/group_charts.h): what each draws, summarised per
// configuration or per strategy and world size, never one bar or point per trial.
#include "report/group_charts.h"
#include "report/report_assets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ditbench::group_charts_test {
namespace {

ResultRow Row(std::int64_t campaign, std::int64_t ulysses, std::int64_t cfg, double latency_ms,
              std::int64_t seed = 0) {
  ResultRow row;
  row.campaign = campaign;
  row.status = "ok";
  row.model = "pixart-alpha";
  row.ulysses = ulysses;
  row.cfg = cfg;
  row.ring = row.pipefusion = row.dp = 1;
  row.world_size = ulysses * cfg;
  row.latency_ms = latency_ms;
  row.seed = seed;
  row.trial_key = "k" + std::to_string(campaign) + "-" + std::to_string(ulysses) + "-" +
                  std::to_string(cfg) + "-" + std::to_string(seed);
  return row;
}

StageSummary Stages(double iteration, double steps, std::optional<double> decode = {}) {
  StageSummary s;
  s.iteration_ms = iteration;
  s.steps = 2;
  s.steps_ms = steps;
  s.decode_ms = decode;
  return s;
}

TEST(GroupChartsTest, StageChartStacksStagesPerConfigurationWithTheMedianOverSeeds) {
  std::vector<ResultRow> unfolded;
  StagesByTrial stages;
  for (int seed = 0; seed < 3; ++seed) {
    for (int ulysses : {1, 2}) {
      ResultRow row = Row(1, ulysses, 1, 100.0 / ulysses, seed);
      unfolded.push_back(row);
      // seeds 0, 1, 2: steps 60, 70, 80 (over ulysses); decode 10; the rest 5.
      const double steps = (60 + 10 * seed) / ulysses;
      stages[{1, row.trial_key}] = Stages(steps + 15, steps, 10.0);
    }
  }
  // The folded rows of the table, best first: one per configuration.
  const std::vector<ResultRow> rows = {unfolded[1], unfolded[0]};
  const nlohmann::json chart = StageChart("c", "t", rows, unfolded, stages);
  ASSERT_FALSE(chart.is_null());
  EXPECT_EQ(chart["kind"], "stages");
  EXPECT_EQ(chart["labels"], nlohmann::json({"ulysses=2", "1 rank"}));
  ASSERT_EQ(chart["datasets"].size(), 3u);
  EXPECT_EQ(chart["datasets"][0]["label"], "denoising steps");
  EXPECT_EQ(chart["datasets"][0]["data"], nlohmann::json({35.0, 70.0}));  // medians
  EXPECT_EQ(chart["datasets"][1]["label"], "VAE decode");
  EXPECT_EQ(chart["datasets"][1]["data"], nlohmann::json({10.0, 10.0}));
  EXPECT_EQ(chart["datasets"][2]["label"], "rest of the iteration");
  EXPECT_EQ(chart["datasets"][2]["data"], nlohmann::json({5.0, 5.0}));
}

TEST(GroupChartsTest, StageChartSplitsProfiledStepsIntoBlocksAndTheRest) {
  ResultRow row = Row(1, 1, 1, 50);
  StageSummary s = Stages(50, 40);
  s.blocks = 2;
  s.blocks_ms = 30;
  const nlohmann::json chart = StageChart("c", "t", {row}, {row}, {{{1, row.trial_key}, s}});
  ASSERT_EQ(chart["datasets"].size(), 3u);
  EXPECT_EQ(chart["datasets"][0]["label"], "transformer blocks");
  EXPECT_EQ(chart["datasets"][0]["data"][0], 30.0);
  EXPECT_EQ(chart["datasets"][1]["label"], "steps outside blocks");
  EXPECT_EQ(chart["datasets"][1]["data"][0], 10.0);
  EXPECT_EQ(chart["datasets"][2]["data"][0], 10.0);  // rest of the iteration
}

TEST(GroupChartsTest, StageChartIsNullWithoutStageSamples) {
  ResultRow row = Row(1, 1, 1, 50);
  EXPECT_TRUE(StageChart("c", "t", {row}, {row}, {}).is_null());
}

TEST(GroupChartsTest, MemoryChartIsOneLinePerStrategyFromTheOneRankTrial) {
  std::vector<ResultRow> rows;
  for (auto [ulysses, cfg, mem] : std::vector<std::tuple<int, int, double>>{
           {1, 1, 1000}, {2, 1, 600}, {4, 1, 400}, {1, 2, 1000}, {2, 2, 610}}) {
    ResultRow row = Row(1, ulysses, cfg, 100.0 / (ulysses * cfg));
    row.peak_mem_mb = mem;
    rows.push_back(row);
  }
  // Two seeds of ulysses=4: one point, their median.
  rows.push_back(rows[2]);
  rows.back().peak_mem_mb = 420;
  const nlohmann::json chart = MemoryChart("c", "t", rows);
  ASSERT_FALSE(chart.is_null());
  EXPECT_EQ(chart["kind"], "memory");
  ASSERT_EQ(chart["datasets"].size(), 3u);  // cfg, ulysses, ulysses+cfg
  const nlohmann::json& ulysses = chart["datasets"][1];
  EXPECT_EQ(ulysses["label"], "ulysses");
  EXPECT_EQ(ulysses["points"], nlohmann::json::parse(
                                   R"([{"x":1,"y":1000.0},{"x":2,"y":600.0},{"x":4,"y":410.0}])"));
  EXPECT_EQ(chart["datasets"][2]["points"].size(), 2u);  // 1 rank, then 4
}

TEST(GroupChartsTest, MemoryChartIsNullWithoutAMultiRankPeak) {
  ResultRow one = Row(1, 1, 1, 100);
  one.peak_mem_mb = 1000;
  ResultRow two = Row(1, 2, 1, 50);  // no peak recorded
  EXPECT_TRUE(MemoryChart("c", "t", {one, two}).is_null());
}

TEST(GroupChartsTest, OutputErrorChartPlotsErrorAgainstSpeedupPerStrategyAndWorldSize) {
  ResultRow one = Row(1, 1, 1, 100);
  ResultRow two = Row(1, 2, 1, 50);
  two.output_error = 4e-7;
  ResultRow four = Row(1, 4, 1, 40);
  four.output_error = 2e-4;
  ResultRow exact = Row(1, 1, 2, 50);
  exact.output_error = 0;  // an exact strategy: drawn on the axis floor, not dropped
  const nlohmann::json chart = OutputErrorChart("c", "t", {one, two, four, exact});
  ASSERT_FALSE(chart.is_null());
  EXPECT_EQ(chart["kind"], "error");
  // The floor: a decade below the smallest error above 0 (4e-7 -> 1e-8).
  EXPECT_DOUBLE_EQ(chart["zero_floor"].get<double>(), 1e-8);
  ASSERT_EQ(chart["datasets"].size(), 2u);
  EXPECT_EQ(chart["datasets"][0]["label"], "cfg");
  EXPECT_EQ(chart["datasets"][0]["points"],
            nlohmann::json::parse(R"([{"x":2.0,"y":1e-8,"world":2,"exact":true}])"));
  EXPECT_EQ(chart["datasets"][1]["label"], "ulysses");
  EXPECT_EQ(chart["datasets"][1]["points"],
            nlohmann::json::parse(R"([{"x":2.0,"y":4e-7,"world":2,"exact":false},)"
                                  R"({"x":2.5,"y":2e-4,"world":4,"exact":false}])"));
}

TEST(GroupChartsTest, AnOutputErrorOfZeroAloneStillDrawsTheChartOnItsFloor) {
  ResultRow one = Row(1, 1, 1, 100);
  ResultRow two = Row(1, 2, 1, 50);
  two.output_error = 0;
  const nlohmann::json chart = OutputErrorChart("c", "t", {one, two});
  ASSERT_FALSE(chart.is_null());
  EXPECT_DOUBLE_EQ(chart["zero_floor"].get<double>(), 1e-9);
  EXPECT_EQ(chart["datasets"][0]["points"][0]["y"], 1e-9);
  EXPECT_NE(std::string(kChartScript).find("'0 (exact)'"), std::string::npos);
}

// "ulysses" has one colour on the whole page: in the latency bars, the speedup, memory and
// output-error series, whatever other strategies a group has or in which order they come.
TEST(GroupChartsTest, EachStrategyHasOneColourInEveryChart) {
  ResultRow one = Row(1, 1, 1, 100);
  one.peak_mem_mb = 1000;
  ResultRow ulysses = Row(1, 2, 1, 50);
  ulysses.peak_mem_mb = 600;
  ulysses.output_error = 1e-7;
  ResultRow cfg = Row(1, 1, 2, 55);
  cfg.peak_mem_mb = 900;
  cfg.output_error = 0;
  const std::string blue = StrategyColor("ulysses");
  EXPECT_NE(blue, StrategyColor("cfg"));
  EXPECT_NE(blue, StrategyColor("ulysses+pipefusion"));
  for (const auto& rows : {std::vector<ResultRow>{ulysses, cfg, one},
                           std::vector<ResultRow>{ulysses, one}}) {
    const nlohmann::json latency = LatencyChart("c", "t", rows);
    EXPECT_EQ(latency["datasets"][0]["colors"][0], blue);
    for (const nlohmann::json& chart : {SpeedupChart("c", "t", rows), MemoryChart("c", "t", rows),
                                        OutputErrorChart("c", "t", rows)}) {
      bool found = false;
      for (const nlohmann::json& dataset : chart["datasets"]) {
        if (dataset["label"] != "ulysses") continue;
        EXPECT_EQ(dataset["color"], blue) << chart["kind"];
        found = true;
      }
      EXPECT_TRUE(found) << chart["kind"];
    }
  }
  // Two series of one strategy (two campaigns) share the colour and differ in style.
  ResultRow later = Row(2, 2, 1, 45);
  ResultRow later_one = Row(2, 1, 1, 95);
  const nlohmann::json speedup = SpeedupChart("c", "t", {ulysses, one, later, later_one});
  ASSERT_EQ(speedup["datasets"].size(), 2u);
  EXPECT_EQ(speedup["datasets"][0]["color"], speedup["datasets"][1]["color"]);
  EXPECT_NE(speedup["datasets"][0]["style"], speedup["datasets"][1]["style"]);
  // No stage segment takes a strategy's colour.
  for (const char* segment : {"denoising steps", "VAE decode", "rest of the iteration"})
    for (const char* strategy : {"", "ulysses", "ring", "ulysses+ring", "pipefusion", "cfg"})
      EXPECT_NE(StageColor(segment), StrategyColor(strategy));
}

TEST(GroupChartsTest, OutputErrorChartNeedsAnErrorAndABaseline) {
  ResultRow two = Row(1, 2, 1, 50);
  two.output_error = 1e-6;
  EXPECT_TRUE(OutputErrorChart("c", "t", {two}).is_null());  // no 1-rank trial
  EXPECT_TRUE(OutputErrorChart("c", "t", {Row(1, 1, 1, 100), Row(1, 2, 1, 50)}).is_null());
}

TEST(GroupChartsTest, ThousandsOfSeedsGiveOneBarAndOnePointPerConfiguration) {
  std::vector<ResultRow> unfolded;
  StagesByTrial stages;
  for (int seed = 0; seed < 1000; ++seed)
    for (int ulysses : {1, 2, 4, 8}) {
      ResultRow row = Row(1, ulysses, 1, 100.0 / ulysses, seed);
      row.peak_mem_mb = 1000.0 / ulysses;
      row.output_error = ulysses > 1 ? 1e-6 : 0.0;
      stages[{1, row.trial_key}] = Stages(100.0 / ulysses, 90.0 / ulysses);
      unfolded.push_back(row);
    }
  const std::vector<ResultRow> rows(unfolded.begin(), unfolded.begin() + 4);
  EXPECT_EQ(StageChart("c", "t", rows, unfolded, stages)["labels"].size(), 4u);
  EXPECT_EQ(MemoryChart("c", "t", unfolded)["datasets"][0]["points"].size(), 4u);
  EXPECT_EQ(OutputErrorChart("c", "t", unfolded)["datasets"][0]["points"].size(), 3u);
  EXPECT_LT(StageChart("c", "t", rows, unfolded, stages).dump().size(), 1000u);
}

}  // namespace
}  // namespace ditbench::group_charts_test
