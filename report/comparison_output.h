// `ditbench compare` output: a Comparison (analysis/comparison.h) as a text table, CSV, JSON,
// Markdown or HTML; the tables through base/table_printers.h.
// Formats are versioned: JSON carries {"format": "ditbench-compare", "version": 2}; CSV has a
// fixed header (new columns only ever appended). Readers of JSON should refuse a newer version.
// Version 2 (from 1): a trial's ci_low_pct / ci_high_pct are null when the data cannot bound
// the change (ci_bounded false); a_ms / b_ms are each side's latency_ms (stats/change.h,
// SideLatencyMs) and change_pct is b_ms / a_ms - 1; new: ci_bounded, a_busy, b_busy per trial
// and noise_floor ({"cpu": {"pct", "source"}, ...}) at the top. Added within version 2 (readers
// of version 2 ignore unknown fields): a_joules_per_image, b_joules_per_image and energy_ratio
// per trial (null without energy), also appended to the CSV; "metrics" (every metric beside the
// latency: a, b, ratio, unit, better) and each metric's "verdict" (the one its row of the metric
// table draws: a serving trial's p95_ms; null for the others).
#pragma once

#include <iosfwd>
#include <string>

#include "analysis/comparison.h"
#include "base/table_printers.h"

namespace ditbench {

inline constexpr int kCompareFormatVersion = 2;

// Table: the sides, what differs between them (first), the headline (verdict counts and the
// noise floor), the matched trials sorted by change with verdict (busy sides marked), change,
// interval with its coverage, each side's latency (a busy side's marked "busy") and launches,
// then unmatched trials, the thresholds used and the busy trials. Markdown: the sides, the
// headline with the noise floor, the matched trials' table (the same columns) and the
// unmatched trials. JSON and CSV give an interval the data cannot bound
// (ChangeEstimate::Bounded) as null / empty ends with ci_bounded false; CSV fields are quoted
// per RFC 4180. "html": a self-contained page (report/comparison_html.h). Any other format of
// kTableFormats: the CSV's table (every trial, matched and unmatched) by that format's printer.
void WriteComparison(const Comparison& comparison, TableFormat format, std::ostream& out);

}  // namespace ditbench
