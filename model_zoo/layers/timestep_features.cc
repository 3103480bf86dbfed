#include "model_zoo/layers/timestep_features.h"

#include <cmath>

namespace ditbench {

torch::Tensor TimestepFeatures(const torch::Tensor& timestep, int64_t dim) {
  const int64_t half = dim / 2;
  auto freqs = torch::exp(
      -std::log(10000.0) *
      torch::arange(half, torch::TensorOptions().dtype(torch::kFloat32).device(timestep.device())) /
      half);
  auto args = timestep.to(torch::kFloat32).unsqueeze(1) * freqs.unsqueeze(0);
  return torch::cat({torch::cos(args), torch::sin(args)}, 1);
}

}  // namespace ditbench
