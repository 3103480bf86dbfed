#include "machine/gpu_discovery.h"

#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "machine/gpu_sources.h"
#include "machine/gpu_topology.h"
#include "machine/host_info.h"
#include "machine/text_fields.h"

namespace ditbench {

std::optional<GpuInfo> ParseNvidiaSmiQueryLine(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(TrimBlanks(field));
  const std::optional<int> index = fields.size() == 5 ? SmallNumber(fields[0]) : std::nullopt;
  if (!index) return std::nullopt;
  GpuInfo gpu;
  gpu.index = *index;
  gpu.uuid = fields[1];
  gpu.name = fields[2];
  if (!fields[3].empty() && fields[3].size() < 12 &&
      fields[3].find_first_not_of("0123456789") == std::string::npos)
    gpu.memory_mb = std::stoll(fields[3]);
  gpu.pci_bus_id = fields[4];
  return gpu;
}

nlohmann::json ToJson(const GpuListing& listing) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuInfo& gpu : listing.gpus) {
    nlohmann::json j = {{"index", gpu.index}, {"name", gpu.name}, {"uuid", gpu.uuid}};
    if (gpu.memory_mb > 0) j["memory_mb"] = gpu.memory_mb;
    if (!gpu.pci_bus_id.empty()) j["pci_bus_id"] = gpu.pci_bus_id;
    if (gpu.numa_node) j["numa_node"] = *gpu.numa_node;
    if (gpu.nvlink_island >= 0) j["nvlink_island"] = gpu.nvlink_island;
    gpus.push_back(std::move(j));
  }
  return {{"source", listing.source}, {"skipped", listing.skipped}, {"gpus", gpus}};
}

std::string Describe(const GpuListing& listing) {
  std::string skipped;
  for (const auto& line : listing.skipped) skipped += (skipped.empty() ? "" : "; ") + line;
  if (listing.gpus.empty())
    return skipped.empty() ? fmt::format("no GPU found ({} lists none)", listing.source)
                           : "no GPU found (" + skipped + ")";
  std::string text = fmt::format("{} GPU(s) from {}", listing.gpus.size(), listing.source);
  if (!skipped.empty()) text += " (" + skipped + ")";
  return text;
}

AssumedGpus::AssumedGpus(int count, std::string name) {
  for (int i = 0; i < count; ++i) {
    GpuInfo gpu;
    gpu.name = name;
    gpu.index = i;
    gpus_.push_back(gpu);
  }
}

DriverGpuDiscovery::DriverGpuDiscovery(std::vector<std::unique_ptr<GpuSource>> sources,
                                       TopologyStep add_topology)
    : sources_(std::move(sources)), add_topology_(std::move(add_topology)) {}

std::optional<std::string> DriverGpuDiscovery::InheritedVisibleDevices() const {
  const char* value = std::getenv("CUDA_VISIBLE_DEVICES");
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

GpuListing DriverGpuDiscovery::Listing() const {
  if (listing_) return *listing_;
  GpuListing listing;
  listing.source = "none";
  for (const auto& source : sources_) {
    std::string why_not;
    if (auto gpus = source->List(&why_not)) {
      listing.gpus = std::move(*gpus);
      listing.source = source->Name();
      if (add_topology_) add_topology_(listing.gpus);
      break;
    }
    listing.skipped.push_back(source->Name() + ": " + why_not);
  }
  listing_ = listing;
  return listing;
}

std::unique_ptr<GpuDiscovery> MachineGpuDiscovery() {
  std::vector<std::unique_ptr<GpuSource>> sources;
  sources.push_back(std::make_unique<NvmlGpuSource>());
  sources.push_back(std::make_unique<CudaDriverGpuSource>());
  sources.push_back(std::make_unique<NvidiaSmiGpuSource>());
  TopologyInputs inputs;
  inputs.nvidia_smi_topo = [] { return CommandOutputLines({"nvidia-smi", "topo", "-m"}); };
  return std::make_unique<DriverGpuDiscovery>(
      std::move(sources), [inputs](std::vector<GpuInfo>& gpus) { AddTopology(gpus, inputs); });
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
