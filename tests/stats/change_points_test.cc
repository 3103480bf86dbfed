#include "stats/change_points.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace ditbench::change_points_test {
namespace {

// 30 nightly points around `ms` with a deterministic +-2% wobble, each with a +-1% interval;
// from night `step_at` (1-based) on, `step` times slower.
std::vector<SeriesPoint> Nights(double ms = 100, int step_at = 0, double step = 1,
                                int nights = 30) {
  std::vector<SeriesPoint> series;
  for (int night = 1; night <= nights; ++night) {
    double value = ms * (1 + 0.02 * std::sin(night * 2.4));
    if (step_at > 0 && night >= step_at) value *= step;
    series.push_back({value, value * 0.99, value * 1.01, false});
  }
  return series;
}

TEST(ChangePointsTest, APersistentSlowdownIsOneChangePointAtItsFirstNight) {
  const ChangePointAnalysis a = FindChangePoints(Nights(100, 18, 1.15));
  ASSERT_EQ(a.changes.size(), 1u);
  EXPECT_EQ(a.changes[0].last_good, 16u);  // night 17
  EXPECT_EQ(a.changes[0].first_bad, 17u);  // night 18
  EXPECT_NEAR(a.changes[0].change.pct, 15, 2);
  EXPECT_GT(a.changes[0].change.low_pct, 0);
  EXPECT_NEAR(a.level[0], 100, 3);
  EXPECT_NEAR(a.level[29], 115, 3);
}

TEST(ChangePointsTest, AFlatSeriesHasNone) {
  const ChangePointAnalysis a = FindChangePoints(Nights());
  EXPECT_TRUE(a.changes.empty());
  EXPECT_GT(a.noise_pct, 0.5);
  EXPECT_LT(a.noise_pct, 4);
}

TEST(ChangePointsTest, OneWildNightIsDisturbedAndChangesNothing) {
  std::vector<SeriesPoint> series = Nights();
  series[8] = {300, 100, 900, false};  // night 9: three times slower, a wide interval
  const ChangePointAnalysis a = FindChangePoints(series);
  EXPECT_TRUE(a.changes.empty());
  EXPECT_EQ(a.use[8], PointUse::kDisturbed);
  EXPECT_EQ(a.use[7], PointUse::kUsed);
}

TEST(ChangePointsTest, TwoBadNightsInARowDoNotMakeAShiftEither) {
  std::vector<SeriesPoint> series = Nights();
  series[8].value = series[9].value = 250;
  EXPECT_TRUE(FindChangePoints(series).changes.empty());
}

TEST(ChangePointsTest, ABadNightAtTheStepCannotHideIt) {
  std::vector<SeriesPoint> series = Nights(100, 18, 1.15);
  series[16] = {600, 100, 2000, false};  // night 17, the last good one, disturbed
  const ChangePointAnalysis a = FindChangePoints(series);
  ASSERT_EQ(a.changes.size(), 1u);
  EXPECT_EQ(a.changes[0].last_good, 15u);  // night 16: night 17 takes no part
  EXPECT_EQ(a.changes[0].first_bad, 17u);
  EXPECT_EQ(a.use[16], PointUse::kDisturbed);
}

TEST(ChangePointsTest, BusyNightsCannotCreateAChangePoint) {
  std::vector<SeriesPoint> series = Nights();
  for (int i = 20; i < 24; ++i) {
    series[i].value *= 1.4;
    series[i].busy = true;
  }
  const ChangePointAnalysis a = FindChangePoints(series);
  EXPECT_TRUE(a.changes.empty());
  EXPECT_EQ(a.use[21], PointUse::kBusy);
  // The same nights measured quietly are a real excursion.
  for (int i = 20; i < 24; ++i) series[i].busy = false;
  EXPECT_EQ(FindChangePoints(series).changes.size(), 2u);
}

TEST(ChangePointsTest, BusyNightsCannotHideOne) {
  std::vector<SeriesPoint> series = Nights(100, 18, 1.15);
  series[16].busy = series[17].busy = true;
  series[16].value = series[17].value = 100;  // measured at the old speed while busy
  const ChangePointAnalysis a = FindChangePoints(series);
  ASSERT_EQ(a.changes.size(), 1u);
  EXPECT_EQ(a.changes[0].last_good, 15u);
  EXPECT_EQ(a.changes[0].first_bad, 18u);
}

TEST(ChangePointsTest, OnAnAlwaysBusyMachineBusyIsNormal) {
  std::vector<SeriesPoint> series = Nights(100, 18, 1.15);
  for (int i = 0; i < 20; ++i) series[i].busy = true;
  const ChangePointAnalysis a = FindChangePoints(series);
  EXPECT_TRUE(a.busy_used);
  EXPECT_EQ(a.use[3], PointUse::kUsed);
  ASSERT_EQ(a.changes.size(), 1u);
  EXPECT_EQ(a.changes[0].first_bad, 17u);
}

TEST(ChangePointsTest, ALastBadNightIsNotYetAChange) {
  std::vector<SeriesPoint> series = Nights();
  series.back().value *= 1.5;
  EXPECT_TRUE(FindChangePoints(series).changes.empty());
  // Two nights at the new speed are.
  series[28].value *= 1.5;
  ASSERT_EQ(FindChangePoints(series).changes.size(), 1u);
}

TEST(ChangePointsTest, ALastBadNightIsAnEdgeShiftTheNextNightJudges) {
  std::vector<SeriesPoint> series = Nights();
  series.back().value *= 60;  // 100 ms -> 6000 ms on the latest night
  const ChangePointAnalysis a = FindChangePoints(series);
  EXPECT_TRUE(a.changes.empty());
  ASSERT_EQ(a.edge_shifts.size(), 1u);
  EXPECT_TRUE(a.edge_shifts[0].latest);
  EXPECT_EQ(a.edge_shifts[0].index, series.size() - 1);
  EXPECT_NEAR(a.edge_shifts[0].pct, 5900, 300);
  // Within the noise (the wobble is 2%) the latest night is no edge shift.
  EXPECT_TRUE(FindChangePoints(Nights()).edge_shifts.empty());
  // Once a change point begins there, it is one, and no longer an edge shift.
  series[28].value *= 60;
  const ChangePointAnalysis two = FindChangePoints(series);
  EXPECT_EQ(two.changes.size(), 1u);
  EXPECT_TRUE(two.edge_shifts.empty());
}

TEST(ChangePointsTest, AFirstNightOffTheRestIsAnEdgeShift) {
  const std::vector<SeriesPoint> series = {{23, 22.5, 23.5, false},
                                           {1400, 1390, 1410, false},
                                           {1401, 1390, 1410, false},
                                           {1399, 1390, 1410, false}};
  const ChangePointAnalysis a = FindChangePoints(series);
  EXPECT_TRUE(a.changes.empty());
  ASSERT_EQ(a.edge_shifts.size(), 1u);
  EXPECT_FALSE(a.edge_shifts[0].latest);
  EXPECT_EQ(a.edge_shifts[0].index, 0u);
  EXPECT_LT(a.edge_shifts[0].pct, -95);
}

TEST(ChangePointsTest, AShortSeriesTakesItsNoiseFromItsIntervalsNotFromTheStep) {
  // 23 -> 1400 ms in three campaigns: one step is half of the two steps' median, so the
  // series' own noise would be 762%; the measurements' spread (1%) is what is known.
  const std::vector<SeriesPoint> series = {
      {23, 22.8, 23.2, false}, {23.1, 22.9, 23.3, false}, {1400, 1386, 1414, false}};
  const ChangePointAnalysis a = FindChangePoints(series);
  EXPECT_TRUE(a.noise_from_intervals);
  EXPECT_LT(a.noise_pct, 2);
  ASSERT_EQ(a.edge_shifts.size(), 1u);
  EXPECT_TRUE(a.edge_shifts[0].latest);
  EXPECT_FALSE(FindChangePoints(Nights()).noise_from_intervals);
}

TEST(ChangePointsTest, AChangeBelowTheMinimumEffectIsNone) {
  const std::vector<SeriesPoint> series = Nights(100, 15, 1.04);
  ChangePointPolicy policy;
  policy.min_effect_pct = 5;
  EXPECT_TRUE(FindChangePoints(series, policy).changes.empty());
  policy.min_effect_pct = 2;
  EXPECT_EQ(FindChangePoints(series, policy).changes.size(), 1u);
}

TEST(ChangePointsTest, WideIntervalsWeighLess) {
  // The last four nights 12% slower: seen when they are measured tightly...
  std::vector<SeriesPoint> series = Nights();
  for (int i = 26; i < 30; ++i) {
    series[i].value *= 1.12;
    series[i].low = series[i].value * 0.99;
    series[i].high = series[i].value * 1.01;
  }
  EXPECT_EQ(FindChangePoints(series).changes.size(), 1u);
  // ... but not when their own intervals say they could be anywhere within +-50%.
  for (int i = 26; i < 30; ++i) {
    series[i].low = series[i].value * 0.5;
    series[i].high = series[i].value * 1.5;
  }
  EXPECT_TRUE(FindChangePoints(series).changes.empty());
}

TEST(ChangePointsTest, FasterIsANegativeChange) {
  const ChangePointAnalysis a = FindChangePoints(Nights(100, 10, 0.7));
  ASSERT_EQ(a.changes.size(), 1u);
  EXPECT_EQ(a.changes[0].first_bad, 9u);
  EXPECT_LT(a.changes[0].change.high_pct, 0);
}

TEST(ChangePointsTest, NoiseAloneRarelyMakesAChangePoint) {
  // 200 series of 30 nights of log-normal noise (sd 3%): the false change points are rare.
  std::mt19937 rng(23);
  std::normal_distribution<double> normal;
  int with_change = 0;
  for (int s = 0; s < 200; ++s) {
    std::vector<SeriesPoint> series;
    for (int i = 0; i < 30; ++i) {
      const double v = 100 * std::exp(0.03 * normal(rng));
      series.push_back({v, v * 0.99, v * 1.01, false});
    }
    with_change += FindChangePoints(series).changes.empty() ? 0 : 1;
  }
  EXPECT_LE(with_change, 6);
}

TEST(ChangePointsTest, ShortAndEmptySeries) {
  EXPECT_TRUE(FindChangePoints({}).changes.empty());
  const ChangePointAnalysis one = FindChangePoints({{10, 9, 11, false}});
  EXPECT_TRUE(one.changes.empty());
  EXPECT_DOUBLE_EQ(one.level[0], 10);
  const ChangePointAnalysis busy = FindChangePoints({{10, 0, 0, true}, {12, 0, 0, true}});
  EXPECT_TRUE(busy.changes.empty());
}

}  // namespace
}  // namespace ditbench::change_points_test
