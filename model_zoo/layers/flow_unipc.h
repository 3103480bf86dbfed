// UniPC on a flow-matching schedule: the sampler Wan's pipeline runs (diffusers'
// UniPCMultistepScheduler as Wan's scheduler config sets it: use_flow_sigmas,
// prediction_type flow_prediction, predict_x0, solver_type bh2, solver_order 2,
// lower_order_final, final sigma zero, no disabled corrector, flow_shift by resolution).
#pragma once

#include <array>
#include <vector>

#include <torch/torch.h>

#include "model_zoo/layers/sampler.h"

namespace ditbench {

// Each step converts the velocity v at sigma_i to the data prediction x0 = x - sigma_i v,
// corrects x with it (UniC, from step 1 on), then predicts x at sigma_{i+1} (UniP): second order
// from the previous x0 except on the first step and on the last (whose sigma is zero, where x
// lands on x0). alpha = 1 - sigma and lambda = log(alpha / sigma), as diffusers takes them for
// flow sigmas. Step keeps the two latest x0 and the sample before the last prediction: steps run
// in order from 0 (i = 0 starts a new trajectory).
class FlowUniPcMultistep final : public Sampler {
 public:
  // sigmas: 1 - linspace(1, 1/1000, steps + 1) shifted by `flow_shift`
  // (s -> shift s / (1 + (shift - 1) s)), descending, the zero dropped; each rounded to fp32 as
  // diffusers stores them. REQUIRES: steps >= 1, flow_shift > 0.
  FlowUniPcMultistep(int steps, double flow_shift);
  // WanPipeline's flow shift for a clip of width x height pixels a frame: 5.0 for 720p (from
  // 1280 x 704, Wan 2.2 TI2V-5B's 720p, up), else 3.0 (its documentation: "5.0 for 720P, 3.0
  // for 480P").
  static double WanFlowShift(int width, int height);

  int steps() const override { return static_cast<int>(sigmas_.size()); }
  double sigma(int i) const { return i < steps() ? sigmas_[i] : 0.0; }
  // The integer timestep diffusers conditions the model on: the fp64 sigma x 1000, truncated.
  double ModelTime(int i) const override { return timesteps_[i]; }
  torch::Tensor Step(int i, const torch::Tensor& x, const torch::Tensor& velocity) override;

 private:
  double lambda(int i) const;
  std::vector<double> sigmas_;
  std::vector<double> timesteps_;
  std::array<torch::Tensor, 2> x0_;  // x0 of the step before the last, and of the last
  torch::Tensor last_sample_;        // the sample the last prediction started from
  int last_order_ = 0;               // the order of the last prediction
};

}  // namespace ditbench
