// The reference clocks `ditbench-worker --selfcheck` holds ditbench's own timing loop against
// (metrics/measurement.h with worker/torch_runtime.h's clocks): raw CUDA events recorded with
// the CUDA runtime API around each iteration on a GPU, and a textbook std::chrono::steady_clock
// loop on CPU. Deliberately independent of IterationClock and Measure: no shared code path, so
// a fault in either shows as a difference. In its own translation unit, the only one beside
// cuda_info.cc and step_graphs.cc that sees CUDA's headers.
#pragma once

#include <functional>
#include <vector>

#include <torch/torch.h>

namespace ditbench {

// Runs `work` `warmup` times untimed, then `iterations` times, each timed on its own; returns
// the timed iterations' milliseconds. On a CUDA device: the device synchronised first, then per
// iteration an event recorded on the device's current stream, the work, an event, a wait for
// it (each iteration starts on an idle device, as in Measure). On CPU `work` must return with
// its results computed (LibTorch's CPU ops are synchronous). Throws std::runtime_error for
// a CUDA device in a build without CUDA.
std::vector<double> ReferenceTimesMs(torch::Device device, int warmup, int iterations,
                                     const std::function<void()>& work);

}  // namespace ditbench
