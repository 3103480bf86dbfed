#include "machine/placement.h"
#include "base/user_error.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace ditbench {
namespace {

UserError Malformed(const std::string& gpus) {
  return UserError(fmt::format(
      "--gpus '{}': expected auto, a list of GPU positions like 0,1,2, or cpu:N", gpus));
}

// A small non-negative decimal number, or nullopt.
std::optional<int> Position(const std::string& text) {
  if (text.empty() || text.size() > 6 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(text);
}

// The GPU a CUDA_VISIBLE_DEVICES entry names: a driver index or a (prefix of a) UUID. A GPU
// whose index the source did not say (-1) is taken to be at its position in the list.
const GpuInfo* Find(const std::string& device, const std::vector<GpuInfo>& gpus) {
  if (auto index = Position(device)) {
    for (const auto& gpu : gpus)
      if (gpu.index == *index) return &gpu;
    if (*index < static_cast<int>(gpus.size()) && gpus[*index].index < 0) return &gpus[*index];
    return nullptr;
  }
  for (const auto& gpu : gpus)
    if (!gpu.uuid.empty() && gpu.uuid.rfind(device, 0) == 0) return &gpu;
  return nullptr;
}

std::string NameOf(const std::string& device, const std::vector<GpuInfo>& gpus) {
  const GpuInfo* gpu = Find(device, gpus);
  return gpu ? gpu->name : "unknown GPU";
}

}  // namespace

bool AsksForCpu(std::string_view gpus) { return gpus.starts_with("cpu"); }

Placement ResolvePlacement(const std::string& gpus, const GpuDiscovery& discovery,
                           const CpuTopology* cpus) {
  Placement p;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (AsksForCpu(gpus)) {
    int slots = cores;
    if (gpus.size() > 3) {
      auto n = gpus[3] == ':' ? Position(gpus.substr(4)) : std::nullopt;
      if (!n) throw Malformed(gpus);
      slots = *n;
    }
    if (slots < 1) throw UserError("--gpus cpu:N needs N >= 1");
    p.capacity = Capacity{slots, false};
    if (cpus) p.topology = CpuSlots(slots, *cpus);
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
        throw UserError(fmt::format("--gpus '{}': GPU {} listed twice", gpus, *position));
      if (!inherited && *position < static_cast<int>(listed.size())) {
        p.devices.push_back(item);  // no inherited limit: positions are the driver's indices
      } else if (!inherited) {
        throw UserError(
            fmt::format("--gpus '{}': GPU {} is not on this machine: the driver lists {} GPU(s){}",
                        gpus, *position, listed.size(),
                        listed.empty() ? "; use --gpus cpu:N to run ranks on CPU" : ""));
      } else if (*position < static_cast<int>(visible.size())) {
        p.devices.push_back(visible[*position]);
      } else {
        throw UserError(fmt::format(
            "--gpus '{}': GPU {} is not visible: CUDA_VISIBLE_DEVICES='{}' leaves {} GPU(s), "
            "numbered 0 to {} in --gpus",
            gpus, *position, *inherited, visible.size(), static_cast<int>(visible.size()) - 1));
      }
    }
    if (p.devices.empty()) throw Malformed(gpus);
  }
  if (p.devices.empty()) {
    p.capacity = Capacity{cores, false};
    if (cpus) p.topology = CpuSlots(cores, *cpus);
    return p;
  }
  p.capacity = Capacity{static_cast<int>(p.devices.size()), true};
  p.device_name = NameOf(p.devices.front(), listed);
  for (const std::string& device : p.devices) {
    const GpuInfo* gpu = Find(device, listed);
    p.uuids.push_back(gpu ? gpu->uuid : device.rfind("GPU-", 0) == 0 ? device : "");
    SlotTopology where;
    if (gpu) {
      where.numa_node = gpu->numa_node;
      where.nvlink_island = gpu->nvlink_island;
    }
    p.topology.push_back(where);
  }
  return p;
}

std::vector<SlotTopology> CpuSlots(int slots, const CpuTopology& cpus) {
  std::vector<SlotTopology> result;
  if (cpus.cpus.empty() || slots < 1) return std::vector<SlotTopology>(std::max(0, slots));
  const std::size_t per_slot = std::max<std::size_t>(1, cpus.cpus.size() / slots);
  std::map<int, std::vector<int>> by_node;  // node (-1: not known) -> its cores, ascending
  for (int cpu : cpus.cpus) {
    auto node = cpus.numa_node_of.find(cpu);
    by_node[node == cpus.numa_node_of.end() ? -1 : node->second].push_back(cpu);
  }
  auto carve = [&](const std::vector<int>& cores, std::size_t from) {
    SlotTopology slot;
    slot.cpus.assign(cores.begin() + from, cores.begin() + from + per_slot);
    std::set<int> nodes;
    for (int cpu : slot.cpus) {
      auto node = cpus.numa_node_of.find(cpu);
      nodes.insert(node == cpus.numa_node_of.end() ? -1 : node->second);
    }
    if (nodes.size() == 1 && *nodes.begin() >= 0) slot.numa_node = *nodes.begin();
    result.push_back(std::move(slot));
  };
  std::vector<int> leftover;
  for (const auto& [node, cores] : by_node) {
    std::size_t used = 0;
    for (; used + per_slot <= cores.size() && static_cast<int>(result.size()) < slots;
         used += per_slot)
      carve(cores, used);
    leftover.insert(leftover.end(), cores.begin() + used, cores.end());
  }
  for (std::size_t used = 0;
       used + per_slot <= leftover.size() && static_cast<int>(result.size()) < slots;
       used += per_slot)
    carve(leftover, used);
  // More slots than cores: the slots made so far are shared, round-robin.
  for (std::size_t i = 0, made = result.size(); static_cast<int>(result.size()) < slots; ++i)
    result.push_back(result[i % made]);
  return result;
}

