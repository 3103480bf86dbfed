#include "stats/stats.h"

#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

namespace ditbench::stats_test {
namespace {

TEST(StatsTest, SummaryOfSkewedSampleMatchesHandComputedValues) {
  // Deliberately unsorted; sorted it is {1, 2, 3, 4, 100}.
  Summary s = Summarize({4, 100, 1, 3, 2});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 22);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  // Type 7: h = 4 * 0.9 = 3.6 -> x[3] + 0.6 * (x[4] - x[3]) = 4 + 0.6 * 96.
  EXPECT_DOUBLE_EQ(s.p90, 61.6);
  // h = 4 * 0.99 = 3.96 -> 4 + 0.96 * 96.
  EXPECT_DOUBLE_EQ(s.p99, 96.16);
  // Squared deviations from 22: 441 + 400 + 361 + 324 + 6084 = 7610; / (n - 1) = 1902.5.
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(1902.5));
  EXPECT_NEAR(s.stddev, 43.6176, 1e-4);
  EXPECT_DOUBLE_EQ(s.cov, std::sqrt(1902.5) / 22);
  // n = 5: j = floor(2.5 - 2.191) = 0 -> 1; k = ceil(1 + 2.5 + 2.191) = 6 -> 5.
  EXPECT_DOUBLE_EQ(s.ci_low, 1);
  EXPECT_DOUBLE_EQ(s.ci_high, 100);
  // |x - 3| = {2, 1, 0, 1, 97}; MAD = 1; threshold 4.4478: only 100 is an outlier.
  EXPECT_EQ(s.outliers, 1);
}

TEST(StatsTest, MedianOfEvenCountInterpolatesBetweenMiddleValues) {
  Summary s = Summarize({10, 20, 30, 40});
  EXPECT_DOUBLE_EQ(s.median, 25);
  // h = 3 * 0.9 = 2.7 -> 30 + 0.7 * 10.
  EXPECT_DOUBLE_EQ(s.p90, 37);
  EXPECT_EQ(s.outliers, 0);
}

TEST(StatsTest, SingleSampleHasZeroSpreadAndItselfAsInterval) {
  Summary s = Summarize({7.5});
  EXPECT_DOUBLE_EQ(s.median, 7.5);
  EXPECT_DOUBLE_EQ(s.p99, 7.5);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_DOUBLE_EQ(s.cov, 0);
  EXPECT_DOUBLE_EQ(s.ci_low, 7.5);
  EXPECT_DOUBLE_EQ(s.ci_high, 7.5);
  EXPECT_TRUE(std::isinf(RelativeCiHalfWidth(s)));
}

TEST(StatsTest, MedianIntervalOfHundredSamplesUsesRanks40And61) {
  // x = 1..100, so the value at 1-based rank r is r itself.
  // j = floor(50 - 1.96 * 10 / 2) = floor(40.2) = 40; k = ceil(1 + 50 + 9.8) = 61.
  std::vector<double> x(100);
  std::iota(x.begin(), x.end(), 1.0);
  Summary s = Summarize(x);
  EXPECT_DOUBLE_EQ(s.median, 50.5);
  EXPECT_DOUBLE_EQ(s.ci_low, 40);
  EXPECT_DOUBLE_EQ(s.ci_high, 61);
  EXPECT_DOUBLE_EQ(RelativeCiHalfWidth(s), 21.0 / (2 * 50.5));
}

TEST(StatsTest, MedianIntervalOfTwentySamplesUsesRanks5And16) {
  // j = floor(10 - 1.96 * sqrt(20) / 2) = floor(5.617) = 5; k = ceil(11 + 4.383) = 16.
  std::vector<double> x(20);
  std::iota(x.begin(), x.end(), 1.0);
  Summary s = Summarize(x);
  EXPECT_DOUBLE_EQ(s.ci_low, 5);
  EXPECT_DOUBLE_EQ(s.ci_high, 16);
}

TEST(StatsTest, OutliersUseScaledMedianAbsoluteDeviation) {
  // median 10; |x - 10| = {1, 0, 0, 1, 5, 4}; MAD = median{0,0,1,1,4,5} = 1;
  // threshold 3 * 1.4826 = 4.4478: 15 (deviation 5) is an outlier, 6 (deviation 4) is not.
  Summary s = Summarize({9, 10, 10, 11, 15, 6});
  EXPECT_DOUBLE_EQ(s.median, 10);
  EXPECT_EQ(s.outliers, 1);
}

TEST(StatsTest, ConstantSamplesMakeEveryDifferentSampleAnOutlier) {
  // MAD = 0, so the threshold is 0: any sample off the median counts.
  Summary s = Summarize({5, 5, 5, 5, 6});
  EXPECT_EQ(s.outliers, 1);
  EXPECT_EQ(Summarize({5, 5, 5}).outliers, 0);
}

TEST(StatsTest, QuantileEndpointsAreMinimumAndMaximum) {
  std::vector<double> sorted = {1, 2, 3, 4, 100};
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0), 1);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 1), 100);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.25), 2);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.375), 2.5);
}

TEST(StatsTest, ZeroMedianGivesInfiniteRelativeInterval) {
  Summary s = Summarize({0, 0, 0});
  EXPECT_DOUBLE_EQ(s.cov, 0);
  EXPECT_TRUE(std::isinf(RelativeCiHalfWidth(s)));
}

TEST(StatsTest, MedianCiCoverageIsExactForSmallSamples) {
  // [x(1), x(n)] for n <= 5: coverage 1 - 2 / 2^n.
  EXPECT_DOUBLE_EQ(MedianCiCoverage(5), 30.0 / 32);
  EXPECT_DOUBLE_EQ(MedianCiCoverage(3), 0.75);
  EXPECT_DOUBLE_EQ(MedianCiCoverage(2), 0.5);
  EXPECT_EQ(MedianCiCoverage(1), 0);
  // n = 6: j = floor(3 - 2.4005) = 0 -> 1, k = ceil(6.4005) = 7 -> 6: 62/64.
  EXPECT_NEAR(MedianCiCoverage(6), 62.0 / 64, 1e-12);
  // n = 20: j = floor(10 - 4.383) = 5, k = ceil(15.383) = 16: P(5 <= B <= 15) for B(20, 1/2)
  // = 1 - 2 * P(B <= 4) = 1 - 2 * 6196 / 2^20.
  EXPECT_NEAR(MedianCiCoverage(20), 1 - 2 * 6196.0 / 1048576, 1e-12);
  EXPECT_GE(MedianCiCoverage(100), 0.95);
  EXPECT_DOUBLE_EQ(Summarize({1, 2, 3}).ci_coverage, 0.75);
}

}  // namespace
}  // namespace ditbench::stats_test
