#include "report/html_report.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>

#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "base/user_error.h"
#include "plan/planner_view.h"
#include "report/chart_style.h"
#include "report/planner_section.h"
#include "report/stage_breakdown.h"
#include "storage/results_db.h"
#include "tests/support/report_html.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::html_report_test {
namespace {

using test::GroupHeading;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

// Two sweeps: "sp" has bf16 trials at 1, 2 and 4 GPUs plus an fp16 trial at 2 GPUs (no fp16
// baseline) and a failed trial; "other" has one trial.
class HtmlReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = ResultsDb::Open(DbPath());
    sp_ = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), false);
    db->writer().RecordTrial(sp_, test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 100));
    db->writer().RecordTrial(sp_, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 50));
    db->writer().RecordTrial(sp_, test::MakeTrial(test::MakeConfig(4), TrialStatus::kOk, 40));
    db->writer().RecordTrial(
        sp_, test::MakeTrial(test::MakeConfig(2, 1, Precision::kFp16), TrialStatus::kOk, 40));
    db->writer().RecordTrial(sp_, test::MakeTrial(test::MakeConfig(2, 2), TrialStatus::kOom, 0,
                                                  "CUDA out of memory <script>alert(1)</script>"));
    db->writer().FinishCampaign(sp_);
    other_ = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("other"), false);
    db->writer().RecordTrial(other_, test::MakeTrial(test::MakeConfig(8, 1, Precision::kBf16, 512),
                                                     TrialStatus::kOk, 7));
  }

  std::filesystem::path DbPath() const { return dir_ / "results.db"; }

  std::string Render(std::vector<std::string> sweeps = {},
                     std::vector<std::int64_t> campaigns = {}) {
    return RenderHtmlReport({DbPath(), std::move(sweeps), std::move(campaigns), {}, {}});
  }

  // The <tr> of one trial.
  static std::string RowOf(const std::string& html, std::int64_t campaign,
                           const TrialConfig& config) {
    std::string id = "id=\"trial-" + std::to_string(campaign) + "-" + TrialKey(config) + "\"";
    std::size_t start = html.find(id);
    if (start == std::string::npos) return "";
    return html.substr(start, html.find("</tr>", start) - start);
  }

  test::TempDir dir_;
  std::int64_t sp_ = 0, other_ = 0;
};

