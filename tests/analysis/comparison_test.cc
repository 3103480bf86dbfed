#include "analysis/comparison.h"
#include "report/comparison_html.h"
#include "report/comparison_output.h"

#include <cmath>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/table_printers.h"

#include "base/user_error.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::comparison_test {
namespace {

using ::testing::HasSubstr;

// `n` iterations around `ms` with relative noise `noise` (deterministic per seed).
std::vector<double> Series(unsigned seed, double ms, double noise = 0.01, int n = 20) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> series;
  for (int i = 0; i < n; ++i) series.push_back(ms * (1 + noise * normal(rng)));
  return series;
}

class ComparisonTest : public ::testing::Test {
 protected:
  std::filesystem::path DbPath() const { return dir_ / "results.db"; }

  // A new campaign of sweep "sp" on `build` holding `trials`.
  std::int64_t Campaign(ResultsDb& db, const std::vector<TrialRecord>& trials,
                        const std::string& build = "abc1234") {
    std::int64_t id = db.writer().ResumeOrCreateCampaign(test::MakeCampaign("sp", build), true);
    for (const TrialRecord& t : trials) db.writer().RecordTrial(id, t);
    return id;
  }

  CampaignSet Set(std::vector<std::int64_t> ids) { return {DbPath(), std::move(ids), ""}; }

  test::TempDir dir_;
};

TEST_F(ComparisonTest, KnownSlowdownOnGpuIsSlowerAndListedFirst) {
  auto db = ResultsDb::Open(DbPath());
  const TrialConfig one = test::MakeConfig(1), two = test::MakeConfig(2);
  std::int64_t a = Campaign(*db, {test::MakeTrialWithSamples(one, Series(1, 100), "NVIDIA H100"),
                                  test::MakeTrialWithSamples(two, Series(2, 60), "NVIDIA H100")});
  std::int64_t b = Campaign(*db,
                            {test::MakeTrialWithSamples(one, Series(3, 100), "NVIDIA H100"),
                             test::MakeTrialWithSamples(two, Series(4, 72), "NVIDIA H100")},
                            "def5678");
  Comparison c = CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({b}));
  ASSERT_EQ(c.trials.size(), 2u);
  EXPECT_EQ(c.trials[0].trial_key, TrialKey(two));
  EXPECT_EQ(c.trials[0].change.verdict, Verdict::kSlower) << c.trials[0].change.reason;
  EXPECT_NEAR(c.trials[0].change.change.pct, 20, 2);
  EXPECT_EQ(c.trials[1].change.verdict, Verdict::kSame) << c.trials[1].change.reason;
  EXPECT_THAT(c.trials[0].thresholds, HasSubstr("gpu default (noise floor 5.0%"));
  EXPECT_EQ(NoiseFloorHeadline(c), "noise floor 5.0% (gpu default)");
  EXPECT_EQ(c.trials[0].label, "pixart-alpha 1024px bf16 denoise steps=20 ulysses=2");
  EXPECT_EQ(c.trials[1].label, "pixart-alpha 1024px bf16 denoise steps=20 1 rank");
  ASSERT_FALSE(c.differences.empty());
  EXPECT_EQ(c.differences[0].setting, "build");
  EXPECT_EQ(c.differences[0].a, "abc1234");
  EXPECT_EQ(c.differences[0].b, "def5678");
  EXPECT_TRUE(c.unmatched.empty());
  ASSERT_EQ(FindRegressions(c, 10).regressions.size(), 1u);
  EXPECT_TRUE(FindRegressions(c, 25).regressions.empty());
}

// The verdict of a metric whose row has a compare_quantile (p95_ms), or nothing.
const TailChange* TailOf(const ComparedTrial& trial) {
  const ComparedMetric* p95 = trial.Metric("p95_ms");
  return p95 && p95->verdict ? &*p95->verdict : nullptr;
}

