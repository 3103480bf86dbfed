// `ditbench history` output: a History (analysis/history.h) as a text table, CSV, JSON, a
// Markdown table or a self-contained HTML page (report/history_section.h).
// Formats are versioned: JSON carries {"format": "ditbench-history", "version": 1}; CSV has a
// fixed header (new columns only ever appended), one row per point. Readers of JSON should
// refuse a newer version. Added within version 1 (readers ignore unknown keys): per key
// first_ms, first_to_latest_pct and level_change_pct; trend_pct is the level change, kept
// under its version-1 name.
#pragma once

#include <iosfwd>
#include <string>

#include "analysis/history.h"
#include "base/table_printers.h"

namespace ditbench {

inline constexpr int kHistoryFormatVersion = 1;

// Table: per key, its latest value, its first and latest measurement with their change and,
// named apart, the fitted level's change, the change points (campaigns, builds, size with its
// interval, what else changed in the environment, campaigns skipped as busy or disturbed).
// CSV: one row per point (base/table_printers.h). Markdown, and any other format of
// kTableFormats: one row per key with the same numbers, each from a busy measurement marked so
// (a note: "(busy)" beside it, a "<column>_note" field in a data format).
void WriteHistory(const History& history, TableFormat format, std::ostream& out);

// "campaign 17 (build night-17) -> campaign 18 (build night-18): +15.0% [+13.1, +16.9] 95%;
// also changed: driver 550.54 -> 555.42": one line, as the table and `--fail-on-change` print.
std::string ChangeText(const HistoryChange& change);

}  // namespace ditbench
