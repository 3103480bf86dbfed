// Facts about the host that the coordinator and the worker both record.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ditbench {

std::string Hostname();

// The text of a /proc file, "" when it cannot be read. Another process's files vanish with it,
// even between open and read (ESRCH), which a std::ifstream reports by throwing from its
// buffer: a process that ends while ditbench samples it is simply not there. At most 1 MiB.
std::string ReadProcText(const std::string& path);
// The "model name" line of /proc/cpuinfo, or "unknown".
std::string CpuModel();
// Environment variables whose names start with one of `prefixes`, as a JSON object.
nlohmann::json VariablesWithPrefixes(std::initializer_list<const char*> prefixes);
// The variables that change results and are recorded with every campaign (coordinator and
// worker alike): NCCL_*, CUDA_*, OMP_*, TORCH_*, PYTORCH_*, ONEDNN_*, DNNL_*, MKL_*, KMP_*,
// CUBLAS_*, CUBLASLT_*.
nlohmann::json RecordedVariables();
// The non-empty lines a program prints on stdout (stderr is discarded); empty when it cannot
// run. argv[0] is looked up in PATH; nothing goes through a shell, so a path with quotes or
// `;` is only a path. For probes such as nvidia-smi that may be absent.
std::vector<std::string> CommandOutputLines(const std::vector<std::string>& argv);

}  // namespace ditbench