// A serving trial: a verdict on its p95 beside the one on its latency (the p50), drawn by the
// statistic the metric table names for p95_ms (compare_quantile 0.95). B's median request is as
// fast as A's, but one request in eight waits 5x longer: its p95 is slower, with intervals
// apart; 40 requests a side cannot bound a p95.
TEST_F(ComparisonTest, AServingTrialsP95HasAVerdictOfItsOwn) {
  ASSERT_EQ(FindMetric("p95_ms")->compare_quantile, 0.95);
  TrialConfig served = test::MakeConfig(1);
  served.serve = ServeLoad{};
  served.serve->rate_per_s = 2;
  served.serve->requests = 200;
  const auto trial = [&](std::vector<double> ms) {
    TrialRecord t = test::MakeTrialWithSamples(served, ms);
    t.metrics->extra["requests_per_s"] = 2;
    return t;
  };
  std::vector<double> tail = Series(6, 100, 0.05, 200);
  for (std::size_t i = 0; i < tail.size(); i += 8) tail[i] *= 5;
  auto db = ResultsDb::Open(DbPath());
  const std::int64_t a = Campaign(*db, {trial(Series(5, 100, 0.05, 200))});
  const std::int64_t b = Campaign(*db, {trial(tail)}, "def5678");
  Comparison c = CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({b}));
  ASSERT_EQ(c.trials.size(), 1u);
  const TailChange* p95 = TailOf(c.trials[0]);
  ASSERT_TRUE(p95);
  EXPECT_EQ(p95->verdict, "slower");
  EXPECT_GT(p95->b.low, p95->a.high);
  EXPECT_EQ(c.trials[0].Metric("p95_ms")->Judgement(), "slower");
  EXPECT_THAT(VerdictText(c.trials[0]), HasSubstr(", p95 slower"));
  std::ostringstream json;
  WriteComparison(c, TableFormat::kJson, json);
  EXPECT_EQ(nlohmann::json::parse(json.str())["trials"][0]["metrics"]["p95_ms"]["verdict"],
            "slower");
  const std::int64_t same = Campaign(*db, {trial(Series(7, 100, 0.05, 200))}, "fff0000");
  EXPECT_EQ(TailOf(CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({same})).trials[0])
                ->verdict,
            "inconclusive");
  const std::int64_t few = Campaign(*db, {trial(Series(8, 100, 0.05, 40))}, "eee0000");
  EXPECT_EQ(
      TailOf(CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({few})).trials[0])->verdict,
      "not bounded");
  // A trial that does not serve has no tail verdict.
  const std::int64_t plain =
      Campaign(*db, {test::MakeTrialWithSamples(test::MakeConfig(2), Series(9, 50))});
  const std::int64_t plain_b =
      Campaign(*db, {test::MakeTrialWithSamples(test::MakeConfig(2), Series(10, 50))}, "ddd0000");
  EXPECT_FALSE(
      TailOf(CompareCampaigns(db->reader(), Set({plain}), db->reader(), Set({plain_b})).trials[0]));
}

TEST_F(ComparisonTest, CpuTrialsUseTheLenientFloor) {
  auto db = ResultsDb::Open(DbPath());
  const TrialConfig one = test::MakeConfig(1);
  // +20% on CPU: within the 35% floor, so not a regression.
  std::int64_t a = Campaign(*db, {test::MakeTrialWithSamples(one, Series(1, 100))});
  std::int64_t b = Campaign(*db, {test::MakeTrialWithSamples(one, Series(2, 120))});
  Comparison c = CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({b}));
  ASSERT_EQ(c.trials.size(), 1u);
  EXPECT_EQ(c.trials[0].change.verdict, Verdict::kSame);
  EXPECT_THAT(c.trials[0].thresholds, HasSubstr("cpu default (noise floor 35.0%"));
  // A floor given on the command line replaces it.
  Comparison strict =
      CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({b}), {5.0, std::nullopt});
  EXPECT_EQ(strict.trials[0].change.verdict, Verdict::kSlower);
  EXPECT_THAT(strict.trials[0].thresholds, HasSubstr("given"));
  EXPECT_EQ(NoiseFloorHeadline(strict), "noise floor 5.0% (given)");
}

