// `on_oom: skip_larger` (sweep field, opt-in): a trial that needs at least as much memory per
// rank as one that already ran out of memory is not run; it is recorded as skipped with
// "predicted OOM after <key>". Pure: configurations in, a verdict out.
//
// "At least as much memory" is a partial order, judged only between trials of the same model
// (dimension overrides included), precision, scope, steps and PipeFusion settings: the
// candidate's resolution and batch are at least the OOMed trial's and each parallel degree
// (kDegreeTable) at most its (a lower degree keeps more of the work, and
// of its activations, on each rank), and it is not the same computation (another seed of the
// same size is predicted: it needs the same memory). Trials of other
// models or precisions are never predicted. Smaller trials should come first in the sweep for
// this to save anything; the order is the sweep's own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiments/trial.h"

namespace ditbench {

// A trial that ran out of memory: its key and configuration.
struct OomTrial {
  std::string key;
  TrialConfig config;
};

// True when `candidate` needs at least the memory per rank of `oomed` by the rule above, and
// is not the same computation.
bool AtLeastAsLarge(const TrialConfig& candidate, const TrialConfig& oomed);

// The key of the first trial of `oomed` that `candidate` is at least as large as, if any.
std::optional<std::string> PredictedOom(const TrialConfig& candidate,
                                        const std::vector<OomTrial>& oomed);

}  // namespace ditbench
