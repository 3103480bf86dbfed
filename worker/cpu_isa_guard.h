// Keeps LibTorch's CPU kernels on instructions this machine can run, with no user variable.
//
// Before LibTorch runs its first oneDNN kernel, GuardCpuIsa() (1) respects an ISA cap the user
// set (ONEDNN_MAX_CPU_ISA or DNNL_MAX_CPU_ISA); (2) otherwise caps oneDNN below AMX where the
// CPU advertises AMX it cannot use (machine/cpu_features.h); (3) probes a bf16 and an fp16
// matmul in a forked child, and while the child dies of a signal, lowers the cap and probes
// again. The outcome is recorded with every trial (rank 0's environment, key `cpu_isa`).
//
// REQUIRES: called at the start of main(), before any LibTorch operation and before any
// thread is started (it forks). Every ditbench program that runs LibTorch on the CPU calls it:
// ditbench-worker, the torch test binaries, fidelity_bench.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "machine/cpu_features.h"

namespace ditbench {

// Applies the cap and returns the report (also kept for CpuIsaReport()).
nlohmann::json GuardCpuIsa();

// The same decision over given CPUID words and a given probe ("ok", "crashed: signal N", ...),
// for tests. Sets ONEDNN_MAX_CPU_ISA in this process's environment as GuardCpuIsa() does.
using IsaProbe = std::function<std::string()>;
nlohmann::json GuardCpuIsaWith(const CpuidLeaves& leaves, const IsaProbe& probe);
// The report of this process's GuardCpuIsa(), or null if it was not called.
const nlohmann::json& CpuIsaReport();

}  // namespace ditbench
