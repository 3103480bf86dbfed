#include "runner/placement.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace ditbench {
namespace {

std::invalid_argument Malformed(const std::string& gpus) {
  return std::invalid_argument(
      fmt::format("--gpus '{}': expected auto, a list of GPU positions like 0,1,2, or cpu:N",
                  gpus));
}

// A small non-negative decimal number, or nullopt.
std::optional<int> Position(const std::string& text) {
  if (text.empty() || text.size() > 6 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(text);
}

// The GPU a CUDA_VISIBLE_DEVICES entry names: a driver index or a (prefix of a) UUID.
const GpuInfo* Find(const std::string& device, const std::vector<GpuInfo>& gpus) {
  if (auto index = Position(device); index && *index < static_cast<int>(gpus.size()))
    return &gpus[*index];
  for (const auto& gpu : gpus)
    if (!gpu.uuid.empty() && gpu.uuid.rfind(device, 0) == 0) return &gpu;
  return nullptr;
}

std::string NameOf(const std::string& device, const std::vector<GpuInfo>& gpus) {
  const GpuInfo* gpu = Find(device, gpus);
  return gpu ? gpu->name : "unknown GPU";
}

}  // namespace

Placement ResolvePlacement(const std::string& gpus, const GpuDiscovery& discovery) {
  Placement p;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (gpus.rfind("cpu", 0) == 0) {
    int slots = cores;
    if (gpus.size() > 3) {
      auto n = gpus[3] == ':' ? Position(gpus.substr(4)) : std::nullopt;
      if (!n) throw Malformed(gpus);
      slots = *n;
    }
    if (slots < 1) throw std::invalid_argument("--gpus cpu:N needs N >= 1");
    p.capacity = Capacity{slots, false};
    return p;
  }

  const auto inherited = discovery.InheritedVisibleDevices();
  const std::vector<GpuInfo> listed = discovery.ListGpus();
  std::vector<std::string> visible;
  if (inherited) {
    visible = ParseVisibleDevices(*inherited);
  } else {
    for (std::size_t i = 0; i < listed.size(); ++i) visible.push_back(std::to_string(i));
  }

  if (gpus == "auto") {
    p.devices = visible;
  } else {
    std::stringstream in(gpus);
    std::string item;
    std::set<int> seen;
    while (std::getline(in, item, ',')) {
      auto position = Position(item);
      if (!position) throw Malformed(gpus);
      if (!seen.insert(*position).second)
        throw std::invalid_argument(fmt::format("--gpus '{}': GPU {} listed twice", gpus, *position));
      if (!inherited && *position < static_cast<int>(listed.size())) {
        p.devices.push_back(item);  // no inherited limit: positions are the driver's indices
      } else if (!inherited) {
        throw std::invalid_argument(fmt::format(
            "--gpus '{}': GPU {} is not on this machine: nvidia-smi lists {} GPU(s){}", gpus,
            *position, listed.size(),
            listed.empty() ? "; use --gpus cpu:N to run ranks on CPU" : ""));
      } else if (*position < static_cast<int>(visible.size())) {
        p.devices.push_back(visible[*position]);
      } else {
        throw std::invalid_argument(fmt::format(
            "--gpus '{}': GPU {} is not visible: CUDA_VISIBLE_DEVICES='{}' leaves {} GPU(s), "
            "numbered 0 to {} in --gpus",
            gpus, *position, *inherited, visible.size(), static_cast<int>(visible.size()) - 1));
      }
    }
    if (p.devices.empty()) throw Malformed(gpus);
  }
  if (p.devices.empty()) {
    p.capacity = Capacity{cores, false};
    return p;
  }
  p.capacity = Capacity{static_cast<int>(p.devices.size()), true};
  p.device_name = NameOf(p.devices.front(), listed);
  for (const std::string& device : p.devices) {
    const GpuInfo* gpu = Find(device, listed);
    p.uuids.push_back(gpu ? gpu->uuid : device.rfind("GPU-", 0) == 0 ? device : "");
  }
  return p;
}

std::optional<PlacementPolicy> ParsePlacementPolicy(const std::string& name) {
  if (name == "exclusive") return PlacementPolicy::kExclusive;
  if (name == "pack") return PlacementPolicy::kPack;
  return std::nullopt;
}

std::optional<std::vector<int>> SlotPool::Acquire(int count) {
  if (count < 1 || count > size()) return std::nullopt;
  if (policy_ == PlacementPolicy::kExclusive && held() > 0) return std::nullopt;
  std::vector<int> slots;
  for (int i = 0; i < size() && static_cast<int>(slots.size()) < count; ++i)
    if (!held_[i]) slots.push_back(i);
  if (static_cast<int>(slots.size()) < count) return std::nullopt;
  for (int i : slots) held_[i] = true;
  return slots;
}

void SlotPool::Release(const std::vector<int>& slots) {
  for (int i : slots)
    if (i >= 0 && i < size()) held_[i] = false;
}

int SlotPool::held() const { return static_cast<int>(std::count(held_.begin(), held_.end(), true)); }

}  // namespace ditbench
