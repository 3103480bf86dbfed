#include "metrics/metric_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace ditbench {
namespace {

constexpr unsigned kEverywhere =
    kShownInReportTable | kShownInCompare | kShownInQueryDefault | kShownInHistory;
// Where a rate or a share is shown: history follows milliseconds only.
constexpr unsigned kEverywhereButHistory = kEverywhere & ~kShownInHistory;

// clang-format off
// The built-in metrics (docs/measurement.md defines each). A metric measured per rank is
// reduced over ranks first (the latency per iteration by the slowest rank, metrics/
// trial_metrics.h), then over a trial's ok launches (metrics/launch_summary.h).
constexpr MetricInfo kMetrics[] = {
    {"latency_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kMax,
     LaunchReduction::kPooled, kEverywhere,
     "median over timed iterations of the slowest rank's time",
     HeldIn(&TrialMetrics::latency_ms)},
    {"ci_low_ms", MetricHint::kMilliseconds, "ms", Better::kNone, RankReduction::kMax,
     LaunchReduction::kPooled, kShownInQueryDefault,
     "lower bound of the latency's 95% confidence interval",
     HeldIn(&TrialMetrics::ci_low_ms)},
    {"ci_high_ms", MetricHint::kMilliseconds, "ms", Better::kNone, RankReduction::kMax,
     LaunchReduction::kPooled, kShownInQueryDefault,
     "upper bound of the latency's 95% confidence interval",
     HeldIn(&TrialMetrics::ci_high_ms)},
    {"rank0_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kRank0,
     LaunchReduction::kPooled, kShownInReportTable | kShownInHistory, "median of rank 0's own times",
     HeldIn(&TrialMetrics::rank0_ms)},
    {"skew_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kMax,
     LaunchReduction::kPooled, kShownInReportTable | kShownInHistory,
     "median over iterations of the slowest minus the fastest rank",
     HeldIn(&TrialMetrics::skew_ms)},
    {"cov", MetricHint::kFraction, "", Better::kLower, RankReduction::kMax,
     LaunchReduction::kPooled, kShownInReportTable | kShownInQueryDefault,
     "coefficient of variation of the timed iterations",
     HeldIn(&TrialMetrics::cov)},
    {"peak_mem_mb", MetricHint::kMegabytes, "MiB", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMax, kShownInReportTable | kShownInQueryDefault,
     "allocator peak (GPU) or resident set (CPU), max over ranks",
     HeldIn(&TrialMetrics::peak_mem_mb)},
    {"tflops", MetricHint::kTflops, "TFLOPS", Better::kHigher, RankReduction::kSum,
     LaunchReduction::kScaledToLatency, kShownInReportTable, "analytic FLOPs over the latency",
     HeldIn(&TrialMetrics::tflops)},
    {"mfu", MetricHint::kFraction, "", Better::kHigher, RankReduction::kSum,
     LaunchReduction::kScaledToLatency, kShownInReportTable, "TFLOPS over the devices' dense peak",
     HeldIn(&TrialMetrics::mfu)},
    {"images_per_s", MetricHint::kRate, "images/s", Better::kHigher, RankReduction::kSum,
     LaunchReduction::kScaledToLatency, 0, "images (or clips) per second",
     HeldIn(&TrialMetrics::images_per_s)},
    {"comm_mb_per_step", MetricHint::kMegabytes, "MiB", Better::kLower, RankReduction::kMax,
     LaunchReduction::kNewest, 0, "MiB a rank sent per denoising step, max over ranks",
     HeldIn(&TrialMetrics::comm_mb_per_step)},
    {"energy_j", MetricHint::kJoules, "J", Better::kLower, RankReduction::kSum,
     LaunchReduction::kMedian, 0, "joules of one timed iteration, summed over ranks",
     HeldIn(&TrialMetrics::energy_j)},
    {"joules_per_image", MetricHint::kJoules, "J/image", Better::kLower, RankReduction::kSum,
     LaunchReduction::kMedian,
     kShownInReportTable | kShownInCompare | kShownInQueryDefault | kShownOnlyWhenSet,
     "energy_j per image",
     HeldIn(&TrialMetrics::joules_per_image)},
    {"graph_capture_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownInCompare | kShownInHistory,
     "graph: cuda_graph: host time to capture every step's graph (once, before the timed part)"},
    {"ready_s", MetricHint::kSeconds, "s", Better::kLower, RankReduction::kRank0,
     LaunchReduction::kMedian, kShownInReportTable | kShownInCompare | kShownOnlyWhenSet,
     "engine: from starting the server to every ready path answering 2xx (the cold start)"},
    {"first_request_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kRank0,
     LaunchReduction::kMedian, kShownInReportTable | kShownInCompare | kShownOnlyWhenSet,
     "engine: the first (warm-up) request's latency, what the first user waits"},
    {"skipped_steps", MetricHint::kCount, "", Better::kHigher, RankReduction::kRank0,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet,
     "cache: denoising steps per timed iteration that reused the cached blocks (every rank alike)"},
    {"cache_hit_rate", MetricHint::kFraction, "", Better::kHigher, RankReduction::kRank0,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet,
     "cache: the share of the denoising steps that reused the cached blocks"},
    {"computed_step_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet | kShownInHistory,
     "cache: median time of a step that ran its blocks (the statistic's cost included)"},
    {"reused_step_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet | kShownInHistory,
     "cache: median time of a step that reused the cached blocks"},
    {"decode_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownInCompare | kShownOnlyWhenSet | kShownInHistory,
     "scope pipeline: median over timed iterations of the slowest rank's VAE decode"},
    {"padding_share", MetricHint::kFraction, "", Better::kLower, RankReduction::kRank0,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet,
     "pad_heads: the share of the FLOPs spent attending over zero heads that pad the heads to a "
     "multiple of the Ulysses degree (waste: tflops and mfu count the model's real work only)"},
    {"decode_share", MetricHint::kFraction, "", Better::kNone, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet,
     "scope pipeline: decode_ms over latency_ms (a serving trial: over the median request's "
     "service time, its wait excluded)"},
    {"p95_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMedian, kEverywhere | kShownOnlyWhenSet,
     "serve: 95th percentile of a request's latency (arrival to end), when the requests bound it",
     {},
     0.95},
    {"queue_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownInCompare | kShownOnlyWhenSet | kShownInHistory,
     "serve: mean wait of a request in the queue"},
    {"isolated_ms", MetricHint::kMilliseconds, "ms", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet | kShownInHistory,
     "serve: a request's latency alone on an idle replica, the median"},
    {"requests_per_s", MetricHint::kRate, "requests/s", Better::kHigher, RankReduction::kMax,
     LaunchReduction::kMedian, kEverywhereButHistory | kShownOnlyWhenSet,
     "serve: requests completed per second, first arrival to last end"},
    {"requests_per_s_per_gpu", MetricHint::kRate, "requests/s", Better::kHigher,
     RankReduction::kMax, LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet,
     "serve: requests_per_s over the trial's ranks"},
    {"slo_attainment", MetricHint::kFraction, "", Better::kHigher, RankReduction::kMax,
     LaunchReduction::kMedian, kEverywhereButHistory | kShownOnlyWhenSet,
     "serve: share of requests served within slo_scale x their isolated latency"},
    {"replica_spread", MetricHint::kRatio, "", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet,
     "serve: the slowest replica's median service time over the fastest's (1: alike)"},
    {"busy_requests", MetricHint::kCount, "", Better::kLower, RankReduction::kSum,
     LaunchReduction::kSum, kShownInReportTable | kShownOnlyWhenSet,
     "serve: timed requests whose arrival to end overlapped a stretch the machine was busy"},
    {"restart_psnr", MetricHint::kDecibels, "dB", Better::kHigher, RankReduction::kRank0,
     LaunchReduction::kNewest, kShownInReportTable | kShownOnlyWhenSet,
     "engine: least PSNR of the same request's image after a server restart (the restart band)"},
    {"restart_ssim", MetricHint::kScore, "", Better::kHigher, RankReduction::kRank0,
     LaunchReduction::kNewest, kShownInReportTable | kShownOnlyWhenSet,
     "engine: least SSIM of the same request's image after a server restart"},
    {"failed_requests", MetricHint::kCount, "", Better::kLower, RankReduction::kSum,
     LaunchReduction::kSum, kShownInReportTable | kShownOnlyWhenSet,
     "serve: timed requests an engine answered with an error (HTTP status, malformed answer)"},
    {"error_rate", MetricHint::kFraction, "", Better::kLower, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownInCompare | kShownOnlyWhenSet,
     "serve: failed_requests over the timed requests (an engine trial's, 0 included)"},
    {"goodput_per_s", MetricHint::kRate, "requests/s", Better::kHigher, RankReduction::kMax,
     LaunchReduction::kMedian, kShownInReportTable | kShownInCompare | kShownOnlyWhenSet,
     "serve: requests per second served within their SLO"},
    {"offered_per_s", MetricHint::kRate, "requests/s", Better::kNone, RankReduction::kRank0,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet,
     "serve: a share of capacity's rate (rate: sweep): its share x capacity_per_s"},
    {"capacity_per_s", MetricHint::kRate, "requests/s", Better::kHigher, RankReduction::kRank0,
     LaunchReduction::kMedian, kShownInReportTable | kShownOnlyWhenSet,
     "serve: the requests_per_s of the capacity trial a share's rate was made from"},
    {"server_gpu_mem_rest_mb", MetricHint::kMegabytes, "MiB", Better::kLower,
     RankReduction::kRank0, LaunchReduction::kMax,
     kShownInReportTable | kShownInCompare | kShownOnlyWhenSet,
     "engine: whole-GPU used memory (NVML, every process's) once the server is ready, the "
     "largest of the trial's GPUs"},
    {"server_gpu_mem_peak_mb", MetricHint::kMegabytes, "MiB", Better::kLower,
     RankReduction::kRank0, LaunchReduction::kMax,
     kShownInReportTable | kShownInCompare | kShownOnlyWhenSet,
     "engine: the most whole-GPU used memory sampled from ready to the last request, the "
     "largest of the trial's GPUs"},
    {"output_error", MetricHint::kRatio, "", Better::kLower, RankReduction::kRank0,
     LaunchReduction::kNewest, kShownInReportTable | kShownInQueryDefault | kShownOnlyWhenSet,
     "relative L2 of the final output against the 1-rank trial",
     HeldIn(&TrialMetrics::output_error)},
    {"psnr", MetricHint::kDecibels, "dB", Better::kHigher, RankReduction::kRank0,
     LaunchReduction::kNewest, kShownInReportTable | kShownInQueryDefault | kShownOnlyWhenSet,
     "the decoded image against the 1-rank trial's",
     HeldIn(&TrialMetrics::psnr)},
    {"ssim", MetricHint::kScore, "", Better::kHigher, RankReduction::kRank0,
     LaunchReduction::kNewest, kShownInReportTable,
     "SSIM of the decoded image against the 1-rank trial's",
     HeldIn(&TrialMetrics::ssim)},
};
// clang-format on

// The units HintOfUnit knows, besides "<thing>/s".
struct UnitHint {
  std::string_view unit;
  MetricHint hint;
};
constexpr UnitHint kUnitHints[] = {
    {"ms", MetricHint::kMilliseconds}, {"s", MetricHint::kSeconds},
    {"MB", MetricHint::kMegabytes},    {"MiB", MetricHint::kMegabytes},
    {"TFLOPS", MetricHint::kTflops},   {"fraction", MetricHint::kFraction},
    {"percent", MetricHint::kPercent}, {"%", MetricHint::kPercent},
    {"J", MetricHint::kJoules},        {"J/image", MetricHint::kJoules},
    {"count", MetricHint::kCount},     {"dB", MetricHint::kDecibels},
    {"ratio", MetricHint::kRatio},
};

}  // namespace

