// `run --only KEY`: which trials of a sweep a run is limited to. Pure: the keys are checked
// against the plan before anything is opened or started, and the sweep loop then skips every
// trial not selected (its campaign, resume and replicates logic unchanged).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plan/sweep_plan.h"

namespace ditbench {

// The trial keys a run is limited to; empty: every trial of the sweep.
struct TrialSelection {
  std::set<std::string> keys;

  bool Selects(const std::string& key) const { return keys.empty() || keys.count(key) > 0; }
  bool Partial() const { return !keys.empty(); }
};

// The selection for `only` (the --only values, trial keys as `query` and `report` print
// them), or the first problem as one line: a key that is not a trial of the sweep, with the
// near matches among the plan's keys (keys that start with it, and the closest by edit
// distance, base/did_you_mean.h) or, when none is near, how to list the keys.
struct TrialSelectionResult {
  TrialSelection selection;
  std::optional<std::string> error;
};
TrialSelectionResult SelectTrials(const std::string& sweep_name, const SweepPlan& plan,
                                  const std::vector<std::string>& only);

// True when every trial of the plan has a final status among `statuses` (the campaign's, by
// key): none missing, pending, running or interrupted. A run limited by --only stamps its
// campaign finished only then.
bool EveryTrialSettled(const SweepPlan& plan, const std::map<std::string, TrialStatus>& statuses);

}  // namespace ditbench
