#include "stats/change.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "stats/distributions.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

constexpr std::size_t kMaxPerSide = 1000;
constexpr std::size_t kMaxExactPairs = 2500;  // MannWhitneyCdf is O((n m)^2)

double ToPct(double log_ratio) { return std::expm1(log_ratio) * 100; }

// `sorted` thinned to `keep` evenly spaced order statistics (type 7 quantiles).
std::vector<double> Thin(const std::vector<double>& sorted, std::size_t keep) {
  if (sorted.size() <= keep) return sorted;
  std::vector<double> thinned;
  thinned.reserve(keep);
  for (std::size_t i = 0; i < keep; ++i)
    thinned.push_back(Quantile(sorted, static_cast<double>(i) / static_cast<double>(keep - 1)));
  return thinned;
}

std::vector<double> Logs(const std::vector<double>& values) {
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double v : values) logs.push_back(std::log(v));
  return logs;
}

std::string Format(const char* format, double x, double y = 0, double z = 0) {
  char buffer[200];
  std::snprintf(buffer, sizeof buffer, format, x, y, z);
  return buffer;
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster: return "faster";
    case Verdict::kSlower: return "slower";
    case Verdict::kSame: return "same";
    case Verdict::kInconclusive: return "inconclusive";
  }
  return "inconclusive";
}

const char* ChangeMethodName(ChangeMethod method) {
  return method == ChangeMethod::kLaunches ? "launches" : "iterations";
}

std::vector<double> MannWhitneyCdf(std::size_t n, std::size_t m) {
  // f(i, j)[u] = P(U = u) for i and j values. The largest of the i + j values belongs to the
  // first sample with probability i / (i + j), and then exceeds all j of the second:
  //   f(i, j)[u] = i / (i + j) f(i - 1, j)[u - j] + j / (i + j) f(i, j - 1)[u].
  // `row[j]` holds f(i - 1, j) while row i is built.
  std::vector<std::vector<double>> row(m + 1, std::vector<double>{1.0});
  for (std::size_t i = 1; i <= n; ++i) {
    std::vector<std::vector<double>> next(m + 1);
    next[0] = {1.0};
    for (std::size_t j = 1; j <= m; ++j) {
      const double from_first = static_cast<double>(i) / static_cast<double>(i + j);
      std::vector<double> f(i * j + 1, 0.0);
      for (std::size_t u = 0; u < row[j].size(); ++u) f[u + j] += from_first * row[j][u];
      for (std::size_t u = 0; u < next[j - 1].size(); ++u)
        f[u] += (1 - from_first) * next[j - 1][u];
      next[j] = std::move(f);
    }
    row = std::move(next);
  }
  std::vector<double> cdf = std::move(row[m]);
  for (std::size_t u = 1; u < cdf.size(); ++u) cdf[u] += cdf[u - 1];
  return cdf;
}

ChangeEstimate HodgesLehmannChange(std::vector<double> a, std::vector<double> b,
                                   double confidence) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const std::vector<double> la = Logs(Thin(a, kMaxPerSide)), lb = Logs(Thin(b, kMaxPerSide));
  const double n = static_cast<double>(la.size()), m = static_cast<double>(lb.size());
  const double total = n * m;
  // The interval runs from the (k+1)-th to the (nm-k)-th smallest difference and misses the
  // true shift with probability 2 P(U <= k): k is the largest with 2 P(U <= k) <= 1 -
  // confidence, or 0 when none is (then the interval covers less than asked).
  double k = 0, coverage = confidence;
  if (la.size() * lb.size() <= kMaxExactPairs) {
    const std::vector<double> cdf = MannWhitneyCdf(la.size(), lb.size());
    std::size_t passing = 0;  // how many k = 0, 1, ... pass
    while (passing < cdf.size() / 2 && 2 * cdf[passing] <= 1 - confidence + 1e-12) ++passing;
    const std::size_t chosen = passing == 0 ? 0 : passing - 1;
    k = static_cast<double>(chosen);
    coverage = 1 - 2 * cdf[chosen];
  } else {
    // U's null distribution: mean nm/2, variance nm(n+m+1)/12.
    const double z = NormalQuantile(0.5 + confidence / 2);
    k = std::max(0.0, std::floor(n * m / 2 - z * std::sqrt(n * m * (n + m + 1) / 12)));
  }
  const auto rank = [&](double r) {  // a 1-based rank, clamped
    return static_cast<std::size_t>(std::clamp(r, 1.0, total));
  };
  // The few order statistics needed, selected among the n x m pairwise differences without
  // forming them all (PairwiseDifferenceSelector).
  const PairwiseDifferenceSelector select(la, lb);
  const double h = (total - 1) / 2;
  const double lower = select.Kth(rank(std::floor(h) + 1));
  const double upper = std::ceil(h) > std::floor(h) ? select.Kth(rank(std::ceil(h) + 1)) : lower;
  ChangeEstimate estimate;
  // Median (type 7): between the two middle order statistics when nm is even.
  estimate.pct = ToPct(lower + (h - std::floor(h)) * (upper - lower));
  estimate.low_pct = ToPct(std::min(select.Kth(rank(k + 1)), lower));
  estimate.high_pct = ToPct(std::max(select.Kth(rank(total - k)), upper));
  estimate.coverage = coverage;
  return estimate;
}

