// The HTML comparison report: one self-contained file (Chart.js inlined, no network).
//
// Contents: a header (sweeps, campaigns with build and host, generation time; the newest
// `ditbench selfcheck` of each device shown, report/selfcheck_section.h), status
// counts, warnings (report/report_warnings.h), the History section when a trial key has three
// campaigns or more (report/history_section.h), the Planner section when options.planner is
// set (report/planner_section.h: the cost model's predictions against the measurements, and
// the advisor's recommendation in each group's section), and per report group (report/
// configuration_group.h: same model, resolution, precision, scope, batch, steps,
// profile_blocks, workload) its charts (report/group_charts.h) and a table ranked by latency,
// one row per configuration (its trials folded over seeds, analysis/seed_folding.h), with the
// 95% CI, noise, rank skew, memory, and the speedup and scaling efficiency against the row's
// 1-rank baseline, the one its charts use. Precisions and scopes are never compared with
// each other.
//
// The report only reads, through storage's typed reads (ResultsReader::Results, Samples) on a
// read-only connection; it holds no SQL and never changes the database.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "report/html_text.h"  // HtmlEscape, for the report's other pages
#include "report/planner_section.h"

namespace ditbench {

struct ReportOptions {
  std::filesystem::path db;
  // Campaigns to include: those of any named sweep plus those listed by id. Both empty: all.
  std::vector<std::string> sweeps;
  std::vector<std::int64_t> campaigns;
  std::filesystem::path output;
  // `--baseline`: a campaign set (analysis/comparison.h: "3", "1,2", "other.db:3"). When set,
  // the report opens with the comparison of the other selected campaigns against it
  // (report/comparison_html.h). Empty: no comparison.
  std::string baseline;
  // Fills the Planner section and each group's recommendation (report/planner_section.h);
  // unset: neither is shown. `ditbench report` passes plan/planner_view.h's BuildPlannerView.
  PlannerHook planner = nullptr;
};

// Writes the report to options.output (report/output_file.h: a regular file replaced
// atomically, a device such as /dev/stdout written in place, every write checked). Throws
// StorageError for a missing or unreadable database, UserError for an unknown sweep or campaign
// (one line naming it) or a baseline that leaves no other campaign to compare, and
// std::runtime_error when the output cannot be written.
void WriteHtmlReport(const ReportOptions& options);

// The report as text (what WriteHtmlReport writes). Same errors, minus output ones.
std::string RenderHtmlReport(const ReportOptions& options);

}  // namespace ditbench
