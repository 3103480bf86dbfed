// The report leads with the answer (report/report_summary.h): per group the winning
// configuration with its speedup, efficiency, memory and output error against the 1-rank
// trial; a table of contents; with --baseline, the comparison (regressions first) before it;
// the stage table in the groups' ranking.
#include "report/report_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/html_report.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::report_summary_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ResultRow Row(std::int64_t campaign, std::int64_t ulysses, double latency_ms) {
  ResultRow row;
  row.campaign = campaign;
  row.status = "ok";
  row.model = "pixart-alpha";
  row.ulysses = ulysses;
  row.ring = row.pipefusion = row.cfg = row.dp = 1;
  row.world_size = ulysses;
  row.latency_ms = latency_ms;
  row.trial_key = "k" + std::to_string(campaign) + "-" + std::to_string(ulysses);
  return row;
}

TEST(WinnerOfTest, TheFastestOfTheNewestCampaignAgainstItsOneRankTrial) {
  ResultRow one = Row(2, 1, 100), two = Row(2, 2, 40), four = Row(2, 4, 50);
  two.peak_mem_mb = 512;
  two.output_error = 0;
  ResultRow older = Row(1, 8, 10);  // faster, but an older campaign
  const auto winner = WinnerOf({older, two, four, one});
  ASSERT_TRUE(winner.has_value());
  EXPECT_EQ(winner->row.trial_key, "k2-2");
  ASSERT_TRUE(winner->baseline.has_value());
  EXPECT_EQ(winner->baseline->trial_key, "k2-1");
  EXPECT_DOUBLE_EQ(*winner->speedup, 2.5);
  EXPECT_DOUBLE_EQ(*winner->efficiency, 1.25);
  EXPECT_EQ(winner->ranked, 3u);
  EXPECT_FALSE(WinnerOf({}).has_value());
}

// A row stored ok at 0 ms over no timed iteration (an all-warm-up load an older ditbench kept)
// timed nothing: never the fastest configuration, nor one of latency 0 over some iterations.
TEST(WinnerOfTest, ARowThatTimedNothingIsNeverTheWinner) {
  ResultRow one = Row(2, 1, 100), two = Row(2, 2, 40);
  ResultRow warm_only = Row(2, 4, 0), zero = Row(2, 8, 0);
  warm_only.iterations = 0;
  zero.iterations = 5;
  ResultRow no_timed = Row(2, 16, 1);
  no_timed.iterations = 0;
  const auto winner = WinnerOf({warm_only, zero, no_timed, two, one});
  ASSERT_TRUE(winner.has_value());
  EXPECT_EQ(winner->row.trial_key, "k2-2");
  EXPECT_EQ(winner->ranked, 2u);
}

// A winner with a step cache has one speedup: over the 1-rank trial without the cache (the
// trial its output error is measured against), never over the cached 1-rank trial, and the
// summary names that reference.
TEST(WinnerOfTest, ACachedWinnerHasOneSpeedupOverTheUncachedTrialAndNamesIt) {
  const std::string cache = R"({"kind":"fbcache","threshold":0.2,"warmup_steps":1})";
  ResultRow plain = Row(2, 1, 100), cached_one = Row(2, 1, 60), cached_two = Row(2, 2, 40);
  plain.computation = R"({"model":"pixart-alpha"})";
  cached_one.computation = cached_two.computation =
      R"({"model":"pixart-alpha","cache":)" + cache + "}";
  cached_one.trial_key = "k2-1-cached";
  const auto winner = WinnerOf({cached_two, cached_one, plain});
  ASSERT_TRUE(winner.has_value());
  EXPECT_EQ(winner->row.trial_key, "k2-2");
  EXPECT_DOUBLE_EQ(*winner->speedup, 2.5);
  EXPECT_EQ(winner->reference, "1 rank without cache");
  const std::string html = RenderSummary({{"g", "group-1", winner}}, {});
  EXPECT_THAT(html, HasSubstr("2.50x<div class=\"note\">vs 1 rank without cache</div>"));
  // Its doubts are the speedup's, marked on the one figure.
  ResultRow borrowed = plain;
  borrowed.campaign = 1;
  const auto doubted = WinnerOf({cached_two, cached_one, borrowed});
  ASSERT_TRUE(doubted.has_value());
  EXPECT_DOUBLE_EQ(*doubted->speedup, 2.5);
  EXPECT_THAT(RenderSummary({{"g", "group-1", doubted}}, {}),
              HasSubstr("2.50x ?<div class=\"note\">vs 1 rank without cache</div>"));
  // An uncached winner's reference is plain "1 rank", not repeated under the figure.
  const auto uncached = WinnerOf({plain});
  ASSERT_TRUE(uncached.has_value());
  EXPECT_EQ(uncached->reference, "1 rank");
  EXPECT_THAT(RenderSummary({{"g", "group-1", uncached}}, {}),
              Not(HasSubstr("<div class=\"note\">vs")));
}

