#include "stats/change.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "stats/stats.h"

namespace ditbench::change_test {
namespace {

// One launch of `n` iterations around `ms`, each multiplied by (1 + noise * N(0, 1)).
std::vector<double> Launch(std::mt19937& rng, double ms, double noise, int n = 30) {
  std::normal_distribution<double> normal;
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) samples.push_back(ms * std::max(0.05, 1 + noise * normal(rng)));
  return samples;
}

// `launches` launches around `ms`, each launch offset by (1 + launch_sd * N(0, 1)).
std::vector<std::vector<double>> Launches(std::mt19937& rng, double ms, int launches,
                                          double launch_sd, double noise) {
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> result;
  for (int l = 0; l < launches; ++l)
    result.push_back(Launch(rng, ms * (1 + launch_sd * normal(rng)), noise));
  return result;
}

ChangePolicy Gpu() { return {.min_effect_pct = 2, .noise_floor_pct = 5}; }
ChangePolicy Cpu() { return {.min_effect_pct = 5, .noise_floor_pct = 35}; }

TEST(ChangeTest, HodgesLehmannOfHandComputedPairs) {
  // log differences {log 2 - log 1, log 2 - log 2, log 4 - log 1, log 4 - log 2}
  // = {log 2, 0, log 4, log 2}: median log 2, so +100%.
  ChangeEstimate c = HodgesLehmannChange({1, 2}, {2, 4});
  EXPECT_NEAR(c.pct, 100, 1e-9);
  // n = m = 2: k = floor(2 - 1.96 * sqrt(20/12)) < 0, so the interval is the full range.
  EXPECT_NEAR(c.low_pct, 0, 1e-9);
  EXPECT_NEAR(c.high_pct, 300, 1e-9);
  ChangeEstimate constant = HodgesLehmannChange({10, 10, 10}, {5, 5, 5});
  EXPECT_NEAR(constant.pct, -50, 1e-9);
  EXPECT_NEAR(constant.low_pct, -50, 1e-9);
  EXPECT_NEAR(constant.high_pct, -50, 1e-9);
}

TEST(ChangeTest, HodgesLehmannSelectionMatchesAFullSort) {
  // The implementation selects three order statistics; a full sort must agree, for odd and
  // even numbers of pairwise differences, with exact and approximate interval ranks.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(1, 3);
  for (auto [n, m] : {std::pair{7, 9}, std::pair{8, 10}, std::pair{30, 31}, std::pair{1, 1},
                      std::pair{200, 200}, std::pair{300, 47}}) {
    std::vector<double> a, b, differences;
    for (int i = 0; i < n; ++i) a.push_back(uniform(rng));
    for (int i = 0; i < m; ++i) b.push_back(uniform(rng) * 1.2);
    for (double y : b)
      for (double x : a) differences.push_back(std::log(y) - std::log(x));
    std::sort(differences.begin(), differences.end());
    const double total = static_cast<double>(differences.size());
    // Up to 2,500 differences the exact U distribution (MannWhitneyCdf, checked against a
    // brute-force count below) gives k, above it the normal approximation.
    double k = std::max(
        0.0, std::floor(n * m / 2.0 - 1.959963985 * std::sqrt(n * m * (n + m + 1) / 12.0)));
    if (n * m <= 2500) {
      const std::vector<double> cdf = MannWhitneyCdf(n, m);
      k = 0;
      while (2 * cdf[static_cast<std::size_t>(k) + 1] <= 0.05) ++k;
    }
    const auto at = [&](double rank) {
      return differences[static_cast<std::size_t>(std::clamp(rank, 1.0, total)) - 1];
    };
    const double h = (total - 1) / 2;
    const double median = at(std::floor(h) + 1) +
                          (h - std::floor(h)) * (at(std::ceil(h) + 1) - at(std::floor(h) + 1));
    ChangeEstimate c = HodgesLehmannChange(a, b);
    EXPECT_NEAR(c.pct, std::expm1(median) * 100, 1e-9) << n << "x" << m;
    EXPECT_NEAR(c.low_pct, std::expm1(at(k + 1)) * 100, 1e-9) << n << "x" << m;
    EXPECT_NEAR(c.high_pct, std::expm1(at(total - k)) * 100, 1e-9) << n << "x" << m;
  }
}

TEST(ChangeTest, PairwiseDifferenceSelectorGivesEveryRankOfAFullSortWithTies) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> few(0, 4);  // many equal values, many equal differences
  for (int round = 0; round < 5; ++round) {
    std::vector<double> a, b, differences;
    for (int i = 0; i < 40; ++i) a.push_back(few(rng) * 0.5);
    for (int i = 0; i < 35; ++i) b.push_back(few(rng) * 0.25);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    for (double y : b)
      for (double x : a) differences.push_back(y - x);
    std::sort(differences.begin(), differences.end());
    const PairwiseDifferenceSelector select(a, b);
    for (std::size_t k = 1; k <= differences.size(); ++k)
      ASSERT_EQ(select.Kth(k), differences[k - 1]) << "rank " << k;
  }
}

