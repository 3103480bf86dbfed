// One rank of a `dit` workload trial: builds the trial's model (any family, through
// model_zoo/families/dit_model.h) at the trial's precision, and runs the scoped work through Measure().
// The ranks' layout over the parallel degrees and every communicator live in the
// ParallelContext (model_zoo/parallel/parallel_context.h); this file knows neither the family nor the
// attention strategy.
#pragma once

#include <filesystem>
#include <functional>

#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "contract/worker_contract.h"
#include "experiments/trial.h"
#include "model_zoo/parallel/parallel_context.h"

namespace ditbench {

// The trial's degrees as a layout.
ParallelDegrees DegreesOf(const TrialConfig& config);

// This rank's communicators for `config` over `store` (tests use a HashStore and threads).
// The model zoo's kernel for a trial's `attention:` (model_zoo/parallel/parallel_attention.h).
AttentionKernel AttentionKernelOf(AttentionBackend backend);

ParallelContext BuildParallelContext(const TrialConfig& config, int rank,
                                     const c10::intrusive_ptr<c10d::Store>& store,
                                     const BackendFactory& create);

// The dtype weights and activations use for `precision`, and the matmul mode it implies
// (tf32 on for tf32 only). Applied identically at every world size.
torch::ScalarType ApplyPrecision(Precision precision);

// Extension points for test workers (tests/support/): production passes none. `in_timed_region`
// runs at the end of every timed iteration's work, inside the timed region, on this rank.
struct TrialHooks {
  std::function<void(int rank)> in_timed_region;
};

// Runs the trial on this rank and fills `result` (samples, stop reason, memory, clocks,
// communication per step).
// Throws on failure; c10::OutOfMemoryError for OOM.
// When `output` is not empty, this rank writes the final output of its last iteration there
// (float32 .npy, contract/npy.h) and names it in result.output_file. With `profile: trace` and
// a `run_dir`, an untimed profiled pass follows the timed iterations (worker/profiler_pass.h)
// and result.trace_file names this rank's trace there.
void RunDitTrial(const TrialConfig& config, ParallelContext& parallel, torch::Device device,
                 RankResult& result, const TrialHooks& hooks = {},
                 const std::filesystem::path& output = {},
                 const std::filesystem::path& run_dir = {});

// A serving trial (`serve`): the load's requests served on this rank's replica (its dp group)
// through metrics/serve_loop.h, the replicas' queue on `store`. Fills `result` with a sample
// of every request its replica served ("iteration": arrival to end; "queue"; "service"), and on
// a replica's leader the requests themselves (RankResult::requests). `load`: the requests and
// their shapes as the trial file holds them (contract/worker_contract.h, TrialFile::requests),
// never generated again on a rank. Throws as RunDitTrial.
void ServeDitTrial(const TrialConfig& config, const RequestList& load, ParallelContext& parallel,
                   const c10::intrusive_ptr<c10d::Store>& store, torch::Device device,
                   RankResult& result, const std::filesystem::path& output = {});

// The denoised latent of one full denoising loop (no timing), for output checks and tests. With
// graph: cuda_graph, as a trial runs it: one eager loop, the capture, then one replay.
torch::Tensor DenoiseOnce(const TrialConfig& config, ParallelContext& parallel,
                          torch::Device device);

}  // namespace ditbench
