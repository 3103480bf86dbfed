// Where trials run: which devices the sweep may use (--gpus resolved against the GPUs this
// process can see), and which of them each trial in flight holds (SlotPool). Pure apart from
// the injected GpuDiscovery.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiments/validity.h"
#include "runner/gpu_discovery.h"

namespace ditbench {

struct Placement {
  Capacity capacity;
  // On GPU: the CUDA_VISIBLE_DEVICES entry of each usable GPU, by trial-facing position
  // (slot i runs on devices[i]); empty on CPU.
  std::vector<std::string> devices;
  // The UUID of each of those GPUs ("" when the driver does not say): how the driver names
  // them when it lists the processes on them (machine health).
  std::vector<std::string> uuids;
  std::string device_name = "cpu";  // the first GPU's name ("unknown GPU" if not known), or "cpu"
};

// Parses --gpus:
//  * "auto": every GPU visible to this process, else CPU with one slot per core;
//  * "0,1,3": those positions among the visible GPUs;
//  * "cpu" or "cpu:N": CPU with one slot per core, or N slots.
// The visible GPUs are the inherited CUDA_VISIBLE_DEVICES when it is set (a user's or Slurm's
// limit is respected, and positions map to its real entries, UUIDs included), else the GPUs
// the driver lists. Throws std::invalid_argument with a one-line message on a malformed value
// or a position that is not visible.
Placement ResolvePlacement(const std::string& gpus, const GpuDiscovery& discovery);

// How trials share the slots.
enum class PlacementPolicy {
  kExclusive,  // one trial at a time, whatever its size (the default: clean timings)
  kPack,       // several trials at once on disjoint slots
};
// "exclusive" or "pack"; nullopt for anything else.
std::optional<PlacementPolicy> ParsePlacementPolicy(const std::string& name);

// The slots (GPU positions or CPU slots) and which are held by trials in flight.
class SlotPool {
 public:
  SlotPool(int slots, PlacementPolicy policy) : held_(std::max(0, slots), false), policy_(policy) {}
  // Takes the lowest `count` free slots and returns their positions; nullopt when they are not
  // free now (exclusive: while any trial holds slots) or never can be (count > size()).
  std::optional<std::vector<int>> Acquire(int count);
  // Gives slots from Acquire() back.
  void Release(const std::vector<int>& slots);
  int size() const { return static_cast<int>(held_.size()); }
  int held() const;

 private:
  std::vector<bool> held_;
  PlacementPolicy policy_;
};

}  // namespace ditbench