nlohmann::json PlacementJson(const Placement& placement, const std::vector<int>& slots,
                             const std::string& reason) {
  nlohmann::json j = {{"slots", slots}};
  const auto known = [&](int slot) {
    return slot >= 0 && slot < static_cast<int>(placement.topology.size());
  };
  nlohmann::json numa = nlohmann::json::array();
  for (int slot : slots)
    numa.push_back(known(slot) && placement.topology[slot].numa_node
                       ? nlohmann::json(*placement.topology[slot].numa_node)
                       : nlohmann::json());
  if (placement.capacity.on_gpu) {
    nlohmann::json devices = nlohmann::json::array(), islands = nlohmann::json::array();
    for (int slot : slots) {
      devices.push_back(placement.devices.at(slot));
      const int island = known(slot) ? placement.topology[slot].nvlink_island : -1;
      islands.push_back(island >= 0 ? nlohmann::json(island) : nlohmann::json());
    }
    j["devices"] = devices;
    j["nvlink_islands"] = islands;
    j["numa_nodes"] = numa;
  } else if (!slots.empty() && known(slots.front()) &&
             !placement.topology[slots.front()].cpus.empty()) {
    nlohmann::json cpus = nlohmann::json::array();
    for (int slot : slots) cpus.push_back(FormatCpuList(placement.topology.at(slot).cpus));
    j["cpus"] = cpus;
    j["numa_nodes"] = numa;
  }
  if (!reason.empty()) j["reason"] = reason;
  return j;
}

SlotPool::SlotPool(int slots, PlacementPolicy policy, std::vector<SlotTopology> topology)
    : held_(std::max(0, slots), false), policy_(policy), topology_(std::move(topology)) {
  topology_.resize(held_.size());
}

std::optional<std::vector<int>> SlotPool::Acquire(int count, std::string* reason) {
  if (count < 1 || count > size()) return std::nullopt;
  if (policy_ == PlacementPolicy::kExclusive && held() > 0) return std::nullopt;
  std::vector<int> free;
  for (int i = 0; i < size(); ++i)
    if (!held_[i]) free.push_back(i);
  if (static_cast<int>(free.size()) < count) return std::nullopt;

  // Each level groups the free slots by a key; slots whose key is not known join no group.
  struct Level {
    const char* what;
    std::function<std::optional<std::pair<int, int>>(const SlotTopology&)> key;
  };
  using Key = std::optional<std::pair<int, int>>;
  const Level levels[] = {
      {"one NVLink island ({}) and NUMA node ({})",
       [](const SlotTopology& t) -> Key {
         if (t.nvlink_island < 0 || !t.numa_node) return std::nullopt;
         return std::pair(t.nvlink_island, *t.numa_node);
       }},
      {"one NVLink island ({})",
       [](const SlotTopology& t) -> Key {
         if (t.nvlink_island < 0) return std::nullopt;
         return std::pair(t.nvlink_island, 0);
       }},
      {"one NUMA node ({})",
       [](const SlotTopology& t) -> Key {
         if (!t.numa_node) return std::nullopt;
         return std::pair(*t.numa_node, 0);
       }},
  };
  bool any_topology = false;
  for (const Level& level : levels) {
    std::map<std::pair<int, int>, std::vector<int>> groups;
    for (int slot : free)
      if (Key key = level.key(topology_[slot])) groups[*key].push_back(slot);
    any_topology = any_topology || !groups.empty();
    const std::pair<const std::pair<int, int>, std::vector<int>>* best = nullptr;
    for (const auto& group : groups)
      if (static_cast<int>(group.second.size()) >= count &&
          (!best || group.second.size() < best->second.size()))
        best = &group;
    if (!best) continue;
    std::vector<int> slots(best->second.begin(), best->second.begin() + count);
    for (int i : slots) held_[i] = true;
    if (reason)
      *reason = fmt::format(fmt::runtime(level.what), best->first.first, best->first.second);
    return slots;
  }
  std::vector<int> slots(free.begin(), free.begin() + count);
  for (int i : slots) held_[i] = true;
  if (reason)
    *reason = any_topology && count > 1
                  ? fmt::format("no NVLink island or NUMA node had {} free slots", count)
                  : "";
  return slots;
}

void SlotPool::Release(const std::vector<int>& slots) {
  for (int i : slots)
    if (i >= 0 && i < size()) held_[i] = false;
}

int SlotPool::held() const { return static_cast<int>(std::count(held_.begin(), held_.end(), true)); }

}  // namespace ditbench
