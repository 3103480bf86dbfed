#include "plan/oom_prediction.h"

#include <tuple>


namespace ditbench {

bool AtLeastAsLarge(const TrialConfig& c, const TrialConfig& o) {
  const auto same = [](const TrialConfig& t) {
    return std::tie(t.workload, t.model, t.model_overrides, t.precision, t.scope, t.steps);
  };
  if (same(c) != same(o)) return false;
  if (c.effective_pipefusion_patches() != o.effective_pipefusion_patches() &&
      c.pipefusion > 1 && o.pipefusion > 1)
    return false;
  if (c.resolution < o.resolution || c.image_height() < o.image_height() ||
      c.frames < o.frames || c.batch < o.batch)
    return false;
  if (!AllAtMost(c, o)) return false;
  // Not the same computation (another seed of the same size needs the same memory: predicted).
  const auto shape = [](const TrialConfig& t) {
    return std::make_tuple(t.seed, t.resolution, t.image_height(), t.frames, t.batch, t.degrees(),
                           t.effective_pipefusion_patches(),
                           t.pipefusion > 1 ? t.pipefusion_warmup_steps : 1);
  };
  return shape(c) != shape(o);
}

std::optional<std::string> PredictedOom(const TrialConfig& candidate,
                                        const std::vector<OomTrial>& oomed) {
  for (const OomTrial& o : oomed)
    if (AtLeastAsLarge(candidate, o.config)) return o.key;
  return std::nullopt;
}

}  // namespace ditbench