std::span<const MetricInfo> MetricTable() { return kMetrics; }

const MetricInfo* FindMetric(std::string_view name) {
  for (const MetricInfo& m : kMetrics)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<const MetricInfo*> ColumnMetrics() {
  std::vector<const MetricInfo*> columns;
  for (const MetricInfo& m : kMetrics)
    if (m.member.is_column()) columns.push_back(&m);
  return columns;
}

std::optional<double> MetricOf(const TrialMetrics& m, const MetricInfo& metric) {
  if (metric.member.always) return m.*metric.member.always;
  if (metric.member.optional) return m.*metric.member.optional;
  auto extra = m.extra.find(std::string(metric.name));
  if (extra == m.extra.end()) return std::nullopt;
  return extra->second;
}

void SetMetric(TrialMetrics& m, const MetricInfo& metric, double value) {
  if (metric.member.always)
    m.*metric.member.always = value;
  else if (metric.member.optional)
    m.*metric.member.optional = value;
  else
    m.extra[std::string(metric.name)] = value;
}

std::vector<const MetricInfo*> MetricsShownIn(MetricShownIn where) {
  std::vector<const MetricInfo*> shown;
  for (const MetricInfo& m : kMetrics)
    if (m.shown_in & where) shown.push_back(&m);
  return shown;
}

std::optional<int> FixedDecimals(MetricHint hint) {
  switch (hint) {
    case MetricHint::kMilliseconds:
      return 2;
    case MetricHint::kSeconds:
      return 3;
    case MetricHint::kMegabytes:
    case MetricHint::kCount:
      return 0;
    case MetricHint::kTflops:
    case MetricHint::kDecibels:
      return 1;
    case MetricHint::kScore:
      return 4;
    case MetricHint::kFraction:
    case MetricHint::kPercent:
    case MetricHint::kRate:
    case MetricHint::kJoules:
    case MetricHint::kRatio:
    case MetricHint::kUnknown:
      break;
  }
  return std::nullopt;
}

std::string FormatMetric(double value, MetricHint hint) {
  if (std::isnan(value)) return "-";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (const std::optional<int> decimals = FixedDecimals(hint))
    return fmt::format("{:.{}f}", value, *decimals);
  switch (hint) {
    case MetricHint::kFraction:
      return fmt::format("{:.1f}%", value * 100);
    case MetricHint::kPercent:
      return fmt::format("{:.1f}%", value);
    case MetricHint::kRate:
      return std::abs(value) >= 1000 ? fmt::format("{:.0f}", value) : fmt::format("{:.3g}", value);
    default:
      break;
  }
  return fmt::format("{:.4g}", value);
}

MetricHint HintOfUnit(std::string_view unit) {
  for (const UnitHint& u : kUnitHints)
    if (u.unit == unit) return u.hint;
  if (unit.size() > 2 && unit.ends_with("/s")) return MetricHint::kRate;
  return MetricHint::kUnknown;
}

std::string_view BetterName(Better better) {
  switch (better) {
    case Better::kLower:
      return "lower";
    case Better::kHigher:
      return "higher";
    case Better::kNone:
      break;
  }
  return "";
}

std::optional<Better> ParseBetter(std::string_view text) {
  for (Better b : {Better::kNone, Better::kLower, Better::kHigher})
    if (BetterName(b) == text) return b;
  return std::nullopt;
}

bool IsValidMetricName(std::string_view name) {
  if (name.empty() || name.size() > kMaxMetricNameLength) return false;
  if (std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x80 && (std::isalnum(u) || c == '_');
  });
}

