// Where GPUs and CPU cores sit: each GPU's NUMA node (sysfs) and NVLink island (NVML's active
// links, or `nvidia-smi topo -m`), and the cores this process may use grouped by NUMA node.
// Placement (machine/placement.h) uses it to keep a trial's ranks close together. Parsing and
// grouping are pure; the readers take the sysfs root as an argument so tests can build a fake
// tree.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "machine/cpu_list.h"  // ParseCpuList, FormatCpuList
#include "machine/gpu_discovery.h"

namespace ditbench {

// "00000000:18:00.0" (NVML, nvidia-smi) or "0000:18:00.0" (CUDA) as sysfs names the device:
// a four-digit domain, lower case ("0000:18:00.0").
std::string SysfsPciAddress(const std::string& bus_id);

// The NUMA node of a PCI device from <sys>/bus/pci/devices/<address>/numa_node; nullopt when
// the file is missing or says -1 (a machine with one node, or firmware that does not tell).
std::optional<int> PciNumaNode(const std::string& bus_id, const std::filesystem::path& sys);

// NVLink islands: GPUs joined by active NVLinks, directly or through a switch. `endpoints[i]`
// are the PCI bus ids at the far end of GPU i's active links (another GPU's, or an NVSwitch's);
// `own[i]` is GPU i's bus id. Returns each GPU's island, numbered by its lowest GPU position;
// -1 for a GPU without active links. Bus ids are compared as SysfsPciAddress() writes them.
std::vector<int> NvlinkIslands(const std::vector<std::vector<std::string>>& endpoints,
                               const std::vector<std::string>& own);

// What `nvidia-smi topo -m` says about each GPU row (GPU<n>, n = nvidia-smi's index).
struct SmiTopology {
  std::map<int, std::vector<int>> nvlink_peers;  // GPU index -> indices of NV<k> cells
  std::map<int, int> numa_node;                  // GPU index -> "NUMA Affinity" (when a number)
};
// Parses the matrix (tab-separated, header row first; colour codes and NIC rows ignored).
SmiTopology ParseNvidiaSmiTopology(const std::vector<std::string>& lines);

// Where the topology of listed GPUs comes from.
struct TopologyInputs {
  std::filesystem::path sys = "/sys";
  // Lines of `nvidia-smi topo -m`, asked only when the source gave no NVLink endpoints; empty:
  // not asked.
  std::function<std::vector<std::string>()> nvidia_smi_topo;
};

// Fills numa_node and nvlink_island of every GPU of `gpus` (in the driver's order).
void AddTopology(std::vector<GpuInfo>& gpus, const TopologyInputs& inputs);

// The cores this process may run on, by NUMA node.
struct CpuTopology {
  std::vector<int> cpus;            // ascending
  std::map<int, int> numa_node_of;  // cpu -> NUMA node; cpus missing here: node not known
};
// sched_getaffinity of this process, and <sys>/devices/system/node/node<N>/cpulist.
CpuTopology ReadCpuTopology(const std::filesystem::path& sys = "/sys");

}  // namespace ditbench
