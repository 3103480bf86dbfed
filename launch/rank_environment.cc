#include "launch/rank_environment.h"

#include <unistd.h>

#include <map>

#include "contract/worker_environment.h"
#include "machine/cpu_list.h"

namespace ditbench {

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** p = environ; p != nullptr && *p != nullptr; ++p) env.emplace_back(*p);
  return env;
}

std::vector<std::string> BuildRankEnvironment(const std::vector<std::string>& inherited,
                                              const LaunchRequest& request, int rank, int port,
                                              int listen_fd) {
  std::string visible;
  for (const auto& device : request.devices) visible += (visible.empty() ? "" : ",") + device;
  std::map<std::string, std::string> ours = {
      {"RANK", std::to_string(rank)},
      {"LOCAL_RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(request.world_size)},
      {"LOCAL_WORLD_SIZE", std::to_string(request.world_size)},
      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", std::to_string(port)},
      {"CUDA_VISIBLE_DEVICES", visible},
      {kTrialFileVariable, (request.run_dir / "trial.json").string()},
      {kResultDirVariable, request.run_dir.string()},
      // The cores the rank is pinned to ("" when not): the worker starts one thread per core.
      {kRankCpusVariable, rank < static_cast<int>(request.rank_cpus.size())
                              ? FormatCpuList(request.rank_cpus[rank])
                              : ""},
  };
  if (!request.python_path.empty()) {
    std::string python_path = request.python_path.string();
    for (const auto& entry : inherited)
      if (entry.starts_with("PYTHONPATH=") && entry.size() > 11)
        python_path.append(1, ':').append(entry, 11, std::string::npos);
    ours["PYTHONPATH"] = python_path;
  }
  std::vector<std::string> env;
  std::map<std::string, bool> seen;
  seen[kRendezvousFdVariable] = true;  // never inherited: only the launch that made it says it
  if (listen_fd >= 0)
    env.push_back(std::string(kRendezvousFdVariable) + "=" + std::to_string(listen_fd));
  for (const auto& entry : inherited) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = entry.substr(0, eq);
    if (ours.contains(name) || seen[name]) continue;
    seen[name] = true;
    env.push_back(entry);
  }
  for (const auto& [name, value] : ours) env.push_back(name + "=" + value);
  return env;
}

}  // namespace ditbench
