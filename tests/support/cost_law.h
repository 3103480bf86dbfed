// A synthetic campaign for the planner's tests: layouts of the tiny PixArt whose latency follows
// a known law (the cost model's own terms with chosen coefficients) plus deterministic noise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/trial.h"
#include "plan/cost_model.h"

namespace ditbench::test {

// Two resolutions x 12 layouts of the tiny PixArt on 16 CPU slots.
inline constexpr const char* kCostLawSweep = R"(name: synthetic
defaults: {model: pixart-alpha-tiny, steps: 4, warmup: 1, repeats: 3}
matrix:
  resolution: [256, 512]
  ulysses: [1, 2, 4]
  ring: [1, 2]
  cfg: [1, 2]
)";

// The law's coefficient of every term (CostTermNames' order; no elements read and written
// beyond the FLOPs: one family's would be too close to its FLOPs to tell apart, see
// CostModelElementsTest; no decode in scope denoise; the last three, time-sharing's, count
// only where the ranks outnumber the cores; no FP8 layers nor forced attention kernel: the
// next five; no tensor parallelism: the last two).
inline const std::vector<double> kCostLaw = {2.0, 40.0, 6.0, 0,   0,   0, 0, 0.02, 0.3,
                                             4.0, 0.5,  5.0, 0.2, 3.0, 0, 0, 30.0, 0.05,
                                             1.5, 0,    0,   0,   0,   0, 0, 0};

// The law's latency of `c` whose ranks share their cores by `sharing`, in ms.
inline double CostLawMs(const TrialConfig& c, double sharing = 1) {
  const auto x = CostFeatures(c, {}, sharing).value();
  if (x.size() != kCostLaw.size())
    throw std::logic_error("tests/support/cost_law.h: the law has a coefficient for " +
                           std::to_string(kCostLaw.size()) + " terms, the cost model has " +
                           std::to_string(x.size()));
  double ms = 0;
  for (std::size_t j = 0; j < x.size(); ++j) ms += kCostLaw[j] * x[j];
  return ms;
}

// Deterministic noise in [-1%, +1%] (no std::normal_distribution: it differs by library).
inline double CostLawNoise(std::uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return (double(state >> 8) / double(1u << 24) - 0.5) * 0.02;
}

}  // namespace ditbench::test
