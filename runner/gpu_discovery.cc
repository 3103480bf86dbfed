#include "runner/gpu_discovery.h"

#include <cstdlib>
#include <sstream>

#include "experiments/host_info.h"

namespace ditbench {

std::optional<GpuInfo> ParseNvidiaSmiLine(const std::string& line) {
  if (line.rfind("GPU ", 0) != 0) return std::nullopt;
  GpuInfo gpu;
  const auto colon = line.find(": ");
  const auto uuid = line.find(" (UUID: ");
  if (colon != std::string::npos)
    gpu.name = line.substr(colon + 2, uuid == std::string::npos ? std::string::npos
                                                                : uuid - colon - 2);
  if (uuid != std::string::npos) {
    const auto start = uuid + 8, end = line.find(')', start);
    gpu.uuid = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  return gpu;
}

AssumedGpus::AssumedGpus(int count, std::string name) {
  for (int i = 0; i < count; ++i) gpus_.push_back({name, ""});
}

std::vector<GpuInfo> NvidiaSmiDiscovery::ListGpus() const {
  std::vector<GpuInfo> gpus;
  for (const auto& line : CommandOutputLines({"nvidia-smi", "-L"}))
    if (auto gpu = ParseNvidiaSmiLine(line)) gpus.push_back(*gpu);
  return gpus;
}

std::optional<std::string> NvidiaSmiDiscovery::InheritedVisibleDevices() const {
  const char* value = std::getenv("CUDA_VISIBLE_DEVICES");
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::vector<std::string> ParseVisibleDevices(const std::string& value) {
  std::vector<std::string> devices;
  std::stringstream in(value);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    if (first == std::string::npos) break;
    item = item.substr(first, item.find_last_not_of(" \t") - first + 1);
    if (item[0] == '-') break;
    devices.push_back(item);
  }
  return devices;
}

}  // namespace ditbench