TEST(ChangeTest, WelchIntervalOfHandComputedLogs) {
  // Logs {0, 0.2} and {1, 1.2}: difference 1, variances 0.02 each -> se^2 = 0.02, df = 2,
  // half-width t(0.975, 2) * sqrt(0.02) = 4.302653 * 0.1414214.
  ChangeEstimate c = WelchLogChange({1, std::exp(0.2)}, {std::exp(1.0), std::exp(1.2)});
  const double half = 4.302653 * std::sqrt(0.02);
  EXPECT_NEAR(c.pct, std::expm1(1.0) * 100, 1e-9);
  EXPECT_NEAR(c.low_pct, std::expm1(1 - half) * 100, 1e-4);
  EXPECT_NEAR(c.high_pct, std::expm1(1 + half) * 100, 1e-4);
}

TEST(ChangeTest, KnownSlowdownIsSlowerAndSpeedupIsFaster) {
  std::mt19937 rng(1);
  auto a = Launch(rng, 100, 0.01);
  LatencyChange slower = CompareLatency({a}, {Launch(rng, 120, 0.01)}, Gpu());
  EXPECT_EQ(slower.verdict, Verdict::kSlower) << slower.reason;
  EXPECT_EQ(slower.method, ChangeMethod::kIterations);
  EXPECT_NEAR(slower.change.pct, 20, 1.5);
  EXPECT_LT(slower.change.low_pct, slower.change.pct);
  EXPECT_GT(slower.change.high_pct, slower.change.pct);
  LatencyChange faster = CompareLatency({a}, {Launch(rng, 50, 0.01)}, Cpu());
  EXPECT_EQ(faster.verdict, Verdict::kFaster) << faster.reason;
  EXPECT_NEAR(faster.change.pct, -50, 2);
}

TEST(ChangeTest, KnownShiftAcrossLaunchesIsFoundByTheLaunchTest) {
  std::mt19937 rng(2);
  LatencyChange c = CompareLatency(Launches(rng, 100, 3, 0.01, 0.01),
                                   Launches(rng, 90, 3, 0.01, 0.01), Gpu());
  EXPECT_EQ(c.method, ChangeMethod::kLaunches);
  EXPECT_EQ(c.a_launches, 3);
  EXPECT_EQ(c.verdict, Verdict::kFaster) << c.reason;
  EXPECT_NEAR(c.change.pct, -10, 2);
}

TEST(ChangeTest, NoShiftIsSame) {
  std::mt19937 rng(3);
  LatencyChange one = CompareLatency({Launch(rng, 100, 0.01)}, {Launch(rng, 100, 0.01)}, Gpu());
  EXPECT_EQ(one.verdict, Verdict::kSame) << one.reason;
  LatencyChange three = CompareLatency(Launches(rng, 100, 3, 0.002, 0.01),
                                       Launches(rng, 100, 3, 0.002, 0.01), Gpu());
  EXPECT_EQ(three.method, ChangeMethod::kLaunches);
  EXPECT_EQ(three.verdict, Verdict::kSame) << three.reason;
}