TEST_F(HtmlReportTest, ChartJsIsInlinedAndNothingLoadsFromTheNetwork) {
  std::string html = Render();
  EXPECT_THAT(html, HasSubstr("Chart.js v3.9.1"));
  EXPECT_THAT(html, HasSubstr("new Chart(canvas"));
  EXPECT_THAT(html, Not(HasSubstr("<script src")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  EXPECT_THAT(html, HasSubstr("<canvas id=\"chart-0\">"));
  EXPECT_THAT(html, HasSubstr("\"ulysses=2\""));
}

TEST_F(HtmlReportTest, TableListsEveryTrialWithStatusAndEscapedError) {
  std::string html = Render();
  for (int ulysses : {1, 2, 4}) {
    EXPECT_THAT(RowOf(html, sp_, test::MakeConfig(ulysses)), HasSubstr("status-ok"));
  }
  std::string oom = RowOf(html, sp_, test::MakeConfig(2, 2));
  EXPECT_THAT(oom, HasSubstr(">oom<"));
  EXPECT_THAT(oom, HasSubstr("CUDA out of memory &lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<script>alert(1)")));
  std::string fastest = RowOf(html, sp_, test::MakeConfig(4));
  EXPECT_THAT(fastest, HasSubstr(">40.00<"));
  EXPECT_THAT(fastest, HasSubstr(">39.00 – 41.00 (50% only)<"));
  EXPECT_THAT(fastest, HasSubstr(">250<"));  // peak memory: 1000 MB / 4 ranks
}

TEST_F(HtmlReportTest, SpeedupIsAgainstOneGpuTrialOfTheSamePrecisionOnly) {
  std::string html = Render();
  EXPECT_THAT(RowOf(html, sp_, test::MakeConfig(2)), HasSubstr(">2.00x<"));
  EXPECT_THAT(RowOf(html, sp_, test::MakeConfig(2)), HasSubstr(">100%<"));  // efficiency
  EXPECT_THAT(RowOf(html, sp_, test::MakeConfig(4)), HasSubstr(">2.50x<"));
  EXPECT_THAT(RowOf(html, sp_, test::MakeConfig(1)), HasSubstr(">1.00x<"));
  // fp16 at 40 ms would read 2.50x against the bf16 baseline: it must show no speedup.
  std::string fp16 = RowOf(html, sp_, test::MakeConfig(2, 1, Precision::kFp16));
  ASSERT_FALSE(fp16.empty());
  EXPECT_THAT(fp16, HasSubstr("class=\"num speedup\">-<"));
  EXPECT_THAT(html, HasSubstr("No 1-rank trial of this precision and scope"));
}

// A Planner view made by hand: what the report draws from it (its data: plan/planner_view.h).
PlannerView HandMadeView() {
  PlannerView view;
  DeviceFit fit;
  fit.device = "cpu";
  fit.fitted = "cost model fitted on 12 ok trials of 'cpu' (residual 4.0%)";
  fit.trials = 12;
  fit.predicted = 2;
  fit.points = {{"k1", "pixart-alpha · 1024 px · bf16 · 1 rank (k1)", "", 100, 97, 80, 120},
                {"k2", "pixart-alpha · 1024 px · bf16 · ulysses=2 (k2)", "ulysses", 50,
                 54.512345678, 45, 66}};
  fit.median_abs_error = 0.03;
  fit.max_abs_error = 0.09;
  fit.worst = "pixart-alpha · 1024 px · bf16 · ulysses=2 (k2)";
  view.devices.push_back(fit);
  GroupRecommendation r;
  r.device = "cpu";
  r.layout = "ulysses=4";
  r.trial_key = TrialKey(test::MakeConfig(4));
  r.measured = false;
  r.latency_ms = 38;
  r.low_ms = 30;
  r.high_ms = 47;
  r.regret = -0.05;
  r.to_measure = {"ulysses=4 (" + r.trial_key + ")", "ring=4 (k9)"};
  r.ranked = 6;
  r.below_quality = {"pipefusion=2 (k7): psnr 24.8 < 35"};
  view.groups[ReportGroupOf(test::MakeConfig(4)).Text()].push_back(r);
  return view;
}

TEST_F(HtmlReportTest, ThePlannerSectionDrawsPredictedAgainstMeasuredAndEachGroupsAdvice) {
  ReportOptions options{DbPath(), {}, {}, {}, {}};
  std::size_t rows_seen = 0;
  options.planner = [&](PlannerHistory&, const std::vector<CampaignInfo>& campaigns,
                        const std::vector<ResultRow>& rows) {
    EXPECT_EQ(campaigns.size(), 2u);
    rows_seen = rows.size();
    return HandMadeView();
  };
  const std::string html = RenderHtmlReport(options);
  EXPECT_EQ(rows_seen, 6u);  // the report's rows, failed ones included
  EXPECT_THAT(html, HasSubstr("<a href=\"#planner\">"));
  EXPECT_THAT(html, HasSubstr("<section id=\"planner\">"));
  // The scatter: one dataset per strategy in the page's colour, points with their interval
  // and label (numbers to 4 significant digits), the identity line over every point.
  EXPECT_THAT(html, HasSubstr("\"kind\":\"prediction\""));
  EXPECT_THAT(html, HasSubstr("{\"color\":\"" + StrategyColor("ulysses") +
                              "\",\"label\":\"ulysses\""));
  EXPECT_THAT(html, HasSubstr("\"hi\":66.0,\"label\":\"pixart-alpha · 1024 px · bf16 · "
                              "ulysses=2 (k2)\",\"lo\":45.0,\"x\":54.51,\"y\":50.0"));
  // The axes span the points (predicted and measured), not their intervals.
  EXPECT_THAT(html, HasSubstr("\"identity_high\":100.0,\"identity_low\":50.0"));
  EXPECT_THAT(html, HasSubstr("prediction: prediction"));  // the chart script draws the kind
  EXPECT_THAT(html, HasSubstr("Leave-one-out error over 2 of 12 trials: median 3.0%, worst "
                              "9.0% (pixart-alpha · 1024 px · bf16 · ulysses=2 (k2))."));
  // The recommendation sits in its group's section, and only there.
  const std::size_t bf16 = GroupHeading(html, "pixart-alpha · 1024 px · bf16");
  ASSERT_NE(bf16, std::string::npos);
  const std::size_t advice = html.find("<p class=\"recommendation\">");
  ASSERT_NE(advice, std::string::npos);
  EXPECT_GT(advice, bf16);
  EXPECT_LT(advice, html.find("<h2", bf16 + 1));
  EXPECT_EQ(html.find("<p class=\"recommendation\">", advice + 1), std::string::npos);
  const std::string line = html.substr(advice, html.find("</p>", advice) - advice);
  EXPECT_THAT(line, HasSubstr("<strong>ulysses=4</strong>"));
  EXPECT_THAT(line, HasSubstr("predicted 38 ms [95%: 30 – 47]"));
  EXPECT_THAT(line, HasSubstr("regret against the best measured trial -5.0%"));
  EXPECT_THAT(line, HasSubstr("measure next to decide: ulysses=4 ("));
  EXPECT_THAT(line, HasSubstr("ring=4 (k9)"));
  EXPECT_THAT(line, HasSubstr("<span class=\"below\">not recommended, below quality</span>: "
                              "pipefusion=2 (k7): psnr 24.8 &lt; 35"));
}

// A fit of few trials gave one prediction a 95% interval of millions of ms, and the axes ran to
// 5,000,000 ms with every point in one corner (issue 51): the axes span the points, and the
// interval is kept for the chart script to cut at the plot's edge.
TEST(PredictionChartTest, AnIntervalOfMillionsOfMsLeavesTheAxesOnThePoints) {
  DeviceFit fit;
  fit.device = "cpu";
  fit.points = {{"a", "1 rank (a)", "", 600, 500, 0.01, 5'000'000},
                {"b", "ulysses=2 (b)", "ulysses", 800, 900, 700, 1000}};
  const nlohmann::json chart = PredictionChart(fit, "chart-0");
  EXPECT_EQ(chart["identity_low"], 500.0);
  EXPECT_EQ(chart["identity_high"], 900.0);
  EXPECT_EQ(chart["datasets"][0]["points"][0]["hi"], 5'000'000.0);
  EXPECT_EQ(chart["datasets"][0]["points"][0]["lo"], 0.01);
}

TEST_F(HtmlReportTest, ARefusedFitIsOneSentenceWithNoChart) {
  ReportOptions options{DbPath(), {}, {}, {}, {}};
  options.planner = [](PlannerHistory&, const std::vector<CampaignInfo>&,
                       const std::vector<ResultRow>&) {
    PlannerView view;
    DeviceFit refused;
    refused.device = "cpu";
    refused.refused = "4 ok trials of it in the database, a fit needs 8";
    view.devices.push_back(refused);
    return view;
  };
  const std::string html = RenderHtmlReport(options);
  EXPECT_THAT(html, HasSubstr("<p class=\"planner-refused\">No cost model for 'cpu': 4 ok "
                              "trials of it in the database, a fit needs 8.</p>"));
  EXPECT_THAT(html, Not(HasSubstr("\"kind\":\"prediction\"")));
  EXPECT_THAT(html, Not(HasSubstr("Leave-one-out error")));
}

// Fitted on exactly enough trials, no trial can be left out and still fitted: the page says
// why the chart is missing (the quick start's 8 trials read "fitted" then nothing before).
TEST_F(HtmlReportTest, AFitTooSmallToLeaveOneOutSaysWhyItHasNoChart) {
  ReportOptions options{DbPath(), {}, {}, {}, {}};
  options.planner = [](PlannerHistory&, const std::vector<CampaignInfo>&,
                       const std::vector<ResultRow>&) {
    PlannerView view;
    DeviceFit fit;
    fit.device = "cpu";
    fit.fitted = "cost model fitted on 8 ok trials of 'cpu'";
    fit.trials = 8;
    view.devices.push_back(fit);
    return view;
  };
  const std::string html = RenderHtmlReport(options);
  EXPECT_THAT(html, HasSubstr("No trial could be predicted from the others: leaving one out "
                              "leaves 7 trials, too few for a fit"));
  EXPECT_THAT(html, Not(HasSubstr("\"kind\":\"prediction\"")));
}

TEST_F(HtmlReportTest, WithoutAPlannerThereIsNoPlannerSection) {
  const std::string html = Render();
  EXPECT_THAT(html, Not(HasSubstr("id=\"planner\"")));
  EXPECT_THAT(html, Not(HasSubstr("class=\"recommendation\"")));
}

TEST_F(HtmlReportTest, TheReportCommandsPlannerRefusesAFitOnFiveTrials) {
  // What `ditbench report` passes (cli/report_command.cc): the database's 5 ok trials of 'cpu'
  // are too few for the cost model, so the section says so and draws nothing, and no group
  // has a recommendation.
  ReportOptions options{DbPath(), {}, {}, {}, {}, BuildPlannerView};
  const std::string html = RenderHtmlReport(options);
  EXPECT_THAT(html, HasSubstr("<a href=\"#planner\">"));
  EXPECT_THAT(html, HasSubstr("No cost model for 'cpu': 5 ok trials of it in the database, a "
                              "fit needs 8."));
  EXPECT_THAT(html, Not(HasSubstr("\"kind\":\"prediction\"")));
  EXPECT_THAT(html, Not(HasSubstr("class=\"recommendation\"")));
}

TEST(HtmlReportOutputErrorTest, OutputErrorAndCommunicationAreShownPerTrial) {
  test::TempDir dir;
  auto db = ResultsDb::Open(dir / "results.db");
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("pf"), false);
  TrialConfig pipefusion = test::MakeConfig(1);
  pipefusion.pipefusion = 2;
  TrialRecord trial = test::MakeTrial(pipefusion, TrialStatus::kOk, 60);
  trial.metrics->output_error = 0.00023;
  trial.metrics->comm_mb_per_step = 18.0;
  db->writer().RecordTrial(campaign, trial);
  db.reset();
  const std::string html = RenderHtmlReport({dir / "results.db", {}, {}, {}, {}});
  EXPECT_NE(html.find("output error</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num output-error\">0.00023</td>"), std::string::npos);
  EXPECT_NE(html.find(", 18.0 MiB sent per step"), std::string::npos);
}

