// CPU lists as Linux writes them ("0-3,8,10-11": sysfs, /proc/<pid>/status, taskset), and how
// many threads a CPU rank should start. Torch-free: the coordinator pins packed CPU ranks to
// cores (machine/placement.h) and tells each rank which through DITBENCH_RANK_CPUS
// (kRankCpusVariable, contract/worker_environment.h); the worker sizes its thread pool from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ditbench {

// "0-3,8,10-11" <-> {0,1,2,3,8,10,11} (ascending, no duplicates). ParseCpuList returns nullopt
// for malformed text; "" is the empty list.
std::optional<std::vector<int>> ParseCpuList(const std::string& text);
std::string FormatCpuList(const std::vector<int>& cpus);

// Threads for one CPU rank: the number of its cores when it was pinned (`rank_cpus`, the value
// of DITBENCH_RANK_CPUS, may be null; empty or unset: not pinned), else `cores` shared by the
// node's `local_world_size` ranks; at least one.
int CpuThreadsPerRank(const char* rank_cpus, int cores, int local_world_size);

}  // namespace ditbench
