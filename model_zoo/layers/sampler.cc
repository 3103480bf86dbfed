#include "model_zoo/layers/sampler.h"

#include <cmath>

namespace ditbench {

DpmSolverMultistep::DpmSolverMultistep(int steps) {
  constexpr int kTrainSteps = 1000;
  constexpr double kBetaStart = 0.0001, kBetaEnd = 0.02;
  double product = 1.0;
  for (int t = 0; t < kTrainSteps; ++t) {
    const double beta = kBetaStart + (kBetaEnd - kBetaStart) * t / (kTrainSteps - 1);
    product *= 1.0 - beta;
    alpha_bar_.push_back(product);
  }
  for (int i = 0; i < steps; ++i)
    timesteps_.push_back(static_cast<int64_t>(
        std::llround((kTrainSteps - 1) * (1.0 - static_cast<double>(i) / steps))));
}

double DpmSolverMultistep::sigma(int i) const {
  if (i >= steps()) return 0.0;
  const double ab = alpha_bar_[timesteps_[i]];
  return std::sqrt((1.0 - ab) / ab);
}

torch::Tensor DpmSolverMultistep::Step(int i, const torch::Tensor& x, const torch::Tensor& eps) {
  // In the variance-preserving parametrisation: alpha = 1 / sqrt(1 + sigma^2), the noise
  // scale s = sigma * alpha, lambda = log(alpha / s). In fp32, as diffusers upcasts.
  auto alpha = [](double sigma) { return 1.0 / std::sqrt(1.0 + sigma * sigma); };
  auto lambda = [&](double sigma) { return -std::log(sigma); };  // log(alpha / (sigma alpha))
  const double sigma_s = sigma(i), sigma_t = sigma(i + 1);
  const torch::Tensor sample = x.to(torch::kFloat32);
  const torch::Tensor x0 =
      (sample - sigma_s * alpha(sigma_s) * eps.to(torch::kFloat32)) / alpha(sigma_s);
  torch::Tensor next;
  if (sigma_t == 0.0) {
    next = x0;  // the last step lands on the data prediction
  } else {
    const double h = lambda(sigma_t) - lambda(sigma_s);
    const double scale = (sigma_t * alpha(sigma_t)) / (sigma_s * alpha(sigma_s));
    const double coeff = alpha(sigma_t) * std::expm1(-h);  // alpha_t (e^-h - 1)
    if (i == 0 || !previous_x0_.defined()) {
      next = scale * sample - coeff * x0;
    } else {  // second order, midpoint: D1 = (x0 - previous x0) / r, r = h_previous / h
      const double r = (lambda(sigma_s) - lambda(sigma(i - 1))) / h;
      next = scale * sample - coeff * x0 - 0.5 * coeff * (x0 - previous_x0_) / r;
    }
  }
  previous_x0_ = x0;
  return next.to(x.scalar_type());
}

FlowMatchEuler::FlowMatchEuler(std::vector<double> sigmas) : sigmas_(std::move(sigmas)) {}

FlowMatchEuler FlowMatchEuler::Flux(int steps, int64_t image_tokens, bool dynamic_shift) {
  // diffusers' calculate_shift and time_shift (exponential) with Flux's scheduler config.
  constexpr double kBaseTokens = 256, kMaxTokens = 4096, kBaseShift = 0.5, kMaxShift = 1.15;
  const double slope = (kMaxShift - kBaseShift) / (kMaxTokens - kBaseTokens);
  const double mu = double(image_tokens) * slope + (kBaseShift - slope * kBaseTokens);
  std::vector<double> sigmas;
  for (int i = 0; i < steps; ++i) {
    const double s = steps == 1 ? 1.0 : 1.0 + (1.0 / steps - 1.0) * i / (steps - 1);
    sigmas.push_back(dynamic_shift ? std::exp(mu) / (std::exp(mu) + (1.0 / s - 1.0)) : s);
  }
  return FlowMatchEuler(std::move(sigmas));
}

FlowMatchEuler FlowMatchEuler::Sd3(int steps, double shift) {
  constexpr int kTrainSteps = 1000;
  auto shifted = [shift](double s) { return shift * s / (1.0 + (shift - 1.0) * s); };
  // The training sigmas run from 1 down to 1/1000, shifted; inference spans their range
  // linearly in timesteps, then shifts again (as diffusers' set_timesteps does).
  const double max_t = shifted(1.0) * kTrainSteps, min_t = shifted(1.0 / kTrainSteps) * kTrainSteps;
  std::vector<double> sigmas;
  for (int i = 0; i < steps; ++i) {
    const double t = steps == 1 ? max_t : max_t + (min_t - max_t) * i / (steps - 1);
    sigmas.push_back(shifted(t / kTrainSteps));
  }
  return FlowMatchEuler(std::move(sigmas));
}

torch::Tensor FlowMatchEuler::Step(int i, const torch::Tensor& x, const torch::Tensor& velocity) {
  // In fp32, as diffusers' step upcasts the sample.
  return (x.to(torch::kFloat32) + (sigma(i + 1) - sigma(i)) * velocity.to(torch::kFloat32))
      .to(x.scalar_type());
}

}  // namespace ditbench