TEST(HtmlReportSuperlinearTest, SpeedupAboveTheWorldSizeIsWarnedAbout) {
  test::TempDir dir;
  auto db = ResultsDb::Open(dir / "results.db");
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("s"), false);
  db->writer().RecordTrial(campaign, test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 600));
  db->writer().RecordTrial(campaign,
                           test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 100));  // 6x
  db->writer().RecordTrial(campaign,
                           test::MakeTrial(test::MakeConfig(4), TrialStatus::kOk, 200));  // 3x
  db.reset();
  const std::string html = RenderHtmlReport({dir / "results.db", {}, {}, {}, {}});
  EXPECT_NE(html.find("1 trial(s) are faster than their 1-rank baseline by more than their "
                      "world size"), std::string::npos);
  EXPECT_NE(html.find("6.00x on 2 ranks"), std::string::npos);
  EXPECT_EQ(html.find("on 4 ranks against"), std::string::npos);  // 3x on 4 ranks is plausible
}

TEST(HtmlReportPackedTest, TrialsPackedBesideOthersAreListed) {
  test::TempDir dir;
  auto db = ResultsDb::Open(dir / "results.db");
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("s"), false);
  TrialRecord packed = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 100);
  packed.placement = {{"slots", {1}}, {"concurrent_trials", 3}};
  db->writer().RecordTrial(campaign, packed);
  TrialRecord alone = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 60);
  alone.placement = {{"slots", {0, 1}}, {"concurrent_trials", 0}};
  db->writer().RecordTrial(campaign, alone);
  db.reset();
  const std::string html = RenderHtmlReport({dir / "results.db", {}, {}, {}, {}});
  EXPECT_NE(html.find("1 trial(s) ran packed beside other trials"), std::string::npos);
  EXPECT_NE(html.find(TrialKey(test::MakeConfig(1)) + " (campaign 1, "), std::string::npos);
  EXPECT_NE(html.find("beside 3 other trial(s)"), std::string::npos);
  EXPECT_EQ(html.find(TrialKey(test::MakeConfig(2)) + " (campaign 1, "), std::string::npos);
}

