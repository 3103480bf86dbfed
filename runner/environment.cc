#include "runner/environment.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "experiments/host_info.h"
#include "generated/build_id.h"

namespace ditbench {
namespace {

// Each line of a command's output, or empty when it fails.
nlohmann::json Lines(const char* command) {
  nlohmann::json lines = nlohmann::json::array();
  FILE* pipe = ::popen(command, "r");
  if (!pipe) return lines;
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), pipe)) {
    std::string line = buffer;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  ::pclose(pipe);
  return lines;
}

}  // namespace

nlohmann::json CoordinatorEnvironment() {
  nlohmann::json env;
  env["host"] = Hostname();
  env["cpu_model"] = CpuModel();
  env["cpu_count"] = std::thread::hardware_concurrency();
  env["git_revision"] = DITBENCH_GIT_REVISION;
  env["git_dirty"] = DITBENCH_GIT_DIRTY;
  env["gpus"] = Lines(
      "nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id,"
      "clocks.max.sm --format=csv,noheader 2>/dev/null");
  env["topology"] = Lines("nvidia-smi topo -m 2>/dev/null");
  env["variables"] = VariablesWithPrefixes({"NCCL_", "CUDA_", "OMP_", "TORCH_"});
  return env;
}

}  // namespace ditbench
