#include "stats/order_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/stats.h"

namespace ditbench {
namespace {

// log(exp(a) + exp(b)) without overflow or underflow; -infinity is log(0).
double LogAdd(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == -std::numeric_limits<double>::infinity()) return a;
  return a + std::log1p(std::exp(b - a));
}

// log P(B = k) for B ~ Bin(n, p).
double LogBinomialPmf(double n, double k, double p) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1) + k * std::log(p) +
         (n - k) * std::log1p(-p);
}

// Each bound on its own (nullopt: it does not exist), with the log of the probability it
// leaves outside: log P(B <= lo) and log P(B > hi).
struct OneSidedBounds {
  std::optional<std::size_t> lo, hi;
  double log_tail_below = 0, log_tail_above = 0;
};

// Walks the lower tail up from 0 and the upper tail down from n, each only as far as the
// tail's probability stays within alpha / 2.
OneSidedBounds Bounds(std::size_t count, double p, double confidence) {
  const double n = static_cast<double>(count);
  const double log_half_alpha = std::log((1 - confidence) / 2);
  OneSidedBounds bounds;
  double tail = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < count; ++k) {
    const double next = LogAdd(tail, LogBinomialPmf(n, static_cast<double>(k), p));
    if (next > log_half_alpha) break;
    tail = next;
    bounds.lo = k;
    bounds.log_tail_below = tail;
  }
  tail = -std::numeric_limits<double>::infinity();
  for (std::size_t k = count; k > 0; --k) {  // tail = log P(B >= k) = log P(B > k - 1)
    const double next = LogAdd(tail, LogBinomialPmf(n, static_cast<double>(k), p));
    if (next > log_half_alpha) break;
    tail = next;
    bounds.hi = k - 1;
    bounds.log_tail_above = tail;
  }
  return bounds;
}

}  // namespace

std::optional<OrderStatisticInterval> QuantileOrderStatistics(std::size_t n, double p,
                                                              double confidence) {
  const OneSidedBounds bounds = Bounds(n, p, confidence);
  if (!bounds.lo || !bounds.hi) return std::nullopt;
  return OrderStatisticInterval{
      *bounds.lo, *bounds.hi,
      1 - std::exp(bounds.log_tail_below) - std::exp(bounds.log_tail_above)};
}

std::size_t MinSamplesToBound(double p, double confidence) {
  // The closed form, then a step either way in case rounding put it one off the walk's answer.
  const double estimate = std::log((1 - confidence) / 2) / std::log(std::max(p, 1 - p));
  std::size_t n = static_cast<std::size_t>(std::max(1.0, std::ceil(estimate)));
  while (!QuantileOrderStatistics(n, p, confidence)) ++n;
  while (n > 1 && QuantileOrderStatistics(n - 1, p, confidence)) --n;
  return n;
}

bool PercentileBounded(std::size_t n, double p) { return n >= MinSamplesToBound(p); }

std::string PercentileWithheldWhy(std::size_t n, double p) {
  return "withheld: " + std::to_string(n) + " samples, a 95% interval of p" +
         std::to_string(static_cast<int>(std::lround(p * 100))) + " needs " +
         std::to_string(MinSamplesToBound(p));
}

QuantileEstimate QuantileInterval(const std::vector<double>& sorted, double p, double confidence) {
  const OneSidedBounds bounds = Bounds(sorted.size(), p, confidence);
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  return QuantileEstimate{Quantile(sorted, p), bounds.lo ? sorted[*bounds.lo] : -kInfinity,
                          bounds.hi ? sorted[*bounds.hi] : kInfinity, bounds.lo && bounds.hi};
}

}  // namespace ditbench
