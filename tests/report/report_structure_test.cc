// The report's structure: groups by model identity and profile_blocks, spelled-out labels,
// per-device noise thresholds naming every trial, collapsed rows, seeds folded, campaigns
// labelled by date and build (split from html_report_test.cc).
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/html_report.h"
#include "storage/results_db.h"
#include "tests/support/report_html.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::report_structure_test {
namespace {

using test::GroupHeading;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

// Report structure (issue 11): groups by model identity and profile_blocks, spelled-out
// labels, per-device noise thresholds naming every trial, CPU wording, TFLOPS only with a peak.
class ReportStructureTest : public ::testing::Test {
 protected:
  std::string Render() { return RenderHtmlReport({dir_ / "results.db", {}, {}, {}, {}}); }
  test::TempDir dir_;
};

TEST_F(ReportStructureTest, OverriddenModelAndProfiledTrialsAreGroupsOfTheirOwn) {
  TrialConfig plain = test::MakeConfig(1, 1, Precision::kBf16, 256);
  plain.model = "pixart-alpha-tiny";
  TrialConfig deep = plain;
  deep.model_overrides = {{"depth", 8}};
  TrialConfig profiled = plain;
  profiled.ulysses = 2;
  profiled.profile_blocks = true;
  {
    auto db = ResultsDb::Open(dir_ / "results.db");
    auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("zoo"), false);
    db->writer().RecordTrial(id, test::MakeTrial(plain, TrialStatus::kOk, 10));
    db->writer().RecordTrial(id, test::MakeTrial(deep, TrialStatus::kOk, 20));
    db->writer().RecordTrial(id, test::MakeTrial(profiled, TrialStatus::kOk, 8));
  }
  const std::string html = Render();
  EXPECT_THAT(html, ContainsRegex("<h2 id=\"group-[0-9]+\">pixart-alpha-tiny\\{depth:8\\} · "
                                  "256 px"));
  EXPECT_THAT(html, ContainsRegex("<h2 id=\"group-[0-9]+\">pixart-alpha-tiny · 256 px · bf16 · "
                                  "denoise · batch 1 · 20 steps</h2>"));
  EXPECT_THAT(html, HasSubstr("20 steps · blocks profiled</h2>"));
  // Neither the depth-8 trial nor the profiled one gets a speedup against the plain 1-rank
  // one: each 1-rank trial is its own group's baseline, and the profiled group has none.
  const std::string against_plain = "title=\"against " + TrialKey(plain) + " ";
  EXPECT_EQ(html.find(against_plain), html.rfind(against_plain));
  EXPECT_NE(html.find("title=\"against " + TrialKey(deep) + " "), std::string::npos);
  const std::size_t profiled_group = html.find("blocks profiled</h2>");
  EXPECT_THAT(html.substr(profiled_group, 200), HasSubstr("No 1-rank trial"));
}