TEST(ChangeTest, BetweenLaunchDriftWithoutShiftIsNeverFasterOrSlower) {
  // Launch offsets of several percent, iterations tight within each launch: what the issue
  // measured on CPU. One launch of each, tested on its iterations, looks significant...
  std::mt19937 rng(4);
  std::vector<std::vector<double>> a, b;
  for (double offset : {1.06, 0.96, 1.00}) a.push_back(Launch(rng, 100 * offset, 0.005));
  for (double offset : {0.95, 1.03, 1.01}) b.push_back(Launch(rng, 100 * offset, 0.005));
  ChangeEstimate naive = HodgesLehmannChange(a[0], b[0]);
  EXPECT_LT(naive.high_pct, 0) << "a test on one launch's iterations should false-alarm";
  // ... the launch test does not.
  LatencyChange c = CompareLatency(a, b, Gpu());
  EXPECT_EQ(c.method, ChangeMethod::kLaunches);
  EXPECT_TRUE(c.verdict == Verdict::kSame || c.verdict == Verdict::kInconclusive) << c.reason;
  // One launch per side with a 24% launch offset (the 5.41 vs 4.12 ms): within the
  // CPU noise floor, so never "faster".
  LatencyChange one = CompareLatency({Launch(rng, 5.41, 0.01)}, {Launch(rng, 4.12, 0.01)}, Cpu());
  EXPECT_TRUE(one.verdict == Verdict::kSame || one.verdict == Verdict::kInconclusive)
      << one.reason;
}

TEST(ChangeTest, ReplicatesOfOneCampaignThatDriftTogetherNeedTheNoiseFloor) {
  // bench/replicates-aa on the shared CPU: A/A campaigns of 3 replicates each, where one
  // campaign ran in a quieter hour: its launches agree with each other and all sit 25% lower.
  std::mt19937 rng(7);
  const auto a = Launches(rng, 100, 3, 0.02, 0.01), b = Launches(rng, 75, 3, 0.02, 0.01);
  const std::vector<long long> campaign_1(3, 1), campaign_3(3, 3);
  // Launches taken as independent: a false alarm.
  EXPECT_EQ(CompareLatency(a, b, Cpu()).verdict, Verdict::kFaster);
  // As replicates of one campaign a side: the CI must clear the CPU floor of 35%.
  LatencyChange c = CompareLatency(a, b, Cpu(), campaign_1, campaign_3);
  EXPECT_EQ(c.method, ChangeMethod::kLaunches);
  EXPECT_TRUE(c.verdict == Verdict::kSame || c.verdict == Verdict::kInconclusive) << c.reason;
  EXPECT_NE(c.reason.find("one campaign on a side"), std::string::npos) << c.reason;
  // A slowdown far beyond the floor is still found.
  LatencyChange slower =
      CompareLatency(a, Launches(rng, 200, 3, 0.02, 0.01), Cpu(), campaign_1, campaign_3);
  EXPECT_EQ(slower.verdict, Verdict::kSlower) << slower.reason;
}

TEST(ChangeTest, MannWhitneyCdfMatchesEveryOrderingCounted) {
  // Brute force: every way of choosing which of the n + m ranks belong to the first sample.
  for (auto [n, m] : {std::pair<std::size_t, std::size_t>{1, 1}, {2, 2}, {3, 3}, {4, 3}, {2, 6},
                      {5, 5}}) {
    std::vector<double> counts(n * m + 1, 0);
    double orderings = 0;
    for (unsigned mask = 0; mask < (1u << (n + m)); ++mask) {
      if (static_cast<std::size_t>(__builtin_popcount(mask)) != n) continue;
      // U: pairs (first-sample value, second-sample value) with the first one larger.
      std::size_t u = 0, seconds_below = 0;
      for (std::size_t rank = 0; rank < n + m; ++rank) {
        if (mask & (1u << rank)) u += seconds_below;
        else ++seconds_below;
      }
      counts[u] += 1;
      orderings += 1;
    }
    const std::vector<double> cdf = MannWhitneyCdf(n, m);
    ASSERT_EQ(cdf.size(), n * m + 1);
    double cumulative = 0;
    for (std::size_t u = 0; u <= n * m; ++u) {
      cumulative += counts[u];
      EXPECT_NEAR(cdf[u], cumulative / orderings, 1e-12) << n << "x" << m << " u=" << u;
    }
  }
  EXPECT_NEAR(MannWhitneyCdf(3, 3)[0], 1.0 / 20, 1e-15);
}

