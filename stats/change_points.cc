#include "stats/change_points.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "stats/stats.h"

namespace ditbench {
namespace {

constexpr double kIntervalZ = 1.96;
constexpr std::size_t kNeighbours = 3;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Quantile(values, 0.5);
}

// The fewest steps between consecutive points from which the series' own noise is estimated:
// with fewer, one level shift is half of their median or more.
constexpr std::size_t kMinNoiseSteps = 3;

// A point's own spread c_i on the log scale (rule 1); 0 without an interval.
double OwnSpread(const SeriesPoint& p) {
  return p.low > 0 && p.high > p.low ? (std::log(p.high) - std::log(p.low)) / (2 * kIntervalZ) : 0;
}

// Noise tau (rule 1) from the log values of the usable points, in order; REQUIRES: at least
// kMinNoiseSteps steps.
double SeriesNoise(const std::vector<double>& y) {
  std::vector<double> steps;
  for (std::size_t i = 1; i < y.size(); ++i) steps.push_back(std::abs(y[i] - y[i - 1]));
  return std::max(kMinNoise, 1.4826 * Median(steps) / std::sqrt(2.0));
}

// Weighted median of (value, weight) pairs and the weighted L1 cost around it.
struct SegmentFit {
  double level = 0, cost = 0;
};
SegmentFit FitSegment(std::vector<std::pair<double, double>> points) {
  std::sort(points.begin(), points.end());
  double total = 0;
  for (const auto& [y, w] : points) total += w;
  double seen = 0, level = points.front().first;
  for (const auto& [y, w] : points) {
    seen += w;
    if (seen >= total / 2) {
      level = y;
      break;
    }
  }
  double cost = 0;
  for (const auto& [y, w] : points) cost += w * std::abs(y - level);
  return {level, cost};
}

// Rule 3: the optimal segmentation of usable points 0..m-1 as the start of each segment.
std::vector<std::size_t> Segment(const std::vector<double>& y, const std::vector<double>& w,
                                 std::size_t min_segment, double beta) {
  const std::size_t m = y.size();
  const double inf = std::numeric_limits<double>::infinity();
  // cost[s][t]: points s..t-1 as one segment.
  std::vector<std::vector<double>> cost(m + 1, std::vector<double>(m + 1, inf));
  for (std::size_t s = 0; s < m; ++s) {
    std::vector<std::pair<double, double>> points;
    for (std::size_t t = s + 1; t <= m; ++t) {
      points.emplace_back(y[t - 1], w[t - 1]);
      if (t - s >= min_segment) cost[s][t] = FitSegment(points).cost;
    }
  }
  std::vector<double> best(m + 1, inf);
  std::vector<std::size_t> from(m + 1, 0);
  best[0] = -beta;
  for (std::size_t t = min_segment; t <= m; ++t) {
    for (std::size_t s = 0; s + min_segment <= t; ++s) {
      if (best[s] == inf) continue;
      const double total = best[s] + cost[s][t] + beta;
      if (total < best[t]) {
        best[t] = total;
        from[t] = s;
      }
    }
  }
  std::vector<std::size_t> starts;
  if (best[m] == inf) return {0};  // too few points to split at all
  for (std::size_t t = m; t > 0; t = from[t]) starts.push_back(from[t]);
  std::reverse(starts.begin(), starts.end());
  return starts;
}

// Rule 4: judges every boundary between the segments that start at `starts` (positions in
// `used`, the indices of the series' usable points) and drops the weakest failing one until
// all pass; returns the change points at the boundaries left in `starts`.
std::vector<ChangePoint> KeepSignificantBoundaries(const std::vector<SeriesPoint>& series,
                                                   const std::vector<std::size_t>& used,
                                                   const ChangePointPolicy& policy,
                                                   std::vector<std::size_t>& starts) {
  const auto values = [&](std::size_t from, std::size_t to) {
    std::vector<double> v;
    for (std::size_t k = from; k < to; ++k) v.push_back(series[used[k]].value);
    return v;
  };
  while (true) {
    std::vector<ChangePoint> kept;
    std::size_t weakest = 0;
    double weakest_size = std::numeric_limits<double>::infinity();
    for (std::size_t b = 1; b < starts.size(); ++b) {
      const std::size_t end = b + 1 < starts.size() ? starts[b + 1] : used.size();
      ChangePoint change;
      change.last_good = used[starts[b] - 1];
      change.first_bad = used[starts[b]];
      change.change = HodgesLehmannChange(values(starts[b - 1], starts[b]), values(starts[b], end),
                                          policy.confidence);
      const bool excludes_zero = change.change.low_pct > 0 || change.change.high_pct < 0;
      if (excludes_zero && std::abs(change.change.pct) >= policy.min_effect_pct) {
        kept.push_back(change);
      } else if (std::abs(change.change.pct) < weakest_size) {
        weakest_size = std::abs(change.change.pct);
        weakest = b;
      }
    }
    if (weakest == 0) return kept;
    starts.erase(starts.begin() + static_cast<std::ptrdiff_t>(weakest));
  }
}

}  // namespace

