// `ditbench compare A B`: what got faster, what got slower, and whether it is real.
// A and B are campaign sets (analysis/comparison.h: "3", "1,2,3", "other.db:3"); trials are
// matched on trial key. Read-only on both databases.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "base/table_printers.h"

namespace ditbench {

struct CompareOptions {
  std::filesystem::path db = "results.db";  // for sides written without "PATH:"
  std::string a, b;
  TableFormat format = TableFormat::kText;  // any of kTableFormats
  std::filesystem::path output;             // empty: standard output
  // Exit 1 when a matched trial's verdict is `slower` with a change above this percent. A
  // trial measured on a busy machine (either side) counts only with `strict`; otherwise it
  // is named on `err` as skipped.
  std::optional<double> fail_on_regression_pct;
  bool strict = false;
  std::optional<double> noise_floor_pct, min_effect_pct;  // override the per-device thresholds
};

// Prints the comparison to `out`. Returns kExitOk; kExitTrialsFailed (1) when
// fail_on_regression_pct is set and some trial regressed beyond it (each named on `err`, as is
// each busy one skipped);
// kExitUsage after one line "ditbench compare: error: ..." on `err` for a missing database,
// an unknown campaign (the known ones listed), a malformed side, an unwritable
// --output.
int RunCompare(const CompareOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ditbench
