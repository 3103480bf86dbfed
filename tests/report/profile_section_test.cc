// The report's profile chart, step chart and profile table (report/profile_section.h).
#include "report/profile_section.h"

#include <gtest/gtest.h>

#include "experiments/trial_identity.h"

namespace ditbench::profile_section_test {
namespace {

ResultRow Row(int ulysses, int pipefusion = 1) {
  ResultRow row;
  row.campaign = 1;
  row.status = "ok";
  row.model = "pixart-alpha";
  row.ulysses = ulysses;
  row.pipefusion = pipefusion;
  row.ring = row.cfg = row.dp = 1;
  row.world_size = ulysses * pipefusion;
  row.latency_ms = 10.0;
  row.pipefusion_warmup_steps = 1;
  row.trial_key = "k" + std::to_string(ulysses) + "-" + std::to_string(pipefusion);
  row.run_dir = "/runs/" + row.trial_key;
  return row;
}

// A rank's profile: `step_ms` per step, of which compute `compute_ms` (no communication).
TraceProfile Profile(double step_ms, double compute_ms) {
  TraceProfile p;
  p.timeline = "host";
  p.total.step_ms = step_ms;
  p.total.compute_ms = compute_ms;
  p.total.idle_ms = step_ms - compute_ms;
  p.top_kernels = {{"aten::mm", compute_ms, 4, false}};
  return p;
}

TEST(ProfileSectionTest, ProfileChartStacksTheSlowestRanksSharesInPercent) {
  ResultRow profiled = Row(2);
  profiled.compute_share = 0.5;
  profiled.comm_share = 0.25;
  profiled.idle_share = 0.25;
  const nlohmann::json chart = ProfileChart("c", "t", {Row(1), profiled});
  ASSERT_FALSE(chart.is_null());
  EXPECT_EQ(chart["kind"], "stages");
  EXPECT_EQ(chart["labels"], nlohmann::json({"ulysses=2"}));
  ASSERT_EQ(chart["datasets"].size(), 3u);
  EXPECT_EQ(chart["datasets"][0]["label"], "compute");
  EXPECT_EQ(chart["datasets"][0]["data"], nlohmann::json({50.0}));
  EXPECT_EQ(chart["datasets"][1]["label"], "exposed communication");
  EXPECT_EQ(chart["datasets"][1]["data"], nlohmann::json({25.0}));
  EXPECT_EQ(chart["datasets"][2]["data"], nlohmann::json({25.0}));
  EXPECT_TRUE(ProfileChart("c", "t", {Row(1)}).is_null());
}

TEST(ProfileSectionTest, StepChartSetsStepZeroAgainstTheSteadyStepsAndNamesSynchronousSteps) {
  const ResultRow one = Row(1), pipe = Row(1, 2);
  StagesByTrial stages;
  stages[{1, one.trial_key}].step_ms = {30, 10, 10, 12};
  stages[{1, pipe.trial_key}].step_ms = {40, 8, 8, 8};
  const nlohmann::json chart = StepChart("c", "t", {one, pipe}, {one, pipe}, stages);
  ASSERT_FALSE(chart.is_null());
  EXPECT_EQ(chart["kind"], "steps");
  ASSERT_EQ(chart["datasets"].size(), 2u);
  EXPECT_EQ(chart["datasets"][0]["label"], "1 rank: step 0 = 3.0x steady");
  EXPECT_EQ(chart["datasets"][0]["points"][3], nlohmann::json({{"x", 3}, {"y", 12.0}}));
  EXPECT_EQ(chart["datasets"][1]["label"],
            "pipefusion=2 (step 0 synchronous): step 0 = 5.0x steady");
}

// A per-step schedule: its high-precision steps are hollow and named in the label, and every
// point says what its step ran.
TEST(ProfileSectionTest, StepChartShowsWhichStepsRanHowUnderASchedule) {
  TrialConfig config;
  config.steps = 4;
  config.attention = AttentionBackend::kMath;
  config.schedule = {1, 1};
  ResultRow row = Row(1);
  row.computation = ComputationJson(config).dump();
  row.step_kernels = {
      {0, "flash", "bf16"}, {1, "math", "bf16"}, {2, "math", "bf16"}, {3, "flash", "bf16"}};
  StagesByTrial stages;
  stages[{1, row.trial_key}].step_ms = {30, 10, 10, 12};
  const nlohmann::json chart = StepChart("c", "t", {row}, {row}, stages);
  ASSERT_FALSE(chart.is_null());
  const nlohmann::json& points = chart["datasets"][0]["points"];
  EXPECT_EQ(chart["datasets"][0]["label"],
            "1 rank attention=math schedule=first1,last1 (hollow: steps 0, 3 in high "
            "precision): step 0 = 3.0x steady");
  EXPECT_EQ(
      points[0],
      nlohmann::json({{"x", 0}, {"y", 30.0}, {"ran", "attention flash · bf16"}, {"hollow", true}}));
  EXPECT_EQ(points[1], nlohmann::json({{"x", 1}, {"y", 10.0}, {"ran", "attention math · bf16"}}));
  EXPECT_TRUE(points[3].value("hollow", false));
}

// Wan 2.2 A14B: the chart marks where the experts switch (once, however many configurations
// switch there), every point names the expert that ran it, and a model of one transformer's
// chart carries no mark.
TEST(ProfileSectionTest, StepChartMarksTheExpertSwitch) {
  ResultRow one = Row(1), two = Row(2);
  for (ResultRow* row : {&one, &two})
    row->step_kernels = {{0, "math", "bf16"},
                         {1, "math", "bf16"},
                         {2, "math", "bf16", false, 1},
                         {3, "math", "bf16", false, 1}};
  StagesByTrial stages;
  stages[{1, one.trial_key}].step_ms = {30, 10, 10, 12};
  stages[{1, two.trial_key}].step_ms = {20, 6, 6, 6};
  const nlohmann::json chart = StepChart("c", "t", {one, two}, {one, two}, stages);
  ASSERT_FALSE(chart.is_null());
  EXPECT_EQ(chart["marks"], nlohmann::json::parse(R"([{"x": 1.5, "label": "expert 1 -> 2"}])"));
  EXPECT_EQ(chart["datasets"][0]["points"][1]["ran"], "attention math · bf16");
  EXPECT_EQ(chart["datasets"][0]["points"][2]["ran"], "expert 2 · attention math · bf16");
  one.step_kernels[2].expert = one.step_kernels[3].expert = 0;
  EXPECT_FALSE(StepChart("c", "t", {one}, {one}, stages).contains("marks"));
}

TEST(ProfileSectionTest, ProfileTableLinksEveryRanksTraceAndNamesAnUnreadableOne) {
  ResultRow row = Row(2);
  row.compute_share = 0.8;
  row.comm_share = 0.0;
  row.idle_share = 0.2;
  row.profile = TrialTrace{{{0, "rank0.trace.json.gz", Profile(4, 3), ""},
                            {1, "rank1.trace.json.gz", Profile(5, 4), ""},
                            {2, "rank2.trace.json.gz", std::nullopt, "bad <trace>"}}};
  const std::string html = RenderProfileTable({Row(1), row});
  EXPECT_NE(html.find("<a href=\"/runs/k2-1/rank0.trace.json.gz\">rank 0</a>"), std::string::npos)
      << html;
  EXPECT_NE(html.find("<a href=\"/runs/k2-1/rank1.trace.json.gz\">rank 1</a>"), std::string::npos);
  EXPECT_NE(html.find("title=\"bad &lt;trace&gt;\">rank 2: -"), std::string::npos) << html;
  // The slowest rank is 1 (5 ms of steps): its numbers and kernels.
  EXPECT_NE(html.find("<td class=\"num\">1</td><td class=\"num\">5.00</td>"), std::string::npos)
      << html;
  EXPECT_NE(html.find("4.00 ms aten::mm"), std::string::npos);
  EXPECT_EQ(RenderProfileTable({Row(1)}), "");
}

}  // namespace
}  // namespace ditbench::profile_section_test
