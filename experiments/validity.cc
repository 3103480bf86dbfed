#include "experiments/validity.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/trial_fields.h"
#include "experiments/trial_kind.h"

#include "model_zoo/shapes/family.h"
#include "model_zoo/shapes/memory_traffic.h"
#include "model_zoo/shapes/teacache_polynomials.h"
#include "model_zoo/shapes/vae_shapes.h"

namespace ditbench {

namespace {

// Frames: video models need them, of the form vae_temporal x k + 1 (the causal VAE encodes the
// first frame alone, then vae_temporal frames per latent frame); image models take none.
std::optional<std::string> FramesProblem(const TrialConfig& c, const ModelConfig& model) {
  if (!model.video()) {
    if (c.frames != 0)
      return fmt::format("frames={} applies to video models only; {} makes images", c.frames,
                         c.model);
    return std::nullopt;
  }
  const int k = model.vae_temporal;
  if (c.frames == 0)
    return fmt::format("{} is a video model: set frames ({}k + 1, such as {})", c.model, k,
                       20 * k + 1);
  if ((c.frames - 1) % k != 0)
    return fmt::format(
        "frames={} is not of the form {}k + 1 ({}'s VAE encodes the first frame "
        "alone, then {} frames per latent frame)",
        c.frames, k, c.model, k);
  const int latent = LatentFrames(model, c.frames);
  if (latent % model.patch_t != 0)
    return fmt::format("frames={} give {} latent frames, not a multiple of the temporal patch {}",
                       c.frames, latent, model.patch_t);
  return std::nullopt;
}

std::optional<std::string> WorldSizeProblem(const TrialConfig& c, const Capacity& capacity) {
  if (c.world_size() > capacity.slots)
    return fmt::format("world size {} ({}) exceeds the {} {} available", c.world_size(),
                       LayoutProduct(c), capacity.slots, capacity.on_gpu ? "GPUs" : "CPU slots");
  return std::nullopt;
}

// FP8 layers and per-step schedules: what makes them mean something for this trial.
// `vae_parallel`: a decode of scope pipeline, over at most the trial's ranks; untiled, a band of
// at least one latent row per rank (model_zoo/parallel/row_split.h); tiled, at least one tile
// per rank (model_zoo/families/vae_tiles.h cuts them).
std::optional<std::string> VaeParallelProblem(const TrialConfig& c, const ModelConfig& model) {
  const int n = c.vae_parallel;
  if (n == 1) return std::nullopt;
  if (c.scope != Scope::kPipeline)
    return fmt::format(
        "vae_parallel={} splits the VAE decode, which only scope pipeline runs "
        "(scope is {})",
        n, ScopeName(c.scope));
  if (n > c.world_size())
    return fmt::format(
        "vae_parallel={} splits the decode over the trial's first {} ranks; it has "
        "{} (the product of its parallel degrees)",
        n, n, c.world_size());
  const ImageShape shape = c.image_shape();
  const int rows = shape.height / model.vae_downsample;
  if (c.vae_tile == 0) {
    if (rows < n)
      return fmt::format(
          "the latent's {} rows ({} px / {}) are fewer than vae_parallel={} bands "
          "of at least one row",
          rows, shape.height, model.vae_downsample, n);
    return std::nullopt;
  }
  const int tiles = VaeDecodeTiles(model, shape, c.vae_tile);
  if (tiles < n)
    return fmt::format(
        "vae_tile={} cuts the latent into {} tile{}, fewer than vae_parallel={} "
        "ranks (a tiled decode shares out whole tiles)",
        c.vae_tile, tiles, tiles == 1 ? "" : "s", n);
  return std::nullopt;
}

std::optional<std::string> LowPrecisionProblem(const TrialConfig& c) {
  if (c.quant != Quantization::kNone && c.precision != Precision::kBf16)
    return fmt::format(
        "quant: {} writes its FP8 GEMMs' output in bf16, so it takes bf16 trials; this trial is "
        "{}",
        QuantizationName(c.quant), PrecisionName(c.precision));
  if (!c.cache.empty() && c.scope == Scope::kForward)
    return fmt::format("cache: {} skips denoising steps; scope forward runs one forward",
                       StepCacheKindName(c.cache.kind));
  if (c.schedule.empty()) return std::nullopt;
  if (c.attention == AttentionBackend::kAuto && c.quant == Quantization::kNone)
    return "schedule: keeps steps in high precision (attention auto, no quant), which is what "
           "every step of this trial runs already: set attention or quant with it";
  const int steps = c.scope == Scope::kForward ? 1 : c.steps;
  const int high = c.schedule.high_precision_first + c.schedule.high_precision_last;
  if (high >= steps)
    return fmt::format(
        "schedule: {} high-precision steps (first {}, last {}) leave none of the {} step(s) to "
        "run with {}{}",
        high, c.schedule.high_precision_first, c.schedule.high_precision_last, steps,
        c.attention != AttentionBackend::kAuto
            ? "attention " + std::string(AttentionBackendName(c.attention))
            : std::string(),
        c.quant != Quantization::kNone ? " quant " + std::string(QuantizationName(c.quant))
                                       : std::string());
  return std::nullopt;
}

// Why an engine trial cannot run: a degree above 1 that its command does not pass on
// (engine.degrees), a video (frames) asked of the images API, a scope other than pipeline;
// nullopt for other workloads.
std::optional<std::string> EngineProblem(const TrialConfig& c) {
  if (c.workload != Workload::kEngine) return std::nullopt;
  if (c.engine.degrees) {
    const std::vector<std::string>& takes = *c.engine.degrees;
    for (const DegreeInfo& d : kDegreeTable)
      if (c.*d.member > 1 && std::find(takes.begin(), takes.end(), d.name) == takes.end())
        return fmt::format(
            "{}={}: this engine's command passes on {} (engine.degrees)", d.name, c.*d.member,
            takes.empty() ? "no degree" : fmt::format("only {}", fmt::join(takes, ", ")));
  }
  if (c.frames > 1 && c.engine.api != "videos")
    return fmt::format(
        "frames={}: api: {} answers with an image; a video engine is driven with api: videos",
        c.frames, c.engine.api);
  if (c.scope != Scope::kPipeline)
    return fmt::format(
        "scope: {}: an engine answers with the decoded output, so its scope is pipeline",
        ScopeName(c.scope));
  return std::nullopt;
}

// Why a trial of a workload that runs its own program cannot run: a setting that only
// ditbench's own models take, or the world size; nullopt when it can.
std::optional<std::string> CommandWorkloadProblem(const TrialConfig& c, const Capacity& capacity) {
  if (c.graph != GraphMode::kEager)
    return fmt::format(
        "graph: {} applies to ditbench's own models; a {} workload's program "
        "decides how it issues its kernels",
        GraphModeName(c.graph), WorkloadName(c.workload));
  if (c.attention != AttentionBackend::kAuto)
    return fmt::format(
        "attention: {} applies to ditbench's own models; give a {} workload's program its "
        "kernel through a custom axis of its own",
        AttentionBackendName(c.attention), WorkloadName(c.workload));
  if (c.vae_parallel != 1)
    return fmt::format(
        "vae_parallel={} applies to ditbench's own decoders; give a {} workload's program its "
        "own through a custom axis",
        c.vae_parallel, WorkloadName(c.workload));
  if (!c.cache.empty())
    return fmt::format(
        "cache: {} applies to ditbench's own models; give a {} workload's program its own "
        "through a custom axis",
        StepCacheKindName(c.cache.kind), WorkloadName(c.workload));
  if (auto problem = EngineProblem(c)) return problem;
  // An engine serves a load through ditbench's client (runner/engine_trial.h); a program
  // does not.
  if (const TrialKindRow& kind = KindRow(KindOf(c));
      TraitsOf(c.workload).launch == WorkloadLaunch::kProgram && !kind.program_refusal.empty())
    return fmt::format(fmt::runtime(kind.program_refusal), WorkloadName(c.workload));
  if (c.quant != Quantization::kNone || !c.schedule.empty())
    return fmt::format(
        "{} applies to ditbench's own models; give a {} workload's program its own through a "
        "custom axis",
        c.quant != Quantization::kNone ? "quant: " + std::string(QuantizationName(c.quant))
                                       : std::string("schedule"),
        WorkloadName(c.workload));
  return WorldSizeProblem(c, capacity);
}

// Why tensor parallelism cannot split this trial's model: a family it is not built for, heads
// or an MLP width that tp (with Ulysses inside its heads) does not divide, or a strategy it
// does not compose with yet; nullopt without tp, or when it can.
std::optional<std::string> TensorParallelProblem(const TrialConfig& c, const ModelConfig& model) {
  if (c.tp == 1) return std::nullopt;
  if (!TensorParallelFamily(model.family))
    return fmt::format(
        "tp={}: tensor parallelism is built for {} so far; {} ({}) is not among them", c.tp,
        TensorParallelFamilies(), c.model, FamilyName(model.family));
  if (model.heads % c.tp != 0)
    return fmt::format("{} heads are not divisible by tp={}", model.heads, c.tp);
  if ((model.heads / c.tp) % c.ulysses != 0 && !c.pad_heads)
    return fmt::format(
        "{} heads are not divisible by tp x ulysses = {} (each tp rank attends with heads / tp, "
        "which Ulysses splits again; pad_heads: true pads them to {})",
        model.heads, c.tp * c.ulysses, PaddedHeads(model.heads, c.tp, c.ulysses));
  if (model.mlp_width() % c.tp != 0)
    return fmt::format("the MLP's {} hidden units are not divisible by tp={}", model.mlp_width(),
                       c.tp);
  if (c.pipefusion > 1)
    return fmt::format(
        "tp={} with pipefusion={}: PipeFusion's stages do not split their blocks' heads yet", c.tp,
        c.pipefusion);
  if (c.quant != Quantization::kNone)
    return fmt::format(
        "tp={} with quant: {}: FP8 layers have not been verified on a tensor-parallel shard "
        "yet",
        c.tp, QuantizationName(c.quant));
  return std::nullopt;
}

std::optional<std::string> BrokenRule(const TrialConfig& c, const Capacity& capacity) {
  if (c.quality.restarts && c.workload != Workload::kEngine)
    return fmt::format(
        "quality.restarts: the restart band is measured over restarts of an engine's server "
        "(workload: engine); a {} trial has no server to restart",
        WorkloadName(c.workload));
  std::string error;
  auto resolved = ResolveModel(c.model, c.model_overrides, &error);
  if (!resolved) return error;
  const ModelConfig& model = *resolved;
  // A command runs its own program: the model is a label, its shape rules are the program's.
  if (!TraitsOf(c.workload).builtin_model) return CommandWorkloadProblem(c, capacity);
  if (auto problem = LowPrecisionProblem(c)) return problem;
  if (c.graph == GraphMode::kCudaGraph && c.warmup < 1)
    return "graph: cuda_graph captures the steps at the end of the eager warm-up: warmup must "
           "be at least 1, got 0";
  if (c.graph == GraphMode::kCudaGraph && c.profile_blocks)
    return "graph: cuda_graph replays whole steps, so profile_blocks has no block boundaries to "
           "time (set profile_blocks: false, or graph: eager)";

  if (auto problem = FramesProblem(c, model)) return problem;
  // Shapes: the parallel degrees must split the model and the image evenly.
  const int sp = c.sequence_size();
  const int unit = model.vae_downsample * model.patch;
  if (c.height == 0 && c.resolution % unit != 0)
    return fmt::format("resolution {} is not a multiple of {} (VAE downsample {} x patch {})",
                       c.resolution, unit, model.vae_downsample, model.patch);
  for (const auto& [side, pixels] :
       {std::pair{"width", c.resolution}, std::pair{"height", c.image_height()}})
    if (pixels % unit != 0)
      return fmt::format(
          "resolution {}: {} {} is not a multiple of {} (VAE downsample {} x "
          "patch {})",
          c.resolution_text(), side, pixels, unit, model.vae_downsample, model.patch);
  if (auto problem = TensorParallelProblem(c, model)) return problem;
  if (model.heads % c.ulysses != 0 && !c.pad_heads)
    return fmt::format(
        "{} heads are not divisible by ulysses={} (pad_heads: true pads them to {}, +{:.1f}% "
        "attention work)",
        model.heads, c.ulysses, PaddedHeads(model.heads, 1, c.ulysses),
        100.0 * (PaddedHeads(model.heads, 1, c.ulysses) - model.heads) / model.heads);
  const TokenGrid grid = TokenGridOf(model, c.image_shape());
  const std::int64_t tokens = grid.tokens();
  if (tokens % sp != 0)
    return fmt::format("{} {} tokens are not divisible by ring x ulysses = {}", tokens,
                       model.video() ? "video" : "image", sp);
  // An image splits by patch rows; a video's sequence (frames x rows x columns) by tokens.
  if (!model.video() && grid.rows % sp != 0)
    return fmt::format(
        "latent height of {} patch rows is not divisible by the "
        "sequence-parallel degree ring x ulysses = {}",
        grid.rows, sp);
  // SD3's position table covers pos_embed_max_size patch rows (SD3-medium 192, SD3.5 384).
  const int max_grid = model.pos_embed_max_size;
  const int longest = std::max(grid.rows, grid.cols);
  if (model.cropped_position_table && longest > max_grid)
    return fmt::format("{} has positions for {} patch rows ({} px); {} px needs {}", c.model,
                       max_grid, max_grid * unit, c.resolution_text(), longest);
  if (c.vae_tile > 0 && c.scope != Scope::kPipeline)
    return fmt::format(
        "vae_tile={} tiles the VAE decode, which only scope pipeline runs (scope "
        "is {})",
        c.vae_tile, ScopeName(c.scope));
  if (auto refused = VaeParallelProblem(c, model)) return refused;
  if (c.pipefusion > model.total_blocks())
    return fmt::format("pipefusion={} exceeds the model's {} transformer blocks", c.pipefusion,
                       model.total_blocks());
  const int patches = c.effective_pipefusion_patches();
  if (c.pipefusion > 1) {
    if (patches < c.pipefusion)
      return fmt::format("pipefusion_patches={} is below the PipeFusion degree {}", patches,
                         c.pipefusion);
    if (grid.rows % patches != 0)
      return fmt::format("{} patch rows do not split into pipefusion_patches={}", grid.rows,
                         patches);
    if ((grid.rows / patches) % sp != 0)
      return fmt::format(
          "a PipeFusion patch of {} patch rows does not split over ring x "
          "ulysses = {}",
          grid.rows / patches, sp);
  }
  if (auto problem = KindRow(KindOf(c)).broken_rule(c)) return problem;
  if (c.cfg == 2 && !model.negative_prompt)
    return fmt::format(
        "cfg=2 needs a model that batches a negative prompt; {} does not "
        "(guidance is distilled into an embedding)",
        c.model);

  return WorldSizeProblem(c, capacity);
}

// What this build implements. Each is a missing feature, not a user error, and says so.
// An attention kernel this device or dtype cannot run: known before launch, so the trial is
// skipped with the reason rather than failed or, worse, timed with another kernel.
std::optional<std::string> AttentionUnsupported(const TrialConfig& c, bool on_gpu) {
  const AttentionBackend a = c.attention;
  if (!on_gpu && (a == AttentionBackend::kEfficient || a == AttentionBackend::kCudnn))
    return fmt::format(
        "attention: {} is a CUDA kernel ({}); on CPU only math and flash (ATen's CPU flash "
        "kernel) run (the trial is skipped, never timed with another kernel in its place)",
        AttentionBackendName(a),
        a == AttentionBackend::kCudnn ? "cuDNN's fused attention" : "memory-efficient attention");
  const bool half = c.precision == Precision::kBf16 || c.precision == Precision::kFp16;
  if (on_gpu && !half && (a == AttentionBackend::kFlash || a == AttentionBackend::kCudnn))
    return fmt::format("attention: {} runs in bf16 and fp16 only on a GPU; this trial is {}",
                       AttentionBackendName(a), PrecisionName(c.precision));
  return std::nullopt;
}

std::optional<std::string> Unsupported(const TrialConfig& c, const Capacity& capacity) {
  // REQUIRES: BrokenRule(c, capacity) found nothing, so the model resolves.
  // A program of the user's own knows what it supports.
  if (!TraitsOf(c.workload).builtin_model) return std::nullopt;
  std::string error;
  auto model = ResolveModel(c.model, c.model_overrides, &error);
  const FamilyShapes& family = ShapesOf(model->family);
  if (!family.has_module)
    return fmt::format(
        "{} ({} family) has shapes but no LibTorch module in this build: it is "
        "planned, not run",
        c.model, family.name);
  if (model->experts > 1 && !c.cache.empty())
    return fmt::format(
        "cache: {} with {}'s {} experts is not built: a residual cached from one expert would "
        "be reused by the other",
        StepCacheKindName(c.cache.kind), c.model, model->experts);
  if (model->experts > 1 && (c.vae_weights.size() || c.weights.size()))
    return fmt::format("weights for {}'s {} experts are not read yet (seeded weights only)",
                       c.model, model->experts);
  // Pairs of fields this build cannot combine (experiments/trial_fields.h).
  if (auto problem = NotBuiltProblem(c)) return problem;
  if (model->video() && c.pipefusion > 1)
    return fmt::format(
        "pipefusion={} is not implemented for video models ({}); use ulysses, "
        "ring, cfg or dp",
        c.pipefusion, c.model);
  if (!capacity.on_gpu && c.precision == Precision::kTf32)
    return "tf32 is a GPU tensor-core mode; on CPU it would silently be fp32";
  if (auto why = AttentionUnsupported(c, capacity.on_gpu)) return why;
  if (c.cache.kind == StepCache::Kind::kTeaCache && !PublishedTeaCachePolynomial(c.model))
    return fmt::format(
        "cache: teacache rescales its statistic with the polynomial published for the model "
        "it watches; none is published for {} (TeaCache's are for flux-dev, hunyuanvideo, "
        "wan2.1-t2v-1.3b and wan2.1-t2v-14b, and their tiny models): use kind: fbcache",
        c.model);
  if (!capacity.on_gpu && c.quant != Quantization::kNone)
    return fmt::format(
        "quant: {} runs e4m3 GEMMs (at::_scaled_mm) on a GPU with FP8 tensor cores (sm_89 or "
        "later); this trial runs on CPU (skipped, never emulated and timed)",
        QuantizationName(c.quant));
  if (!capacity.on_gpu && c.graph == GraphMode::kCudaGraph)
    return "graph: cuda_graph replays CUDA graphs of the denoising steps; on CPU there is "
           "nothing to capture (the trial is skipped, never timed eagerly in its place)";
  return std::nullopt;
}

}  // namespace

TrialVerdict Judge(const TrialConfig& config, const Capacity& capacity,
                   const RequestList* requests) {
  TrialVerdict v;
  v.invalid = BrokenRule(config, capacity);
  if (!v.invalid) v.unsupported = Unsupported(config, capacity);
  if (!v.invalid && !v.unsupported) KindRow(KindOf(config)).judge(config, capacity, requests, v);
  return v;
}

std::optional<std::string> InvalidReason(const TrialConfig& config, const Capacity& capacity,
                                         const RequestList* requests) {
  TrialVerdict v = Judge(config, capacity, requests);
  return v.invalid ? v.invalid : v.unsupported;
}

}  // namespace ditbench
