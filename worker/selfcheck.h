// What `ditbench-worker --selfcheck FILE` measures on its device (docs/selfcheck.md), as raw
// figures in contract/selfcheck_measurements.h: no verdicts here, `ditbench selfcheck` judges.
//
//   timing      a fixed GEMM and the tiny model's forward, each timed by ditbench's own loop
//               (Measure with the clock a trial uses: device events on a GPU, the host clock
//               on CPU) and by an independent reference (worker/reference_timer.h); medians
//   cuda_graph  GPU: the tiny model's denoising steps replayed from CUDA graphs
//               (worker/step_graphs.h) against the same steps run eagerly, and their times
//   numerics    the tiny model's bf16 forward against its fp32 forward (relative L2) and the
//               bound docs/measurement.md derives for it (kTinyPixArtBf16Bound)
//   throughput  square matmul TFLOP/s in fp32 and bf16, copy bandwidth, attention TFLOP/s per
//               SDPA backend that runs on the device
//   calibration for `plan` before any trial is measured (plan/calibration.h): how long the
//               measurements took (the coordinator's wall time less this is the launch's own
//               cost), the tiny model's build time and, on CPU, its
//               forward's time at three sizes, fp32 and bf16: alone with every core, and
//               with 2+ ranks every rank at its share of the cores at once (on one rank, alone
//               with one thread), as a trial's ranks compute
//   comm        with 2+ ranks: all-to-all and all-gather bus bandwidth, a small all-gather's
//               latency (NCCL on GPUs, Gloo on CPU)
// The tiny model is pixart-alpha-tiny at 256 px with its CFG batch, seeded: the model the
// trial tests run. A section that throws is left out, its error in `errors`; a section the
// device cannot run is left out with its reason in `skipped`.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "contract/selfcheck_measurements.h"
#include "metrics/measurement.h"
#include "model_zoo/parallel/parallel_attention.h"
#include "model_zoo/parallel/parallel_context.h"

namespace ditbench {

// The bf16 budget of docs/measurement.md ("bf16 against the fp32 reference"), for PixArt:
// 1.25 e_ref, with e_ref / u = 1.8 for PixArt and u = 2^-8 the unit roundoff of bf16.
inline constexpr double kTinyPixArtBf16Bound = 1.25 * 1.8 / 256.0;

struct SelfcheckOptions {
  // Untimed and timed iterations of each timed figure; 0: the device's default (CPU: 2 and
  // 15, GPU: 5 and 50; throughput and communication a third as many, at least 3).
  int warmup = 0, iterations = 0;
};

// Every figure `device` can give. Rank 0 of `world` measures the device; the other ranks wait
// for it, then every rank measures the communication together. REQUIRES: every rank of `world`
// calls it with the same options (collectives); `world.backend` set when world.size > 1.
// `store`: the ranks' rendezvous store, for the calibration's Ulysses forward (CPU, 2+ ranks);
// without one that forward is left out.
SelfcheckMeasurements MeasureSelfcheck(torch::Device device, const RankSubgroup& world,
                                       const SelfcheckOptions& options = {},
                                       const c10::intrusive_ptr<c10d::Store>& store = {});

// The timed iterations of `work`, in milliseconds, through ditbench's own loop (Measure) and the
// clock a trial uses on `device`: per iteration the slowest rank of `group`. The figures the
// selfcheck reports are these medians.
std::vector<double> DitbenchTimesMs(torch::Device device, RankGroup& group, int warmup,
                                    int iterations, const std::function<void()>& work);

// The sections, each on its own (rank 0's part; MeasureComm is collective). Iterations as in
// SelfcheckOptions, already resolved (> 0).
SelfcheckTiming MeasureTimingFidelity(torch::Device device, int warmup, int iterations);
SelfcheckGraph MeasureGraphReplay(torch::Device device, int warmup, int iterations);  // CUDA
SelfcheckNumerics MeasureBf16Numerics(torch::Device device);
// The planner's figures measured by rank 0 alone (measure_s and setup_s are set by its callers).
SelfcheckCalibration MeasureCalibration(torch::Device device, int warmup, int iterations,
                                        int world_size);
// The tiny model's forward at each calibration size and precision with `threads` threads,
// timed through `group` (every rank of it calls this together), in `rounds` interleaved rounds.
// With `parallel`, the forward runs split over its ranks (Ulysses), every rank of it calling.
std::vector<SelfcheckForwardRate> MeasureForwardRates(torch::Device device, RankGroup& group,
                                                      int threads, int warmup, int rounds,
                                                      const ParallelContext* parallel = nullptr);
// Attention backends that do not run here are named in `skipped` as "attention.<backend>".
SelfcheckThroughput MeasureThroughput(torch::Device device, int warmup, int iterations,
                                      std::map<std::string, std::string>& skipped);
SelfcheckComm MeasureComm(torch::Device device, const RankSubgroup& world, int warmup,
                          int iterations);

}  // namespace ditbench
