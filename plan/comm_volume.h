// Bytes one rank sends per denoising step (per forward, for scope forward), predicted from the
// shapes with exactly the accounting of the worker's CommCounter (model_zoo/parallel/parallel_attention.h):
// an all-to-all counts (P-1)/P of its input, an all-gather P-1 times the local part, a send its
// tensor, a broadcast's root P-1 times the tensor. The maximum over the trial's ranks, averaged
// over the steps of one iteration (PipeFusion's synchronous and patch steps differ).
// Torch-free: `plan` estimates communication with it; tests pin it against the counters.
#pragma once

#include <optional>

#include "model_zoo/shapes/model_config.h"
#include "trial/trial.h"

namespace ditbench {

// One step's communication of the busiest rank split by collective kind, each with the number
// of collective calls it takes: what a cost model prices as latency + bytes / bandwidth per
// kind (plan/cost_model.h). `all_to_all`: Ulysses' all-to-alls; `ring`: ring attention's K/V
// send/receive; `gather`: all-gathers, PipeFusion's sends and broadcasts, CFG's gather.
struct CommVolume {
  double all_to_all = 0, ring = 0, gather = 0;                    // bytes
  double all_to_all_calls = 0, ring_calls = 0, gather_calls = 0;  // collectives
  double bytes() const { return all_to_all + ring + gather; }
};

// Per step, per rank (the rank that sends the most), for every family and strategy; optional
// so that a family whose communication is not modelled can say so.
std::optional<CommVolume> CommVolumePerStep(const ModelConfig& model, const TrialConfig& trial);

// CommVolumePerStep's bytes.
std::optional<double> CommBytesPerStep(const ModelConfig& model, const TrialConfig& trial);

}  // namespace ditbench