PairwiseDifferenceSelector::PairwiseDifferenceSelector(const std::vector<double>& a,
                                                       const std::vector<double>& b)
    : a_(a), b_(b) {}

std::size_t PairwiseDifferenceSelector::CountAtMost(double x) const {
  // For each y = b[j], the i with y - a[i] <= x are a suffix of a; it starts later as y grows.
  std::size_t count = 0, start = 0;
  const std::size_t n = a_.size();
  for (double y : b_) {
    while (start < n && y - a_[start] > x) ++start;
    count += n - start;
  }
  return count;
}

double PairwiseDifferenceSelector::Kth(std::size_t k) const {
  // Bisect the value range until few differences lie in (lo, hi], then select among them.
  constexpr std::size_t kFew = 256;
  double lo = b_.front() - a_.back(), hi = b_.back() - a_.front();
  std::size_t count_lo = CountAtMost(lo), count_hi = a_.size() * b_.size();
  if (count_lo >= k) return lo;  // the smallest difference itself
  while (count_hi - count_lo > kFew) {
    const double mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) break;  // no double between them: equal values remain
    const std::size_t count = CountAtMost(mid);
    if (count >= k) {
      hi = mid;
      count_hi = count;
    } else {
      lo = mid;
      count_lo = count;
    }
  }
  // The differences in (lo, hi]: for each y, the i with lo < y - a[i] <= hi.
  std::vector<double> between;
  between.reserve(count_hi - count_lo);
  std::size_t start_hi = 0, start_lo = 0;
  const std::size_t n = a_.size();
  for (double y : b_) {
    while (start_hi < n && y - a_[start_hi] > hi) ++start_hi;
    while (start_lo < n && y - a_[start_lo] > lo) ++start_lo;
    for (std::size_t i = start_hi; i < start_lo; ++i) between.push_back(y - a_[i]);
  }
  const auto nth = between.begin() + static_cast<std::ptrdiff_t>(k - count_lo - 1);
  std::nth_element(between.begin(), nth, between.end());
  return *nth;
}

ChangeEstimate WelchLogChange(const std::vector<double>& a, const std::vector<double>& b,
                              double confidence) {
  const Summary sa = Summarize(Logs(a)), sb = Summarize(Logs(b));
  const double va = sa.stddev * sa.stddev / static_cast<double>(sa.n);
  const double vb = sb.stddev * sb.stddev / static_cast<double>(sb.n);
  const double difference = sb.mean - sa.mean;
  ChangeEstimate estimate;
  estimate.pct = estimate.low_pct = estimate.high_pct = ToPct(difference);
  estimate.coverage = confidence;
  const double variance = va + vb;
  if (variance <= 0) return estimate;
  // Welch-Satterthwaite degrees of freedom.
  const double df = variance * variance /
                    (va * va / static_cast<double>(sa.n - 1) +
                     vb * vb / static_cast<double>(sb.n - 1));
  const double half = StudentTQuantile(0.5 + confidence / 2, df) * std::sqrt(variance);
  estimate.low_pct = ToPct(difference - half);
  estimate.high_pct = ToPct(difference + half);
  return estimate;
}

bool ChangeEstimate::Bounded() const {
  if (!std::isfinite(low_pct) || !std::isfinite(high_pct) || low_pct <= -100) return false;
  return (1 + high_pct / 100) / (1 + low_pct / 100) <= kMaxBoundedSpan;
}

