#include "model_zoo/sampler.h"

#include <cmath>

namespace ditbench {

DpmSolverFirstOrder::DpmSolverFirstOrder(int steps) {
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

torch::Tensor DpmSolverFirstOrder::Step(int i, const torch::Tensor& x,
                                        const torch::Tensor& eps) const {
  const double ab = alpha_bar_[timesteps_[i]];
  const double ab_next = i + 1 < steps() ? alpha_bar_[timesteps_[i + 1]] : 1.0;
  auto x0 = (x - std::sqrt(1.0 - ab) * eps) / std::sqrt(ab);
  return std::sqrt(ab_next) * x0 + std::sqrt(1.0 - ab_next) * eps;
}

}  // namespace ditbench
