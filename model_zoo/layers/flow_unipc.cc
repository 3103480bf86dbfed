#include "model_zoo/layers/flow_unipc.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ditbench {

FlowUniPcMultistep::FlowUniPcMultistep(int steps, double flow_shift) {
  constexpr int kTrainSteps = 1000;
  // numpy's linspace(1, 1/1000, steps + 1): start + j * step, the last exactly the stop.
  const double start = 1.0, stop = 1.0 / kTrainSteps, step = (stop - start) / steps;
  for (int i = 0; i < steps; ++i) {
    const int j = steps - i;  // flipped: the largest sigma first; j = 0 (sigma 0) is dropped
    const double alpha = j == steps ? stop : start + j * step;
    const double s = 1.0 - alpha;
    const double shifted = flow_shift * s / (1.0 + (flow_shift - 1.0) * s);
    timesteps_.push_back(std::trunc(shifted * kTrainSteps));
    sigmas_.push_back(static_cast<float>(shifted));
  }
}

double FlowUniPcMultistep::WanFlowShift(int width, int height) {
  constexpr double k720pPixels = 1280.0 * 704;  // Wan 2.2 TI2V-5B's 720p, the smallest
  return double(width) * height >= k720pPixels ? 5.0 : 3.0;
}

double FlowUniPcMultistep::lambda(int i) const {
  const double s = sigma(i);
  if (s == 0.0) return std::numeric_limits<double>::infinity();
  return std::log(1.0 - s) - std::log(s);
}

torch::Tensor FlowUniPcMultistep::Step(int i, const torch::Tensor& x, const torch::Tensor& velocity) {
  if (i == 0) {
    x0_ = {};
    last_sample_ = torch::Tensor();
    last_order_ = 0;
  }
  // In fp32, as the pipeline's latents are.
  torch::Tensor sample = x.to(torch::kFloat32);
  const torch::Tensor x0 = sample - sigma(i) * velocity.to(torch::kFloat32);

  // UniC: redo the last prediction (from last_sample_ at sigma_{i-1} to sigma_i) with this
  // step's x0 as well.
  if (i > 0 && last_sample_.defined()) {
    const double s_t = sigma(i), s_0 = sigma(i - 1), alpha_t = 1.0 - s_t;
    const double h = lambda(i) - lambda(i - 1), hh = -h;
    const double h_phi_1 = std::expm1(hh), b_h = h_phi_1;
    double h_phi_k = h_phi_1 / hh - 1.0;
    const double b1 = h_phi_k / b_h;
    h_phi_k = h_phi_k / hh - 0.5;
    const double b2 = h_phi_k * 2.0 / b_h;
    const torch::Tensor& m0 = x0_[1];
    torch::Tensor correction;
    if (last_order_ == 1) {
      correction = 0.5 * (x0 - m0);
    } else {  // rho solves [[1, 1], [r, 1]] rho = [b1, b2]
      const double r = (lambda(i - 2) - lambda(i - 1)) / h;
      const double rho0 = (b1 - b2) / (1.0 - r), rho1 = b1 - rho0;
      correction = rho0 * (x0_[0] - m0) / r + rho1 * (x0 - m0);
    }
    sample = (s_t / s_0) * last_sample_ - alpha_t * h_phi_1 * m0 - alpha_t * b_h * correction;
  }
  x0_[0] = x0_[1];
  x0_[1] = x0;
  // Second order once there is a previous x0, first on the last step (lower_order_final).
  const int order = std::min({2, steps() - i, i + 1});
  last_sample_ = sample;
  last_order_ = order;

  // UniP: from sigma_i to sigma_{i+1}.
  const double s_t = sigma(i + 1), s_0 = sigma(i), alpha_t = 1.0 - s_t;
  const double h = lambda(i + 1) - lambda(i);
  const double h_phi_1 = std::expm1(-h), b_h = h_phi_1;
  torch::Tensor next = (s_t / s_0) * sample - alpha_t * h_phi_1 * x0;
  if (order == 2) {
    const double r = (lambda(i - 1) - lambda(i)) / h;
    next = next - alpha_t * b_h * 0.5 * (x0_[0] - x0) / r;
  }
  return next.to(x.scalar_type());
}

}  // namespace ditbench
