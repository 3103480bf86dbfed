// Distribution-free confidence intervals for quantiles from order statistics. Pure functions,
// no dependencies.
//
// For n samples of any continuous distribution, the number of samples below the true
// p-quantile is Binomial(n, p), so the interval [x(lo), x(hi)] (0-based order statistics of the
// sorted samples) covers the p-quantile with probability P(lo < B <= hi), B ~ Bin(n, p). The
// interval here is the equal-tailed one: lo is the largest index with P(B <= lo) <= alpha / 2
// and hi the smallest with P(B > hi) <= alpha / 2, alpha = 1 - confidence; its exact coverage
// is at least `confidence`. When n is too small, even x(0) or x(n-1) leaves more than alpha / 2
// in a tail (p99 needs n >= 368 for a 95% interval: 0.99^n <= 0.025): that bound does not
// exist, and a tail percentile is then reported as unbounded rather than as the largest sample.
// MLPerf LoadGen's early stopping rests on the same binomial argument: a run may stop once its
// count of samples bounds the percentiles it reports (MinSamplesToBound).
//
// Binomial tail sums are taken in log space (each term from lgamma), so n up to 10^6 and p
// near 0 or 1 neither underflow nor lose the tail; time is linear in n.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ditbench {

// 0-based indices into n sorted samples, and the interval's exact coverage probability.
struct OrderStatisticInterval {
  std::size_t lo = 0, hi = 0;
  double coverage = 0;
};

// The equal-tailed interval of the p-quantile, or nullopt when n is too small for its lower or
// upper bound to exist. REQUIRES: 0 < p < 1, 0 < confidence < 1.
std::optional<OrderStatisticInterval> QuantileOrderStatistics(std::size_t n, double p,
                                                              double confidence = 0.95);

// The fewest samples for which QuantileOrderStatistics gives an interval (both bounds exist):
// the smallest n with max(p, 1 - p)^n <= (1 - confidence) / 2. REQUIRES as above.
std::size_t MinSamplesToBound(double p, double confidence = 0.95);

// The one rule for showing a percentile, whatever prints it (query's p90_ms, p95_ms and
// p99_ms, the p95 a serving trial stores for compare and the report): the p-quantile of n
// samples is shown only when its 95% interval is bounded (n >= MinSamplesToBound(p)); one the
// samples cannot bound is withheld, with PercentileWithheldWhy's reason, never shown as the
// largest sample. REQUIRES: 0 < p < 1.
bool PercentileBounded(std::size_t n, double p);
// "withheld: 40 samples, a 95% interval of p99 needs 368"
std::string PercentileWithheldWhy(std::size_t n, double p);

// A quantile of samples with its confidence interval. `estimate` is stats.h's Quantile (R
// type 7, linear interpolation between order statistics). `low` and `high` are order
// statistics from QuantileOrderStatistics; a bound that n samples cannot give is -infinity
// (low) or +infinity (high), and then `bounded` is false.
struct QuantileEstimate {
  double estimate = 0, low = 0, high = 0;
  bool bounded = false;
};

// REQUIRES: `sorted` ascending and non-empty; 0 < p < 1, 0 < confidence < 1.
QuantileEstimate QuantileInterval(const std::vector<double>& sorted, double p,
                                  double confidence = 0.95);

}  // namespace ditbench