TEST(HtmlReportBusyTest, TrialsMeasuredOnABusyMachineAreMarkedAndWarnedAbout) {
  test::TempDir dir;
  auto db = ResultsDb::Open(dir / "results.db");
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("s"), false);
  TrialRecord slowed = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 600);
  slowed.health = {{"busy", true}, {"note", "load 3.00 on 2 cores; others used 1.00 cores"}};
  db->writer().RecordTrial(campaign, slowed);
  TrialRecord idle = test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 100);
  idle.health = {{"busy", false}};
  db->writer().RecordTrial(campaign, idle);
  db.reset();
  const std::string html = RenderHtmlReport({dir / "results.db", {}, {}, {}, {}});
  EXPECT_NE(html.find("1 trial(s) were measured while other work ran on the machine"),
            std::string::npos);
  EXPECT_NE(html.find("load 3.00 on 2 cores; others used 1.00 cores"), std::string::npos);
  // The row itself carries the mark; the superlinear "speedup" names its busy baseline.
  std::size_t marks = 0;
  for (std::size_t at = html.find("class=\"busy\""); at != std::string::npos;
       at = html.find("class=\"busy\"", at + 1))
    ++marks;
  EXPECT_EQ(marks, 1u);
  EXPECT_NE(html.find("against " + TrialKey(test::MakeConfig(1)) + ", measured on a busy machine"),
            std::string::npos);
}

TEST_F(HtmlReportTest, HeaderNamesSweepsCampaignsBuildAndStatusCounts) {
  std::string html = Render();
  EXPECT_THAT(html, HasSubstr("ditbench report: other, sp"));
  EXPECT_THAT(html, HasSubstr("abc1234"));
  EXPECT_THAT(html, HasSubstr("testhost"));
  // One row per status, then the total.
  EXPECT_THAT(html, ContainsRegex("<tr><td class=\"status-ok\">ok</td><td class=\"num\">[0-9]+"
                                  "</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>total</td><td class=\"num\">6</td></tr>"));
  EXPECT_THAT(html, HasSubstr("has not finished"));  // campaign "other"
}

TEST_F(HtmlReportTest, SweepAndCampaignFiltersSelectCampaigns) {
  std::string sp_only = Render({"sp"});
  EXPECT_FALSE(RowOf(sp_only, sp_, test::MakeConfig(1)).empty());
  EXPECT_TRUE(RowOf(sp_only, other_, test::MakeConfig(8, 1, Precision::kBf16, 512)).empty());
  std::string other_only = Render({}, {other_});
  EXPECT_TRUE(RowOf(other_only, sp_, test::MakeConfig(1)).empty());
  EXPECT_FALSE(RowOf(other_only, other_, test::MakeConfig(8, 1, Precision::kBf16, 512)).empty());
}

TEST_F(HtmlReportTest, UnknownSweepOrCampaignIsAnError) {
  EXPECT_THROW(Render({"nope"}), UserError);
  EXPECT_THROW(Render({}, {999}), UserError);
  try {
    Render({"nope"});
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no sweep named 'nope'"));
    EXPECT_THAT(e.what(), HasSubstr("known: other, sp"));
  }
}

