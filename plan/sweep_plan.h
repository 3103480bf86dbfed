// Deciding what a sweep will run, before anything runs: expansion, validity and estimates.
// Pure apart from reading earlier results; `ditbench plan` prints it and `ditbench run`
// executes it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/sweep_expand.h"
#include "experiments/validity.h"
#include "plan/calibration.h"

namespace ditbench {

// What `plan` expects of a serving trial's load (EstimateServing).
struct ServeEstimate {
  double offered_per_s = 0;   // requests a second the load offers (open loop, or a trace's)
  double capacity_per_s = 0;  // what its replicas serve at most: replicas / mean service
  double service_ms = 0;      // a request's mean service time over the load's shapes
  double utilisation = 0;     // offered / capacity; above 1 the queue grows without bound
  double window_s = 0;        // the first arrival to the last end
  double p50_ms = 0, p95_ms = 0, p99_ms = 0;  // predicted latency, queue wait included
  std::string note;  // why there is no estimate (a trace that cannot be read), else ""
};

// The serving estimate of `config` (REQUIRES: config.serve), a request of shape i taking
// service_ms[i] (one per shape of TrialShapes(config); a single value: every shape).
ServeEstimate EstimateServing(const TrialConfig& config, const std::vector<double>& service_ms);

struct TrialEstimate {
  double iteration_ms = 0;  // one timed iteration of the trial's scope
  double trial_s = 0;       // start-up + warm-up + timed iterations
  double memory_mb = 0;     // per rank: weights + the larger of the two working sets below
  // A video's VAE decode (scope pipeline; VaeDecodeBytes): its working set per rank, often
  // larger than the denoiser's activations. Unset for images (not yet counted).
  std::optional<double> decode_mb;
  // Scope pipeline, source "analytic": the decode's share of iteration_ms, its analytic FLOPs
  // (model_zoo/shapes/vae_shapes.h) at a rank's share of the compute rate assumed: every rank
  // decodes its samples whole, or vae_parallel ranks split them (1/vae_parallel of the FLOPs
  // each, plus the split's collectives on the link: VaeSplitCollectives calls and the decoded
  // samples' gather).
  std::optional<double> decode_ms;
  // Per rank (max over ranks) per denoising step, from the shapes (plan/comm_volume.h);
  // unset where the family's communication is not modelled.
  std::optional<double> comm_mb_per_step;
  // "measured" (an earlier ok result of this key), "predicted" (the cost model fitted on the
  // database's trials of the device, plan/fitted_model.h) or "analytic".
  std::string source;
  // source "predicted": the 95% interval of iteration_ms.
  std::optional<double> iteration_low_ms, iteration_high_ms;
  // A step cache not measured yet: the share of its denoising steps expected to compute, and
  // where that came from (plan/step_cache_fraction.h); the estimate above assumes it.
  std::optional<double> cache_computed_fraction;
  std::string cache_fraction_source;
  // A serving trial (`serve`): its load played through a FIFO queue of its replicas with every
  // request taking iteration_ms (metrics/serving.h, SimulateQueue); trial_s counts its window.
  std::optional<ServeEstimate> serve;
};

struct PlannedTrial {
  TrialConfig config;
  std::string key;
  std::optional<std::string> invalid_reason;  // why it will not run here (invalid or unsupported)
  bool unsupported = false;                   // valid by the rules; this build cannot run it
  std::optional<TrialEstimate> estimate;      // for trials valid by the rules
  // How many of its threads will share each core (ranks each device) when it runs as planned
  // (PlannedSharing): what the cost model predicts it with.
  double sharing = 1;
};

struct SweepPlan {
  std::vector<PlannedTrial> trials;  // expanded, de-duplicated, in sweep order
  std::size_t duplicates = 0;        // identical trials written twice (kept once)
  ExpandedSweep counts;              // exclude / where removals (trials moved to `trials`)
  double estimated_wall_s = 0;       // sum over the trials that will run
  // PlanAssumptions::pack_slots > 0: the wall time when `run --policy pack` runs them side by
  // side on that many slots (PackedWallSeconds); 0 otherwise.
  double packed_wall_s = 0;
  int pack_slots = 0;  // PlanAssumptions::pack_slots it was planned for
  // Planned for exclusive on more than one slot (PlanSweepForPolicy): packed_wall_s of the same
  // sweep under --policy pack, to show what packing would save; 0 otherwise.
  double pack_alternative_s = 0;
  // Which estimate predicts the trials not measured yet (FittedModel::Explain); empty without
  // a database.
  std::string estimates_from;
};

// What the estimates assume about the hardware.
struct PlanAssumptions {
  std::string device = "cpu";  // device name for the dense-peak table, or "cpu"
  // GPU: the fraction of dense peak a DiT forward reaches; 0: the prior's, which falls at small
  // per-rank sizes (plan/device_prior.h).
  double efficiency = 0;
  // CPU: ranks share the machine's cores (the worker gives each rank cores / ranks threads,
  // at least one), so more ranks bring no more compute, only communication.
  double cpu_tflops_per_core = 0.025;
  int cpu_cores = 0;           // 0: this machine's online cores
  double startup_s = 3;        // process start, model build, rendezvous
  // Bandwidth a rank's collectives reach, GB/s: 0 takes the prior's per collective kind for the
  // device's link (plan/device_prior.h; CPU ranks over Gloo on loopback: 2).
  double link_gb_per_s = 0;
  // GPUs per node (0: every trial within one node): a wider trial communicates over InfiniBand.
  int gpus_per_node = 0;
  // `--policy pack` on this many slots (0: exclusive, one trial at a time). On CPU each slot is
  // pinned to max(1, cores / slots) cores of its own (CpuSlots), so a trial's ranks compute on
  // that many cores each rather than sharing the machine.
  int pack_slots = 0;
  // This machine's figures from a stored selfcheck (plan/stored_calibration.h): its start-up,
  // CPU forward rates and link replace startup_s, cpu_tflops_per_core and the prior's link.
  // None: the uncalibrated prior, for the reason in `uncalibrated_why`.
  std::optional<PlanCalibration> calibration;
  std::string uncalibrated_why;
};

// Expands and classifies `spec` for `capacity`. With `db` (may be empty or missing), earlier
// ok results of the same trial key replace the analytic time estimate, and the other trials
// are predicted by the cost model fitted on the database's trials of `assumptions.device`
// when there are enough (plan/fitted_model.h).
SweepPlan PlanSweep(const SweepSpec& spec, const Capacity& capacity,
                    const PlanAssumptions& assumptions = {},
                    const std::filesystem::path& db = {});

// The cores `ranks` CPU ranks keep busy together on a machine with `cores` cores (0: this
// machine's).
int CpuCoresUsed(int cores, int ranks);

// The sharing factor of `config`'s ranks when it runs as `assumptions` describe
// (machine/rank_sharing.h): on CPU, ranks not pinned on cpu_cores cores (0: this machine's),
// or pinned to pack_slots slots under --policy pack; 1 on GPU (a device per rank).
double PlannedSharing(const TrialConfig& config, const PlanAssumptions& assumptions);

// PlanSweep for `run --policy pack` (pack: assumptions.pack_slots = capacity.slots, recorded
// in SweepPlan::pack_slots) or exclusive (pack_slots 0). `show_pack`: for an exclusive plan on
// more than one slot, also what pack would take (pack_alternative_s, from a second plan).
SweepPlan PlanSweepForPolicy(const SweepSpec& spec, const Capacity& capacity,
                             PlanAssumptions assumptions, const std::filesystem::path& db,
                             bool pack, bool show_pack);

// The cores `ranks` CPU ranks compute on under --policy pack with `slots` slots: each rank
// pinned to its slot's max(1, cores / slots) cores, at most the machine's (0: this machine's).
int PinnedCpuCoresUsed(int cores, int slots, int ranks);

// Launches placed as `run --policy pack` starts them on `slots` slots: in the order given, one
// once the launch before it has started, enough slots are free and its trial's previous launch
// has ended (first come, first served: no launch jumps the queue).
class PackedSchedule {
 public:
  explicit PackedSchedule(int slots);
  // Places a launch of trial `key` on `width` slots lasting `seconds`; returns its start, or
  // nullopt (nothing placed) when it needs more slots than there are.
  std::optional<double> Place(const std::string& key, int width, double seconds);
  double end() const { return end_; }  // when the last placed launch ends

