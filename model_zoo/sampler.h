// The denoising sampler of the PixArt family: first-order DPM-Solver on the epsilon prediction
// (equivalent to DDIM), over the standard linear beta schedule of 1000 training steps. Its cost
// is small but it is inside the `denoise` scope, as in a real pipeline.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace ditbench {

class DpmSolverFirstOrder {
 public:
  explicit DpmSolverFirstOrder(int steps);
  int steps() const { return static_cast<int>(timesteps_.size()); }
  // The training timestep of step i (descending).
  int64_t timestep(int i) const { return timesteps_[i]; }
  // x at step i and the predicted noise -> x at step i + 1.
  torch::Tensor Step(int i, const torch::Tensor& x, const torch::Tensor& eps) const;

 private:
  std::vector<int64_t> timesteps_;
  std::vector<double> alpha_bar_;  // cumulative product of (1 - beta) over training steps
};

}  // namespace ditbench