// A configuration below quality is never the winner: the next fastest is, and the summary
// names the one skipped and the gate it missed.
TEST(WinnerOfTest, AConfigurationBelowQualityIsSkippedAndNamed) {
  ResultRow one = Row(2, 1, 100), two = Row(2, 2, 60), four = Row(2, 4, 30);
  four.pipefusion = 4;
  four.ulysses = 1;
  four.quality = "below: psnr 30.1 < 35";
  two.quality = "ok";
  const auto winner = WinnerOf({four, two, one});
  ASSERT_TRUE(winner.has_value());
  ASSERT_TRUE(winner->found);
  EXPECT_EQ(winner->row.trial_key, "k2-2");
  ASSERT_EQ(winner->skipped.size(), 1u);
  EXPECT_EQ(winner->skipped[0].trial_key, "k2-4");
  const std::string html = RenderSummary({{"g", "group-1", winner}}, {});
  EXPECT_THAT(html, HasSubstr("<strong>ulysses=2</strong><div class=\"below-quality\">skipped "
                              "pipefusion=4: below quality (psnr 30.1 &lt; 35)</div>"));
  // Every measured configuration below quality: no winner, and the page says why.
  one.quality = two.quality = four.quality;
  const auto none = WinnerOf({four, two, one});
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->found);
  EXPECT_EQ(none->skipped.size(), 3u);
  EXPECT_THAT(RenderSummary({{"g", "group-1", none}}, {}),
              HasSubstr("no configuration meets the quality gates"));
}

class ReportSummaryTest : public ::testing::Test {
 protected:
  std::int64_t Campaign(const std::string& sweep, const std::string& build) {
    auto db = ResultsDb::Open(dir_ / "results.db");
    return db->writer().ResumeOrCreateCampaign(test::MakeCampaign(sweep, build), true);
  }
  void Record(std::int64_t campaign, const TrialRecord& trial) {
    auto db = ResultsDb::Open(dir_ / "results.db");
    db->writer().RecordTrial(campaign, trial);
  }
  std::string Render(std::vector<std::int64_t> campaigns = {}, std::string baseline = "") {
    return RenderHtmlReport({dir_ / "results.db", {}, std::move(campaigns), {},
                             std::move(baseline)});
  }
  test::TempDir dir_;
};

