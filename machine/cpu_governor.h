// The CPU frequency governors of this machine (cpufreq's scaling_governor of each CPU), for
// `ditbench selfcheck`: a governor other than "performance" lets the cores' clocks wander
// with load, so that the same work takes a different time from one trial to the next.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace ditbench {

// How many CPUs use each governor ({"performance": 2}), from
// `sys_cpu`/cpu<N>/cpufreq/scaling_governor; empty when none is readable (no cpufreq: a VM, a
// container, or a kernel without it). Names are made safe to print.
std::map<std::string, int> CpuGovernors(
    const std::filesystem::path& sys_cpu = "/sys/devices/system/cpu");

}  // namespace ditbench