namespace {

// The session of launch i; a launch without a session is a session of its own.
long long SessionOf(const std::vector<long long>& sessions, std::size_t i) {
  return i < sessions.size() ? sessions[i] : -1 - static_cast<long long>(i);
}

// Session -> medians of its launches.
std::map<long long, std::vector<double>> BySession(const std::vector<double>& medians,
                                                   const std::vector<long long>& sessions) {
  std::map<long long, std::vector<double>> by;
  for (std::size_t i = 0; i < medians.size(); ++i)
    by[SessionOf(sessions, i)].push_back(medians[i]);
  return by;
}

// The value of each session: the median of its launch medians.
std::vector<double> SessionValues(const std::map<long long, std::vector<double>>& by) {
  std::vector<double> values;
  for (const auto& [session, medians] : by) values.push_back(Summarize(medians).median);
  return values;
}

double GeometricMean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += std::log(v);
  return std::exp(sum / static_cast<double>(values.size()));
}

// The verdict on launches of one session a side (result.change their rank interval): each
// end of the interval must be a one-sided bound at the confidence asked for, and the change
// beyond the noise floor, which stands for the campaign-to-campaign drift one session cannot
// show.
void JudgeOneSessionLaunches(const ChangePolicy& policy, std::size_t a_count, std::size_t b_count,
                             LatencyChange& result) {
  const ChangeEstimate& c = result.change;
  if (c.CoversLessThan(2 * policy.confidence - 1)) {
    result.reason = Format(
        "too few launches for a rank interval (%.0f and %.0f; 3 and 3 "
        "give one-sided %.0f%% bounds)",
        double(a_count), double(b_count), policy.confidence * 100);
    return;
  }
  const std::string interval =
      c.CoversLessThan(policy.confidence)
          ? Format("launch interval (%.0f%%, the widest %.0f and %.0f launches give)",
                   c.coverage * 100, double(a_count), double(b_count))
          : std::string("launch CI");
  const double floor = policy.noise_floor_pct;
  if (c.low_pct > floor) {
    result.verdict = Verdict::kSlower;
    result.reason = interval + Format(
                                   " above the noise floor of +%.1f%% (one campaign on a "
                                   "side: the floor stands for campaign-to-campaign drift)",
                                   floor);
  } else if (c.high_pct < -floor) {
    result.verdict = Verdict::kFaster;
    result.reason = interval + Format(
                                   " below the noise floor of -%.1f%% (one campaign on a "
                                   "side: the floor stands for campaign-to-campaign drift)",
                                   floor);
  } else if (c.low_pct >= -floor && c.high_pct <= floor) {
    result.verdict = Verdict::kSame;
    result.reason =
        interval + Format(" within the noise floor of +-%.1f%% (one campaign on a side)", floor);
  } else {
    result.reason = interval + Format(
                                   " crosses the noise floor of +-%.1f%%: one campaign on "
                                   "a side cannot show campaign-to-campaign drift (compare "
                                   "several campaigns a side, or more replicates)",
                                   floor);
  }
}

// The verdict on sessions a side (result.change Welch's interval of their values): a change
// beyond the minimum effect, or the same within it.
void JudgeSessions(const ChangePolicy& policy, LatencyChange& result) {
  const ChangeEstimate& c = result.change;
  const double e = policy.min_effect_pct;
  const bool excludes_zero = c.low_pct > 0 || c.high_pct < 0;
  if (excludes_zero && std::abs(c.pct) >= e) {
    result.verdict = c.pct > 0 ? Verdict::kSlower : Verdict::kFaster;
    result.reason = Format("launch medians differ beyond the minimum effect of %.1f%%", e);
  } else if (c.low_pct >= -e && c.high_pct <= e) {
    result.verdict = Verdict::kSame;
    result.reason = Format("CI within +-%.1f%% (minimum effect)", e);
  } else if (excludes_zero) {
    result.verdict = Verdict::kSame;
    result.reason = Format("significant but below the minimum effect of %.1f%%", e);
  } else {
    result.reason = Format(
        "CI spans 0 and reaches beyond +-%.1f%%: too few launches or too "
        "much launch-to-launch noise",
        e);
  }
}

}  // namespace

double SideLatencyMs(const std::vector<double>& medians, const std::vector<long long>& sessions) {
  return GeometricMean(SessionValues(BySession(medians, sessions)));
}