TEST_F(ReportStructureTest, NoiseThresholdDependsOnTheDeviceAndEveryTrialIsNamed) {
  {
    auto db = ResultsDb::Open(dir_ / "results.db");
    auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("noise"), false);
    for (int i = 0; i < 12; ++i) {  // CPU, CoV 10%: below the CPU threshold
      TrialRecord t = test::MakeTrial(test::MakeConfig(1, 1, Precision::kBf16, 256 + 16 * i),
                                      TrialStatus::kOk, 10);
      t.metrics->cov = 0.10;
      db->writer().RecordTrial(id, t);
    }
    for (int i = 0; i < 12; ++i) {  // GPU, CoV 10%: above the GPU threshold
      TrialRecord t = test::MakeTrial(test::MakeConfig(1, 1, Precision::kFp16, 256 + 16 * i),
                                      TrialStatus::kOk, 10);
      t.metrics->cov = 0.10;
      t.device = "NVIDIA H100 80GB HBM3";
      t.metrics->mfu = 0.3;
      t.metrics->tflops = 300;
      db->writer().RecordTrial(id, t);
    }
  }
  const std::string html = Render();
  EXPECT_THAT(html, HasSubstr("12 GPU trial(s) are noisy (coefficient of variation above 5%, "
                              "the GPU threshold).<details><summary>12 trial(s)</summary>"));
  EXPECT_THAT(html, Not(HasSubstr("CPU trial(s) are noisy")));
  for (int i = 0; i < 12; ++i) {
    const std::string key = TrialKey(test::MakeConfig(1, 1, Precision::kFp16, 256 + 16 * i));
    EXPECT_THAT(html, HasSubstr("<li>" + key + " (campaign 1")) << i;
  }
  // CPU groups: ranks, no TFLOPS; GPU groups: GPUs and TFLOPS.
  const std::size_t cpu_group = GroupHeading(html, "pixart-alpha · 256 px · bf16");
  const std::size_t gpu_group = GroupHeading(html, "pixart-alpha · 256 px · fp16");
  ASSERT_NE(cpu_group, std::string::npos);
  ASSERT_NE(gpu_group, std::string::npos);
  const std::string cpu_table =
      html.substr(cpu_group, html.find("</table>", cpu_group) - cpu_group);
  const std::string gpu_table =
      html.substr(gpu_group, html.find("</table>", gpu_group) - gpu_group);
  EXPECT_THAT(cpu_table, HasSubstr("<th class=\"num\">ranks</th>"));
  EXPECT_THAT(cpu_table, Not(HasSubstr("TFLOPS")));
  EXPECT_THAT(gpu_table, HasSubstr("<th class=\"num\">GPUs</th>"));
  EXPECT_THAT(gpu_table, HasSubstr("<th class=\"num\">TFLOPS</th><th class=\"num\">MFU</th>"));
  EXPECT_THAT(gpu_table, HasSubstr(">300.0<"));
  EXPECT_THAT(gpu_table, HasSubstr("<div class=\"scroll\"><table class=\"trials\">"));
}

TEST_F(ReportStructureTest, BeyondFiftyRowsAGroupCollapsesTheRest) {
  {
    auto db = ResultsDb::Open(dir_ / "results.db");
    auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("seeds"), false);
    for (int i = 0; i < 60; ++i) {  // 60 configurations (seeds would fold into one row)
      TrialConfig config = test::MakeConfig(1 + i, 1, Precision::kBf16, 256);
      db->writer().RecordTrial(id, test::MakeTrial(config, TrialStatus::kOk, 10 + i));
    }
  }
  const std::string html = Render();
  const std::size_t details = html.find("<details><summary>10 more trial(s) of this group");
  ASSERT_NE(details, std::string::npos);
  // The 50 fastest before it, the 10 slowest after it.
  EXPECT_LT(html.find(">10.00<"), details);
  EXPECT_LT(html.find(">59.00<"), details);
  EXPECT_GT(html.find(">60.00<"), details);
  EXPECT_GT(html.find(">69.00<"), details);
}

TEST_F(ReportStructureTest, SeedsOfOneConfigurationAreOneRowWithTheirRange) {
  {
    auto db = ResultsDb::Open(dir_ / "results.db");
    auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("seeds"), false);
    for (int seed = 0; seed < 60; ++seed) {
      TrialConfig config = test::MakeConfig(1, 1, Precision::kBf16, 256);
      config.seed = seed;
      db->writer().RecordTrial(id, test::MakeTrial(config, TrialStatus::kOk, 10 + seed));
    }
  }
  const std::string html = Render();
  EXPECT_EQ(html.find("more trial(s) of this group"), std::string::npos);
  // Median of 10..69 is 39.5; the range of the 60 medians is shown as the row's spread.
  EXPECT_THAT(html, HasSubstr(">39.50<"));
  EXPECT_THAT(html, HasSubstr("10.00 – 69.00 (range over 60 seeds)"));
  EXPECT_THAT(html, HasSubstr("(60 seeds)"));
}

