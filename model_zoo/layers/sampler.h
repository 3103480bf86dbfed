// Denoising samplers. Each model family names its real sampler (model_zoo/families/dit_model.h); its cost
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
  // x at step i and the model's prediction -> x at step i + 1. Multistep samplers remember
  // earlier steps: call with i = 0, 1, ... in order (i = 0 starts a new trajectory).
  virtual torch::Tensor Step(int i, const torch::Tensor& x, const torch::Tensor& prediction) = 0;
};

// DPM-Solver++ (2M) on the epsilon prediction, as the PixArt family's pipelines run it
// (diffusers' DPMSolverMultistepScheduler with PixArt's scheduler config): the standard linear
// beta schedule of 1000 training steps, `linspace` timestep spacing, data (x0) prediction,
// second-order midpoint updates from the previous step's x0, first order on the first step and
// on the last (whose sigma is zero). Step keeps the previous x0: steps run in order from 0.
class DpmSolverMultistep final : public Sampler {
 public:
  explicit DpmSolverMultistep(int steps);
  int steps() const override { return static_cast<int>(timesteps_.size()); }
  // The training timestep of step i (descending).
  int64_t timestep(int i) const { return timesteps_[i]; }
  double ModelTime(int i) const override { return static_cast<double>(timesteps_[i]); }
  torch::Tensor Step(int i, const torch::Tensor& x, const torch::Tensor& eps) override;

 private:
  // The noise level of step i (sqrt((1 - alpha_bar) / alpha_bar)); 0 after the last step.
  double sigma(int i) const;
  std::vector<int64_t> timesteps_;
  std::vector<double> alpha_bar_;  // cumulative product of (1 - beta) over training steps
  torch::Tensor previous_x0_;      // the data prediction of step i - 1
};

// Flow-matching Euler on the velocity prediction (diffusers' FlowMatchEulerDiscreteScheduler):
// x_{i+1} = x_i + (sigma_{i+1} - sigma_i) v, sigma falling from about 1 to 0; the model is
// conditioned on sigma * 1000. The Flux and SD3 families' sampler, with their schedules.
class FlowMatchEuler final : public Sampler {
 public:
  // REQUIRES: sigmas descending, one per step (the final 0 is implied).
  explicit FlowMatchEuler(std::vector<double> sigmas);
  // Flux's pipeline: sigmas linspace(1, 1/steps), shifted by the resolution-dependent
  // mu = lerp over image tokens from 256 (0.5) to 4096 (1.15) when `dynamic_shift` (dev);
  // unshifted otherwise (schnell).
  static FlowMatchEuler Flux(int steps, int64_t image_tokens, bool dynamic_shift);
  // SD3's scheduler: timesteps linspace over the shifted training range, shift 3.0.
  static FlowMatchEuler Sd3(int steps, double shift = 3.0);

  int steps() const override { return static_cast<int>(sigmas_.size()); }
  double sigma(int i) const { return i < steps() ? sigmas_[i] : 0.0; }
  double ModelTime(int i) const override { return sigmas_[i] * 1000.0; }
  torch::Tensor Step(int i, const torch::Tensor& x, const torch::Tensor& velocity) override;

 private:
  std::vector<double> sigmas_;
};

}  // namespace ditbench