 private:
  std::vector<double> free_at_;                 // per slot: when it is free
  std::map<std::string, double> trial_ends_;    // a trial's launches never overlap
  double previous_start_ = 0, end_ = 0;
};

// How long `run --policy pack` takes on `slots` slots for the trials of `plan` that will run
// (those with an estimate, not unsupported), each launched `replicates` times: launches start
// in queue order (every trial once, then again), one once the launch before it has started,
// enough slots are free and its trial's previous launch has ended; a trial that needs more
// slots than there are is left out.
double PackedWallSeconds(const SweepPlan& plan, int replicates, int slots);

// The timed iterations a trial is expected to run at `iteration_ms` each: repeats.max, cut by
// repeats.max_seconds, never below repeats.min.
double TimedIterations(const TrialConfig& config, double iteration_ms);

// The analytic estimate alone (no database).
// The VAE decode's working set of one sample of `shape`, in bytes of `bytes` per element: about
// kVaeDecodeTensors tensors of the decoder's last (widest-resolution) level, vae_channels[0]
// wide, over the frames decoded at once (ModelConfig::vae_decode_chunk latent frames, or the
// whole clip) and the pixels of one tile, over vae_patch^2 (Wan 2.2's last level runs at a
// quarter of the pixels) (`tile` > 0: the trial's vae_tile, else the whole
// frame); for AutoencoderKLHunyuanVideo at least its mid attention's mask and scores, (latent
// pixels decoded at once)^2 each; plus the decoded clip in float32. A rough prior: the peak a
// measured trial records replaces it. `vae_parallel` > 1, untiled: a rank decodes 1/vae_parallel
// of the rows (its attention's scores: its queries over every key), and still holds the whole
// clip gathered.
inline constexpr double kVaeDecodeTensors = 4;
double VaeDecodeBytes(const ModelConfig& model, const ImageShape& shape, double bytes, int tile = 0,
                      int vae_parallel = 1);

// `step_work`: the share of the denoising steps' work the trial does (a step cache's,
// plan/step_cache_fraction.h); the decode is never skipped.
TrialEstimate AnalyticEstimate(const TrialConfig& config, const PlanAssumptions& assumptions,
                               double step_work = 1.0);

}  // namespace ditbench
