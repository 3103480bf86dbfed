// A cost model fitted from measured trials of one device kind: what `plan --db`, `advise` and
// `run --search advise` predict unmeasured trials with (docs/planner.md).
//
// One timed iteration of a trial is a sum of terms, each a coefficient times a feature the
// shapes give (CostFeatures):
//   overhead       a constant per iteration (scheduler steps, synchronisation)
//   rank_compute   GFLOP per rank x PipeFusion's bubble factor: ranks that compute in
//                  parallel on devices of their own (GPU)
//   shared_compute GFLOP of the whole trial x the bubble factor: ranks that share one pool of
//                  cores (CPU: each rank gets cores / ranks threads)
//   rank_scores, shared_scores, rank_activations, shared_activations   the same per rank and
//                  for the whole trial, for the elements that FLOPs leave out: attention
//                  scores (softmax) and activations (norms, modulation, activation functions)
//                  in millions (model_zoo/shapes/memory_traffic.h). Efficiency that depends on
//                  the kernels' sizes: a narrow model or a small head dimension does more of
//                  this memory-bound work per FLOP
//   block_calls    transformer block executions on the critical path: a fixed cost per call,
//                  so that the efficiency falls at small per-rank sizes
//   <kind>_calls, <kind>_mb   per collective kind (all-to-all, send/receive, all-gather):
//                  a latency per collective plus MiB / bandwidth, from CommByKindPerStep
//                  scaled to the worker's counted comm_mb_per_step when it was measured; an
//                  all-to-all's latency is per message, U - 1 of them among U Ulysses ranks
//   decode, decode_shared     scope pipeline: the VAE decode's GFLOP (model_zoo/shapes/
//                  vae_shapes.h), on every rank
//   oversubscribed_*   (s - 1) x rank compute, x block calls and x collectives, s being the
//                  sharing factor of the trial's ranks (machine/rank_sharing.h: ranks x threads
//                  per rank over the cores, or ranks over the devices): what time-sharing adds
//                  when ranks outnumber their cores or devices; 0 for a trial that fits
//   fp8_compute    `quant`: the FP8 layers' GEMM GFLOP per rank x the bubble factor, in the
//                  steps a schedule leaves to them (taken out of the compute terms)
//   <kernel>_extra  `attention` forced to flash, efficient, cudnn or math: that kernel's cost
//                  beyond `auto`'s, per million scores per rank x the bubble factor, in the
//                  steps it runs (non-negative: SDPA's own choice is taken as the fastest)
// The coefficients are fitted by non-negative least squares on relative errors
// (stats/least_squares.h); each prediction has a 95% interval from the residuals and the
// coefficients' covariance. The start-up time of a trial (process start, model build,
// rendezvous) is fitted apart, from the measured wall times. Pure: observations in.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "experiments/trial.h"
#include "stats/least_squares.h"

namespace ditbench {

// The names of the iteration terms, in CostFeatures' order.
const std::vector<std::string>& CostTermNames();

// The features of one iteration of `config` (CostTermNames' order); `counted_comm_mb`: the
// worker's counted MiB per step, when measured; `sharing`: the sharing factor of its ranks
// where it ran or will run (>= 1). nullopt for a trial whose cost the shapes do not know (a
// command workload, an unknown model).
std::optional<std::vector<double>> CostFeatures(const TrialConfig& config,
                                                std::optional<double> counted_comm_mb = {},
                                                double sharing = 1);

// One measured ok trial.
struct CostObservation {
  std::string trial_key;
  TrialConfig config;
  double latency_ms = 0;                   // median of one timed iteration
  std::optional<double> comm_mb_per_step;  // counted by the worker
  std::optional<double> startup_s;         // wall time less warm-up and timed iterations
  std::optional<double> output_error;      // carried for `advise --max-output-error`
  // How many of its threads shared each core (ranks each device) where it ran, from what the
  // database recorded (machine/rank_sharing.h: RecordedSharing); 1: none shared.
  double sharing = 1;
  std::optional<double> psnr, ssim;        // and for the sweep's quality gates (scope pipeline)
  bool busy = false;                       // measured only on a busy machine
  std::int64_t campaign = 0;               // the campaign of the measurement
};

// A prediction and its 95% interval.
struct CostPrediction {
  double value = 0, low = 0, high = 0;
};

// The fewest ok trials a model is fitted from; with fewer, `plan` keeps the analytic estimate.
inline constexpr std::size_t kMinimumTrialsToFit = 8;

class CostModel {
 public:
  // Fits the iteration terms on `observations` (and the start-up on those with one). nullopt
  // with fewer than kMinimumTrialsToFit usable observations, or fewer than the active terms
  // + 3, or an unsolvable system.
  static std::optional<CostModel> Fit(const std::vector<CostObservation>& observations);

  // One timed iteration of `config` whose ranks share their cores or devices by `sharing`
  // (machine/rank_sharing.h), ms; nullopt where CostFeatures has none.
  std::optional<CostPrediction> Iteration(const TrialConfig& config,
                                          std::optional<double> counted_comm_mb = {},
                                          double sharing = 1) const;
  // The start-up of `config`, s; nullopt when no observation had one.
  std::optional<CostPrediction> Startup(const TrialConfig& config) const;

  // A fitted term: its coefficient and 95% interval; inactive terms were fitted as 0.
  struct Term {
    std::string name;
    CostPrediction coefficient;
    bool active = false;
  };
  std::vector<Term> Terms() const;
  std::size_t trials() const { return trials_; }
  double relative_sigma() const { return iteration_.sigma; }
  // Fitted with one latency and one bandwidth for every collective kind: too few trials for
  // a term per kind (each fit keeps at least 3 degrees of freedom).
  bool reduced() const { return reduced_; }

 private:
  std::vector<double> Features(const std::vector<double>& full) const;
  bool reduced_ = false;
  LeastSquaresFit iteration_;
  std::optional<LeastSquaresFit> startup_;
  std::size_t trials_ = 0;
};

// Leave-one-out: each observation predicted by a model fitted on the others but its seed
// twins (experiments/trial.h: ConfigurationKey; a twin is the same configuration measured again, so
// keeping it would flatter the error). The refits take those rows out of the sums of all rows
// (stats/least_squares.h: NormalEquations), so that n refits cost O(n) rather than O(n^2);
// equal to a fit on the others to rounding.
struct LooEntry {
  std::string trial_key;
  double measured_ms = 0;
  std::optional<CostPrediction> predicted;  // nullopt when the others could not be fitted
  double relative_error() const {           // (predicted - measured) / measured
    return predicted ? (predicted->value - measured_ms) / measured_ms : 0.0;
  }
};
struct LooReport {
  std::vector<LooEntry> entries;  // in the observations' order
  std::size_t predicted = 0;      // entries with a prediction
  double median_abs_error = 0, max_abs_error = 0;  // over those, as fractions
};
LooReport LeaveOneOut(const std::vector<CostObservation>& observations);

}  // namespace ditbench
