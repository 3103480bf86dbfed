#include "runner/environment.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "generated/build_id.h"

extern char** environ;

namespace ditbench {
namespace {

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown";
}

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
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  env["host"] = host;
  env["cpu_model"] = CpuModel();
  env["cpu_count"] = std::thread::hardware_concurrency();
  env["git_revision"] = DITBENCH_GIT_REVISION;
  env["git_dirty"] = DITBENCH_GIT_DIRTY;
  env["gpus"] = Lines(
      "nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id,"
      "clocks.max.sm --format=csv,noheader 2>/dev/null");
  env["topology"] = Lines("nvidia-smi topo -m 2>/dev/null");
  nlohmann::json vars = nlohmann::json::object();
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    for (const char* prefix : {"NCCL_", "CUDA_", "OMP_", "TORCH_"})
      if (kv.rfind(prefix, 0) == 0) {
        auto eq = kv.find('=');
        vars[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
  }
  env["variables"] = vars;
  return env;
}

}  // namespace ditbench