TEST_F(HtmlReportTest, ChartDataCannotCloseItsScriptElement) {
  {
    auto db = ResultsDb::Open(DbPath());
    TrialConfig config = test::MakeConfig(1);
    config.model = "evil</script><b>";
    db->writer().RecordTrial(sp_, test::MakeTrial(config, TrialStatus::kOk, 10));
  }
  std::string html = Render();
  EXPECT_THAT(html, Not(HasSubstr("evil</script>")));
  EXPECT_THAT(html, HasSubstr("evil&lt;/script&gt;&lt;b&gt;"));   // in the table heading
  EXPECT_THAT(html, HasSubstr("evil\\u003c/script\\u003e"));     // in the chart JSON
}

TEST_F(HtmlReportTest, WriteHtmlReportWritesTheFileAndLeavesNoTemporary) {
  std::filesystem::path out = dir_ / "report.html";
  WriteHtmlReport({DbPath(), {}, {}, out, {}});
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("</html>"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "report.html.tmp"));
  EXPECT_THROW(WriteHtmlReport({DbPath(), {}, {}, dir_ / "missing" / "r.html", {}}),
               std::runtime_error);
}

TEST_F(HtmlReportTest, MissingDatabaseIsAnError) {
  EXPECT_THROW(RenderHtmlReport({dir_ / "none.db", {}, {}, {}, {}}), StorageError);
}

}  // namespace
}  // namespace ditbench::html_report_test

namespace ditbench::html_report_test {
namespace {

TEST(HtmlReportThrottleTest, ThrottledTrialsAreWarnedAbout) {
  test::TempDir dir;
  {
    auto db = ResultsDb::Open(dir / "results.db");
    auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("hot"), false);
    TrialRecord hot = test::MakeTrial(test::MakeConfig(1), TrialStatus::kOk, 10);
    hot.metrics->throttled = true;
    db->writer().RecordTrial(id, hot);
    db->writer().RecordTrial(id, test::MakeTrial(test::MakeConfig(2), TrialStatus::kOk, 6));
    db->writer().FinishCampaign(id);
  }
  const std::string html = RenderHtmlReport({dir / "results.db", {}, {}, {}, {}});
  EXPECT_NE(html.find("1 trial(s) ran while the GPU throttled"), std::string::npos);
  EXPECT_NE(html.find(TrialKey(test::MakeConfig(1))), std::string::npos);
}

}  // namespace
}  // namespace ditbench::html_report_test

namespace ditbench::html_report_test {
namespace {

TEST(StageBreakdownTest, BlocksAndStepsAreSummarisedFromTheSlowestRank) {
  test::TempDir dir;
  TrialConfig config = test::MakeConfig(2);
  {
    auto db = ResultsDb::Open(dir / "results.db");
    auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("stages"), false);
    TrialRecord trial = test::MakeTrial(config, TrialStatus::kOk, 10);
    trial.samples.clear();
    for (int rank = 0; rank < 2; ++rank)
      for (int it = 0; it < 3; ++it) {
        const bool warmup = it == 0;
        const double slow = rank == 1 ? 1.0 : 0.0;  // rank 1 is 1 ms slower per block
        trial.samples.push_back({rank, it, "iteration", 30 + 2 * slow, warmup});
        for (int step = 0; step < 2; ++step) {
          trial.samples.push_back({rank, it, fmt::format("step:{}", step), 14 + slow, warmup});
          trial.samples.push_back({rank, it, fmt::format("step:{}/block:0", step), 4 + slow, warmup});
          trial.samples.push_back({rank, it, fmt::format("step:{}/block:1", step), 6, warmup});
        }
        trial.samples.push_back({rank, it, "decode", 7 + slow, warmup});  // scope pipeline
      }
    db->writer().RecordTrial(id, trial);
  }
  auto db = ResultsDb::Open(dir / "results.db", true);
  auto summaries = SummarizeStages(db->reader(), {{1, TrialKey(config), "u2", "", {}, ""}});
  ASSERT_EQ(summaries.size(), 1u);
  const StageSummary& s = summaries[0].second;
  EXPECT_DOUBLE_EQ(s.iteration_ms, 32);
  EXPECT_EQ(s.steps, 2);
  EXPECT_DOUBLE_EQ(s.steps_ms, 30);
  EXPECT_EQ(s.blocks, 2);
  EXPECT_DOUBLE_EQ(s.blocks_ms, 22);  // (5 + 6) per step, slowest rank
  EXPECT_EQ(s.slowest_block, 1);
  EXPECT_DOUBLE_EQ(s.slowest_block_ms, 12);
  ASSERT_TRUE(s.decode_ms);
  EXPECT_DOUBLE_EQ(*s.decode_ms, 8);  // the VAE decode, slowest rank
  const std::string html = RenderHtmlReport({dir / "results.db", {}, {}, {}, {}});
  EXPECT_NE(html.find("<th class=\"num\">VAE decode ms</th>"), std::string::npos);
  // The decode's share of the 32 ms iteration.
  EXPECT_NE(html.find("<td class=\"num\">8.000</td><td class=\"num decode-share\">25%</td>"
                      "<td class=\"num decode-speedup\">-</td></tr>"),  // no 1-rank trial
            std::string::npos);
  EXPECT_NE(html.find("Stage breakdown"), std::string::npos);
  EXPECT_NE(html.find("block 1 (12.000 ms over all steps)"), std::string::npos);
  // Its rows name the group (model, resolution, precision, scope), not only the degrees.
  const std::size_t section = html.find("Stage breakdown");
  EXPECT_NE(html.find("pixart-alpha 1024px bf16 denoise steps=20 ulysses=2", section),
            std::string::npos);
}

// vae_parallel: the stage breakdown shows each trial's decode speed-up over the 1-rank trial's
// decode (decode_ms), beside its share.
TEST(StageBreakdownTest, ASplitDecodeShowsItsSpeedupOverTheOneRankTrialsDecode) {
  test::TempDir dir;
  {
    auto db = ResultsDb::Open(dir / "results.db");
    auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("split"), false);
    for (int ranks : {1, 2}) {
      TrialConfig config = test::MakeConfig(ranks);
      config.scope = Scope::kPipeline;
      config.vae_parallel = ranks;
      const double decode = ranks == 1 ? 30 : 15;
      TrialRecord trial = test::MakeTrial(config, TrialStatus::kOk, 20 + decode);
      trial.samples.clear();
      for (int rank = 0; rank < ranks; ++rank)
        for (int it = 0; it < 3; ++it) {
          trial.samples.push_back({rank, it, "iteration", 20 + decode, it == 0});
          trial.samples.push_back({rank, it, "decode", decode, it == 0});
        }
      trial.metrics->extra["decode_ms"] = decode;
      db->writer().RecordTrial(id, trial);
    }
  }
  const std::string html = RenderHtmlReport({dir / "results.db", {}, {}, {}, {}});
  EXPECT_NE(html.find(">decode speed-up</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num decode-speedup\">2.00x</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num decode-speedup\">1.00x</td>"), std::string::npos);
  EXPECT_NE(html.find("ulysses=2 vae_parallel=2"), std::string::npos);
}

