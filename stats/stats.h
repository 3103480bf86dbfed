// Summary statistics of timing samples. Pure functions over a vector of milliseconds; no I/O.
//
// Definitions (each pinned by tests/stats/stats_test.cc against hand-computed values):
//  * median, p90, p99: linear interpolation between order statistics (R type 7, numpy's
//    default): q-quantile of sorted x[0..n-1] at position h = (n-1)q.
//  * stddev: sample standard deviation (n-1 denominator); 0 for n < 2.
//  * cov: stddev / mean (0 when the mean is 0).
//  * ci of the median: distribution-free 95% interval from binomial order statistics: the
//    widest [x(j), x(k)] (1-based ranks) with j = floor(n/2 - 1.96 sqrt(n)/2),
//    k = ceil(1 + n/2 + 1.96 sqrt(n)/2), clamped to [1, n]. Its exact coverage is
//    sum_{i=j}^{k-1} C(n, i) / 2^n (ci_coverage): about 95% for n >= 6, but less for small n
//    because of the clamping (n = 5: 93.75%, n = 3: 75%, n = 2: 50%, n = 1: 0%).
//  * outliers: samples with |x - median| > 3 * 1.4826 * MAD (median absolute deviation).
#pragma once

#include <cstddef>
#include <vector>

namespace ditbench {

struct Summary {
  std::size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0, stddev = 0, cov = 0;
  double p90 = 0, p99 = 0;
  double ci_low = 0, ci_high = 0;
  double ci_coverage = 0;  // exact coverage of [ci_low, ci_high] (MedianCiCoverage(n))
  int outliers = 0;
};

// REQUIRES: samples non-empty.
Summary Summarize(std::vector<double> samples);

// The q-quantile (0 <= q <= 1) of sorted samples, R type 7. REQUIRES: sorted, non-empty.
double Quantile(const std::vector<double>& sorted, double q);

// The exact coverage probability of the median's interval that Summarize gives for n samples
// of any continuous distribution (0 for n < 2).
double MedianCiCoverage(std::size_t n);

// Half-width of the median's confidence interval relative to the median:
// (ci_high - ci_low) / (2 * median). Infinity when fewer than 2 samples or median is 0.
double RelativeCiHalfWidth(const Summary& summary);

}  // namespace ditbench