TEST_F(ComparisonTest, SeveralCampaignsPerSideAreLaunchesOfEachTrial) {
  auto db = ResultsDb::Open(DbPath());
  const TrialConfig one = test::MakeConfig(1);
  std::vector<std::int64_t> a, b, drift;
  // A and `drift` are A/A: launch offsets of a few percent, no shift. B is 30% slower.
  const double offsets[] = {1.05, 0.97, 1.00, 0.96, 1.04, 1.01};
  for (int i = 0; i < 3; ++i) {
    a.push_back(Campaign(*db, {test::MakeTrialWithSamples(one, Series(10 + i, 100 * offsets[i]))}));
    drift.push_back(
        Campaign(*db, {test::MakeTrialWithSamples(one, Series(20 + i, 100 * offsets[3 + i]))}));
    b.push_back(Campaign(*db, {test::MakeTrialWithSamples(one, Series(30 + i, 130 * offsets[i]))}));
  }
  Comparison aa = CompareCampaigns(db->reader(), Set(a), db->reader(), Set(drift));
  ASSERT_EQ(aa.trials.size(), 1u);
  EXPECT_EQ(aa.trials[0].change.method, ChangeMethod::kLaunches);
  EXPECT_EQ(aa.trials[0].change.a_launches, 3);
  EXPECT_TRUE(aa.trials[0].change.verdict == Verdict::kSame ||
              aa.trials[0].change.verdict == Verdict::kInconclusive)
      << aa.trials[0].change.reason;
  Comparison ab = CompareCampaigns(db->reader(), Set(a), db->reader(), Set(b));
  EXPECT_EQ(ab.trials[0].change.verdict, Verdict::kSlower) << ab.trials[0].change.reason;
}

TEST_F(ComparisonTest, ATrialMeasuredOnABusyMachineSaysSoAndCountsOnlyWhenStrict) {
  auto db = ResultsDb::Open(DbPath());
  const TrialConfig one = test::MakeConfig(1), two = test::MakeConfig(2);
  std::int64_t a = Campaign(*db, {test::MakeTrialWithSamples(one, Series(1, 100), "NVIDIA H100"),
                                  test::MakeTrialWithSamples(two, Series(2, 60), "NVIDIA H100")});
  TrialRecord busy = test::MakeTrialWithSamples(two, Series(4, 72), "NVIDIA H100");
  busy.health = {{"busy", true}, {"note", "load 3.10 on 2 cores; others used 1.00 cores"}};
  std::int64_t b =
      Campaign(*db, {test::MakeTrialWithSamples(one, Series(3, 130), "NVIDIA H100"), busy});
  Comparison c = CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({b}));
  ASSERT_EQ(c.trials.size(), 2u);
  const ComparedTrial& quiet = c.trials[0];  // +30%
  const ComparedTrial& noisy = c.trials[1];  // +20%, B busy
  EXPECT_FALSE(quiet.busy());
  EXPECT_EQ(VerdictText(quiet), "slower");
  EXPECT_FALSE(noisy.a_busy);
  EXPECT_TRUE(noisy.b_busy);
  EXPECT_EQ(VerdictText(noisy), "slower, busy B");
  EXPECT_THAT(noisy.change.reason,
              HasSubstr("measured on a busy machine (B: load 3.10 on 2 cores; others used 1.00 "
                        "cores)"));
  const RegressionCheck lenient = FindRegressions(c, 10);
  ASSERT_EQ(lenient.regressions.size(), 1u);
  EXPECT_EQ(lenient.regressions[0], &quiet);
  ASSERT_EQ(lenient.skipped_busy.size(), 1u);
  EXPECT_EQ(lenient.skipped_busy[0], &noisy);
  const RegressionCheck strict = FindRegressions(c, 10, /*strict=*/true);
  EXPECT_EQ(strict.regressions.size(), 2u);
  EXPECT_TRUE(strict.skipped_busy.empty());
}

