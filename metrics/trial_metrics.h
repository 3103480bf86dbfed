// Per-trial metrics from every rank's results: pure functions, no I/O, torch-free.
//
// The one definition of "the slowest rank per iteration" lives here (SlowestPerIteration):
// for each timed iteration, the maximum over ranks of that iteration's sample of one stage.
// Ingest (the trial's latency), the report's stage breakdown and the statistics all use it;
// the measurement loop computes the same quantity online with an all-reduce of the max
// (metrics/measurement.h) to take its stopping decision.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contract/measurement_records.h"
#include "contract/worker_contract.h"
#include "experiments/trial.h"
#include "metrics/time_intervals.h"

namespace ditbench {

// One timed iteration of one stage across ranks.
struct IterationSpread {
  double slowest_ms = 0;  // max over ranks
  double fastest_ms = 0;  // min over ranks
  double skew_ms() const { return slowest_ms - fastest_ms; }
};

// Timed samples of `stage` (warm-up left out), by iteration in increasing order, reduced over
// ranks. Samples of several ranks may be mixed in one vector; `rank` tells them apart.
std::map<int, IterationSpread> SlowestPerIteration(const std::vector<Sample>& samples,
                                                   std::string_view stage = kIterationStage);

// The slowest-rank series of `stage`: SlowestPerIteration's slowest_ms, in iteration order.
std::vector<double> SlowestSeries(const std::vector<Sample>& samples,
                                  std::string_view stage = kIterationStage);

// Why the ranks' timed "iteration" samples cannot be reduced to one slowest-rank series, or
// nothing: every rank must have timed the same iterations as rank 0 (a rank missing one would
// leave the slowest rank out of that iteration's maximum), and at least `min_timed` of them
// (the trial's repeats.min: the measurement loop never stops before), and never none: a trial
// without a timed iteration is never ok. REQUIRES: `ranks` in rank order from rank 0, as
// ReadRankFiles gives them when it finds no problem.
struct RankProblem {
  int rank = 0;
  std::string problem;  // names the field: "'samples' ..."
};
std::optional<RankProblem> TimedIterationsProblem(const std::vector<RankResult>& ranks,
                                                  int min_timed);

// `cache`: why the ranks' per-step records disagree, or nothing: every rank must have reused
// (Sample::reused) the same "step:i" stages of the same iterations as rank 0, or a collective
// of a step one rank computed waited for a rank that skipped it. REQUIRES as above.
std::optional<RankProblem> StepReuseProblem(const std::vector<RankResult>& ranks);

// Why a rank's `steps` (RankResult::steps: what each denoising step of its first iteration
// ran) cannot be the trial's, or nothing: at most one entry per denoising step of that
// iteration (`config`'s steps, 1 at scope forward),
// `reused` only with a `cache`, and `expert` below the model's experts (0 or 1 for a
// two-expert model, 0 for any other). The first wrong entry is named with both values.
// `config`: the trial of the iteration recorded (KindMetrics::recorded_iteration: a served
// trial's first request shape).
std::optional<RankProblem> StepRecordsProblem(const TrialConfig& config,
                                              const std::vector<RankResult>& ranks);

// Why a rank's computed latent (RankResult::latent_shape) is not the clip the trial's key names,
// or nothing: its batch, latent frames (a video's), rows and columns must be those of `config`'s
// shape (a layout that padded 81 frames to 85 would return 22 latent frames for 21). The
// channels are the model's (a weights folder may set them) and are not compared. A rank file
// without the field (a program's) has nothing to check. `config` as StepRecordsProblem's.
std::optional<RankProblem> LatentShapeProblem(const TrialConfig& config,
                                              const std::vector<RankResult>& ranks);

// `cache`'s step figures from timed "step:i" samples (every rank's, mixed), the slowest rank per
// step and iteration: steps per iteration that reused the cached blocks, their share, and the
// median time of a computed step and of a reused one (nullopt without such steps).
struct StepReuse {
  double skipped_steps = 0;  // per timed iteration, averaged over them
  double hit_rate = 0;       // reused step samples over all step samples
  std::optional<double> computed_step_ms, reused_step_ms;
  int timed_steps = 0;  // step samples counted (0: no per-step stage was timed)
};
StepReuse SummarizeStepReuse(const std::vector<Sample>& samples);

// Metrics of an ok trial. REQUIRES: non-empty ranks, with timed "iteration" samples, in which
// TimedIterationsProblem finds nothing.
// latency_* and the spread are over SlowestSeries; rank0_ms is rank 0's median; skew_ms the
// median over iterations of (max - min over ranks); memory and clocks are maxima/minima over
// ranks; FLOPs, throughput and MFU follow docs/measurement.md ("Work and efficiency"), with
// MFU left unset on a CPU or a device missing from the dense-peak table.
// `busy_s` (borrowed; may be null): the stretches of the host's monotonic clock, in seconds,
// that the machine was judged busy while the trial ran, given only when its ranks share the
// coordinator's host. A serving trial's requests are then marked by them (metrics/
// busy_requests.h) and counted as `busy_requests`; a leader that did not say when its load
// started (RankResult::serve_start_monotonic_s) leaves the count unset, said in extra_note.
// Null: requests are not judged one by one, and the count is unset.
// The trial's kind adds its own figures (metrics/trial_kind_metrics.h): a served trial's from
// `requests`, its trial file's (REQUIRES non-empty for a served trial; empty for a timed one).
TrialMetrics ComputeTrialMetrics(const TrialConfig& config, const std::vector<RankResult>& ranks,
                                 const std::string& device_name,
                                 const IntervalSet* busy_s = nullptr,
                                 const RequestList& requests = {});

}  // namespace ditbench
