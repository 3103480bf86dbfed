#include "experiments/validity.h"

#include <fmt/format.h>

namespace ditbench {

std::optional<std::string> InvalidReason(const TrialConfig& c, const Capacity& capacity) {
  const ModelConfig* model = FindModelPreset(c.model);
  if (!model) return fmt::format("unknown model '{}'", c.model);

  const int sp = c.ring * c.ulysses;
  const int latent = LatentSize(*model, c.resolution);
  if (c.resolution % model->vae_downsample != 0 || latent % model->patch != 0)
    return fmt::format("resolution {} is not a multiple of {} (VAE downsample {} x patch {})",
                       c.resolution, model->vae_downsample * model->patch,
                       model->vae_downsample, model->patch);
  if (model->heads % c.ulysses != 0)
    return fmt::format("{} heads are not divisible by ulysses={}", model->heads, c.ulysses);
  const int grid = TokenGridSize(*model, c.resolution);
  if (ImageTokens(*model, c.resolution) % sp != 0)
    return fmt::format("{} image tokens are not divisible by ring x ulysses = {}",
                       ImageTokens(*model, c.resolution), sp);
  if (grid % sp != 0)
    return fmt::format("latent height of {} patch rows is not divisible by the "
                       "sequence-parallel degree ring x ulysses = {}", grid, sp);
  if (c.pipefusion > model->depth)
    return fmt::format("pipefusion={} exceeds the model's {} transformer blocks", c.pipefusion,
                       model->depth);
  if (c.cfg == 2 && !model->negative_prompt)
    return fmt::format("cfg=2 needs a model that batches a negative prompt; {} does not",
                       c.model);

  // Implemented in this build. Each of these is a missing feature, not a user error, and says so.
  if (c.ring > 1) return "ring attention (ring > 1) is not implemented in this build yet";
  if (c.pipefusion > 1) return "PipeFusion (pipefusion > 1) is not implemented in this build yet";
  if (c.scope == Scope::kPipeline)
    return "scope 'pipeline' needs a VAE decoder, which the model zoo does not have yet; "
           "use 'denoise' or 'forward'";
  if (!capacity.on_gpu && (c.precision == Precision::kTf32))
    return "tf32 is a GPU tensor-core mode; on CPU it would silently be fp32";

  if (c.world_size() > capacity.slots)
    return fmt::format("world size {} (dp {} x cfg {} x pipefusion {} x ring {} x ulysses {}) "
                       "exceeds the {} {} available",
                       c.world_size(), c.dp, c.cfg, c.pipefusion, c.ring, c.ulysses,
                       capacity.slots, capacity.on_gpu ? "GPUs" : "CPU slots");
  return std::nullopt;
}

}  // namespace ditbench
