// `ditbench run --dry-run`: the plan, and what resuming would do with what the database
// already holds.
#pragma once

#include <iosfwd>

#include "experiments/sweep_spec.h"
#include "plan/sweep_plan.h"
#include "runner/sweep_run.h"

namespace ditbench {

// `--dry-run`: the plan, and what resuming would do with what the database already holds
// (read-only: no lock, nothing created).
void WriteDryRun(const RunOptions& options, const SweepSpec& spec, const SweepPlan& plan,
                 const PlanAssumptions& assumptions, std::ostream& out);

}  // namespace ditbench
