#include "trial/validity.h"

#include <fmt/format.h>

namespace ditbench {

namespace {

std::optional<std::string> WorldSizeProblem(const TrialConfig& c, const Capacity& capacity) {
  if (c.world_size() > capacity.slots)
    return fmt::format("world size {} ({}) exceeds the {} {} available", c.world_size(),
                       LayoutProduct(c), capacity.slots, capacity.on_gpu ? "GPUs" : "CPU slots");
  return std::nullopt;
}

std::optional<std::string> BrokenRule(const TrialConfig& c, const Capacity& capacity) {
  std::string error;
  auto resolved = ResolveModel(c.model, c.model_overrides, &error);
  if (!resolved) return error;
  const ModelConfig& model = *resolved;
  // A command runs its own program: the model is a label, its shape rules are the program's.
  if (!TraitsOf(c.workload).builtin_model) {
    if (c.graph != GraphMode::kEager)
      return fmt::format("graph: {} applies to ditbench's own models; a {} workload's program "
                         "decides how it issues its kernels",
                         GraphModeName(c.graph), WorkloadName(c.workload));
    return WorldSizeProblem(c, capacity);
  }
  if (c.graph == GraphMode::kCudaGraph && c.warmup < 1)
    return "graph: cuda_graph captures the steps at the end of the eager warm-up: warmup must "
           "be at least 1, got 0";
  if (c.graph == GraphMode::kCudaGraph && c.profile_blocks)
    return "graph: cuda_graph replays whole steps, so profile_blocks has no block boundaries to "
           "time (set profile_blocks: false, or graph: eager)";

  // Shapes: the parallel degrees must split the model and the image evenly.
  const int sp = c.sequence_size();
  const int unit = model.vae_downsample * model.patch;
  if (c.resolution % unit != 0)
    return fmt::format("resolution {} is not a multiple of {} (VAE downsample {} x patch {})",
                       c.resolution, unit, model.vae_downsample, model.patch);
  if (model.heads % c.ulysses != 0)
    return fmt::format("{} heads are not divisible by ulysses={}", model.heads, c.ulysses);
  const int grid = TokenGridSize(model, c.resolution);
  const std::int64_t tokens = ImageTokens(model, c.resolution);
  if (tokens % sp != 0)
    return fmt::format("{} image tokens are not divisible by ring x ulysses = {}", tokens, sp);
  if (grid % sp != 0)
    return fmt::format("latent height of {} patch rows is not divisible by the "
                       "sequence-parallel degree ring x ulysses = {}", grid, sp);
  // SD3's position table covers pos_embed_max_size patch rows (SD3-medium 192, SD3.5 384).
  const int max_grid = model.pos_embed_max_size;
  if (model.cropped_position_table && grid > max_grid)
    return fmt::format("{} has positions for {} patch rows ({} px); {} px needs {}", c.model,
                       max_grid, max_grid * unit, c.resolution, grid);
  if (c.vae_tile > 0 && c.scope != Scope::kPipeline)
    return fmt::format("vae_tile={} tiles the VAE decode, which only scope pipeline runs (scope "
                       "is {})", c.vae_tile, ScopeName(c.scope));
  if (c.pipefusion > model.total_blocks())
    return fmt::format("pipefusion={} exceeds the model's {} transformer blocks", c.pipefusion,
                       model.total_blocks());
  const int patches = c.effective_pipefusion_patches();
  if (c.pipefusion > 1) {
    if (patches < c.pipefusion)
      return fmt::format("pipefusion_patches={} is below the PipeFusion degree {}", patches,
                         c.pipefusion);
    if (grid % patches != 0)
      return fmt::format("{} patch rows do not split into pipefusion_patches={}", grid, patches);
    if ((grid / patches) % sp != 0)
      return fmt::format("a PipeFusion patch of {} patch rows does not split over ring x "
                         "ulysses = {}", grid / patches, sp);
  }
  if (c.cfg == 2 && !model.negative_prompt)
    return fmt::format("cfg=2 needs a model that batches a negative prompt; {} does not "
                       "(guidance is distilled into an embedding)", c.model);

  return WorldSizeProblem(c, capacity);
}

// What this build implements. Each is a missing feature, not a user error, and says so.
std::optional<std::string> Unsupported(const TrialConfig& c, const Capacity& capacity) {
  // REQUIRES: BrokenRule(c, capacity) found nothing, so the model resolves.
  // A program of the user's own knows what it supports.
  if (!TraitsOf(c.workload).builtin_model) return std::nullopt;
  std::string error;
  auto model = ResolveModel(c.model, c.model_overrides, &error);
  if (!capacity.on_gpu && c.precision == Precision::kTf32)
    return "tf32 is a GPU tensor-core mode; on CPU it would silently be fp32";
  if (!capacity.on_gpu && c.graph == GraphMode::kCudaGraph)
    return "graph: cuda_graph replays CUDA graphs of the denoising steps; on CPU there is "
           "nothing to capture (the trial is skipped, never timed eagerly in its place)";
  return std::nullopt;
}

}  // namespace

Verdict Judge(const TrialConfig& config, const Capacity& capacity) {
  Verdict v;
  v.invalid = BrokenRule(config, capacity);
  if (!v.invalid) v.unsupported = Unsupported(config, capacity);
  return v;
}

std::optional<std::string> InvalidReason(const TrialConfig& config, const Capacity& capacity) {
  Verdict v = Judge(config, capacity);
  return v.invalid ? v.invalid : v.unsupported;
}

}  // namespace ditbench
