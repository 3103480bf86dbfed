// Which GPUs this coordinator may use, behind an interface so that placement is testable
// without GPUs: the GPUs the driver lists, and the CUDA_VISIBLE_DEVICES the coordinator
// inherited (from the user or a Slurm job), which limits and renumbers them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ditbench {

struct GpuInfo {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;  // "GPU-8e3c..." (may be empty)
};

class GpuDiscovery {
 public:
  virtual ~GpuDiscovery() = default;
  // Every GPU the driver lists, in its order (index = position); empty without a GPU or driver.
  virtual std::vector<GpuInfo> ListGpus() const = 0;
  // The coordinator's CUDA_VISIBLE_DEVICES; nullopt when it is not set.
  virtual std::optional<std::string> InheritedVisibleDevices() const = 0;
};

// A machine described rather than probed: `count` GPUs named `name`, nothing inherited. What
// `plan --device NAME` assumes, so that a sweep for another machine is planned on this one.
class AssumedGpus final : public GpuDiscovery {
 public:
  AssumedGpus(int count, std::string name);
  std::vector<GpuInfo> ListGpus() const override { return gpus_; }
  std::optional<std::string> InheritedVisibleDevices() const override { return std::nullopt; }

 private:
  std::vector<GpuInfo> gpus_;
};

// The real thing: `nvidia-smi -L` and getenv.
class NvidiaSmiDiscovery final : public GpuDiscovery {
 public:
  std::vector<GpuInfo> ListGpus() const override;
  std::optional<std::string> InheritedVisibleDevices() const override;
};

// One `nvidia-smi -L` line ("GPU 0: NAME (UUID: GPU-...)") as a GpuInfo; nullopt for others.
std::optional<GpuInfo> ParseNvidiaSmiLine(const std::string& line);

// The entries of a CUDA_VISIBLE_DEVICES value, trimmed: indices ("4"), UUIDs ("GPU-8e3c...")
// or MIG names. As CUDA does, the list ends at the first empty or negative entry ("" and "-1"
// hide every GPU).
std::vector<std::string> ParseVisibleDevices(const std::string& value);

}  // namespace ditbench