TEST(StageBreakdownTest, EveryOkLaunchCountsWithTheMedianPerStageOverLaunches) {
  test::TempDir dir;
  TrialConfig config = test::MakeConfig(1);
  // Launch i: step 0 takes step_ms[i] and decode decode_ms[i] in every timed iteration.
  const double step_ms[] = {10, 30, 20, 1000};
  const double decode_ms[] = {5, 4, 9, 1000};
  auto launch = [&](int i, TrialStatus status) {
    TrialRecord trial = test::MakeTrial(config, status, 40);
    trial.launch = i;
    trial.replicates = 4;
    trial.samples.clear();
    for (int it = 0; it < 3; ++it) {
      trial.samples.push_back({0, it, "iteration", 40, it == 0});
      trial.samples.push_back({0, it, "step:0", step_ms[i], it == 0});
      trial.samples.push_back({0, it, "decode", decode_ms[i], it == 0});
    }
    if (status != TrialStatus::kOk) trial.metrics.reset();
    return trial;
  };
  {
    auto db = ResultsDb::Open(dir / "results.db");
    auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("stages"), false);
    const TrialRecord first = launch(0, TrialStatus::kOk);
    db->writer().RecordTrial(id, first);
    for (int i = 1; i < 3; ++i)
      db->writer().RecordLaunch(id, launch(i, TrialStatus::kOk),
                                {TrialStatus::kOk, "", first.metrics});
    // A failed launch's samples are left out.
    db->writer().RecordLaunch(id, launch(3, TrialStatus::kFailed),
                              {TrialStatus::kOk, "", first.metrics});
  }
  auto db = ResultsDb::Open(dir / "results.db", true);
  auto summaries = SummarizeStages(db->reader(), {{1, TrialKey(config), "1 rank", "", {}, ""}});
  ASSERT_EQ(summaries.size(), 1u);
  const StageSummary& s = summaries[0].second;
  EXPECT_DOUBLE_EQ(s.steps_ms, 20);  // median of 10, 30 and 20; launch 0 alone: 10
  EXPECT_DOUBLE_EQ(s.first_step_ms, 20);
  ASSERT_TRUE(s.decode_ms);
  EXPECT_DOUBLE_EQ(*s.decode_ms, 5);  // median of 5, 4 and 9
  EXPECT_DOUBLE_EQ(s.iteration_ms, 40);
}

TEST(StageBreakdownTest, LaunchesTimingDifferentStagesEachCountWhereTheyTimedIt) {
  std::vector<std::vector<Sample>> launches = {
      {{0, 1, "iteration", 10, false}, {0, 1, "step:0", 8, false}},
      {{0, 1, "iteration", 14, false}, {0, 1, "step:0", 12, false},
       {0, 1, "decode", 2, false}}};
  const auto s = SummarizeLaunchStages(launches);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->iteration_ms, 12);
  EXPECT_DOUBLE_EQ(s->steps_ms, 10);
  ASSERT_TRUE(s->decode_ms);
  EXPECT_DOUBLE_EQ(*s->decode_ms, 2);
  EXPECT_FALSE(SummarizeLaunchStages({{{0, 1, "iteration", 10, false}}}));
  EXPECT_FALSE(SummarizeLaunchStages({}));
}

