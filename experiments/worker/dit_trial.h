// One rank of a `dit` workload trial: builds the model at the trial's precision, lays the ranks
// out over the parallel degrees, and runs the scoped work through Measure().
//
// Rank layout (ulysses innermost, as in xDiT): rank = ((dp_i * cfg + cfg_i) * ulysses) + u_i.
// The Ulysses group shares (dp_i, cfg_i); the CFG group shares (dp_i, u_i); dp replicas share
// nothing but the trial-wide barrier and use their own seeds.
#pragma once

#include <functional>

#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "experiments/trial.h"
#include "experiments/worker_contract.h"
#include "model_zoo/parallel_attention.h"

namespace ditbench {

// The communicators of one rank. Built by BuildTrialGroups; tests build them with a HashStore.
struct TrialGroups {
  RankSubgroup world;
  RankSubgroup ulysses;
  RankSubgroup cfg;
  int dp_index = 0;
};

// Creates this rank's subgroups over `store` (one c10d backend per subgroup, each under its
// own store prefix). `create` makes a backend: (store, rank, size) -> backend.
using BackendFactory = std::function<c10::intrusive_ptr<c10d::Backend>(
    const c10::intrusive_ptr<c10d::Store>&, int, int)>;
TrialGroups BuildTrialGroups(const TrialConfig& config, int rank,
                             const c10::intrusive_ptr<c10d::Store>& store,
                             const BackendFactory& create);

// The dtype weights and activations use for `precision`, and the matmul mode it implies
// (tf32 on for tf32 only). Applied identically at every world size.
torch::ScalarType ApplyPrecision(Precision precision);

// Runs the trial on this rank and fills `result` (samples, stop reason, memory).
// Throws on failure; c10::OutOfMemoryError for OOM.
void RunDitTrial(const TrialConfig& config, const TrialGroups& groups, torch::Device device,
                 RankResult& result);

// The denoised latent of one full denoising loop (no timing), for output checks and tests.
torch::Tensor DenoiseOnce(const TrialConfig& config, const TrialGroups& groups,
                          torch::Device device);

}  // namespace ditbench
