// Is B faster or slower than A? The change in latency between two measurements of one trial,
// with a confidence interval and a verdict that respects launch-to-launch variation.
// Pure functions, no I/O; tests/stats/change_test.cc pins each against synthetic samples with
// known shifts, drift and noise.
//
// Changes are (B / A - 1) in percent, estimated on log latencies (a ratio is what a
// performance engineer reads, and a log shift is symmetric: 2x slower and 2x faster have equal
// weight).
//
// Why two methods. Iterations of one process share that process's state (clocks, memory
// placement, autotuning, a CPU's frequency and caches): a second launch of the same trial lands
// somewhere else, often well outside the first launch's own confidence interval. A test on
// iteration samples alone therefore calls most A/A pairs "significant". So:
//  * launches (both sides measured in >= 2 separate launches, sweep field `replicates`): the
//    unit is the launch's median. Launches of one campaign share its session (the machine's
//    state that hour): with >= 2 sessions a side the unit is the session, Welch's t on the log
//    of each session's mean gives the CI, and the verdict needs the CI to exclude 0 *and* the
//    estimate to reach `min_effect_pct`. With one session on a side (replicates of one
//    campaign) the CI is the distribution-free one of the launch medians (Hodges-Lehmann with
//    Mann-Whitney's exact distribution) and must clear the noise floor too (bench/replicates-aa
//    found A/A campaigns of 3 replicates each called "faster" by a launch test alone). A rank
//    interval, because a disturbed campaign's launches scatter: one launch 30x slower than its
//    siblings widens a t interval until it admits no change at all, while every launch of the
//    campaign is still slower than every launch of the other.
//  * iterations (a single launch on either side): the Hodges-Lehmann estimate of the log shift
//    between the pooled iteration samples, with its distribution-free CI; the verdict needs the
//    whole CI beyond a noise floor (`noise_floor_pct`) that stands for the launch-to-launch
//    variation this data cannot see (a per-device default, or one learned from A/A pairs).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ditbench {

enum class Verdict { kFaster, kSlower, kSame, kInconclusive };
const char* VerdictName(Verdict verdict);  // "faster", "slower", "same", "inconclusive"

// A change of B against A in percent, (B / A - 1) * 100, with a confidence interval.
struct ChangeEstimate {
  double pct = 0, low_pct = 0, high_pct = 0;
  // The two-sided coverage of [low_pct, high_pct]: the confidence asked for, or (few samples,
  // rank interval) the exact coverage of the widest interval the sample sizes allow.
  double coverage = 0.95;
  // Whether the interval covers less than `confidence` (printed with its coverage then).
  bool CoversLessThan(double confidence = 0.95) const { return coverage < confidence - 5e-4; }
  // Whether the interval bounds the change at all: both ends finite and within a factor of
  // kMaxBoundedSpan of each other. A wider interval ([-100.0, +30412925.8]: two launches a
  // side, one of them 30x off) says only that the data cannot bound the change; it is
  // printed as such, never as numbers.
  static constexpr double kMaxBoundedSpan = 10;
  bool Bounded() const;
};

// P(U <= u) for u = 0 .. n m, Mann-Whitney's U for samples of n and m under the null
// hypothesis (every ordering of the n + m values equally likely), exact. O(n^2 m^2).
std::vector<double> MannWhitneyCdf(std::size_t n, std::size_t m);

// Hodges-Lehmann: the median of all pairwise log(b_j) - log(a_i), with the distribution-free
// (Moses) interval [D(C), D(nm + 1 - C)] between order statistics of those differences: C from
// Mann-Whitney's exact distribution when n m <= 2,500, its normal approximation above. C is the
// largest whose two-sided coverage reaches `confidence`; when no C does (3 and 3 values: the
// widest interval [D(1), D(9)] covers 90%), C = 1 and `coverage` is what it covers. Samples
// beyond 1,000 per side are thinned to 1,000 evenly spaced order statistics first (keeps it
// O(10^6)). REQUIRES: non-empty, all > 0.
ChangeEstimate HodgesLehmannChange(std::vector<double> a, std::vector<double> b,
                                   double confidence = 0.95);

