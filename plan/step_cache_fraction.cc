#include "plan/step_cache_fraction.h"

#include <algorithm>

#include <fmt/format.h>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

namespace {

// What the decisions depend on: the computation but the parallel layout and the seed.
bool SameDecisions(const TrialConfig& a, const TrialConfig& b) {
  return a.model == b.model && a.model_overrides == b.model_overrides &&
         a.image_shape() == b.image_shape() && a.steps == b.steps && a.batch == b.batch &&
         a.precision == b.precision && a.cache == b.cache;
}

}  // namespace

ComputedFraction ExpectedComputedFraction(
    const TrialConfig& config, const std::vector<PlannerHistory::StepCacheObservation>& earlier) {
  ComputedFraction f;
  const int steps = std::max(1, config.steps);
  double skipped = 0;
  int trials = 0;
  for (const auto& observation : earlier) {
    TrialConfig other;
    try {
      other = TrialConfigFromJson(observation.config);
    } catch (const std::exception&) {
      continue;  // a configuration of another build
    }
    if (!SameDecisions(config, other)) continue;
    skipped += std::clamp(observation.skipped_steps, 0.0, double(steps));
    ++trials;
  }
  if (trials > 0) {
    f.computed = 1 - skipped / trials / steps;
    f.source = fmt::format("measured ({} earlier trial{} of this model, shape and cache)", trials,
                           trials == 1 ? "" : "s");
  } else if (config.cache.threshold <= 0) {
    f.source = "threshold 0: every step computes";
  } else {
    // The warm-up steps and the last always compute; how many of the others a threshold skips
    // depends on the model and its inputs: none is assumed (an upper bound on the time).
    f.source =
        "prior: no earlier measurement of this model, shape and cache; every step "
        "assumed computed (an upper bound)";
  }
  double reused_share = 0;
  std::string unused;
  if (config.cache.kind == StepCache::Kind::kFbCache)
    if (auto model = ResolveModel(config.model, config.model_overrides, &unused))
      reused_share = 1.0 / std::max(1, model->depth + model->single_blocks);
  f.work = f.computed + (1 - f.computed) * reused_share;
  return f;
}

}  // namespace ditbench
