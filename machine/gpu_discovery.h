// Which GPUs this coordinator may use, behind an interface so that placement is testable
// without GPUs: the GPUs the driver lists, and the CUDA_VISIBLE_DEVICES the coordinator
// inherited (from the user or a Slurm job), which limits and renumbers them.
//
// The real discovery asks the driver through the first GpuSource that can answer: NVML
// (libnvidia-ml.so.1), then the CUDA driver API (libcuda.so.1), then `nvidia-smi`; the
// libraries are loaded with dlopen at run time (machine/gpu_sources.h), so the coordinator
// starts on machines without a driver. Which source answered, and why the ones before it did
// not, is recorded with the campaign.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ditbench {

struct GpuInfo {
  GpuInfo() = default;
  GpuInfo(std::string name_, std::string uuid_) : name(std::move(name_)), uuid(std::move(uuid_)) {}

  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;  // "GPU-8e3c..." (may be empty)
  int index = -1;    // the driver's index (nvidia-smi's, PCI order); -1: not known
  std::int64_t memory_mb = 0;  // total memory; 0: not known
  std::string pci_bus_id;      // "00000000:18:00.0" as the driver writes it; empty: not known
  // The PCI bus ids at the far end of its active NVLinks (other GPUs, or NVSwitches), when the
  // source tells (NVML); empty otherwise.
  std::vector<std::string> nvlink_endpoints;
  // Topology (machine/gpu_topology.h): the NUMA node the GPU hangs off (sysfs), and its NVLink
  // island (GPUs joined by NVLink, directly or through NVSwitches, numbered by their lowest
  // position; -1: no active NVLink, or not known).
  std::optional<int> numa_node;
  int nvlink_island = -1;
};

// Where a list of GPUs came from, and why the sources tried before it did not answer.
struct GpuListing {
  std::vector<GpuInfo> gpus;
  std::string source;               // "nvml", "cuda", "nvidia-smi", or "none"
  std::vector<std::string> skipped;  // "nvml: libnvidia-ml.so.1 not loadable: ..." (one line each)
};

// {"source", "skipped": [...], "gpus": [{"index", "name", "uuid", "memory_mb",
// "pci_bus_id", "numa_node", "nvlink_island"}...]} (unknown fields left out): what a campaign records (environment "gpu_discovery").
nlohmann::json ToJson(const GpuListing& listing);

// One line for people: "8 GPU(s) from nvml" or "no GPU found (nvml: ...; cuda: ...)".
std::string Describe(const GpuListing& listing);

class GpuDiscovery {
 public:
  virtual ~GpuDiscovery() = default;
  // Every GPU the driver lists, in its order (index = position); empty without a GPU or driver.
  virtual std::vector<GpuInfo> ListGpus() const = 0;
  // The coordinator's CUDA_VISIBLE_DEVICES; nullopt when it is not set.
  virtual std::optional<std::string> InheritedVisibleDevices() const = 0;
  // Which source ListGpus() used and what was skipped; "given" for described machines and
  // fakes.
  virtual GpuListing Listing() const { return {ListGpus(), "given", {}}; }
};

// A machine described rather than probed: `count` GPUs named `name`, nothing inherited. What
// `plan --device NAME` assumes, so that a sweep for another machine is planned on this one.
class AssumedGpus final : public GpuDiscovery {
 public:
  AssumedGpus(int count, std::string name);
  std::vector<GpuInfo> ListGpus() const override { return gpus_; }
  std::optional<std::string> InheritedVisibleDevices() const override { return std::nullopt; }
  GpuListing Listing() const override { return {gpus_, "assumed", {}}; }

 private:
  std::vector<GpuInfo> gpus_;
};

// One way of asking the driver for its GPUs (machine/gpu_sources.h has the real ones).
class GpuSource {
 public:
  virtual ~GpuSource() = default;
  virtual std::string Name() const = 0;  // "nvml", "cuda", "nvidia-smi"
  // The GPUs in the driver's order; nullopt, with one line in *why_not, when this source
  // cannot tell (library missing, no driver, initialisation failed).
  virtual std::optional<std::vector<GpuInfo>> List(std::string* why_not) const = 0;
};

// Asks `sources` in order and keeps the first answer (an answer of zero GPUs included), then
// lets `add_topology` (may be empty) fill in each GPU's NUMA node and NVLink island. The
// listing is taken once, on first use, and kept. Thread-safety: none.
class DriverGpuDiscovery final : public GpuDiscovery {
 public:
  using TopologyStep = std::function<void(std::vector<GpuInfo>&)>;
  explicit DriverGpuDiscovery(std::vector<std::unique_ptr<GpuSource>> sources,
                              TopologyStep add_topology = nullptr);
  std::vector<GpuInfo> ListGpus() const override { return Listing().gpus; }
  std::optional<std::string> InheritedVisibleDevices() const override;
  GpuListing Listing() const override;

 private:
  std::vector<std::unique_ptr<GpuSource>> sources_;
  TopologyStep add_topology_;
  mutable std::optional<GpuListing> listing_;
};

// The real discovery of this machine: NVML, then the CUDA driver, then nvidia-smi; NUMA nodes
// from /sys, NVLink islands from NVML or else `nvidia-smi topo -m`.
std::unique_ptr<GpuDiscovery> MachineGpuDiscovery();

// One line of `nvidia-smi --query-gpu=index,uuid,name,memory.total,pci.bus_id
// --format=csv,noheader,nounits` ("0, GPU-8e3c..., NVIDIA H100 80GB HBM3, 81559,
// 00000000:18:00.0") as a GpuInfo; nullopt for a line of another shape.
std::optional<GpuInfo> ParseNvidiaSmiQueryLine(const std::string& line);

// The entries of a CUDA_VISIBLE_DEVICES value, trimmed: indices ("4"), UUIDs ("GPU-8e3c...")
// or MIG names. As CUDA does, the list ends at the first empty or negative entry ("" and "-1"
// hide every GPU).
std::vector<std::string> ParseVisibleDevices(const std::string& value);

}  // namespace ditbench