// A metric beside the latency of a busy side carries the doubt where its value is shown (text
// and HTML; CSV and JSON carry a_busy / b_busy on the trial's row).
TEST_F(ComparisonTest, AMetricOfABusySideSaysSoBesideItsValue) {
  auto db = ResultsDb::Open(DbPath());
  const TrialConfig two = test::MakeConfig(2);
  TrialRecord quiet = test::MakeTrialWithSamples(two, Series(1, 100), "NVIDIA H100");
  quiet.metrics->joules_per_image = 0.2;
  TrialRecord busy = test::MakeTrialWithSamples(two, Series(2, 100), "NVIDIA H100");
  busy.metrics->joules_per_image = 0.15;
  busy.health = {{"busy", true}, {"note", "load 3.10 on 2 cores"}};
  const std::int64_t a = Campaign(*db, {quiet});
  const std::int64_t b = Campaign(*db, {busy}, "def5678");
  const Comparison c = CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({b}));
  ASSERT_EQ(c.trials.size(), 1u);
  std::ostringstream text;
  WriteComparison(c, TableFormat::kText, text);
  EXPECT_THAT(text.str(), HasSubstr("0.2  0.15 (busy)"));
  EXPECT_THAT(RenderComparisonSection(c, 10), HasSubstr("0.15 <span class=\"note\">(busy)</span>"));
}

TEST_F(ComparisonTest, ASideBelowQualitySaysSoInItsVerdictAndEveryOutput) {
  auto db = ResultsDb::Open(DbPath());
  const TrialConfig two = test::MakeConfig(2);
  std::int64_t a = Campaign(*db, {test::MakeTrialWithSamples(two, Series(1, 100), "NVIDIA H100")});
  TrialRecord below = test::MakeTrialWithSamples(two, Series(2, 60), "NVIDIA H100");
  below.metrics->quality = "below: psnr 30.1 < 35";
  std::int64_t b = Campaign(*db, {below});
  Comparison c = CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({b}));
  ASSERT_EQ(c.trials.size(), 1u);
  const ComparedTrial& t = c.trials[0];
  EXPECT_EQ(t.a_below_quality, "");
  EXPECT_EQ(t.b_below_quality, "below: psnr 30.1 < 35");
  EXPECT_EQ(VerdictText(t), "faster, below quality B");
  EXPECT_THAT(t.change.reason, HasSubstr("B is below quality (below: psnr 30.1 < 35)"));
  std::ostringstream text, json;
  WriteComparison(c, TableFormat::kText, text);
  EXPECT_THAT(text.str(), HasSubstr("faster, below quality B"));
  WriteComparison(c, TableFormat::kJson, json);
  EXPECT_EQ(nlohmann::json::parse(json.str())["trials"][0]["b_below_quality"],
            "below: psnr 30.1 < 35");
  EXPECT_THAT(RenderComparisonSection(c, 10), HasSubstr("below quality B"));
}

// Fewer timed iterations than the verdict needs (3 a side): the change is still the real
// medians, 1.05 ms against 5.25 ms (+400%), inconclusive and with no interval, in every output;
// never 0.000 ms against 0.000 ms at +0.0% [+0.0, +0.0].
TEST_F(ComparisonTest, TooFewIterationsShowTheRealMediansAndNoInterval) {
  auto db = ResultsDb::Open(DbPath());
  const TrialConfig one = test::MakeConfig(1);
  std::int64_t a = Campaign(*db, {test::MakeTrialWithSamples(one, {1.05, 1.05}, "NVIDIA H100")});
  std::int64_t b = Campaign(*db, {test::MakeTrialWithSamples(one, {5.25}, "NVIDIA H100")});
  const Comparison c = CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({b}));
  ASSERT_EQ(c.trials.size(), 1u);
  const ComparedTrial& t = c.trials[0];
  EXPECT_DOUBLE_EQ(t.change.a_ms, 1.05);
  EXPECT_DOUBLE_EQ(t.change.b_ms, 5.25);
  EXPECT_NEAR(t.change.change.pct, 400, 1e-9);
  EXPECT_EQ(t.change.verdict, Verdict::kInconclusive);
  EXPECT_FALSE(t.change.change.Bounded());
  EXPECT_EQ(t.too_few, "too few timed iterations: 2 and 1, need 3");
  EXPECT_EQ(VerdictText(t), "inconclusive (too few timed iterations: 2 and 1, need 3)");
  std::ostringstream table, json, csv, markdown;
  WriteComparison(c, TableFormat::kText, table);
  EXPECT_THAT(table.str(), HasSubstr("inconclusive (too few timed iterations: 2 and 1, need 3)"));
  EXPECT_THAT(table.str(), HasSubstr("1.050"));
  EXPECT_THAT(table.str(), HasSubstr("5.250"));
  EXPECT_THAT(table.str(), ::testing::Not(HasSubstr("+0.0")));
  WriteComparison(c, TableFormat::kMarkdown, markdown);
  EXPECT_THAT(markdown.str(), HasSubstr("too few timed iterations: 2 and 1, need 3"));
  EXPECT_THAT(markdown.str(), ::testing::Not(HasSubstr("+0.0")));
  WriteComparison(c, TableFormat::kJson, json);
  const nlohmann::json parsed = nlohmann::json::parse(json.str())["trials"][0];
  EXPECT_DOUBLE_EQ(parsed["a_ms"].get<double>(), 1.05);
  EXPECT_DOUBLE_EQ(parsed["b_ms"].get<double>(), 5.25);
  EXPECT_NEAR(parsed["change_pct"].get<double>(), 400, 1e-9);
  EXPECT_TRUE(parsed["ci_low_pct"].is_null());
  EXPECT_EQ(parsed["verdict"], "inconclusive");
  EXPECT_THAT(parsed["reason"].get<std::string>(),
              HasSubstr("too few timed iterations: 2 and 1, need 3"));
  WriteComparison(c, TableFormat::kCsv, csv);
  EXPECT_THAT(csv.str(), HasSubstr(",inconclusive,400.000,,,1.0500,5.2500,"));
  EXPECT_THAT(RenderComparisonSection(c, 10), HasSubstr("too few timed iterations: 2 and 1"));
}