TEST_F(ReportStructureTest, RowsOfSeveralCampaignsAreLabelledWithTheirDateAndBuild) {
  {
    auto db = ResultsDb::Open(dir_ / "results.db");
    for (int c = 0; c < 2; ++c) {
      auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("twice"), true);
      db->writer().RecordTrial(id, test::MakeTrial(test::MakeConfig(1, 1, Precision::kBf16, 256),
                                                   TrialStatus::kOk, 10 + c));
      TrialConfig cfg = test::MakeConfig(1, 1, Precision::kBf16, 256);
      cfg.cfg = 2;
      db->writer().RecordTrial(id, test::MakeTrial(cfg, TrialStatus::kOk, 6 + c));
    }
  }
  const std::string html = Render();
  // "#<id> <started> <build>", never "campaign N" alone.
  const std::string when = "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}";
  EXPECT_THAT(html, ContainsRegex("<td class=\"wrap\">#2 " + when + " abc1234: cfg=2</td>"));
  EXPECT_THAT(html, ContainsRegex("<td class=\"wrap\">#1 " + when + " abc1234: 1 rank</td>"));
  EXPECT_THAT(html, Not(HasSubstr("campaign 2:")));
  // The chart has one dataset per campaign, with a legend, and draws the CI as whiskers.
  EXPECT_THAT(html, ContainsRegex("\"label\":\"#2 " + when + " abc1234\""));
  EXPECT_THAT(html, HasSubstr("\"legend\":true"));
  EXPECT_THAT(html, HasSubstr("type: 'logarithmic'"));
  EXPECT_THAT(html, HasSubstr("afterDatasetsDraw"));
  // And a speedup chart with the ideal line, per campaign's own 1-rank trial.
  EXPECT_THAT(html, HasSubstr("\"kind\":\"speedup\""));
  EXPECT_THAT(html, ContainsRegex("\"label\":\"cfg \\(#1 " + when + " abc1234\\)\""));
  EXPECT_THAT(html, Not(HasSubstr("c2 ")));
}

// A group table with PSNR and SSIM was 1769 px wide in a 1400 px window, its quality columns
// clipped (issue 34; headless_render_test.cc measures it): the table is a "trials" table whose
// status badges and speedup doubts are badges of their own, stacked one to a line by the
// stylesheet, and whose configuration may break.
TEST_F(ReportStructureTest, AGroupTableStacksItsBadgesAndDoubtsOneToALine) {
  TrialConfig fused;
  {
    auto db = ResultsDb::Open(dir_ / "results.db");
    const auto id = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("scope"), false);
    for (const TrialRecord& trial : test::MakeBusyPipelineTrials()) {
      db->writer().RecordTrial(id, trial);
      if (trial.config.pipefusion == 2 && trial.config.pipefusion_warmup_steps == 1)
        fused = trial.config;
    }
  }
  const std::string html = Render();
  EXPECT_THAT(html, HasSubstr("<table class=\"trials\">\n<thead>\n<tr><th class=\"num\">#</th>"
                              "<th>configuration</th>"));
  const std::size_t row = html.find("id=\"trial-1-" + TrialKey(fused) + "\"");
  ASSERT_NE(row, std::string::npos);
  const std::string cells = html.substr(row, html.find("</tr>", row) - row);
  // Each doubt a badge of its own, not one unbreakable "busy, busy baseline, below quality".
  EXPECT_THAT(cells, HasSubstr(">2.00x<span class=\"doubt\">busy</span><span class=\"doubt\">busy "
                               "baseline</span><span class=\"doubt\">below quality</span></td>"));
  EXPECT_THAT(cells, ContainsRegex("<td class=\"status-ok\">ok <span class=\"busy\"[^>]*>"
                                   "busy machine</span> <span class=\"below\""));
  EXPECT_THAT(cells,
              HasSubstr("<td class=\"num psnr\">24.8</td><td class=\"num ssim\">0.6110</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num psnr\">inf</td><td class=\"num ssim\">1.0000</td>"));
  // The stylesheet stacks them and lets the configuration break (report/assets/report.css).
  EXPECT_THAT(html, HasSubstr("table.trials td.speedup .doubt, table.trials td .busy, "
                              "table.trials td .below {\n  display: block;"));
  EXPECT_THAT(html, HasSubstr("table.trials td.wrap:not(.num) { overflow-wrap: anywhere; }"));
}

}  // namespace
}  // namespace ditbench::report_structure_test
