// `ditbench history`: see cli/history.h.
#include "cli/history.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "analysis/history.h"
#include "base/terminal_text.h"
#include "base/user_error.h"
#include "cli/command.h"
#include "cli/escaped_error.h"
#include "cli/format_option.h"
#include "cli/number_checks.h"
#include "report/history_output.h"
#include "report/output_file.h"
#include "storage/results_db.h"
#include "storage/storage_error.h"

namespace ditbench {
namespace {

int RunHistoryOrThrow(const HistoryCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.fail_on_change_pct && !(*options.fail_on_change_pct >= 0)) {
    throw UserError("--fail-on-change must be a percentage >= 0");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(options.db, ec)) {
    throw UserError(fmt::format("no results database at '{}'", options.db.string()));
  }
  std::unique_ptr<ResultsDb> db = ResultsDb::Open(options.db, /*read_only=*/true);
  const History history =
      LoadHistory(db->reader(), HistoryOptions{options.sweep, options.only, options.metric});
  if (options.output.empty()) {
    WriteHistory(history, options.format, out);
    CheckOutput(out, "the history");
  } else {
    std::ostringstream text;
    WriteHistory(history, options.format, text);
    WriteOutputFile(options.output, text.str());
    out << "wrote " << options.output.string() << '\n';
  }
  if (!options.fail_on_change_pct) return kExitOk;
  const auto slower = SlowerChanges(history, *options.fail_on_change_pct, options.last);
  for (const auto& [key, change] : slower) {
    err << fmt::format("ditbench history: change point: {} ({}) {}, above {}%\n",
                       ForTerminal(key->trial_key), ForTerminal(key->label), ChangeText(*change),
                       *options.fail_on_change_pct);
  }
  return slower.empty() ? kExitOk : kExitTrialsFailed;
}

}  // namespace

int RunHistory(const HistoryCommandOptions& options, std::ostream& out, std::ostream& err) {
  try {
    return RunHistoryOrThrow(options, out, err);
  } catch (const StorageError& e) {  // the database named is missing, damaged or foreign
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    err << "ditbench history: error: " << message << '\n';
    return StorageErrorExit(e);
  } catch (...) {
    return ReportEscapedError("ditbench history", err);
  }
}

std::function<int()> DefineHistoryCommand(CLI::App& sub) {
  auto options = std::make_shared<HistoryCommandOptions>();
  sub.add_option("--db", options->db, "Results database")->capture_default_str();
  sub.add_option("--sweep", options->sweep, "Only this sweep's campaigns");
  sub.add_option("--only", options->only, "Only this trial key");
  sub.add_option("--metric", options->metric,
                 "The millisecond metric to follow: latency_ms, or p95_ms of serving trials, ...")
      ->capture_default_str();
  auto format = AddFormatOption(sub, "history", EveryTableFormat());
  sub.add_option("-o,--output", options->output, "Write to this file instead of standard output");
  sub.add_option("--fail-on-change", options->fail_on_change_pct,
                 "Exit 1 on a change point slower by more than PCT percent");
  sub.add_option("--last", options->last,
                 "With --fail-on-change: only change points within the last N campaigns of "
                 "each key (default 0: any)")
      ->check(NonNegative());
  return [options, format] {
    options->format = format->Value();
    return RunHistory(*options, std::cout, std::cerr);
  };
}

}  // namespace ditbench