TEST_F(ComparisonTest, UnmatchedAndFailedTrialsAreListed) {
  auto db = ResultsDb::Open(DbPath());
  const TrialConfig one = test::MakeConfig(1), two = test::MakeConfig(2),
                    four = test::MakeConfig(4);
  std::int64_t a = Campaign(*db, {test::MakeTrialWithSamples(one, Series(1, 10)),
                                  test::MakeTrialWithSamples(two, Series(2, 10))});
  std::int64_t b = Campaign(*db, {test::MakeTrial(one, TrialStatus::kOom, 0, "out of memory"),
                                  test::MakeTrialWithSamples(four, Series(3, 10))});
  Comparison c = CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({b}));
  EXPECT_TRUE(c.trials.empty());
  std::map<std::string, std::string> why;
  for (const UnmatchedTrial& u : c.unmatched) why[u.trial_key] = u.why;
  EXPECT_EQ(why[TrialKey(one)], "B: oom");
  EXPECT_EQ(why[TrialKey(two)], "only in A");
  EXPECT_EQ(why[TrialKey(four)], "only in B");
}

TEST_F(ComparisonTest, UnknownCampaignNamesTheKnownOnes) {
  auto db = ResultsDb::Open(DbPath());
  std::int64_t a = Campaign(*db, {});
  try {
    CompareCampaigns(db->reader(), Set({a}), db->reader(), Set({42}));
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no campaign 42"));
    EXPECT_THAT(e.what(), HasSubstr("known: 1 (sp)"));
  }
}

TEST(CampaignSetTest, ParsesIdsListsAndDatabasePaths) {
  CampaignSet one = ParseCampaignSet("3", "results.db");
  EXPECT_EQ(one.db, "results.db");
  EXPECT_EQ(one.campaigns, std::vector<std::int64_t>{3});
  CampaignSet list = ParseCampaignSet("old/a.db:1,2,3", "results.db");
  EXPECT_EQ(list.db, "old/a.db");
  EXPECT_EQ(list.campaigns, (std::vector<std::int64_t>{1, 2, 3}));
  for (const char* bad : {"", "x", "a.db:", ":3", "1,,2", "0", "-1", "3x", "a.db:2,b"})
    EXPECT_THROW(ParseCampaignSet(bad, "results.db"), UserError) << bad;
}

// One ok GPU row of `key` in `campaign` at `ms`.
ResultRow GpuRow(std::int64_t campaign, const std::string& key, double ms) {
  ResultRow row;
  row.campaign = campaign;
  row.trial_key = key;
  row.status = "ok";
  row.device = "NVIDIA H100";
  row.build = "abc";
  row.latency_ms = ms;
  return row;
}