TEST(ChangeTest, RankIntervalUsesExactOrderStatisticsAndSaysItsCoverage) {
  // 5 and 5: P(U <= 2) = 4/252, P(U <= 3) = 7/252, so the 95% interval is [D(3), D(23)] of
  // the 25 differences and covers 1 - 8/252 = 96.8% (the tabulated critical value U <= 2).
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {10, 20, 30, 40, 50};
  std::vector<double> differences;
  for (double x : a)
    for (double y : b) differences.push_back(std::log(y) - std::log(x));
  std::sort(differences.begin(), differences.end());
  ChangeEstimate five = HodgesLehmannChange(a, b);
  EXPECT_NEAR(five.low_pct, std::expm1(differences[2]) * 100, 1e-9);
  EXPECT_NEAR(five.high_pct, std::expm1(differences[22]) * 100, 1e-9);
  EXPECT_NEAR(five.coverage, 1 - 8.0 / 252, 1e-12);
  // 3 and 3 cannot reach 95%: the widest interval, [D(1), D(9)], covering 90%.
  ChangeEstimate three = HodgesLehmannChange({1, 2, 3}, {10, 20, 30});
  EXPECT_NEAR(three.low_pct, (10.0 / 3 - 1) * 100, 1e-9);
  EXPECT_NEAR(three.high_pct, (30.0 - 1) * 100, 1e-9);
  EXPECT_NEAR(three.coverage, 0.9, 1e-12);
}

TEST(ChangeTest, OneScatteredLaunchDoesNotHideASlowdownEveryLaunchShows) {
  // bench/replicates-aa beside CPU burners: every burdened launch is over twice as slow as
  // every quiet one, but one of them is 30x slower than its siblings.
  std::mt19937 rng(9);
  std::vector<std::vector<double>> quiet, burdened;
  for (double ms : {3.4, 3.5, 3.3}) quiet.push_back(Launch(rng, ms, 0.02, 20));
  for (double ms : {8.0, 9.0, 229.0}) burdened.push_back(Launch(rng, ms, 0.05, 20));
  const std::vector<long long> campaign_3(3, 3), campaign_4(3, 4);
  std::vector<double> quiet_medians, burdened_medians;
  for (const auto& l : quiet) quiet_medians.push_back(Summarize(l).median);
  for (const auto& l : burdened) burdened_medians.push_back(Summarize(l).median);
  // A t interval of the log medians reaches down into the floor: the scatter hides the change.
  EXPECT_LT(WelchLogChange(quiet_medians, burdened_medians).low_pct, 35);
  LatencyChange c = CompareLatency(quiet, burdened, Cpu(), campaign_3, campaign_4);
  EXPECT_EQ(c.method, ChangeMethod::kLaunches);
  EXPECT_EQ(c.verdict, Verdict::kSlower) << c.reason;
  EXPECT_GT(c.change.low_pct, 100);
  EXPECT_NEAR(c.change.coverage, 0.9, 1e-12);
  EXPECT_NE(c.reason.find("90%"), std::string::npos) << c.reason;
  // An A/A pair where one campaign has such a launch is not called anything.
  std::vector<std::vector<double>> scattered_quiet = quiet;
  scattered_quiet[1] = Launch(rng, 95, 0.02, 20);
  LatencyChange aa = CompareLatency(quiet, scattered_quiet, Cpu(), campaign_3, campaign_4);
  EXPECT_EQ(aa.verdict, Verdict::kInconclusive) << aa.reason;
}

