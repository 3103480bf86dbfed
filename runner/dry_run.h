// `ditbench run --dry-run`: the plan, and what resuming would do with what the database
// already holds.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/sweep_spec.h"
#include "plan/sweep_plan.h"
#include "runner/sweep_run.h"

namespace ditbench {

// What a `run` of `spec` would do with what the database already holds (read-only: no lock,
// nothing created): per planned trial the note its plan row shows ("recorded ok: kept", ""
// for a trial to run), and one line naming the campaign it would resume or why it would start
// a new one. `plan --db` and `run --dry-run` both show it.
struct ResumePreview {
  std::vector<std::string> notes;  // by plan.trials index; empty when nothing is recorded
  std::string line;                // ends with a newline
};
ResumePreview PreviewResume(const RunOptions& options, const SweepSpec& spec,
                            const SweepPlan& plan);

// `--dry-run`: the plan, and what resuming would do with what the database already holds
// (read-only: no lock, nothing created).
void WriteDryRun(const RunOptions& options, const SweepSpec& spec, const SweepPlan& plan,
                 const PlanAssumptions& assumptions, std::ostream& out);

}  // namespace ditbench
