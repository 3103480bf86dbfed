// Bytes one rank sends per denoising step (per forward, for scope forward), predicted from the
// shapes with exactly the accounting of the worker's CommCounter
// (model_zoo/parallel/parallel_attention.h): an all-to-all counts (P-1)/P of its input, an
// all-gather P-1 times the local part, a send its tensor, a broadcast's root P-1 times the tensor,
// an all-reduce 2 (P-1)/P of its tensor. The maximum over the trial's ranks, averaged over the
// steps of one iteration (PipeFusion's synchronous and patch steps differ). Torch-free: `plan`
// estimates communication with it; tests pin it against the counters.
#pragma once

#include <array>
#include <optional>

#include "experiments/trial.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// The kinds of collective a trial's ranks run, as a link's cost differs between them
// (plan/device_prior.h): Ulysses' all-to-alls; ring attention's K/V and PipeFusion's
// activations passed to the next rank (send / receive); all-gathers of outputs and text, and
// PipeFusion's broadcast of the output (counted as its root's P-1 copies, like an all-gather).
// Tensor parallelism's all-reduces of the row-parallel layers' partial outputs: a ring
// all-reduce, each rank sending 2 (P-1)/P of the tensor.
enum class Collective { kAllToAll, kSendRecv, kAllGather, kAllReduce };
inline constexpr std::size_t kCollectiveKinds = 4;

// One rank's communication per step, by collective kind (indexed by Collective): the bytes it
// sends and the number of collectives it takes part in. For the rank that sends the most.
struct CommPerStep {
  std::array<double, kCollectiveKinds> bytes{};
  std::array<double, kCollectiveKinds> calls{};
  double total_bytes = 0;  // the sum of `bytes` (summed as CommBytesPerStep always has)
};

// Per step, per rank (max over ranks), by kind, for every family and strategy; optional so that
// a family whose communication is not modelled can say so.
std::optional<CommPerStep> CommByKindPerStep(const ModelConfig& model, const TrialConfig& trial);

// CommByKindPerStep's total bytes.
std::optional<double> CommBytesPerStep(const ModelConfig& model, const TrialConfig& trial);

}  // namespace ditbench
