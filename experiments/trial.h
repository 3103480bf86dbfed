// A Trial is one fully resolved point of a sweep: every axis has a value, defaults applied.
//
// The canonical form is the trial's whole configuration as JSON with keys sorted, no
// whitespace, integers as integers and durations in seconds (see docs/sweep-spec.md): what
// trial.json carries to the worker. The trial key covers only what the trial computes, not
// how it is measured (warmup, repeats, timeout, profile_blocks, profile, quality): key format v2,
// defined in experiments/trial_identity.h and pinned by goldens in tests/experiments/trial_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/engine_spec.h"
#include "experiments/quality_gate.h"
#include "experiments/repeats.h"
#include "experiments/serve_load.h"
#include "experiments/workload.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/parallel_degrees.h"

namespace ditbench {

// What the timed region of one iteration holds.
enum class Scope {
  kForward,   // one transformer forward
  kDenoise,   // the denoising loop: `steps` forwards plus sampler steps
  kPipeline,  // denoise + VAE decode
};
std::string_view ScopeName(Scope scope);
std::optional<Scope> ParseScope(std::string_view name);
// Every scope, in enumerator order: a constraint expression names each by ScopeName, valued as
// its enumerator (experiments/constraint.h).
std::vector<Scope> AllScopes();

enum class Precision { kFp32, kTf32, kBf16, kFp16 };
std::string_view PrecisionName(Precision precision);
std::optional<Precision> ParsePrecision(std::string_view name);
// Every precision, in enumerator order: a constraint expression names each by PrecisionName,
// valued as its enumerator (experiments/constraint.h).
std::vector<Precision> AllPrecisions();

// How a built-in model's denoising steps are issued: one kernel launch at a time (`eager`), or
// each step captured once as a CUDA graph after the eager warm-up and replayed in the timed
// iterations (`cuda_graph`; GPU only: on CPU the trial is skipped with the reason).
enum class GraphMode { kEager, kCudaGraph };
std::string_view GraphModeName(GraphMode mode);
std::optional<GraphMode> ParseGraphMode(std::string_view name);

// Which attention kernel every attention of a built-in model runs (`attention:` in a sweep):
// `auto` lets ditbench pick as it always has (SDPA's own choice for local attention; cuDNN,
// else FlashAttention-2, for the ring's partial attentions on a GPU in half precision); the
// others force ATen's kernel of that name (model_zoo/parallel/parallel_attention.h), and a
// trial whose device or dtype cannot run it is skipped with the reason before launch.
enum class AttentionBackend { kAuto, kFlash, kEfficient, kCudnn, kMath };
std::string_view AttentionBackendName(AttentionBackend backend);
std::optional<AttentionBackend> ParseAttentionBackend(std::string_view name);
// FP8 linear layers (`quant:` in a sweep): the transformer blocks' linear layers as e4m3 GEMMs
// (at::_scaled_mm) with weights quantized once at load and activations per call, scaled per
// row (`fp8_rowwise`: one scale per token and per output channel) or per tensor
// (`fp8_tensor`); output in bf16. `none`: every layer in the trial's precision.
enum class Quantization { kNone, kFp8Rowwise, kFp8Tensor };
std::string_view QuantizationName(Quantization quant);
std::optional<Quantization> ParseQuantization(std::string_view name);

// The names of an enum axis's values in enumerator order: what a sweep writes, and what a bad
// value's "one of ..." lists (experiments/trial_fields.h reads them, nothing types them again).
const std::vector<std::string_view>& ScopeNames();
const std::vector<std::string_view>& PrecisionNames();
const std::vector<std::string_view>& GraphModeNames();
const std::vector<std::string_view>& AttentionBackendNames();
const std::vector<std::string_view>& QuantizationNames();

// A per-step schedule (`schedule: {high_precision_first: N, high_precision_last: M}`): the
// first N and the last M denoising steps run in the trial's high-precision setting (attention
// `auto`, no quantization), the steps between them with the trial's `attention` and `quant`.
// Both 0: every step runs the trial's setting (no schedule).
struct StepSchedule {
  int high_precision_first = 0;
  int high_precision_last = 0;
  bool empty() const { return high_precision_first == 0 && high_precision_last == 0; }
  // Whether step `step` of `steps` runs in high precision.
  bool HighPrecision(int step, int steps) const {
    return step < high_precision_first || step >= steps - high_precision_last;
  }
  bool operator==(const StepSchedule&) const = default;
};
inline constexpr const char* kScheduleExpected =
    "a map {high_precision_first: N, high_precision_last: M} of steps from 0 to 1000";
inline constexpr const char* kQuantExcludeExpected =
    "a list of module-path patterns ('*' any text, '?' one character), e.g. "
    "[\"transformer_blocks.*.ff_*\"]";

// Step caching (`cache: {kind, threshold, warmup_steps}` in a sweep): a denoising step whose
// input barely changed reuses the work of the last computed step. `fbcache` (First-Block-Cache)
// runs the first transformer block and, when the relative L1 change of its residual against
// the last computed step's is below `threshold`, adds the cached residual of the other blocks
// instead of running them; `teacache` accumulates the rescaled change of the first block's
// timestep-modulated input and skips while it stays below `threshold`. The first
// `warmup_steps` steps and the last step are always computed; every rank takes the same
// decision (the statistic is summed over the trial's ranks first). kind `none`: no cache.
struct StepCache {
  enum class Kind { kNone, kFbCache, kTeaCache };
  Kind kind = Kind::kNone;
  double threshold = 0;
  int warmup_steps = 0;
  bool empty() const { return kind == Kind::kNone; }
  bool operator==(const StepCache&) const = default;
};
std::string_view StepCacheKindName(StepCache::Kind kind);
inline constexpr const char* kStepCacheExpected =
    "none, or a map {kind: fbcache | teacache, threshold: 0 to 10, warmup_steps: 0 to 1000}";

// Bytes one activation element takes in `precision`: 2 for bf16 and fp16, 4 for fp32 and tf32
// (tf32 stores fp32). The one rule the communication and memory estimates read.
double BytesPerElement(Precision precision);

// The values of `profile` (TrialConfig::profile_trace): a sweep's top-level `profile: trace`,
// and the policy's "profile" when set.
inline constexpr const char* kProfileTrace = "trace";
inline constexpr const char* kProfileNone = "none";
inline constexpr const char* kProfileExpected =
    "'trace' (a profiler pass after the timed iterations: one Chrome trace per rank) or 'none'";

// The parallel degrees are the ParallelDegrees base (model_zoo/shapes/parallel_degrees.h):
// `ulysses`, `world_size()` and the rest read as members, and every list of them walks
// kDegreeTable.
struct TrialConfig : ParallelDegrees {
  Workload workload = Workload::kDit;  // experiments/workload.h
  // A workload launched as a program (WorkloadLaunch::kProgram): the program and its
  // arguments, each a template whose {placeholders} name trial fields
  // (experiments/command_line.h). Empty otherwise.
  std::vector<std::string> command;
  // A workload launched as a program: custom axes, any name a sweep gives them, to scalar
  // values (numbers, strings, booleans). Part of the identity; empty otherwise.
  std::map<std::string, nlohmann::json> custom;
  // The `engine` workload: the server it starts (or attaches to) and the request it sends
  // (experiments/engine_spec.h). Part of the identity; empty otherwise.
  EngineSpec engine;
  std::string model = "pixart-alpha";          // a preset name (model_zoo/shapes/model_config.h)
  std::map<std::string, int> model_overrides;  // preset dimensions replaced, e.g. depth
  // Folders in diffusers' format (config.json + *.safetensors) holding the transformer's and the
  // VAE decoder's weights (`model: {preset: ..., weights: DIR, vae_weights: DIR}`), absolute.
  // Empty: seeded random weights.
  std::string weights;
  std::string vae_weights;
  // Which of a weights folder's files diffusers would load (`model: {..., weights_variant:
  // fp16}`: diffusion_pytorch_model.fp16.safetensors or its sharded index; empty: the default
  // files). For both folders, as diffusers' pipelines pass `variant` to every component.
  std::string weights_variant;
  // The image's width in pixels, and its height unless `height` is set: the sweep's
  // `resolution: 1024` is a square, `resolution: 1280x720` sets both (kept as written:
  // `resolution` and `height` 0 when they are equal, so a square has one form and one key).
  int resolution = 1024;
  int height = 0;  // pixels; 0: square (the height is `resolution`)
  // Video families: frames per clip (4k + 1 for a 4x temporal VAE); 0: an image (the only
  // value image families take). Absent from the key when 0.
  int frames = 0;
  Precision precision = Precision::kBf16;
  Scope scope = Scope::kDenoise;
  int batch = 1;
  int steps = 20;
  int warmup = 5;               // untimed benchmark warm-up iterations
  bool profile_blocks = false;  // also time every transformer block (stage "step:i/block:j")
  // `pad_heads: true`: a Ulysses degree that does not divide the heads (of a tp rank) runs,
  // its heads padded with zero heads to the next multiple (the padding's FLOPs are stored as
  // waste beside the model's real work); false: such a layout is refused before launch. Policy,
  // not key: the padded layout is the only way such a trial runs, so its key is its layout's.
  bool pad_heads = false;
  // `profile: trace` (top level of a sweep): after the timed iterations, an untimed pass under
  // the profiler writes a Chrome trace per rank (metrics/trace_profile.h). Policy, not key.
  bool profile_trace = false;
  // `quality: {max_output_error, min_psnr, min_ssim}` (top level of a sweep): the gates its
  // output must pass (experiments/quality_gate.h). Policy, not key; empty: no gate.
  QualityGate quality;
  // Scope `pipeline`: decode in tiles of this many pixels per side (overlapping by a quarter,
  // blended), as large resolutions are decoded to bound the VAE's memory; 0: in one piece.
  int vae_tile = 0;  // IsValidVaeTile
  // Scope `pipeline`: the decode split over the trial's first vae_parallel ranks
  // (model_zoo/parallel/row_split.h: by latent rows, or tiled, by tiles); 1: every rank decodes
  // the whole latent, as one would. Not a parallel degree: the trial's ranks are its degrees'.
  int vae_parallel = 1;  // 1 to world_size() (experiments/validity.cc)
  GraphMode graph = GraphMode::kEager;
  AttentionBackend attention = AttentionBackend::kAuto;
  Quantization quant = Quantization::kNone;
  // `quant_exclude`: module paths (model_zoo/layers/fp8_linear.h) kept in high precision
  // besides those every engine keeps there; part of the key only with a quantization.
  std::vector<std::string> quant_exclude;
  StepSchedule schedule;
  StepCache cache;
  // `serve` (experiments/serve_load.h): the trial serves a load of requests, each one iteration
  // of its scope and shape, on its dp groups as replicas, instead of timing iterations back to
  // back; nullopt: not a serving trial. In the key only when set.
  std::optional<ServeLoad> serve;
  Repeats repeats;
  double timeout_s = 1800;
  std::int64_t seed = 0;
  // PipeFusion's settings (its degree is in ParallelDegrees).
  int pipefusion_patches = 0;  // patches per image in PipeFusion; 0: equal to `pipefusion`
  // PipeFusion's synchronous diffusion steps before patches are pipelined with stale K/V
  // (not benchmark warm-up: that is `warmup`).
  int pipefusion_warmup_steps = 1;

