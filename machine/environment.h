// What the coordinator knows about the machine, stored with every campaign: host, CPU, build,
// GPUs as nvidia-smi lists them, and the NCCL_*/CUDA_*/OMP_* variables the ranks inherit.
// The worker adds device, driver and library versions from inside a rank (rank 0 of the first
// ok trial), under the key "worker".
#pragma once

#include <nlohmann/json.hpp>

namespace ditbench {

nlohmann::json CoordinatorEnvironment();

}  // namespace ditbench