TEST(StageBreakdownTest, SeedsOfOneConfigurationAreOneRowWithTheMedianOfEachColumn) {
  StageSummaries summaries;
  for (double iteration : {10.0, 90.0, 20.0}) {
    StageSummary s;
    s.iteration_ms = iteration;
    s.steps = 2;
    s.steps_ms = iteration / 2;
    summaries.push_back({{1, fmt::format("key{}", iteration), "u2", "u2-config", {}, ""}, s});
  }
  StageSummary other;
  other.iteration_ms = 7;
  summaries.push_back({{1, "single", "u4", "u4-config", {}, ""}, other});
  const std::string html = RenderStageBreakdown(summaries);
  auto count = [&](const std::string& needle) {
    int n = 0;
    for (std::size_t at = html.find(needle); at != std::string::npos;
         at = html.find(needle, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("<tr>"), 3) << html;  // the header, the folded row, the single one
  EXPECT_THAT(html, HasSubstr("<code>key10 … (3 seeds)</code>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\">20.000</td>"));  // median iteration
  EXPECT_THAT(html, Not(HasSubstr("90.000")));
  EXPECT_THAT(html, HasSubstr("<code>single</code>"));
}

TEST_F(HtmlReportTest, BaselineComparisonSortsByEffectAndColoursVerdicts) {
  auto db = ResultsDb::Open(DbPath());
  const std::vector<double> base = {10, 10.1, 9.9, 10.05, 9.95, 10.02};
  std::vector<double> doubled;
  for (double ms : base) doubled.push_back(2 * ms);
  const TrialConfig one = test::MakeConfig(1, 1, Precision::kBf16, 256);
  const TrialConfig two = test::MakeConfig(2, 1, Precision::kBf16, 256);
  std::int64_t a = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("ab", "abc"), true);
  db->writer().RecordTrial(a, test::MakeTrialWithSamples(one, base));
  db->writer().RecordTrial(a, test::MakeTrialWithSamples(two, base));
  std::int64_t b = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("ab", "def"), true);
  db->writer().RecordTrial(b, test::MakeTrialWithSamples(one, base));
  db->writer().RecordTrial(b, test::MakeTrialWithSamples(two, doubled));

  ReportOptions options{DbPath(), {}, {b}, {}, std::to_string(a)};
  const std::string html = RenderHtmlReport(options);
  const std::size_t section = html.find("<h2 id=\"comparison\">Comparison: campaign " +
                                        std::to_string(a) + " (baseline) vs " +
                                        std::to_string(b) + "</h2>");
  ASSERT_NE(section, std::string::npos);
  // Each side named by date and build too.
  EXPECT_THAT(html, ContainsRegex("Baseline: #" + std::to_string(a) + " [0-9-]+ [0-9:]+ abc\\. "
                                  "Candidate: #" + std::to_string(b) + " [0-9-]+ [0-9:]+ def\\."));
  EXPECT_THAT(html, HasSubstr("<td>build</td><td>abc</td><td>def</td>"));
  const std::size_t slower = html.find("<td class=\"verdict verdict-slower\">slower</td>", section);
  const std::size_t same = html.find("<td class=\"verdict verdict-same\">same</td>", section);
  ASSERT_NE(slower, std::string::npos);
  ASSERT_NE(same, std::string::npos);
  EXPECT_LT(slower, same);  // most slowed down first
  EXPECT_THAT(html, HasSubstr("+100.0%"));
  EXPECT_THAT(html, HasSubstr(".verdict-slower {"));

  // A baseline that is the only selected campaign leaves nothing to compare.
  ReportOptions alone{DbPath(), {}, {a}, {}, std::to_string(a)};
  EXPECT_THROW(RenderHtmlReport(alone), UserError);
  ReportOptions unknown{DbPath(), {}, {b}, {}, "99"};
  EXPECT_THROW(RenderHtmlReport(unknown), UserError);
}

TEST_F(HtmlReportTest, EveryRowShowsTheCommandThatRunsItsTrialAgain) {
  const std::string html = Render();
  // Each trial's row names its campaign's sweep file and its own key.
  for (const TrialConfig& config : {test::MakeConfig(1), test::MakeConfig(2, 2)}) {
    EXPECT_THAT(RowOf(html, sp_, config),
                HasSubstr("<div class=\"reproduce\"><code>ditbench run sweeps/sp.yaml --only " +
                          TrialKey(config) + " --db " + ShellWord(DbPath().string()) +
                          "</code></div>"));
  }
  EXPECT_THAT(RowOf(html, other_, test::MakeConfig(8, 1, Precision::kBf16, 512)),
              HasSubstr("ditbench run sweeps/other.yaml --only "));
}

