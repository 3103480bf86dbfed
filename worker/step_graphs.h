// The `graph: cuda_graph` mode (docs/measurement.md, "CUDA graphs"): every denoising step of one
// iteration captured once as a CUDA graph, after the eager warm-up, on a side stream, all graphs
// sharing one memory pool; the timed iterations refill the input and replay the graphs in order.
// Step i's graph reads the tensor that step i-1's graph wrote (the addresses the capture saw),
// so replaying the chain reproduces an eager iteration without issuing a kernel from the host.
//
// What is captured is what the step function issues: the transformer forward (its collectives
// included), the guidance and the sampler's update. Host work inside a step (reading a tensor's
// value, a blocking wait) cannot be captured and fails the capture, which fails the trial with
// CUDA's error: the mode is never replaced by an eager run.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "metrics/measurement.h"

namespace ditbench {

class StepGraphs {
 public:
  // The work of denoising step `step` from latent `x`: the next latent.
  using StepFn = std::function<torch::Tensor(int step, const torch::Tensor& x)>;

  StepGraphs();
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  // Captures `steps` calls of `step`, the first from a copy of `input`, and returns the host
  // milliseconds the capture took. REQUIRES: `input` on a CUDA device; `step` has run eagerly
  // before (library handles, communicators and the allocator's blocks exist). Throws
  // std::runtime_error on a build without CUDA.
  double Capture(const torch::Tensor& input, int steps, const StepFn& step);

  // Copies `input` into the captured input and replays every step's graph on the current
  // stream, with stage "step:i" around each; returns the last step's output (overwritten by
  // the next replay). REQUIRES: Capture.
  torch::Tensor Replay(const torch::Tensor& input, Stages* stages);

  bool captured() const { return !outputs_.empty(); }

 private:
  struct Graphs;  // the CUDA graphs, defined where CUDA's headers are
  std::unique_ptr<Graphs> graphs_;
  torch::Tensor input_;
  std::vector<torch::Tensor> outputs_;
};

}  // namespace ditbench
