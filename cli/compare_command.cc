// `ditbench compare`: see cli/compare.h.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <iostream>
#include <memory>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "analysis/comparison.h"
#include "base/user_error.h"
#include "cli/command.h"
#include "cli/compare.h"
#include "cli/escaped_error.h"
#include "cli/format_option.h"
#include "report/comparison_output.h"
#include "report/output_file.h"
#include "storage/results_db.h"
#include "storage/storage_error.h"

namespace ditbench {
namespace {

int RunCompareOrThrow(const CompareOptions& options, std::ostream& out, std::ostream& err) {
  for (const std::optional<double>& pct : {options.noise_floor_pct, options.min_effect_pct}) {
    if (pct && !(*pct >= 0)) {
      throw UserError("--noise-floor and --min-effect must be >= 0");
    }
  }
  const CampaignSet a = ParseCampaignSet(options.a, options.db);
  const CampaignSet b = ParseCampaignSet(options.b, options.db);
  std::unique_ptr<ResultsDb> a_db = ResultsDb::Open(a.db, /*read_only=*/true);
  std::unique_ptr<ResultsDb> b_owned;
  ResultsDb* b_db = a_db.get();
  if (std::filesystem::weakly_canonical(a.db) != std::filesystem::weakly_canonical(b.db)) {
    b_owned = ResultsDb::Open(b.db, /*read_only=*/true);
    b_db = b_owned.get();
  }
  const Comparison comparison =
      CompareCampaigns(a_db->reader(), a, b_db->reader(), b,
                       CompareSettings{options.noise_floor_pct, options.min_effect_pct},
                       &a_db->selfchecks(), &b_db->selfchecks());
  if (options.output.empty()) {
    WriteComparison(comparison, options.format, out);
    CheckOutput(out, "the comparison");
  } else {
    std::ostringstream text;
    WriteComparison(comparison, options.format, text);
    WriteOutputFile(options.output, text.str());  // every write checked; throws with the cause
    out << "wrote " << options.output.string() << '\n';
  }
  if (!options.fail_on_regression_pct) return kExitOk;
  const RegressionCheck check =
      FindRegressions(comparison, *options.fail_on_regression_pct, options.strict);
  for (const ComparedTrial* t : check.regressions) {
    err << fmt::format("ditbench compare: regression: {} ({}) is {:+.1f}% slower (interval "
                       "{}), above {}%{}\n",
                       t->trial_key, t->label, t->change.change.pct,
                       IntervalText(t->change.change), *options.fail_on_regression_pct,
                       t->busy() ? "; measured on a busy machine (" + t->busy_note + ")" : "");
  }
  for (const ComparedTrial* t : check.skipped_busy) {
    err << fmt::format("ditbench compare: skipped: {} ({}) is {:+.1f}% slower but was measured "
                       "on a busy machine ({}); not counted as a regression (--strict counts "
                       "it)\n",
                       t->trial_key, t->label, t->change.change.pct, t->busy_note);
  }
  return check.regressions.empty() ? kExitOk : kExitTrialsFailed;
}

}  // namespace

int RunCompare(const CompareOptions& options, std::ostream& out, std::ostream& err) {
  try {
    return RunCompareOrThrow(options, out, err);
  } catch (const StorageError& e) {  // the database named is missing, damaged or foreign
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    err << "ditbench compare: error: " << message << '\n';
    return StorageErrorExit(e);
  } catch (...) {
    return ReportEscapedError("ditbench compare", err);
  }
}

std::function<int()> DefineCompareCommand(CLI::App& sub) {
  auto options = std::make_shared<CompareOptions>();
  sub.add_option("A", options->a, "Baseline: campaign id(s) \"3\" or \"1,2,3\", or DB:IDS")
      ->required();
  sub.add_option("B", options->b, "Candidate: same forms as A")->required();
  sub.add_option("--db", options->db, "Results database for sides without DB:")
      ->capture_default_str();
  auto format = AddFormatOption(sub, "compare", EveryTableFormat());
  sub.add_option("-o,--output", options->output, "Write to this file instead of standard output");
  sub.add_option("--fail-on-regression", options->fail_on_regression_pct,
                 "Exit 1 when a trial is significantly slower by more than PCT percent");
  sub.add_flag("--strict", options->strict,
               "With --fail-on-regression: count slower trials measured on a busy machine too");
  sub.add_option("--noise-floor", options->noise_floor_pct,
                 "Percent a one-launch change must clear (default: learned or per device)");
  sub.add_option("--min-effect", options->min_effect_pct,
                 "Smallest change in percent that counts across launches (default per device)");
  return [options, format] {
    options->format = format->Value();
    return RunCompare(*options, std::cout, std::cerr);
  };
}

}  // namespace ditbench