TEST_F(ReportSummaryTest, TheTopOfThePageNamesTheWinnerOfEveryGroupBeforeAnyGroup) {
  const std::int64_t c = Campaign("s", "abc1234");
  Record(c, test::MakeTrial(test::MakeConfig(1, 1, Precision::kBf16, 256), TrialStatus::kOk, 90));
  TrialRecord fast = test::MakeTrial(test::MakeConfig(2, 1, Precision::kBf16, 256),
                                     TrialStatus::kOk, 45);
  fast.metrics->output_error = 0;
  Record(c, fast);
  Record(c, test::MakeTrial(test::MakeConfig(4, 1, Precision::kBf16, 256), TrialStatus::kOk, 60));
  Record(c, test::MakeTrial(test::MakeConfig(1, 1, Precision::kBf16, 512), TrialStatus::kOk, 300));
  Record(c, test::MakeTrial(test::MakeConfig(2, 2, Precision::kBf16, 512), TrialStatus::kOk, 100));
  const std::string html = Render();
  const std::size_t summary = html.find("<h2 id=\"summary\">");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_LT(summary, html.find("<h2 id=\"group-1\">"));
  EXPECT_LT(summary, html.find("<h2 id=\"campaigns\">"));
  const std::string table = html.substr(summary, html.find("</table>", summary) - summary);
  // 256 px: ulysses=2 wins at 2.00x, 100% efficient, 500 MB per rank, exact output.
  EXPECT_THAT(table, HasSubstr("<a href=\"#group-1\">"));
  EXPECT_THAT(table, HasSubstr("<strong>ulysses=2</strong>"));
  EXPECT_THAT(table, HasSubstr(">2.00x<"));
  EXPECT_THAT(table, HasSubstr(">100%<"));
  EXPECT_THAT(table, HasSubstr(">500<"));
  EXPECT_THAT(table, HasSubstr(">0 (exact)<"));
  // 512 px: ulysses=2 ring=2 wins at 3.00x over 4 ranks (75%).
  EXPECT_THAT(table, HasSubstr("<strong>ulysses=2 ring=2</strong>"));
  EXPECT_THAT(table, HasSubstr(">3.00x<"));
  EXPECT_THAT(table, HasSubstr(">75%<"));
  // The table of contents links every section, groups included, before them all.
  const std::size_t contents = html.find("<nav class=\"contents\">");
  ASSERT_NE(contents, std::string::npos);
  EXPECT_LT(contents, summary);
  for (const char* anchor : {"#summary", "#campaigns", "#status", "#group-1", "#group-2"})
    EXPECT_THAT(html.substr(contents, summary - contents), HasSubstr(anchor)) << anchor;
}

TEST_F(ReportSummaryTest, WithABaselineTheRegressionsComeFirst) {
  const TrialConfig one = test::MakeConfig(1, 1, Precision::kBf16, 256);
  const std::int64_t a = Campaign("ab", "abc1234");
  Record(a, test::MakeTrialWithSamples(one, {10, 10.1, 9.9, 10.05, 10.02}));
  const std::int64_t b = Campaign("ab", "def5678");
  Record(b, test::MakeTrialWithSamples(one, {20, 20.1, 19.9, 20.05, 20.02}));
  const std::string html = Render({b}, std::to_string(a));
  const std::size_t comparison = html.find("<h2 id=\"comparison\">");
  ASSERT_NE(comparison, std::string::npos);
  EXPECT_LT(comparison, html.find("<h2 id=\"summary\">"));
  EXPECT_LT(html.find("href=\"#comparison\""), html.find("href=\"#summary\""));
}

TEST_F(ReportSummaryTest, TheStageTableFollowsTheRankingNotTheKeys) {
  // The same three configurations ranked one way in one campaign and the other way in the
  // next: whatever order their keys sort in, one of the two differs from it.
  for (const bool faster_with_ranks : {true, false}) {
    const std::int64_t c = Campaign(faster_with_ranks ? "fast" : "slow", "abc1234");
    for (int ulysses : {1, 2, 4}) {
      const double latency = faster_with_ranks ? 100.0 / ulysses : 100.0 * ulysses;
      TrialRecord trial = test::MakeTrial(test::MakeConfig(ulysses, 1, Precision::kBf16, 256),
                                          TrialStatus::kOk, latency);
      for (int rank = 0; rank < trial.world_size; ++rank)
        for (int it = 1; it < 3; ++it)
          trial.samples.push_back({rank, it, "step:0", latency / 2, false});
      Record(c, trial);
    }
    const std::string html = Render({c});
    const std::size_t stages = html.find("<h2 id=\"stages\">");
    ASSERT_NE(stages, std::string::npos);
    std::vector<std::size_t> at;  // fastest first, as the group's table ranks them
    for (int ulysses : faster_with_ranks ? std::vector<int>{4, 2, 1} : std::vector<int>{1, 2, 4})
      at.push_back(
          html.find(TrialKey(test::MakeConfig(ulysses, 1, Precision::kBf16, 256)), stages));
    EXPECT_LT(at[0], at[1]) << faster_with_ranks;
    EXPECT_LT(at[1], at[2]) << faster_with_ranks;
    EXPECT_NE(at[2], std::string::npos);
  }
}

}  // namespace
}  // namespace ditbench::report_summary_test