LatencyChange CompareLatency(const std::vector<std::vector<double>>& a_launches,
                             const std::vector<std::vector<double>>& b_launches,
                             const ChangePolicy& policy,
                             const std::vector<long long>& a_sessions,
                             const std::vector<long long>& b_sessions) {
  LatencyChange result;
  std::vector<double> a_pooled, b_pooled, a_medians, b_medians;
  std::vector<long long> a_kept_sessions, b_kept_sessions;  // of the non-empty launches
  const auto add = [](const std::vector<std::vector<double>>& launches,
                      const std::vector<long long>& sessions, std::vector<double>& pooled,
                      std::vector<double>& medians, std::vector<long long>& kept) {
    for (std::size_t i = 0; i < launches.size(); ++i) {
      const auto& launch = launches[i];
      if (launch.empty()) continue;
      pooled.insert(pooled.end(), launch.begin(), launch.end());
      medians.push_back(Summarize(launch).median);
      kept.push_back(SessionOf(sessions, i));
    }
  };
  add(a_launches, a_sessions, a_pooled, a_medians, a_kept_sessions);
  add(b_launches, b_sessions, b_pooled, b_medians, b_kept_sessions);
  const auto a_by_session = BySession(a_medians, a_kept_sessions);
  const auto b_by_session = BySession(b_medians, b_kept_sessions);
  result.a_launches = static_cast<int>(a_medians.size());
  result.b_launches = static_cast<int>(b_medians.size());
  const auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
  };
  if (static_cast<int>(a_pooled.size()) < policy.min_samples ||
      static_cast<int>(b_pooled.size()) < policy.min_samples) {
    result.reason = Format("too few timed iterations (%.0f vs %.0f, need %.0f per side)",
                           double(a_pooled.size()), double(b_pooled.size()),
                           double(policy.min_samples));
    return result;
  }
  if (!positive(a_pooled) || !positive(b_pooled)) {
    result.reason = "a latency sample is zero or negative";
    return result;
  }
  result.a_ms = SideLatencyMs(a_medians, a_kept_sessions);
  result.b_ms = SideLatencyMs(b_medians, b_kept_sessions);
  // The change every method reports: b_ms against a_ms. Its interval comes from the method
  // and is widened to contain it (a rank interval of launch medians or iterations need not
  // contain the ratio of the medians when the samples are skewed).
  const double pct = (result.b_ms / result.a_ms - 1) * 100;
  const auto centre = [pct](ChangeEstimate c) {
    c.pct = pct;
    c.low_pct = std::min(c.low_pct, pct);
    c.high_pct = std::max(c.high_pct, pct);
    return c;
  };

  const bool by_session = a_by_session.size() >= 2 && b_by_session.size() >= 2;
  const bool by_launch = a_medians.size() >= 2 && b_medians.size() >= 2;
  if (by_launch && !by_session) {
    // Replicates of one session on a side: its launches share that session's machine state.
    // The rank interval of the launch medians; each of its ends must be a one-sided bound at
    // the confidence asked for (3 and 3 launches: the 90% interval [D(1), D(9)], each end a 95%
    // bound), else too few launches to tell anything.
    result.method = ChangeMethod::kLaunches;
    result.change = centre(HodgesLehmannChange(a_medians, b_medians, policy.confidence));
    JudgeOneSessionLaunches(policy, a_medians.size(), b_medians.size(), result);
    return result;
  }
  if (by_session) {
    // The unit is the session: the median of its launch medians. Welch's estimate is then
    // the ratio of the sides' geometric means, b_ms / a_ms, already.
    result.method = ChangeMethod::kLaunches;
    result.change = centre(WelchLogChange(SessionValues(a_by_session),
                                          SessionValues(b_by_session), policy.confidence));
    JudgeSessions(policy, result);
    return result;
  }

  result.method = ChangeMethod::kIterations;
  result.change = centre(HodgesLehmannChange(a_pooled, b_pooled, policy.confidence));
  const ChangeEstimate& c = result.change;
  const double floor = policy.noise_floor_pct;
  if (c.low_pct > floor) {
    result.verdict = Verdict::kSlower;
    result.reason = Format("whole CI above the noise floor of +%.1f%%", floor);
  } else if (c.high_pct < -floor) {
    result.verdict = Verdict::kFaster;
    result.reason = Format("whole CI below the noise floor of -%.1f%%", floor);
  } else if (c.low_pct >= -floor && c.high_pct <= floor) {
    result.verdict = Verdict::kSame;
    result.reason = Format("CI within the noise floor of +-%.1f%% (one launch per side: "
                           "measure with replicates for a sharper test)", floor);
  } else {
    result.reason = Format("CI crosses the noise floor of +-%.1f%%", floor);
  }
  return result;
}

}  // namespace ditbench