const char* PointUseName(PointUse use) {
  switch (use) {
    case PointUse::kUsed: return "used";
    case PointUse::kBusy: return "busy";
    case PointUse::kDisturbed: return "disturbed";
  }
  return "?";
}

ChangePointAnalysis FindChangePoints(const std::vector<SeriesPoint>& series,
                                     const ChangePointPolicy& policy) {
  ChangePointAnalysis analysis;
  const std::size_t n = series.size();
  analysis.use.assign(n, PointUse::kUsed);
  analysis.level.assign(n, 0);
  if (n == 0) return analysis;

  // Rules 1 and 2: noise from the quiet points, then the disturbed ones.
  std::size_t busy = 0;
  for (const SeriesPoint& p : series) busy += p.busy ? 1 : 0;
  analysis.busy_used = busy > 0 && 2 * (n - busy) < n;
  std::vector<std::size_t> quiet;
  for (std::size_t i = 0; i < n; ++i) {
    if (series[i].busy && !analysis.busy_used) analysis.use[i] = PointUse::kBusy;
    else quiet.push_back(i);
  }
  std::vector<double> quiet_y;
  for (std::size_t i : quiet) quiet_y.push_back(std::log(series[i].value));
  analysis.noise_from_intervals = quiet.size() < kMinNoiseSteps + 1;
  double tau = kMinNoise;
  bool known_spread = false;  // a short series' points have intervals
  if (analysis.noise_from_intervals) {
    std::vector<double> spreads;
    for (std::size_t i : quiet) spreads.push_back(OwnSpread(series[i]));
    if (!spreads.empty()) tau = std::max(kMinNoise, Median(spreads));
    known_spread = tau > kMinNoise;
  } else {
    tau = SeriesNoise(quiet_y);
  }
  analysis.noise_pct = std::expm1(tau) * 100;
  for (std::size_t q = 0; q < quiet.size(); ++q) {
    if (q == 0 || q + 1 == quiet.size() || (analysis.noise_from_intervals && !known_spread))
      continue;
    std::vector<double> left, right;
    for (std::size_t k = 1; k <= kNeighbours && k <= q; ++k) left.push_back(quiet_y[q - k]);
    for (std::size_t k = 1; k <= kNeighbours && q + k < quiet.size(); ++k)
      right.push_back(quiet_y[q + k]);
    const double off = std::min(std::abs(quiet_y[q] - Median(left)),
                                std::abs(quiet_y[q] - Median(right)));
    if (off > kDisturbedNoise * tau) analysis.use[quiet[q]] = PointUse::kDisturbed;
  }

  std::vector<std::size_t> used;
  std::vector<double> y, w;
  for (std::size_t i = 0; i < n; ++i) {
    if (analysis.use[i] != PointUse::kUsed) continue;
    const SeriesPoint& p = series[i];
    const double own = OwnSpread(p);
    used.push_back(i);
    y.push_back(std::log(p.value));
    w.push_back(1 / std::sqrt(own * own + tau * tau));
  }
  if (used.empty()) return analysis;

  // Rule 3.
  const std::size_t min_segment = static_cast<std::size_t>(std::max(1, policy.min_segment));
  const double beta = policy.penalty_per_log_n * std::log(static_cast<double>(used.size()));
  std::vector<std::size_t> starts = Segment(y, w, min_segment, beta);

  // Rule 4: judge every boundary; drop the weakest failing one until all pass.
  analysis.changes = KeepSignificantBoundaries(series, used, policy, starts);

  // Levels: each point (usable or not) takes the level of the segment it lies in.
  for (std::size_t b = 0; b < starts.size(); ++b) {
    const std::size_t end = b + 1 < starts.size() ? starts[b + 1] : used.size();
    std::vector<std::pair<double, double>> points;
    for (std::size_t k = starts[b]; k < end; ++k) points.emplace_back(y[k], w[k]);
    const double level = std::exp(FitSegment(points).level);
    const std::size_t first = b == 0 ? 0 : used[starts[b]];
    const std::size_t last = end == used.size() ? n : used[end];
    for (std::size_t i = first; i < last; ++i) analysis.level[i] = level;
  }

  // Rule 5: a shift at either end, against the level of the rest of its segment.
  // The rest: the segment's inner points when it has 3 or more (the other end may be shifted
  // too), else its other point.
  const auto edge = [&](std::size_t from, std::size_t to, std::size_t edge_k, bool latest) {
    std::vector<std::pair<double, double>> rest;
    for (std::size_t k = from; k < to; ++k)
      if (k != edge_k && (to - from < 3 || (k != from && k + 1 != to)))
        rest.emplace_back(y[k], w[k]);
    if (rest.empty()) return;
    const double off = y[edge_k] - FitSegment(rest).level;
    const double pct = std::expm1(off) * 100;
    if (std::abs(off) > kDisturbedNoise * tau && std::abs(pct) >= policy.min_effect_pct)
      analysis.edge_shifts.push_back({used[edge_k], latest, pct});
  };
  const std::size_t first_end = starts.size() > 1 ? starts[1] : used.size();
  if (first_end >= 3) edge(0, first_end, 0, /*latest=*/false);
  edge(starts.back(), used.size(), used.size() - 1, /*latest=*/true);
  return analysis;
}

}  // namespace ditbench
