#include "stats/order_statistics.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "stats/distributions.h"

namespace ditbench::order_statistics_test {
namespace {

// P(B = k) for B ~ Bin(n, p) as a plain product of doubles: a method independent of the
// implementation's lgamma sums in log space, exact enough for small n.
double BinomialPmf(int n, int k, double p) {
  double choose = 1;
  for (int i = 1; i <= k; ++i) choose = choose * (n - k + i) / i;
  return choose * std::pow(p, k) * std::pow(1 - p, n - k);
}

// The equal-tailed interval by brute force over every index, from the direct sums.
std::optional<OrderStatisticInterval> BruteForce(int n, double p, double confidence) {
  const double half_alpha = (1 - confidence) / 2;
  std::vector<double> cdf(n + 1);  // cdf[k] = P(B <= k)
  double sum = 0;
  for (int k = 0; k <= n; ++k) cdf[k] = sum += BinomialPmf(n, k, p);
  int lo = -1, hi = -1;
  for (int k = 0; k < n; ++k) {
    if (cdf[k] <= half_alpha) lo = k;
  }
  for (int k = n - 1; k >= 0; --k) {
    if (1 - cdf[k] <= half_alpha) hi = k;
  }
  if (lo < 0 || hi < 0) return std::nullopt;
  return OrderStatisticInterval{static_cast<std::size_t>(lo), static_cast<std::size_t>(hi),
                                cdf[hi] - cdf[lo]};
}

TEST(OrderStatisticsTest, MedianOfTwentyIsTheSixthToFifteenthSample) {
  // The textbook case: ranks 6..15 (1-based) of 20 samples, coverage 1 - 2 * P(B <= 5)
  // = 1 - 2 * 0.0206947 = 0.958611.
  const auto interval = QuantileOrderStatistics(20, 0.5);
  ASSERT_TRUE(interval);
  EXPECT_EQ(interval->lo, 5u);
  EXPECT_EQ(interval->hi, 14u);
  EXPECT_NEAR(interval->coverage, 0.958611, 1e-6);
}

TEST(OrderStatisticsTest, MedianOfHundredMatchesPublishedTable) {
  // Conover's table of the median's 95% interval: ranks 40 and 61 of 100 (0.9648).
  const auto interval = QuantileOrderStatistics(100, 0.5);
  ASSERT_TRUE(interval);
  EXPECT_EQ(interval->lo, 39u);
  EXPECT_EQ(interval->hi, 60u);
  EXPECT_NEAR(interval->coverage, 0.9648, 1e-4);
}

TEST(OrderStatisticsTest, AgreesWithDirectBinomialSumsForSmallCounts) {
  for (double p : {0.1, 0.25, 0.5, 0.9, 0.95, 0.99}) {
    for (double confidence : {0.8, 0.9, 0.95, 0.99}) {
      for (int n = 1; n <= 400; n += (n < 40 ? 1 : 13)) {
        SCOPED_TRACE(testing::Message() << "n " << n << " p " << p << " conf " << confidence);
        const auto expected = BruteForce(n, p, confidence);
        const auto actual = QuantileOrderStatistics(n, p, confidence);
        ASSERT_EQ(actual.has_value(), expected.has_value());
        if (!expected) continue;
        EXPECT_EQ(actual->lo, expected->lo);
        EXPECT_EQ(actual->hi, expected->hi);
        EXPECT_NEAR(actual->coverage, expected->coverage, 1e-9);
        EXPECT_GE(actual->coverage, confidence);
      }
    }
  }
}

TEST(OrderStatisticsTest, LargeCountsMatchTheIncompleteBetaAndNormalApproximation) {
  // P(B <= k) = I_{1-p}(n - k, k + 1): a third way to the same tails.
  const std::size_t n = 5000;
  const double p = 0.95, half_alpha = 0.025;
  const auto interval = QuantileOrderStatistics(n, p);
  ASSERT_TRUE(interval);
  const auto cdf = [&](double k) { return RegularizedIncompleteBeta(n - k, k + 1, 1 - p); };
  EXPECT_LE(cdf(interval->lo), half_alpha);
  EXPECT_GT(cdf(interval->lo + 1), half_alpha);
  EXPECT_LE(1 - cdf(interval->hi), half_alpha);
  EXPECT_GT(1 - cdf(interval->hi - 1), half_alpha);

  // At n = 10^6 the bounds sit near n p -+ 1.96 sqrt(n p (1 - p)) (= 990000 -+ 195 for p99).
  const auto large = QuantileOrderStatistics(1'000'000, 0.99);
  ASSERT_TRUE(large);
  EXPECT_NEAR(static_cast<double>(large->lo), 990000 - 1.96 * std::sqrt(9900.0), 3);
  EXPECT_NEAR(static_cast<double>(large->hi), 990000 + 1.96 * std::sqrt(9900.0), 3);
  EXPECT_NEAR(large->coverage, 0.95, 0.002);
}

TEST(OrderStatisticsTest, MinSamplesToBoundIsWhereTheIntervalFirstExists) {
  // p99: 0.99^n <= 0.025 from n = 368 (ln 0.025 / ln 0.99 = 367.04); at 90% two-sided, each
  // tail is 5%, the one-sided 95% bound of LoadGen's p99: 0.99^n <= 0.05 from n = 299.
  EXPECT_EQ(MinSamplesToBound(0.99), 368u);
  EXPECT_EQ(MinSamplesToBound(0.99, 0.90), 299u);
  EXPECT_EQ(MinSamplesToBound(0.5), 6u);  // 0.5^6 = 0.0156 <= 0.025 < 0.5^5
  EXPECT_EQ(MinSamplesToBound(0.01), 368u);
  for (double p : {0.5, 0.9, 0.95, 0.99, 0.999}) {
    const std::size_t n = MinSamplesToBound(p);
    EXPECT_TRUE(QuantileOrderStatistics(n, p)) << p;
    EXPECT_FALSE(QuantileOrderStatistics(n - 1, p)) << p;
  }
}

TEST(OrderStatisticsTest, QuantileIntervalUsesTypeSevenAndOrderStatistics) {
  std::vector<double> values;
  for (int i = 1; i <= 20; ++i) values.push_back(10.0 * i);
  const QuantileEstimate median = QuantileInterval(values, 0.5);
  EXPECT_DOUBLE_EQ(median.estimate, 105);  // halfway between the 10th and 11th
  EXPECT_DOUBLE_EQ(median.low, 60);        // 6th sample
  EXPECT_DOUBLE_EQ(median.high, 150);      // 15th sample
  EXPECT_TRUE(median.bounded);
}

TEST(OrderStatisticsTest, TailQuantileOfFewSamplesIsUnboundedAbove) {
  std::vector<double> values;
  for (int i = 1; i <= 50; ++i) values.push_back(i);
  const QuantileEstimate p99 = QuantileInterval(values, 0.99);
  EXPECT_FALSE(p99.bounded);
  EXPECT_DOUBLE_EQ(p99.estimate, 49.51);
  EXPECT_EQ(p99.high, std::numeric_limits<double>::infinity());
  // The lower bound exists: for Bin(50, 0.99), P(B <= 47) = 0.0138 <= 0.025 < P(B <= 48) =
  // 0.0894, so it is the 0-based order statistic 47, the value 48.
  EXPECT_DOUBLE_EQ(p99.low, 48);
}

// The one rule of every percentile shown (query, compare, the report): shown exactly when its
// 95% interval exists. 40 samples bound p90 (36 needed) but neither p95 (72) nor p99 (368).
TEST(PercentileBoundedTest, ShownExactlyWhenTheOrderStatisticIntervalExists) {
  for (double p : {0.5, 0.9, 0.95, 0.99})
    for (std::size_t n = 1; n <= 400; ++n)
      EXPECT_EQ(PercentileBounded(n, p), QuantileOrderStatistics(n, p).has_value())
          << p << " " << n;
  EXPECT_TRUE(PercentileBounded(40, 0.90));
  EXPECT_FALSE(PercentileBounded(40, 0.95));
  EXPECT_FALSE(PercentileBounded(40, 0.99));
  EXPECT_FALSE(PercentileBounded(5, 0.90));
  EXPECT_EQ(PercentileWithheldWhy(40, 0.99),
            "withheld: 40 samples, a 95% interval of p99 needs 368");
  EXPECT_EQ(PercentileWithheldWhy(5, 0.90), "withheld: 5 samples, a 95% interval of p90 needs 36");
}

}  // namespace
}  // namespace ditbench::order_statistics_test