  const ParallelDegrees& degrees() const { return *this; }
  // Images one iteration produces over the whole trial: the batch of each data-parallel
  // replica (CFG's negative rows are not images). What images_per_s and joules_per_image count.
  int images_per_iteration() const { return batch * dp; }
  int image_height() const { return height > 0 ? height : resolution; }
  ImageShape image_shape() const { return {resolution, image_height(), frames}; }
  // "1024" for a square, "1280x720" otherwise: as the sweep writes it, and as labels show it.
  std::string resolution_text() const;
  // Without PipeFusion there is one patch, whatever the sweep set: the setting computes nothing.
  int effective_pipefusion_patches() const {
    if (pipefusion <= 1) return 1;
    return pipefusion_patches > 0 ? pipefusion_patches : pipefusion;
  }
  bool operator==(const TrialConfig&) const = default;
};

// A serving trial's whole load: its `serve` with every shape of its mix resolved (a field the
// sweep left out is the trial's; no mix: the trial's own shape alone), its dp groups as the
// replicas, its seed. A trace's shapes are in its file (experiments/trial_requests.h).
// REQUIRES: config.serve.
ServeLoad TrialServeLoad(const TrialConfig& config);
// The trial that times one request of `shape` alone: `config` with the shape's resolution,
// frames and steps and no `serve`. What validity checks each shape of a mix as, and what the
// planner estimates its service time from.
TrialConfig ShapeTrial(const TrialConfig& config, const RequestShape& shape);

// A trial whose rate is a share of capacity (ServeLoad::of_capacity): the trial that measures
// that capacity, `config` with its load a closed loop of capacity_concurrency requests, the
// rest of the load (its requests, mix, warm-up, SLO) as it is. Its key is what the coordinator
// looks the capacity up by. REQUIRES: config.serve with of_capacity set.
TrialConfig CapacityTrial(const TrialConfig& config);
// `config` with its share of capacity turned into a rate: of_capacity x `capacity_per_s`, the
// capacity trial's requests_per_s. REQUIRES: as CapacityTrial, capacity_per_s > 0.
TrialConfig ResolveCapacityShare(const TrialConfig& config, double capacity_per_s);

// The canonical JSON object of a configuration: ComputationJson and PolicyJson of
// experiments/trial_identity.h together (see the file comment).
nlohmann::json CanonicalJson(const TrialConfig& config);
// The canonical text: CanonicalJson dumped with sorted keys and no whitespace.
std::string CanonicalText(const TrialConfig& config);
// The trial key (key format v2): 16 hex digits of SHA-256 of IdentityText(config), which
// leaves out the measurement policy and every field at its identity default.
std::string TrialKey(const TrialConfig& config);
// The key of the trial's configuration: TrialKey with the seed left out (as seed 0). Trials
// with one configuration key are seed twins, replicates of one configuration: the report's
// Planner section folds them into one point, leave-one-out leaves them out together.
std::string ConfigurationKey(const TrialConfig& config);
// Inverse of CanonicalJson, through the setter table (experiments/trial_settings.h,
// ApplyCanonicalField): every value gets the sweep parser's checks; weights folders are taken as
// written. Throws std::invalid_argument naming the bad or missing key. `workload` may be missing
// (configurations written before key format v2): Workload::kDit.
TrialConfig TrialConfigFromJson(const nlohmann::json& json);

// Lifecycle of a trial in the database. Stored as the lower-case name.
enum class TrialStatus {
  kPending,
  kRunning,
  kOk,
  kSkipped,  // invalid by design; never launched
  kOom,
  kTimeout,
  kCrashed,      // killed by a signal
  kFailed,       // non-zero exit or bad result files
  kInterrupted,  // found running after its coordinator died
};
std::string_view StatusName(TrialStatus status);
std::optional<TrialStatus> ParseStatus(std::string_view name);

// A hex SHA-256 digest of `text` (64 characters).
std::string Sha256Hex(std::string_view text);

// The tiles a VAE decode takes (TrialConfig::vae_tile), in a sweep and in `ditbench forward
// --vae-tile` alike: 0 (in one piece) or kVaeTileUnit to kVaeTileMax pixels, a multiple of
// kVaeTileUnit (a tile overlaps its neighbours by a quarter: whole latent pixels at any VAE).
inline constexpr int kVaeTileUnit = 64;
// The most ranks a VAE decode splits over (`vae_parallel`); validity also bounds it by the
// trial's ranks and the latent's rows.
inline constexpr int kMaxVaeParallel = 1024;
inline constexpr int kVaeTileMax = 16384;
inline constexpr const char* kVaeTileExpected =
    "0 (decode in one piece) or a tile of 64 to 16384 pixels, a multiple of 64";
inline bool IsValidVaeTile(int tile) {
  return tile == 0 || (tile >= kVaeTileUnit && tile <= kVaeTileMax && tile % kVaeTileUnit == 0);
}

}  // namespace ditbench