// The k-th smallest (1-based) of the n x m differences b[j] - a[i] of two sorted samples,
// without forming them all: the value range is bisected, counting the differences at most a
// value in O(n + m) each time, until at most a few hundred lie in the bracket; those are
// selected exactly. The result equals sorting every difference (tested). REQUIRES: a and b
// sorted ascending, non-empty; 1 <= k <= n m. Borrows a and b.
class PairwiseDifferenceSelector {
 public:
  PairwiseDifferenceSelector(const std::vector<double>& a, const std::vector<double>& b);
  double Kth(std::size_t k) const;
  std::size_t CountAtMost(double x) const;  // differences <= x

 private:
  const std::vector<double>& a_;
  const std::vector<double>& b_;
};

// Welch's t interval of mean(log b) - mean(log a). REQUIRES: >= 2 values per side, all > 0.
// Two sides with no spread at all give a zero-width interval at the estimate.
ChangeEstimate WelchLogChange(const std::vector<double>& a, const std::vector<double>& b,
                              double confidence = 0.95);

// Thresholds of the verdict (percent). Defaults: NoiseFloorDefaults in analysis/comparison.h
// picks them per device kind.
struct ChangePolicy {
  double min_effect_pct = 2;   // launches: a smaller, significant change reads "same"
  double noise_floor_pct = 5;  // iterations: the change must clear this, CI and all
  double confidence = 0.95;
  int min_samples = 3;         // fewer timed iterations on a side: inconclusive
};

enum class ChangeMethod { kLaunches, kIterations };
const char* ChangeMethodName(ChangeMethod method);  // "launches", "iterations"

struct LatencyChange {
  Verdict verdict = Verdict::kInconclusive;
  ChangeMethod method = ChangeMethod::kIterations;
  ChangeEstimate change;
  // Each side's latency, the one estimator the change is read against: per session (campaign)
  // the median of its launch medians, which is what `query` calls the trial's latency_ms; with
  // several sessions on a side, their geometric mean (SideLatencyMs). change.pct is exactly
  // (b_ms / a_ms - 1) * 100, and the interval always contains it.
  double a_ms = 0, b_ms = 0;
  int a_launches = 0, b_launches = 0;
  std::string reason;  // one line: why this verdict
};

// A side's latency (see LatencyChange::a_ms): `sessions[i]` is the session of `medians[i]`,
// the median of launch i (no session: a session of its own). REQUIRES: non-empty, all > 0.
double SideLatencyMs(const std::vector<double>& medians, const std::vector<long long>& sessions);

// Compares two measurements of one trial. Each side is a list of launches, each launch the
// trial's per-iteration latency series (the slowest rank per iteration, warm-up excluded), and
// optionally the *session* of each launch (the campaign it ran in; empty: every launch is a
// session of its own). Launches of one session share its machine state (the load, clocks,
// thermal state of that hour), so their spread does not show how far another session lands.
// Whatever the method, the change is b_ms / a_ms - 1 (SideLatencyMs); the method gives its
// interval, widened where needed to contain the change.
//  launches, >= 2 sessions a side: the unit is the session (the median of its launch medians,
//              as `query` reports the trial of that campaign); slower/faster when the CI
//              excludes 0 and |pct| >= min_effect_pct; same
//              when the CI lies within +-min_effect_pct, or excludes 0 with |pct| below it;
//              else inconclusive.
//  launches, >= 2 launches a side but one session on a side (replicates of one campaign): the
//              rank interval of the launch medians (HodgesLehmannChange), which must also clear
//              the noise floor, standing for the session-to-session drift the data cannot
//              show: slower when its low end is above +noise_floor_pct, faster when its high
//              end is below -noise_floor_pct, same when it lies within +-noise_floor_pct; else
//              inconclusive. Inconclusive too when the launches are too few for each end to be
//              a one-sided bound at `confidence` (at 95%: 2 and 2 up to 2 and 4 launches).
//  iterations (one launch on a side): slower when the CI's low end is above +noise_floor_pct,
//              faster when its high end is below -noise_floor_pct, same when the whole CI is
//              inside the floor; else inconclusive.
LatencyChange CompareLatency(const std::vector<std::vector<double>>& a_launches,
                             const std::vector<std::vector<double>>& b_launches,
                             const ChangePolicy& policy,
                             const std::vector<long long>& a_sessions = {},
                             const std::vector<long long>& b_sessions = {});

}  // namespace ditbench
