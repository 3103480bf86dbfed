// `ditbench history`: per trial key, its campaigns over time and the change points among them
// (analysis/history.h, stats/change_points.h). Read-only on the database.
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "base/table_printers.h"

namespace ditbench {

// --last's default: every campaign of the series (0). A nightly CI job passes --last 7 so
// that an accepted change stops failing it after a week.
inline constexpr std::size_t kDefaultHistoryLast = 0;

struct HistoryCommandOptions {
  std::filesystem::path db = "results.db";
  std::string sweep;   // empty: every sweep
  std::string only;    // empty: every trial key
  std::string metric = "latency_ms";        // the metric followed (HistoryOptions::metric)
  TableFormat format = TableFormat::kText;  // any of kTableFormats
  std::filesystem::path output;  // empty: standard output
  // Exit 1 when a change point slower by more than this percent has its first bad campaign
  // among the last `last` campaigns of its series (0: any).
  std::optional<double> fail_on_change_pct;
  std::size_t last = kDefaultHistoryLast;
};

// Prints the history to `out`. Returns kExitOk; kExitTrialsFailed (1) when fail_on_change_pct
// is set and such a change point exists (each named on `err`); kExitUsage after one line
// "ditbench history: error: ..." on `err` for a missing database, an unknown sweep or key, a
// bad percentage. An unwritable --output is kExitTrialsFailed.
int RunHistory(const HistoryCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ditbench