AcceptedMetrics AcceptExtraMetrics(const std::map<std::string, double>& values,
                                   const std::map<std::string, MetricDeclaration>& declared) {
  AcceptedMetrics accepted;
  // A name printed in a note is cut and stripped of anything but printable ASCII.
  const auto shown = [](const std::string& name) {
    std::string text;
    for (char c : name.substr(0, kMaxMetricNameLength)) text += (c >= 0x20 && c < 0x7f) ? c : '?';
    return text + (name.size() > kMaxMetricNameLength ? "..." : "");
  };
  std::size_t dropped_for_count = 0;
  for (const auto& [name, value] : values) {
    if (!IsValidMetricName(name)) {
      accepted.notes.push_back(
          fmt::format("metric '{}' dropped: not a valid name (letters, digits and '_', at most {})",
                      shown(name), kMaxMetricNameLength));
      continue;
    }
    if (!std::isfinite(value)) {
      accepted.notes.push_back(fmt::format("metric '{}' dropped: not a finite number", name));
      continue;
    }
    if (accepted.values.size() == kMaxExtraMetrics) {
      ++dropped_for_count;
      continue;
    }
    accepted.values[name] = value;
    auto declaration = declared.find(name);
    if (declaration == declared.end() || FindMetric(name)) continue;
    MetricDeclaration kept;
    if (ParseBetter(declaration->second.better)) {
      kept.better = declaration->second.better;
    } else {
      accepted.notes.push_back(
          fmt::format("metric '{}': better '{}' ignored (expected lower or higher)", name,
                      shown(declaration->second.better)));
    }
    if (declaration->second.unit.size() <= kMaxMetricUnitLength &&
        std::all_of(declaration->second.unit.begin(), declaration->second.unit.end(),
                    [](char c) { return c >= 0x20 && c < 0x7f; })) {
      kept.unit = declaration->second.unit;
    } else {
      accepted.notes.push_back(
          fmt::format("metric '{}': unit ignored (printable ASCII, at most {} characters)", name,
                      kMaxMetricUnitLength));
    }
    if (!kept.unit.empty() || !kept.better.empty()) accepted.declared[name] = kept;
  }
  if (dropped_for_count > 0)
    accepted.notes.push_back(fmt::format("{} metric(s) dropped: at most {} per trial",
                                         dropped_for_count, kMaxExtraMetrics));
  return accepted;
}

