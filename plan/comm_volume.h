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

// Per step, per rank (max over ranks), in bytes, for every family and strategy; optional so that
// a family whose communication is not modelled can say so.
std::optional<double> CommBytesPerStep(const ModelConfig& model, const TrialConfig& trial);

}  // namespace ditbench
