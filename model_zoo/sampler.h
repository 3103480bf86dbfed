// Denoising samplers. Each model family names its real sampler (model_zoo/dit_model.h); its cost
// is small but it is inside the `denoise` scope, as in a real pipeline.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace ditbench {

class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual int steps() const = 0;
  // The time value the model is conditioned on at step i (a training timestep for PixArt).
  virtual double ModelTime(int i) const = 0;
  // x at step i and the model's prediction -> x at step i + 1.
  virtual torch::Tensor Step(int i, const torch::Tensor& x,
                             const torch::Tensor& prediction) const = 0;
};

// First-order DPM-Solver on the epsilon prediction (equivalent to DDIM), over the standard
// linear beta schedule of 1000 training steps: the PixArt family's sampler.
class DpmSolverFirstOrder final : public Sampler {
 public:
  explicit DpmSolverFirstOrder(int steps);
  int steps() const override { return static_cast<int>(timesteps_.size()); }
  // The training timestep of step i (descending).
  int64_t timestep(int i) const { return timesteps_[i]; }
  double ModelTime(int i) const override { return static_cast<double>(timesteps_[i]); }
  torch::Tensor Step(int i, const torch::Tensor& x, const torch::Tensor& eps) const override;

 private:
  std::vector<int64_t> timesteps_;
  std::vector<double> alpha_bar_;  // cumulative product of (1 - beta) over training steps
};

}  // namespace ditbench
