// Where trials run: which devices the sweep may use (--gpus resolved against the GPUs this
// process can see, with where each sits), and which of them each trial in flight holds
// (SlotPool, topology-aware). Pure apart from the injected GpuDiscovery and CpuTopology.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/validity.h"
#include "machine/gpu_discovery.h"
#include "machine/gpu_topology.h"
#include "machine/placement_policy.h"

namespace ditbench {

// Where one slot sits: what keeps a trial's slots close together.
struct SlotTopology {
  std::optional<int> numa_node;  // not known: nullopt
  int nvlink_island = -1;        // GPU slots: the GPU's NVLink island; -1: none or not known
  std::vector<int> cpus;         // CPU slots under pack: the cores its rank is pinned to
};

struct Placement {
  Capacity capacity;
  // One per slot: where it sits (GPU: from discovery; CPU: CpuSlots()). Empty: nothing known.
  std::vector<SlotTopology> topology;
  // On GPU: the CUDA_VISIBLE_DEVICES entry of each usable GPU, by trial-facing position
  // (slot i runs on devices[i]); empty on CPU.
  std::vector<std::string> devices;
  // The UUID of each of those GPUs ("" when the driver does not say): how the driver names
  // them when it lists the processes on them (machine health).
  std::vector<std::string> uuids;
  std::string device_name = "cpu";  // the first GPU's name ("unknown GPU" if not known), or "cpu"
};

// Whether a --gpus value asks for CPU slots ("cpu", "cpu:N") rather than GPUs: the driver is
// then never asked. The one test of it, for every command and launcher.
bool AsksForCpu(std::string_view gpus);

// Parses --gpus:
//  * "auto": every GPU visible to this process, else CPU with one slot per core;
//  * "0,1,3": those positions among the visible GPUs;
//  * "cpu" or "cpu:N": CPU with one slot per core, or N slots.
// The visible GPUs are the inherited CUDA_VISIBLE_DEVICES when it is set (a user's or Slurm's
// limit is respected, and positions map to its real entries, UUIDs included), else the GPUs
// the driver lists. With `cpus` (given under --policy pack), CPU slots are pinned to cores
// (CpuSlots); without, CPU ranks share every core. Throws UserError with a one-line
// message on a malformed value or a position that is not visible.
Placement ResolvePlacement(const std::string& gpus, const GpuDiscovery& discovery,
                           const CpuTopology* cpus = nullptr);

// `slots` CPU slots over the cores of `cpus`: each gets max(1, cores / slots) cores, carved NUMA
// node by node so that a slot lies inside one node whenever one can hold it; with more slots
// than cores, slots share cores round-robin. No cores known: slots without cores (not pinned).
std::vector<SlotTopology> CpuSlots(int slots, const CpuTopology& cpus);

// What a trial on `slots` records about where it ran (trials.placement_json): "slots", on GPU
// "devices", "nvlink_islands" and "numa_nodes" (null: not known), on pinned CPU slots "cpus"
// (one list per rank, "0-3") and "numa_nodes", and "reason" when SlotPool gave one.
nlohmann::json PlacementJson(const Placement& placement, const std::vector<int>& slots,
                             const std::string& reason);

// The slots (GPU positions or CPU slots) and which are held by trials in flight.
//
// A trial's slots are chosen to sit close together, in this order of preference: inside one
// NVLink island and one NUMA node, inside one NVLink island, inside one NUMA node, anywhere.
// At the first level some group can satisfy, the group with the fewest free slots that still
// holds the trial is taken (best fit: large groups stay whole for large trials), and in it the
// lowest free slots. Without topology this is simply the lowest free slots.
class SlotPool {
 public:
  // `topology`: one per slot, or empty (nothing known).
  SlotPool(int slots, PlacementPolicy policy, std::vector<SlotTopology> topology = {});
  // Takes `count` free slots as above and returns their positions, ascending; `reason` (may be
  // null) says which level held them ("one NVLink island (0) and NUMA node (1)", "" without
  // topology). nullopt when they are not free now (exclusive: while any trial holds slots) or
  // never can be (count > size()).
  std::optional<std::vector<int>> Acquire(int count, std::string* reason = nullptr);
  // Gives slots from Acquire() back.
  void Release(const std::vector<int>& slots);
  int size() const { return static_cast<int>(held_.size()); }
  int held() const;

 private:
  std::vector<bool> held_;
  PlacementPolicy policy_;
  std::vector<SlotTopology> topology_;
};

}  // namespace ditbench