TEST(ThresholdsTest, LearnedFloorIsThe90thPercentileOfAaChanges) {
  // 12 trial keys, each measured ok in two campaigns of one build on a GPU: changes of
  // 0.5%..6% (as log ratios). The 90th percentile (type 7) of |log ratio|.
  std::vector<ResultRow> rows;
  std::vector<double> logs;
  for (int k = 1; k <= 12; ++k) {
    rows.push_back(GpuRow(1, "key" + std::to_string(k), 100));
    rows.push_back(GpuRow(2, "key" + std::to_string(k), 100 * (1 + k / 200.0)));
    logs.push_back(std::log(1 + k / 200.0));
  }
  std::optional<Thresholds> learned = LearnedThresholds(rows, /*gpu=*/true, {});
  ASSERT_TRUE(learned.has_value());
  // h = 11 * 0.90 = 9.9: logs[9] + 0.9 * (logs[10] - logs[9]).
  const double expected = std::expm1(logs[9] + 0.9 * (logs[10] - logs[9])) * 100;
  EXPECT_NEAR(learned->policy.noise_floor_pct, expected, 1e-9);
  EXPECT_EQ(learned->source, "learned from 12 A/A pairs");
  EXPECT_FALSE(LearnedThresholds(rows, /*gpu=*/false, {}).has_value());
  // Excluding one campaign leaves no pairs.
  EXPECT_FALSE(LearnedThresholds(rows, true, {2}).has_value());
  // Different builds are not A/A.
  for (ResultRow& row : rows)
    if (row.campaign == 2) row.build = "def";
  EXPECT_FALSE(LearnedThresholds(rows, true, {}).has_value());
}

TEST(ThresholdsTest, OneDisturbedTrialOrBusyRowsDoNotMoveTheLearnedFloor) {
  // 8 keys in 3 campaigns, 1% apart: 24 A/A pairs of 0%..2%.
  std::vector<ResultRow> clean;
  for (int k = 0; k < 8; ++k)
    for (int c = 1; c <= 3; ++c)
      clean.push_back(GpuRow(c, "key" + std::to_string(k), 75 * (1 + 0.01 * (c - 2))));
  const double floor = LearnedThresholds(clean, true, {})->policy.noise_floor_pct;
  EXPECT_LT(floor, 2.1);
  // One trial of campaign 2 disturbed: 1920 ms for a 75 ms trial (unflagged). Today's 95th
  // percentile of the pairs gave a floor above 1000%; the outlier is left out.
  std::vector<ResultRow> disturbed = clean;
  disturbed[1].latency_ms = 1920;
  std::optional<Thresholds> t = LearnedThresholds(disturbed, true, {});
  ASSERT_TRUE(t.has_value());
  EXPECT_LE(t->policy.noise_floor_pct, floor);
  EXPECT_EQ(t->source, "learned from 22 A/A pairs (1 measurement left out: busy or outlier)");
  // The same trial flagged busy is left out as busy (so it is no outlier either).
  std::vector<ResultRow> busy = disturbed;
  busy[1].busy = true;
  EXPECT_EQ(LearnedThresholds(busy, true, {})->source,
            "learned from 22 A/A pairs (1 measurement left out: busy or outlier)");
  // Too few pairs once the busy rows are left out: the defaults.
  std::vector<ResultRow> all_busy = clean;
  for (std::size_t i = 0; i < all_busy.size(); i += 3) all_busy[i].busy = true;
  EXPECT_FALSE(LearnedThresholds(all_busy, true, {}).has_value());
}

TEST(ThresholdsTest, ALearnedFloorIsCappedAtTwiceTheDefault) {
  // Two campaigns only (no outlier can be told apart), every pair 60% apart: the cap holds.
  std::vector<ResultRow> rows;
  for (int k = 0; k < 12; ++k) {
    rows.push_back(GpuRow(1, "key" + std::to_string(k), 100));
    rows.push_back(GpuRow(2, "key" + std::to_string(k), 160));
  }
  std::optional<Thresholds> t = LearnedThresholds(rows, true, {});
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->policy.noise_floor_pct, 2 * DefaultThresholds(true).policy.noise_floor_pct);
  EXPECT_EQ(t->source, "learned from 12 A/A pairs, capped at 10.0% (60.0% learned)");
}

