#include "machine/gpu_topology.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

#include "machine/text_fields.h"


namespace ditbench {
namespace {

std::string ReadLine(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return TrimBlanks(line);
}

// Union-find over small integer ids.
class Components {
 public:
  explicit Components(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  std::size_t Find(std::size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void Join(std::size_t a, std::size_t b) {
    a = Find(a), b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<std::size_t> parent_;
};

// Islands from components over GPUs [0, n): a GPU's island is its component's lowest GPU, for
// GPUs in `linked`; -1 for the others.
std::vector<int> IslandsOf(Components& components, std::size_t n, const std::vector<bool>& linked) {
  std::vector<int> islands(n, -1);
  for (std::size_t i = 0; i < n; ++i)
    if (linked[i]) islands[i] = static_cast<int>(components.Find(i));
  return islands;
}

}  // namespace

std::string SysfsPciAddress(const std::string& bus_id) {
  std::string id = TrimBlanks(bus_id);
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto colon = id.find(':');
  // "00000000:18:00.0": an eight-digit domain (NVML) is written with four in sysfs.
  if (colon == 8 && id.compare(0, 4, "0000") == 0) id.erase(0, 4);
  return id;
}

std::optional<int> PciNumaNode(const std::string& bus_id, const std::filesystem::path& sys) {
  if (bus_id.empty()) return std::nullopt;
  const std::string text =
      ReadLine(sys / "bus/pci/devices" / SysfsPciAddress(bus_id) / "numa_node");
  return SmallNumber(text);  // "-1" (unknown) is not a number here
}

std::vector<int> NvlinkIslands(const std::vector<std::vector<std::string>>& endpoints,
                               const std::vector<std::string>& own) {
  const std::size_t n = own.size();
  std::map<std::string, std::size_t> id;  // bus id -> node: GPUs first, then switches
  for (std::size_t i = 0; i < n; ++i)
    if (!own[i].empty()) id.emplace(SysfsPciAddress(own[i]), i);
  std::size_t next = n;
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::vector<bool> linked(n, false);
  for (std::size_t i = 0; i < n && i < endpoints.size(); ++i)
    for (const std::string& far : endpoints[i]) {
      auto [it, inserted] = id.emplace(SysfsPciAddress(far), next);
      if (inserted) ++next;
      edges.emplace_back(i, it->second);
      linked[i] = true;
      if (it->second < n) linked[it->second] = true;
    }
  Components components(next);
  for (auto [a, b] : edges) components.Join(a, b);
  // A component's lowest node is a GPU whenever it holds one (GPUs have the lowest ids).
  return IslandsOf(components, n, linked);
}

SmiTopology ParseNvidiaSmiTopology(const std::vector<std::string>& lines) {
  static const std::regex kColour("\x1b\\[[0-9;]*m");
  SmiTopology topology;
  std::vector<std::string> header;
  for (const std::string& raw : lines) {
    const std::string line = std::regex_replace(raw, kColour, "");
    std::vector<std::string> cells;
    std::stringstream in(line);
    for (std::string cell; std::getline(in, cell, '\t');) cells.push_back(TrimBlanks(cell));
    if (cells.empty()) continue;
    if (header.empty()) {
      if (std::find(cells.begin(), cells.end(), "GPU0") != cells.end()) header = cells;
      continue;
    }
    if (cells[0].rfind("GPU", 0) != 0) continue;  // NIC rows, the legend
    const auto row = SmallNumber(cells[0].substr(3));
    if (!row) continue;
    for (std::size_t c = 1; c < cells.size() && c < header.size(); ++c) {
      if (header[c].rfind("GPU", 0) == 0 && cells[c].rfind("NV", 0) == 0) {
        if (auto peer = SmallNumber(header[c].substr(3)))
          topology.nvlink_peers[*row].push_back(*peer);
      } else if (header[c] == "NUMA Affinity") {
        if (auto node = SmallNumber(cells[c])) topology.numa_node[*row] = *node;
      }
    }
  }
  return topology;
}

void AddTopology(std::vector<GpuInfo>& gpus, const TopologyInputs& inputs) {
  const std::size_t n = gpus.size();
  for (GpuInfo& gpu : gpus) gpu.numa_node = PciNumaNode(gpu.pci_bus_id, inputs.sys);
  const bool from_driver = std::any_of(gpus.begin(), gpus.end(), [](const GpuInfo& gpu) {
    return !gpu.nvlink_endpoints.empty();
  });
  if (from_driver) {
    std::vector<std::vector<std::string>> endpoints;
    std::vector<std::string> own;
    for (const GpuInfo& gpu : gpus) {
      endpoints.push_back(gpu.nvlink_endpoints);
      own.push_back(gpu.pci_bus_id);
    }
    const std::vector<int> islands = NvlinkIslands(endpoints, own);
    for (std::size_t i = 0; i < n; ++i) gpus[i].nvlink_island = islands[i];
    return;
  }
  if (!inputs.nvidia_smi_topo || n == 0) return;
  const SmiTopology smi = ParseNvidiaSmiTopology(inputs.nvidia_smi_topo());
  // Rows are nvidia-smi's indices; a GPU without one is taken to be at its position.
  std::map<int, std::size_t> position;
  for (std::size_t i = 0; i < n; ++i)
    position[gpus[i].index >= 0 ? gpus[i].index : static_cast<int>(i)] = i;
  Components components(n);
  std::vector<bool> linked(n, false);
  for (const auto& [row, peers] : smi.nvlink_peers) {
    auto a = position.find(row);
    if (a == position.end()) continue;
    for (int peer : peers) {
      auto b = position.find(peer);
      if (b == position.end()) continue;
      components.Join(a->second, b->second);
      linked[a->second] = linked[b->second] = true;
    }
  }
  const std::vector<int> islands = IslandsOf(components, n, linked);
  for (std::size_t i = 0; i < n; ++i) gpus[i].nvlink_island = islands[i];
  for (const auto& [row, node] : smi.numa_node)
    if (auto p = position.find(row); p != position.end() && !gpus[p->second].numa_node)
      gpus[p->second].numa_node = node;
}

CpuTopology ReadCpuTopology(const std::filesystem::path& sys) {
  CpuTopology topology;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) topology.cpus.push_back(cpu);
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(sys / "devices/system/node", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) != 0) continue;
    const auto node = SmallNumber(name.substr(4));
    if (!node) continue;
    if (auto cpus = ParseCpuList(ReadLine(entry.path() / "cpulist")))
      for (int cpu : *cpus) topology.numa_node_of[cpu] = *node;
  }
  return topology;
}

}  // namespace ditbench