ExtraMetric ExtraMetricOf(std::string_view name, double value, const MetricDeclaration& declared) {
  ExtraMetric metric;
  metric.value = value;
  if (const MetricInfo* info = FindMetric(name)) {
    metric.unit = std::string(info->unit);
    metric.hint = info->hint;
    metric.better = info->better;
    return metric;
  }
  metric.unit = declared.unit;
  metric.hint = HintOfUnit(declared.unit);
  metric.better = ParseBetter(declared.better).value_or(Better::kNone);
  return metric;
}

double ReduceOverRanks(RankReduction how, const std::vector<double>& values) {
  switch (how) {
    case RankReduction::kMax:
      return *std::max_element(values.begin(), values.end());
    case RankReduction::kSum:
      return std::accumulate(values.begin(), values.end(), 0.0);
    case RankReduction::kMean:
      return std::accumulate(values.begin(), values.end(), 0.0) /
             static_cast<double>(values.size());
    case RankReduction::kRank0:
      break;
  }
  return values.front();
}

double ReduceOverLaunches(LaunchReduction how, const std::vector<double>& values) {
  switch (how) {
    case LaunchReduction::kSum:
      return std::accumulate(values.begin(), values.end(), 0.0);
    case LaunchReduction::kNewest:
      return values.back();
    case LaunchReduction::kMax:
      return *std::max_element(values.begin(), values.end());
    case LaunchReduction::kMedian:
    case LaunchReduction::kPooled:  // not of the values (REQUIRES): the median is the nearest
    case LaunchReduction::kScaledToLatency:
      break;
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

}  // namespace ditbench
