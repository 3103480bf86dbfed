// What a trial's measurement produces, as plain values: the raw samples each rank records and
// the per-trial metrics derived from them (metrics/trial_metrics.h). The worker emits
// samples, the coordinator derives metrics, storage stores both; none of them formats.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ditbench {

// One timed (or warm-up) measurement of one rank.
struct Sample {
  int rank = 0;
  int iteration = 0;          // 0-based over warm-up and timed iterations together
  std::string stage;          // "iteration" (whole scoped region), "step:3", "block:12", ...
  double ms = 0;
  bool warmup = false;
  // A "step:i" sample of a step that `cache` let reuse the cached blocks' work (block 0 alone
  // ran, or none): every rank's flag for every step of every iteration is stored, so that the
  // ranks' agreement can be checked and computed steps timed apart from reused ones.
  bool reused = false;
};

// The stage name of a whole iteration's sample.
inline constexpr const char* kIterationStage = "iteration";

// The most experts a step record may name (StepKernels::expert): rank files and the database are
// untrusted input.
inline constexpr int kMaxExperts = 16;

// What one denoising step ran, as its rank saw it in its first iteration (worker/dit_trial.h):
// the attention kernels by name joined by '+' ("flash", "cudnn+flash"; "" when the step ran no
// attention), and the linear layers' form ("bf16", "fp8_rowwise", ...).
struct StepKernels {
  int step = 0;
  std::string attention;
  std::string linear;
  bool reused = false;  // `cache`: the step reused the cached blocks (block 0 alone ran)
  // The expert that ran the step (ModelConfig::experts, Wan 2.2 A14B): 0, the first (the
  // high-noise one) or a model's only transformer; 1, the second.
  int expert = 0;
  bool operator==(const StepKernels&) const = default;
};
// One request a serving trial served (`serve`, experiments/serve_load.h), as the leader of the
// replica that served it recorded it. Times in ms from the load's start on that rank's host
// clock: arrival (when the load made it), start (when its replica began it), end (when its
// output was ready on the device).
struct RequestRecord {
  int index = 0;    // Request::index: its position in arrival order, warm-up requests first
  int shape = 0;    // Request::shape
  int replica = 0;  // the replica (dp group, or SimulateQueue's server) that served it
  double arrival_ms = 0, start_ms = 0, end_ms = 0;
  double isolated_ms = 0;  // its shape's latency alone on an idle replica; > 0
  bool busy = false;       // another process used the replica's devices meanwhile
  // Answered with an error (an engine's HTTP error or malformed answer): counted as a request
  // and as an SLO miss, left out of the latency and throughput figures.
  bool failed = false;
  bool operator==(const RequestRecord&) const = default;
};

// The energy one rank's device used over its timed window (metrics/measurement.h): joules,
// and the window's length in host milliseconds.
struct RankEnergy {
  double joules = 0;
  double window_ms = 0;
};

// What a program declared about one of its own numbers (ditbench_result.metric's unit and
// better): the unit as written ("images/s", "" when none) and "lower", "higher" or "". As the
// rank file says it: metrics/metric_table.h (AcceptExtraMetrics) checks it before it is kept.
struct MetricDeclaration {
  std::string unit;
  std::string better;
};

// Per-trial summary (metrics/trial_metrics.h; definitions in docs/measurement.md).
// latency_* figures are over the per-iteration slowest-rank times of timed iterations.
struct TrialMetrics {
  double latency_ms = 0;  // median
  double mean_ms = 0, p90_ms = 0, p99_ms = 0, std_ms = 0, min_ms = 0, max_ms = 0, cov = 0;
  double ci_low_ms = 0, ci_high_ms = 0;
  double rank0_ms = 0;  // median of rank 0's own times
  double skew_ms = 0;   // median over iterations of (max - min over ranks)
  int iterations = 0;   // timed iterations
  int warmup = 0;       // warm-up iterations
  int outliers = 0;
  std::optional<double> peak_mem_mb;       // max over ranks: allocator peak (GPU) or RSS (CPU)
  std::optional<double> peak_reserved_mb;  // max over ranks: allocator reserved (GPU only)
  std::optional<double> flops;             // analytic FLOPs of one timed iteration (all ranks)
  std::optional<double> tflops;            // flops / latency
  std::optional<double> mfu;               // tflops / dense peak; null when the device is unknown
  std::optional<double> images_per_s;
  std::optional<double> tokens_per_s;
  // GPU clocks during the timed part (NVML), over all ranks; empty when not sampled.
  std::optional<bool> throttled;           // a power, thermal or hardware slowdown was seen
  std::optional<double> sm_clock_min_mhz;
  std::optional<double> sm_clock_max_mhz;
  // Energy (GPU, NVML): joules of one timed iteration, summed over ranks (each rank's device
  // counter over its timed window, divided by the timed iterations), and per image (energy_j /
  // images per iteration); unset on CPU or when a rank could not read its counter, with why in
  // energy_note (empty when no rank has a counter, as on CPU).
  std::optional<double> energy_j;
  std::optional<double> joules_per_image;
  std::string energy_note;
  // Communication: max over ranks of the MiB a rank sent per denoising step.
  std::optional<double> comm_mb_per_step;
  // Output error: relative L2 of the final output against the 1-rank trial of the same
  // computation (runner/output_error.h), with why it is missing when it is; the reference's key.
  std::optional<double> output_error;
  std::string output_error_note;
  std::string output_reference_key;
  // Scope `pipeline`: the decoded image against the reference's, PSNR in dB (+infinity when
  // equal) and SSIM (metrics/image_quality.h); filled with output_error.
  std::optional<double> psnr;
  std::optional<double> ssim;
  // The verdict of the trial's quality gates (experiments/quality_gate.h: QualityVerdict): "ok",
  // "below: ...", or unset (no gate, or the numbers it needs are not known yet).
  std::optional<std::string> quality;
  // A program's own numbers (the `command` workload's ditbench_result.metric): rank 0's value
  // of each name, or the first rank's that reported it.
  // Checked by AcceptExtraMetrics (metrics/metric_table.h): valid names, finite values, at most
  // kMaxExtraMetrics; what it dropped is said in extra_note ("" when nothing was).
  std::map<std::string, double> extra;
  std::map<std::string, MetricDeclaration> extra_declared;  // names of `extra` only
  std::string extra_note;
  // Replicates (metrics/launch_summary.h): how many ok launches these metrics summarise,
  // and the coefficient of variation of their medians (unset for one launch).
  int launches = 1;
  std::optional<double> launch_cov;
};

}  // namespace ditbench
