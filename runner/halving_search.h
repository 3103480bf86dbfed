// `search: halving` (plan/halving.h) run round by round. Round r is launch r of each trial
// still in the race; each round is derived from what the database holds (launch r ok: kept),
// so a resumed search goes on where it stopped.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "experiments/sweep_spec.h"
#include "plan/resume.h"
#include "plan/sweep_plan.h"
#include "plan/trial_selection.h"
#include "runner/run_status.h"
#include "storage/results_reader.h"

namespace ditbench {

// Runs the launches of one round (in the sweep loop; there may be none); returns false when
// the run must stop (interrupted, the machine busy, the budget spent), true when the next
// round may start.
using RunRound = std::function<bool(const std::vector<QueuedTrial>& launches)>;

// Runs rounds until one trial is left in every group or `run_round` says stop. Trials in
// `live` (running under another coordinator) or not selected take no part. `busy`: the keys
// --rerun busy reruns (RerunFor, plan/resume.h). Storage errors
// propagate (StorageError).
void RunHalving(const SweepSpec& spec, const SweepPlan& plan, const TrialSelection& selection,
                ResultsReader& db, std::int64_t campaign, Rerun rerun,
                const std::set<std::string>& busy, const std::set<std::string>& live,
                const RunRound& run_round, RunStatus& status);

}  // namespace ditbench
