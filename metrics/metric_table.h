// The metric table: every number a trial reports, one row per metric, as nvbench's summaries
// (name, hint, value) and Google Benchmark's user counters are. A row says what the number is
// called (the column name everywhere), how it is printed (its hint), which way is better, how
// ranks and launches reduce it, and where it is shown. Printers (query, the report's group
// table, compare) walk the table and format each value from its hint, so a new metric is a new
// row here and the code that measures it.
//
// A name not in the table is an *extra* metric: a `command` program's own number
// (ditbench_result.metric) or a built-in metric that has no column of its own. Extras are
// stored by name (storage: metric_values) and shown where a row has them, with the unit and
// better direction the program declared, if any. Names and declarations come from outside the
// process, so AcceptExtraMetrics checks them and drops a bad one with a note.
//
// Pure data and pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "contract/measurement_records.h"

namespace ditbench {

// How a value is printed: the hint decides the digits, and a unit follows where it helps.
enum class MetricHint {
  kMilliseconds,  // "12.3"
  kSeconds,
  kMegabytes,  // MiB
  kTflops,
  kFraction,  // 0..1, printed as a percentage
  kPercent,   // already a percentage
  kJoules,
  kRate,      // something per second (images/s, tokens/s)
  kCount,     // an integer
  kDecibels,  // PSNR; +infinity for identical outputs
  kRatio,     // output error, speedups: 4 significant digits
  kScore,     // a 0..1 similarity (SSIM): 4 decimals, fixed ("1.0000", "0.9993")
  kUnknown,   // a program's own number without a known unit: 4 significant digits
};

enum class Better { kNone, kLower, kHigher };

// Over the ranks of one launch, and over the ok launches of a trial. Two reductions over
// launches are not of the launches' values (ReduceOverLaunches does not take them): kPooled,
// recomputed from the launches' pooled samples (the latency, its interval and spread:
// metrics/launch_summary.cc), and kScaledToLatency, the newest launch's figure scaled by its
// latency over the trial's (a rate of work: TFLOPS, MFU, images per second).
enum class RankReduction { kMax, kSum, kRank0, kMean };
enum class LaunchReduction { kMedian, kSum, kNewest, kMax, kPooled, kScaledToLatency };

// Where a trial's value of a metric is held. A *column* metric is a member of TrialMetrics, a
// column of the table trial_metrics and of the results view (storage walks the table for
// them); every other row's value is held by name (TrialMetrics::extra, the table
// metric_values), and the results view shows it as a column of its name all the same. A new
// metric is held by name: its row here and the code that measures it are all it needs.
struct MetricMember {
  double TrialMetrics::*always = nullptr;  // set whenever a trial has metrics
  std::optional<double> TrialMetrics::*optional = nullptr;
  constexpr bool is_column() const { return always != nullptr || optional != nullptr; }
};
constexpr MetricMember HeldIn(double TrialMetrics::*member) { return {member, nullptr}; }
constexpr MetricMember HeldIn(std::optional<double> TrialMetrics::*member) {
  return {nullptr, member};
}

// Where a metric is shown; a bit set.
enum MetricShownIn : unsigned {
  kShownInReportTable = 1u << 0,   // the report's group table (a column when some row has it)
  kShownInCompare = 1u << 1,       // compare: both sides and their ratio
  kShownInQueryDefault = 1u << 2,  // query's default table columns (when some row has it)
  kShownInHistory = 1u << 3,       // `history --metric` follows it (a millisecond metric)
  // Where shown, its column is left out when no row has a value (energy exists on GPUs with
  // NVML only); without it the column is shown with "-".
  kShownOnlyWhenSet = 1u << 4,
};

struct MetricInfo {
  std::string_view name;  // the column name in storage, query, compare and the report
  MetricHint hint;
  std::string_view unit;  // printed in headers: "ms", "MiB", "J/image"; "" for none
  Better better;
  RankReduction over_ranks;
  LaunchReduction over_launches;
  unsigned shown_in;  // MetricShownIn bits
  std::string_view description;
  MetricMember member = {};  // a column metric's member; none: held by name
  // How `compare` judges it beside the latency: 0, no verdict (each side's value and their
  // ratio, its direction by `better`); a quantile q, the verdict of each side's q-quantile of
  // its pooled request latencies with its distribution-free 95% interval (a serving trial's
  // p95_ms: 0.95; analysis/comparison.h, ComparedMetric::verdict).
  double compare_quantile = 0;
};

// Every built-in metric, in the order printers show them.
std::span<const MetricInfo> MetricTable();

// The row named `name`, or nullptr (an extra metric).
const MetricInfo* FindMetric(std::string_view name);

// The column metrics (MetricMember), in table order.
std::vector<const MetricInfo*> ColumnMetrics();

// `m`'s value of `metric`: its member, or the extra value of its name; unset when it has none.
std::optional<double> MetricOf(const TrialMetrics& m, const MetricInfo& metric);
// Sets `m`'s value of `metric` (its member, or the extra value of its name).
void SetMetric(TrialMetrics& m, const MetricInfo& metric, double value);

// The rows shown in `where` (one MetricShownIn bit), in table order.
std::vector<const MetricInfo*> MetricsShownIn(MetricShownIn where);

// `value` as every printer shows a metric of `hint`: the same digits in every row of a column.
std::string FormatMetric(double value, MetricHint hint);

// The decimals of a hint printed as a bare fixed-point number (milliseconds 2, seconds 3, MiB 0,
// TFLOPS 1, dB 1, counts 0, scores 4): FormatMetric(v, hint) is then fmt's "{:.Nf}" of v, so a
// table printer (base/table.h: kNumber with `decimals`) shows the same text. Nothing for hints
// with a suffix, a scale or significant digits (fractions, percents, rates, ratios, joules).
std::optional<int> FixedDecimals(MetricHint hint);

// The hint a declared unit implies: "ms", "s", "MB"/"MiB", "TFLOPS", "fraction", "percent"/"%",
// "J", "count", "dB", "ratio", and any "<thing>/s" (a rate); kUnknown for anything else.
MetricHint HintOfUnit(std::string_view unit);

// "lower", "higher", or "" (Better::kNone); ParseBetter is its inverse (nothing for other text).
std::string_view BetterName(Better better);
std::optional<Better> ParseBetter(std::string_view text);

// A metric's name as the outside may give it: letters, digits and '_', not starting with a
// digit, at most kMaxMetricNameLength characters.
inline constexpr std::size_t kMaxMetricNameLength = 64;
bool IsValidMetricName(std::string_view name);

// At most this many extra metrics per trial are kept (in name order); the rest are dropped.
inline constexpr std::size_t kMaxExtraMetrics = 64;
// A declared unit longer than this is dropped (the value is kept, without a unit).
inline constexpr std::size_t kMaxMetricUnitLength = 32;

// One extra metric of a trial, as storage reads it back (ExtraMetricOf).
struct ExtraMetric {
  double value = 0;
  std::string unit;  // as declared ("" when none); the table's unit for a name in the table
  MetricHint hint = MetricHint::kUnknown;
  Better better = Better::kNone;
};

// `name`'s value with how to show it: the table's row for a name in the table (a declaration
// is ignored), else HintOfUnit(declared.unit) and the declared direction ("" or unknown: none).
ExtraMetric ExtraMetricOf(std::string_view name, double value, const MetricDeclaration& declared);

// The extra metrics a trial keeps, and one note per thing dropped ("metric 'a b': not a valid
// name (letters, digits and '_', at most 64)").
struct AcceptedMetrics {
  std::map<std::string, double> values;
  std::map<std::string, MetricDeclaration> declared;  // only for kept names; checked
  std::vector<std::string> notes;
};

// Checks a trial's extra metrics: valid names only, finite values, at most kMaxExtraMetrics;
// a declaration's better must be "lower", "higher" or empty and its unit short. A name of the
// table keeps its value and takes the table's unit and direction (a declaration is ignored).
// Never throws on bad input.
AcceptedMetrics AcceptExtraMetrics(const std::map<std::string, double>& values,
                                   const std::map<std::string, MetricDeclaration>& declared);

// `values` reduced as a row says. REQUIRES: `values` non-empty; for kRank0 and kNewest the
// first and the last value are taken (callers order by rank and by launch); not kPooled or
// kScaledToLatency (computed from more than the values).
double ReduceOverRanks(RankReduction how, const std::vector<double>& values);
double ReduceOverLaunches(LaunchReduction how, const std::vector<double>& values);

}  // namespace ditbench