TEST(ChangeTest, TheChangeIsBOverAOfEachSidesMedianOfLaunchMedians) {
  // A: two 10 ms launches of 5 iterations and one 30 ms launch of 11; B: three 11 ms launches.
  // The pooled iterations of A have their median at 30 ms, its launch medians at 10 ms: the
  // change, its interval and the milliseconds beside it all read the launch medians.
  const std::vector<std::vector<double>> a = {std::vector<double>(5, 10.0),
                                              std::vector<double>(5, 10.0),
                                              std::vector<double>(11, 30.0)};
  const std::vector<std::vector<double>> b(3, std::vector<double>(5, 11.0));
  const std::vector<long long> one(3, 1), two(3, 2);
  LatencyChange c = CompareLatency(a, b, Gpu(), one, two);
  EXPECT_DOUBLE_EQ(c.a_ms, 10.0);
  EXPECT_DOUBLE_EQ(c.b_ms, 11.0);
  EXPECT_NEAR(c.change.pct, 10.0, 1e-9);
  EXPECT_LE(c.change.low_pct, c.change.pct);
  EXPECT_GE(c.change.high_pct, c.change.pct);
  // Several campaigns a side: the geometric mean of each campaign's median of launch medians.
  const std::vector<std::vector<double>> a2 = {{10, 10, 10}, {10, 10, 10}, {40, 40, 40},
                                               {20, 20, 20}};
  const std::vector<long long> a2_sessions = {1, 1, 1, 2};  // medians 10 and 20
  const std::vector<std::vector<double>> b2 = {{15, 15, 15}, {30, 30, 30}};
  LatencyChange several = CompareLatency(a2, b2, Gpu(), a2_sessions, {3, 4});
  EXPECT_NEAR(several.a_ms, std::sqrt(10.0 * 20.0), 1e-9);
  EXPECT_NEAR(several.b_ms, std::sqrt(15.0 * 30.0), 1e-9);
  EXPECT_NEAR(several.change.pct, 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(SideLatencyMs({10, 40, 10}, {}), std::cbrt(10.0 * 40.0 * 10.0));
}

TEST(ChangeTest, AnIntervalTheDataCannotBoundIsNotBounded) {
  // Two campaigns a side, one of A's 30x off: Welch's interval on 1 degree of freedom spans
  // from -100% to millions of percent.
  const std::vector<std::vector<double>> a = {{100, 100, 100}, {3000, 3000, 3000}};
  const std::vector<std::vector<double>> b = {{100, 100, 100}, {110, 110, 110}};
  LatencyChange c = CompareLatency(a, b, Gpu(), {1, 2}, {3, 4});
  EXPECT_EQ(c.verdict, Verdict::kInconclusive) << c.reason;
  EXPECT_FALSE(c.change.Bounded());
  EXPECT_TRUE((ChangeEstimate{10, 5, 15, 0.95}.Bounded()));
  EXPECT_TRUE((ChangeEstimate{0, -50, 400, 0.95}.Bounded()));   // 0.5x to 5x: 10x apart
  EXPECT_FALSE((ChangeEstimate{0, -50, 401, 0.95}.Bounded()));
  EXPECT_FALSE((ChangeEstimate{0, -100, 10, 0.95}.Bounded()));
  EXPECT_FALSE((ChangeEstimate{0, 5, INFINITY, 0.95}.Bounded()));
}

TEST(ChangeTest, TwoLaunchesOfOneCampaignASideAreTooFewForARankInterval) {
  std::mt19937 rng(10);
  const std::vector<long long> one(2, 1), two(2, 2);
  LatencyChange c = CompareLatency(Launches(rng, 100, 2, 0.01, 0.01),
                                   Launches(rng, 300, 2, 0.01, 0.01), Cpu(), one, two);
  EXPECT_EQ(c.verdict, Verdict::kInconclusive) << c.reason;
  EXPECT_NE(c.reason.find("too few launches"), std::string::npos) << c.reason;
}

TEST(ChangeTest, AaCampaignsWithDriftWithinTheFloorGiveNoFalseAlarm) {
  // 400 A/A pairs of one campaign a side, 3 replicates each: campaign drift of 10% (log sd),
  // launch-to-launch 5%, iterations 1%. The CPU floor of 35% stands for that drift.
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  const std::vector<long long> one(3, 1), two(3, 2);
  int alarms = 0;
  for (int i = 0; i < 400; ++i) {
    const double drift_a = std::exp(0.1 * normal(rng)), drift_b = std::exp(0.1 * normal(rng));
    LatencyChange c = CompareLatency(Launches(rng, 100 * drift_a, 3, 0.05, 0.01),
                                     Launches(rng, 100 * drift_b, 3, 0.05, 0.01), Cpu(), one, two);
    alarms += c.verdict == Verdict::kFaster || c.verdict == Verdict::kSlower;
  }
  EXPECT_LE(alarms, 4);  // 1%
}

TEST(ChangeTest, SeveralCampaignsASideMakeTheCampaignTheUnit) {
  // Two replicates in each of three campaigns a side, B 10% slower: campaign means are tested
  // against each other with the minimum effect, as independent launches were.
  std::mt19937 rng(8);
  std::vector<std::vector<double>> a, b;
  std::vector<long long> a_sessions, b_sessions;
  for (int campaign = 0; campaign < 3; ++campaign) {
    for (auto& launch : Launches(rng, 100, 2, 0.01, 0.01)) {
      a.push_back(launch);
      a_sessions.push_back(campaign);
    }
    for (auto& launch : Launches(rng, 110, 2, 0.01, 0.01)) {
      b.push_back(launch);
      b_sessions.push_back(10 + campaign);
    }
  }
  LatencyChange c = CompareLatency(a, b, Gpu(), a_sessions, b_sessions);
  EXPECT_EQ(c.verdict, Verdict::kSlower) << c.reason;
  EXPECT_EQ(c.a_launches, 6);
  EXPECT_NEAR(c.change.pct, 10, 2);
}

TEST(ChangeTest, AaFalseAlarmRateWithDriftStaysNearTheTestLevel) {
  // 400 A/A pairs, 3 launches per side, 5% launch-to-launch drift: a false "faster"/"slower"
  // needs a 5%-level significant result *and* a >= 2% estimate.
  std::mt19937 rng(5);
  int alarms = 0;
  for (int i = 0; i < 400; ++i) {
    LatencyChange c = CompareLatency(Launches(rng, 100, 3, 0.05, 0.01),
                                     Launches(rng, 100, 3, 0.05, 0.01), Gpu());
    alarms += c.verdict == Verdict::kFaster || c.verdict == Verdict::kSlower;
  }
  EXPECT_LE(alarms, 24);  // 6%: the 5% level plus sampling slack
}

TEST(ChangeTest, HighNoiseIsInconclusive) {
  std::mt19937 rng(6);
  LatencyChange one = CompareLatency({Launch(rng, 100, 0.5, 10)}, {Launch(rng, 110, 0.5, 10)},
                                     Gpu());
  EXPECT_EQ(one.verdict, Verdict::kInconclusive) << one.reason;
  LatencyChange launches = CompareLatency(Launches(rng, 100, 3, 0.3, 0.01),
                                          Launches(rng, 110, 3, 0.3, 0.01), Gpu());
  EXPECT_EQ(launches.verdict, Verdict::kInconclusive) << launches.reason;
}

TEST(ChangeTest, TooFewSamplesIsInconclusive) {
  LatencyChange c = CompareLatency({{1, 1}}, {{5, 5, 5}}, Gpu());
  EXPECT_EQ(c.verdict, Verdict::kInconclusive);
  EXPECT_NE(c.reason.find("too few"), std::string::npos);
  LatencyChange none = CompareLatency({}, {{5, 5, 5}}, Gpu());
  EXPECT_EQ(none.verdict, Verdict::kInconclusive);
}

TEST(ChangeTest, SignificantButTinyChangeAcrossLaunchesIsSame) {
  std::mt19937 rng(7);
  LatencyChange c = CompareLatency(Launches(rng, 100, 5, 0.001, 0.001),
                                   Launches(rng, 101, 5, 0.001, 0.001), Gpu());
  EXPECT_GT(c.change.low_pct, 0);
  EXPECT_EQ(c.verdict, Verdict::kSame) << c.reason;
}

TEST(ChangeTest, NamesAreStable) {
  EXPECT_STREQ(VerdictName(Verdict::kSlower), "slower");
  EXPECT_STREQ(VerdictName(Verdict::kInconclusive), "inconclusive");
  EXPECT_STREQ(ChangeMethodName(ChangeMethod::kLaunches), "launches");
}

}  // namespace
}  // namespace ditbench::change_test
