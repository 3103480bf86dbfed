// How many of a trial's threads share each core, or ranks each device: the factor by which
// time-sharing stretches a rank's time. A CPU trial whose ranks x threads per rank exceed the
// cores (4 ranks of one thread on 2 cores: 2), or GPU ranks time-sliced on fewer devices (MPS,
// or a future placement that puts two ranks on one GPU), run each rank only part of the time.
// The planner's cost model prices it (plan/cost_model.h); the analytic estimate stretches its
// communication by it (plan/sweep_plan.h). Pure.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

namespace ditbench {

// `threads` runnable threads on `cores` cores (or ranks on devices): max(1, threads / cores);
// 1 when `cores` is not known (<= 0).
double SharingFactor(double threads, double cores);

// `ranks` CPU ranks on a machine of `cores` cores, not pinned: each starts cores / ranks
// threads, at least one (CpuThreadsPerRank, as the worker does), so beyond `cores` ranks they
// time-share.
double UnpinnedCpuSharing(int ranks, int cores);

// `ranks` CPU ranks each pinned to a slot of max(1, cores / slots) cores (`run --policy pack`
// on `slots` slots, machine/placement.h: CpuSlots): one thread per core of its own; with more
// slots than cores, slots share cores round-robin.
double PinnedCpuSharing(int ranks, int cores, int slots);

// The factor of a trial as its database records it: `placement` is trials.placement_json
// (machine/placement.h: PlacementJson), `ranks` its world size, `cpu_cores` the cores of the
// host its CPU ranks ran on (the campaign's environment; nullopt: not known, or a GPU trial).
//  * "devices" (GPU): ranks / distinct devices;
//  * "cpus" (pinned CPU ranks): the threads (one per listed core, summed over the ranks) / the
//    distinct cores they cover;
//  * otherwise CPU ranks not pinned: UnpinnedCpuSharing(ranks, cpu_cores).
// 1 when nothing says otherwise (an older database without placement, an unknown host).
double RecordedSharing(const nlohmann::json& placement, int ranks, std::optional<int> cpu_cores);

}  // namespace ditbench
