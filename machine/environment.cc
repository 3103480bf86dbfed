#include "machine/environment.h"

#include <thread>

#include "generated/build_id.h"
#include "machine/host_info.h"

namespace ditbench {

nlohmann::json CoordinatorEnvironment() {
  nlohmann::json env;
  env["host"] = Hostname();
  env["cpu_model"] = CpuModel();
  env["cpu_count"] = std::thread::hardware_concurrency();
  env["git_revision"] = DITBENCH_GIT_REVISION;
  env["git_dirty"] = DITBENCH_GIT_DIRTY;
  env["gpus"] = CommandOutputLines(
      {"nvidia-smi",
       "--query-gpu=index,name,driver_version,memory.total,pci.bus_id,clocks.max.sm",
       "--format=csv,noheader"});
  env["topology"] = CommandOutputLines({"nvidia-smi", "topo", "-m"});
  env["variables"] = RecordedVariables();
  return env;
}

}  // namespace ditbench