TEST(TrialLabelTest, OverridesAreShownAndCfgIsSpelledOut) {
  ResultRow row;
  row.model = "pixart-alpha-tiny";
  row.model_overrides = R"({"preset":"pixart-alpha-tiny","depth":8})";
  row.resolution = 256;
  row.precision = "fp32";
  row.scope = "forward";
  row.batch = 2;
  row.ulysses = 1;
  row.ring = 1;
  row.pipefusion = 1;
  row.cfg = 2;
  row.dp = 1;
  EXPECT_EQ(TrialLabel(row), "pixart-alpha-tiny{depth:8} 256px fp32 forward batch=2 cfg=2");
}

// compare's and history's rows of `ulysses=2`, `ulysses=2 vae_parallel=2` and `ulysses=2
// attention=math` all read "ulysses=2" (issue 51): the label names every knob away from its
// default (ConfigurationLabel), and the steps, so trials that differ only in them read apart.
TEST(TrialLabelTest, EveryKnobAwayFromItsDefaultAndTheStepsAreNamed) {
  ResultRow row;
  row.model = "pixart-alpha";
  row.resolution = 256;
  row.precision = "bf16";
  row.scope = "pipeline";
  row.steps = 20;
  row.ulysses = 2;
  const auto with = [&](const std::string& computation, std::int64_t steps = 20) {
    ResultRow knobbed = row;
    knobbed.steps = steps;
    knobbed.computation = computation;
    return TrialLabel(knobbed);
  };
  const std::string base =
      R"({"model":"pixart-alpha","resolution":256,"precision":"bf16","scope":"pipeline",)"
      R"("ulysses":2,)";
  EXPECT_EQ(with(base + R"("steps":20})"), "pixart-alpha 256px bf16 pipeline steps=20 ulysses=2");
  EXPECT_EQ(with(base + R"("steps":20,"vae_parallel":2})"),
            "pixart-alpha 256px bf16 pipeline steps=20 ulysses=2 vae_parallel=2");
  EXPECT_EQ(with(base + R"("steps":20,"attention":"math"})"),
            "pixart-alpha 256px bf16 pipeline steps=20 ulysses=2 attention=math");
  EXPECT_EQ(with(base + R"("steps":8})", 8), "pixart-alpha 256px bf16 pipeline steps=8 ulysses=2");
}

}  // namespace
}  // namespace ditbench::comparison_test

namespace ditbench::comparison_test {
namespace {

TEST(ComparisonSectionTest, AtMostMaxRowsAreListedVerdictsOtherThanSameFirst) {
  Comparison comparison;
  comparison.a.text = "1";
  comparison.b.text = "2";
  for (int i = 0; i < 5; ++i) {
    ComparedTrial t;
    t.trial_key = fmt::format("key{}", i);
    t.label = "config";
    t.change.verdict = i == 3 ? Verdict::kSlower : Verdict::kSame;
    comparison.trials.push_back(t);
  }
  const std::string all = RenderComparisonSection(comparison);
  EXPECT_EQ(all.find("not listed"), std::string::npos);
  const std::string two = RenderComparisonSection(comparison, 2);
  EXPECT_THAT(two, ::testing::HasSubstr("<code>key3</code>"));  // the slower one, first
  EXPECT_THAT(two, ::testing::HasSubstr("<code>key0</code>"));
  EXPECT_THAT(two, ::testing::Not(::testing::HasSubstr("<code>key1</code>")));
  EXPECT_THAT(two, ::testing::HasSubstr("3 more matched trials not listed"));
  EXPECT_THAT(two, ::testing::HasSubstr("ditbench compare 1 2"));
  EXPECT_LT(two.find("key3"), two.find("key0"));
}

}  // namespace
}  // namespace ditbench::comparison_test

