// Printing a SweepPlan: the table people read (through base/table_printers.h, also as Markdown)
// and the versioned JSON scripts read
// ({"format": "ditbench-plan", "version": 1, ...}; within version 1 keys are only ever added,
// "savings" the latest, so a reader ignores keys it does not know). Used by `ditbench plan` and
// `ditbench run --dry-run`, so both show the same thing.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "machine/placement.h"
#include "plan/sweep_plan.h"

namespace ditbench {

// `notes` (empty, or one per trial): what resuming does with a trial already recorded
// (plan/resume.h); a non-empty note replaces the trial's plan column. Both outputs show what
// on_oom, halving and `budget_s` (seconds; negative: no budget) save (plan/plan_savings.h):
// the table as "savings:" lines, the JSON under "savings".
void WritePlanTable(const SweepSpec& spec, const SweepPlan& plan, const PlanAssumptions& assumptions,
                    std::ostream& out, const std::vector<std::string>& notes = {},
                    double budget_s = -1);
void WritePlanJson(const SweepSpec& spec, const SweepPlan& plan, const PlanAssumptions& assumptions,
                   std::ostream& out, double budget_s = -1);
// The table's trials alone as a Markdown pipe table (base/table_printers.h), for a pull request.
void WritePlanMarkdown(const SweepPlan& plan, std::ostream& out,
                       const std::vector<std::string>& notes = {});

// A duration as the plan prints it: "42 s", "3.5 min", "12.0 h" (of its magnitude: a saving
// and a cost read alike), "> 10^6 h" from kLongestDurationH hours on (an estimate that long
// means nothing more precise, and is never a 300-digit number), "unknown" for NaN.
inline constexpr double kLongestDurationH = 1e6;
std::string DurationText(double seconds);

// The device name estimates assume for a placement: the first GPU's name, or "cpu".
std::string DeviceFor(const Placement& placement);

}  // namespace ditbench
