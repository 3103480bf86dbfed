// Change points in a trial's history: the campaigns after which its latency moved and stayed
// moved. A pure function over a series of measurements, each with its own interval; no I/O.
// docs/measurement.md ("History and change points") states the rule for users;
// tests/stats/change_points_test.cc pins each part of it.
//
// The rule, on log latencies y_i (a ratio is what a performance engineer reads):
//  1. Noise. Each point's own spread c_i is its interval's half-width on the log scale over z
//     (z = 1.96: the interval read as a 95% normal one; 0 without an interval). The
//     night-to-night noise tau is estimated from the series itself, robustly: 1.4826 times the
//     median of |y_{i+1} - y_i| over consecutive usable points, over sqrt(2) (one level shift
//     or one bad night moves one or two of the differences, not their median); at least
//     kMinNoise. A point's weight is 1 / s_i with s_i = sqrt(c_i^2 + tau^2): a point with a
//     wide interval counts less.
//  2. Unusable points. A point measured on a busy machine, or *disturbed*: more than
//     kDisturbedNoise tau away from the median of up to 3 usable neighbours on its left and
//     from that of up to 3 on its right (a first or last point, with one side only, is never
//     disturbed; a step's first point matches its right side). Unusable points are shown but
//     take no part below: they can neither create a change point nor hide one. When fewer
//     than half the points are quiet, busy is the machine's normal state: busy points are
//     used like quiet ones (ChangePointAnalysis::busy_used), the disturbed test still applies.
//  3. Segmentation. The usable points are split into segments of at least `min_segment`
//     points minimising  sum over segments of sum_i w_i |y_i - m_seg|  +  beta * segments,
//     with m_seg the segment's weighted median (a robust level: one outlier moves it little)
//     and beta = penalty_per_log_n * ln(usable points), in the same noise units; the exact
//     optimum (dynamic programming over every split). One bad night cannot form a segment of
//     its own, and a shift must persist for `min_segment` campaigns to be seen.
//  4. Judgement. Each boundary's size is the Hodges-Lehmann change between the usable points
//     of the segments on either side, with its distribution-free interval (stats/change.h).
//     It is kept when the interval excludes 0 and |size| reaches min_effect_pct; otherwise
//     the weakest failing boundary is dropped, its segments merged, and all are judged again.
//  5. Ends. A usable point at either end of the series can never be a segment of its own
//     (min_segment), so a shift that began at the latest campaign (or ended after the first)
//     is not yet a change point. Such a point is an *edge shift* when it lies more than
//     kDisturbedNoise tau and at least min_effect_pct off the level of the rest of its segment
//     (in the middle of the series it would be disturbed): the next campaign tells a
//     disturbance from a change. The rest of a segment of 3 or more points is its inner
//     points (the other end may have shifted too); of 2, the other point, and then only the
//     latest point is judged (the first's shift would be the same comparison).
// With fewer than 3 steps between usable quiet points the series cannot tell its noise from
// a shift (one step would be half of the median), so tau is then the median of the points' own
// spreads c_i (at least kMinNoise), ChangePointAnalysis::noise_from_intervals says so, and no
// point is judged disturbed unless the points have intervals.
#pragma once

#include <cstddef>
#include <vector>

#include "stats/change.h"

namespace ditbench {

// One measurement of the series, in time order: a latency (ms, > 0) with its interval
// (low <= value <= high; both 0 when unknown) and whether the machine was busy.
struct SeriesPoint {
  double value = 0;
  double low = 0, high = 0;
  bool busy = false;
};

inline constexpr double kMinNoise = 0.001;       // tau's lower bound on the log scale (0.1%)
inline constexpr double kDisturbedNoise = 5;     // how many tau off both sides is disturbed

struct ChangePointPolicy {
  double min_effect_pct = 2;    // a smaller change is not a change point
  double confidence = 0.95;     // of each change's interval
  int min_segment = 2;          // campaigns a shift must last to be seen
  double penalty_per_log_n = 2;
};

enum class PointUse { kUsed, kBusy, kDisturbed };
const char* PointUseName(PointUse use);  // "used", "busy", "disturbed"

// A persistent shift between two usable points: `last_good` and `first_bad` index the series
// (unusable points may lie between them). change.pct > 0: slower after.
struct ChangePoint {
  std::size_t last_good = 0, first_bad = 0;
  ChangeEstimate change;
};

// A shift at an end of the series that rule 5 cannot yet call a change point: `index` is the
// first or the latest point; pct is its latency against the level of the rest of its segment.
struct EdgeShift {
  std::size_t index = 0;
  bool latest = false;  // the latest point (else the first)
  double pct = 0;
};

struct ChangePointAnalysis {
  std::vector<PointUse> use;          // per point
  std::vector<double> level;          // per point: its segment's weighted median latency (ms)
  double noise_pct = 0;               // tau as a percentage, (exp(tau) - 1) * 100
  bool noise_from_intervals = false;  // too few steps: tau from the points' own intervals
  bool busy_used = false;             // most points were busy: busy ones were used (rule 2)
  std::vector<ChangePoint> changes;   // in time order
  std::vector<EdgeShift> edge_shifts;  // rule 5, the first point's before the latest's
};

// REQUIRES: every value > 0. An empty series gives an empty analysis.
ChangePointAnalysis FindChangePoints(const std::vector<SeriesPoint>& series,
                                     const ChangePointPolicy& policy = {});

}  // namespace ditbench
