// Printing a SweepPlan: the table people read and the versioned JSON scripts read
// ({"format": "ditbench-plan", "version": 1, ...}). Used by `ditbench plan` and
// `ditbench run --dry-run`, so both show the same thing.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "runner/placement.h"
#include "runner/sweep_plan.h"

namespace ditbench {

// `notes` (empty, or one per trial): what resuming does with a trial already recorded
// (runner/resume.h); a non-empty note replaces the trial's plan column.
void WritePlanTable(const SweepSpec& spec, const SweepPlan& plan, const PlanAssumptions& assumptions,
                    std::ostream& out, const std::vector<std::string>& notes = {});
void WritePlanJson(const SweepSpec& spec, const SweepPlan& plan, const PlanAssumptions& assumptions,
                   std::ostream& out);

// The device name estimates assume for a placement: the first GPU's name, or "cpu".
std::string DeviceFor(const Placement& placement);

}  // namespace ditbench
