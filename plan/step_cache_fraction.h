// What `plan` expects a step cache (`cache`, experiments/trial.h StepCache) to skip: the share
// of a trial's denoising steps that will run their blocks, from earlier measurements of the
// same model, shape, steps, precision and cache settings (any parallel layout: every rank of a
// trial takes the same decisions), else from the threshold alone, and which of those it used.
#pragma once

#include <string>
#include <vector>

#include "experiments/trial.h"
#include "storage/planner_history.h"

namespace ditbench {

struct ComputedFraction {
  double computed = 1;  // of the denoising steps, 0 to 1
  // The share of a full iteration's denoising work that is done: a reused step still runs the
  // first block (fbcache) or nothing (teacache) of the transformer.
  double work = 1;
  std::string source;  // "measured (N trials)", "threshold 0" or "prior: ..."
};

// REQUIRES: !config.cache.empty().
ComputedFraction ExpectedComputedFraction(
    const TrialConfig& config, const std::vector<PlannerHistory::StepCacheObservation>& earlier);

}  // namespace ditbench
