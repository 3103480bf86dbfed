#include "stats/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace ditbench {
namespace {

// The value of 1-based rank `rank` clamped to [1, n].
double OrderStatistic(const std::vector<double>& sorted, double rank) {
  double n = static_cast<double>(sorted.size());
  double clamped = std::clamp(rank, 1.0, n);
  return sorted[static_cast<std::size_t>(clamped) - 1];
}

// The 1-based ranks [j, k] of the median's interval for n samples, clamped to [1, n].
std::pair<double, double> MedianCiRanks(double n) {
  const double half = 1.96 * std::sqrt(n) / 2;
  return {std::clamp(std::floor(n / 2 - half), 1.0, n),
          std::clamp(std::ceil(1 + n / 2 + half), 1.0, n)};
}

}  // namespace

double MedianCiCoverage(std::size_t count) {
  if (count < 2) return 0;
  const double n = static_cast<double>(count);
  const auto [j, k] = MedianCiRanks(n);
  double coverage = 0;
  for (double i = j; i <= k - 1; ++i)
    coverage += std::exp(std::lgamma(n + 1) - std::lgamma(i + 1) - std::lgamma(n - i + 1) -
                         n * std::log(2.0));
  return std::min(coverage, 1.0);
}

double Quantile(const std::vector<double>& sorted, double q) {
  double h = static_cast<double>(sorted.size() - 1) * std::clamp(q, 0.0, 1.0);
  std::size_t low = static_cast<std::size_t>(std::floor(h));
  if (low + 1 >= sorted.size()) return sorted.back();
  return sorted[low] + (h - static_cast<double>(low)) * (sorted[low + 1] - sorted[low]);
}

Summary Summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;  // outside the contract; all zeros rather than UB
  std::sort(samples.begin(), samples.end());
  s.n = samples.size();
  double n = static_cast<double>(s.n);
  s.min = samples.front();
  s.max = samples.back();
  s.median = Quantile(samples, 0.5);
  s.p90 = Quantile(samples, 0.9);
  s.p99 = Quantile(samples, 0.99);

  double sum = 0;
  for (double x : samples) sum += x;
  s.mean = sum / n;
  if (s.n >= 2) {
    double squares = 0;
    for (double x : samples) squares += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(squares / (n - 1));
  }
  s.cov = s.mean != 0 ? s.stddev / s.mean : 0;

  const auto [j, k] = MedianCiRanks(n);
  s.ci_low = OrderStatistic(samples, j);
  s.ci_high = OrderStatistic(samples, k);
  s.ci_coverage = MedianCiCoverage(s.n);

  std::vector<double> deviations;
  deviations.reserve(samples.size());
  for (double x : samples) deviations.push_back(std::abs(x - s.median));
  std::sort(deviations.begin(), deviations.end());
  double threshold = 3 * 1.4826 * Quantile(deviations, 0.5);
  for (double d : deviations) s.outliers += d > threshold ? 1 : 0;
  return s;
}

double RelativeCiHalfWidth(const Summary& summary) {
  if (summary.n < 2 || summary.median == 0) return std::numeric_limits<double>::infinity();
  return (summary.ci_high - summary.ci_low) / (2 * summary.median);
}

}  // namespace ditbench