TEST(ReproduceCommandTest, SweepPathIsQuotedForTheShellOnlyWhenItNeedsIt) {
  EXPECT_EQ(ReproduceCommand({"sweeps/a-b_1.yaml", "", "", ""}, "0123456789abcdef"),
            "ditbench run sweeps/a-b_1.yaml --only 0123456789abcdef");
  EXPECT_EQ(ReproduceCommand({"my sweeps/it's.yaml", "", "", ""}, "k"),
            "ditbench run 'my sweeps/it'\\''s.yaml' --only k");
}

// Without the campaign's --db and --gpus, `run` reads another database, or plans for this
// machine's GPUs, where a CPU trial's key does not exist ("not a trial key").
TEST(ReproduceCommandTest, TheCommandNamesTheDatabaseAndTheGpusTheCampaignRanWith) {
  CampaignInfo campaign;
  campaign.record.sweep_path = "s.yaml";
  campaign.record.environment = {{"gpus", "cpu:4"}, {"launcher", "local"}};
  EXPECT_EQ(ReproduceCommand(CampaignRunOf(campaign, "my results.db"), "k"),
            "ditbench run s.yaml --only k --db 'my results.db' --gpus cpu:4");
  campaign.record.environment = {{"gpus", "auto"}, {"launcher", "slurm"}};
  EXPECT_EQ(ReproduceCommand(CampaignRunOf(campaign, "r.db"), "k"),
            "ditbench run s.yaml --only k --db r.db --launcher slurm");
  campaign.record.environment = nlohmann::json();  // an old campaign that recorded neither
  EXPECT_EQ(ReproduceCommand(CampaignRunOf(campaign, "r.db"), "k"),
            "ditbench run s.yaml --only k --db r.db");
}

TEST_F(HtmlReportTest, ComparisonRowsShowTheCommandThatRunsTheCandidateAgain) {
  auto db = ResultsDb::Open(DbPath());
  const TrialConfig one = test::MakeConfig(1, 1, Precision::kBf16, 256);
  std::int64_t a = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("ab", "abc"), true);
  db->writer().RecordTrial(a, test::MakeTrialWithSamples(one, {10, 10.1, 9.9, 10.05}));
  CampaignRecord candidate = test::MakeCampaign("ab", "def");
  candidate.sweep_path = "/home/me/ab-new.yaml";
  std::int64_t b = db->writer().ResumeOrCreateCampaign(candidate, true);
  db->writer().RecordTrial(b, test::MakeTrialWithSamples(one, {10, 10.1, 9.9, 10.05}));
  const std::string html = RenderHtmlReport({DbPath(), {}, {b}, {}, std::to_string(a)});
  const std::size_t section = html.find("<h2 id=\"comparison\">");
  ASSERT_NE(section, std::string::npos);
  // Folded under "command", so that the table fits the page.
  EXPECT_NE(html.find("<td class=\"more\"><details><summary>command</summary><code>ditbench run "
                      "/home/me/ab-new.yaml --only " +
                          TrialKey(one) + " --db " + ShellWord(DbPath().string()) +
                          "</code></details></td>",
                      section),
            std::string::npos);
}

TEST_F(HtmlReportTest, CiOfFewIterationsShowsItsExactCoverage) {
  // The fixture's trials have 2 timed iterations: [min, max] covers the median half the time.
  const std::string html = Render({"sp"});
  EXPECT_THAT(RowOf(html, sp_, test::MakeConfig(1)), HasSubstr("99.00 – 101.00 (50% only)"));
  auto db = ResultsDb::Open(DbPath());
  std::int64_t many = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("many"), true);
  const TrialConfig config = test::MakeConfig(1, 1, Precision::kBf16, 256);
  db->writer().RecordTrial(many, test::MakeTrialWithSamples(config, {1, 2, 3, 4, 5, 6, 7, 8}));
  const std::string row = RowOf(Render({"many"}), many, config);
  ASSERT_NE(row, "");
  EXPECT_THAT(row, Not(HasSubstr("only)")));
}

}  // namespace
}  // namespace ditbench::html_report_test

namespace ditbench::html_report_test {
namespace {

// The newest `ditbench selfcheck` of each device the trials ran on is under Campaigns; a
// database without one renders no such section (goldens unchanged).
TEST_F(HtmlReportTest, TheNewestSelfcheckOfEachDeviceIsShownWithItsRowsThatDidNotPass) {
  EXPECT_THAT(Render(), Not(HasSubstr("id=\"selfcheck\"")));
  const std::string device = "cpu";  // test::MakeTrial's
  {
    auto db = ResultsDb::Open(DbPath());
    SelfcheckRecord check;
    check.device = device;  // checked on the device the trials ran on
    check.build = "b1";
    check.host = "node1";
    check.started_at = "2026-11-01T10:00:00.000Z";
    check.rows = {{"clocks", SelfcheckVerdict::kWarn, "SM 1410 of 1980 MHz", "<hw thermal>"}};
    db->selfchecks().Record(check);
  }
  const std::string html = Render();
  EXPECT_THAT(html, HasSubstr("id=\"selfcheck\""));
  EXPECT_THAT(html, HasSubstr("clocks: warn: SM 1410 of 1980 MHz: &lt;hw thermal&gt;"));
}

}  // namespace
}  // namespace ditbench::html_report_test