namespace ditbench::comparison_test {
namespace {

// Issue 51: Markdown dropped the noise floor and the unmatched trials the table prints, and a
// busy side's latency was marked only in the verdict. The figure carries its note in every
// format ("12.000 (busy)"; a "B ms_note" field where the format has fields of its own).
TEST(ComparisonOutputTest, EveryFormatCarriesTheNoiseFloorTheUnmatchedAndABusySide) {
  Comparison comparison;
  ComparedTrial t;
  t.trial_key = "key0";
  t.label = "config";
  t.change.verdict = Verdict::kSlower;
  t.change.change = {20, 10, 30, 0.95};
  t.change.a_ms = 10;
  t.change.b_ms = 12;
  t.b_busy = true;
  t.busy_note = "load 3.10 on 2 cores";
  comparison.trials.push_back(t);
  comparison.unmatched.push_back({"key1", "ulysses=2", "only in A"});
  comparison.thresholds["cpu"].policy.noise_floor_pct = 35;
  comparison.thresholds["cpu"].source = "cpu default";
  std::ostringstream table, markdown, html;
  WriteComparison(comparison, TableFormat::kText, table);
  WriteComparison(comparison, TableFormat::kMarkdown, markdown);
  for (const std::string& text : {table.str(), markdown.str()}) {
    EXPECT_THAT(text, HasSubstr("noise floor 35.0%")) << text;
    EXPECT_THAT(text, HasSubstr("Unmatched trials: 1")) << text;
    EXPECT_THAT(text, HasSubstr("only in A")) << text;
    EXPECT_THAT(text, HasSubstr("12.000 (busy)")) << text;
    EXPECT_THAT(text, ::testing::Not(HasSubstr("10.000 (busy)"))) << text;
  }
  for (const TableFormatInfo& format : kTableFormats) {
    std::ostringstream out;
    WriteComparison(comparison, format.value, out);
    EXPECT_THAT(out.str(), HasSubstr("key1")) << format.name;  // the unmatched trial
    EXPECT_THAT(out.str(), HasSubstr("busy")) << format.name;
  }
}

TEST(ComparisonOutputTest, AnIntervalTheDataCannotBoundIsNeverPrintedAsNumbers) {
  Comparison comparison;
  ComparedTrial t;
  t.trial_key = "key0";
  t.label = "config";
  t.change.verdict = Verdict::kInconclusive;
  t.change.change = {2.1, -100.0, 30412925.8, 0.95};
  t.change.a_ms = 10;
  t.change.b_ms = 10.21;
  comparison.trials.push_back(t);
  std::ostringstream table, json, csv, html;
  WriteComparison(comparison, TableFormat::kText, table);
  EXPECT_THAT(table.str(), HasSubstr("data cannot bound it"));
  EXPECT_THAT(table.str(), ::testing::Not(HasSubstr("30412925")));
  WriteComparison(comparison, TableFormat::kJson, json);
  const nlohmann::json parsed = nlohmann::json::parse(json.str());
  EXPECT_TRUE(parsed["trials"][0]["ci_low_pct"].is_null());
  EXPECT_TRUE(parsed["trials"][0]["ci_high_pct"].is_null());
  EXPECT_EQ(parsed["trials"][0]["ci_bounded"], false);
  WriteComparison(comparison, TableFormat::kCsv, csv);
  EXPECT_THAT(csv.str(), HasSubstr("key0,config,,inconclusive,2.100,,,10.0000,10.2100,"));
  EXPECT_THAT(csv.str(), ::testing::Not(HasSubstr("30412925")));
  WriteComparison(comparison, TableFormat::kHtml, html);
  EXPECT_THAT(html.str(), HasSubstr("data cannot bound it"));
  EXPECT_THAT(html.str(), ::testing::Not(HasSubstr("30412925")));
  // A bounded interval is printed with its coverage.
  comparison.trials[0].change.change = {2.1, -1.0, 5.0, 0.9};
  std::ostringstream bounded;
  WriteComparison(comparison, TableFormat::kText, bounded);
  EXPECT_THAT(bounded.str(), HasSubstr("[-1.0, +5.0] 90%"));
}

}  // namespace
}  // namespace ditbench::comparison_test
