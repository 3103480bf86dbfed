#include "launch/slurm/slurm_cluster.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "launch/slurm/slurm_client.h"

namespace ditbench {
namespace {

// GPUs in one gres field: the count of its "gpu:..." entry, 0 without one.
int GpusIn(const std::string& gres) {
  std::stringstream entries(gres);
  for (std::string entry; std::getline(entries, entry, ',');) {
    if (entry.rfind("gpu:", 0) != 0) continue;
    const std::string spec = entry.substr(0, entry.find('('));  // drop "(S:0-1)"
    const std::string count = spec.substr(spec.rfind(':') + 1);
    if (!count.empty() && count.find_first_not_of("0123456789") == std::string::npos)
      return std::stoi(count);
  }
  return 0;
}

}  // namespace

std::optional<SlurmPartition> ParseSinfo(const std::string& text) {
  std::istringstream lines(text);
  SlurmPartition partition;
  std::optional<int> smallest;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string count, gres;
    if (!(fields >> count >> gres)) continue;
    if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos) continue;
    partition.nodes += std::stoi(count);
    const int gpus = GpusIn(gres);
    smallest = smallest ? std::min(*smallest, gpus) : gpus;
  }
  if (!smallest) return std::nullopt;
  partition.gpus_per_node = *smallest;
  return partition;
}

std::optional<SlurmPartition> QuerySlurmPartition(const std::string& partition,
                                                  std::string* error) {
  std::vector<std::string> args = {"-h", "-o", "%D %G"};
  if (!partition.empty()) args.push_back("--partition=" + partition);
  const ProgramOutput out = RunProgram("sinfo", args);
  auto parsed = out.exit_code == 0 ? ParseSinfo(out.text) : std::nullopt;
  if (!parsed && error) {
    std::string said = out.text.substr(0, 300);
    while (!said.empty() && said.back() == '\n') said.pop_back();
    std::replace(said.begin(), said.end(), '\n', ' ');  // one line
    *error = fmt::format("sinfo{} said nothing usable (exit {}): {}",
                         partition.empty() ? "" : " --partition=" + partition, out.exit_code,
                         said);
  }
  return parsed;
}

std::optional<SlurmPartition> SlurmCapacity(const std::string& partition, int gpus_per_node,
                                            int nodes, std::string* reason,
                                            const SinfoQuery& sinfo) {
  std::string error;
  std::optional<SlurmPartition> queried;
  if (gpus_per_node <= 0 || nodes <= 0) queried = sinfo(partition, &error);
  SlurmPartition capacity;
  capacity.gpus_per_node = gpus_per_node > 0 ? gpus_per_node
                           : queried         ? queried->gpus_per_node
                                             : 0;
  capacity.nodes = nodes > 0 ? nodes : queried && queried->nodes > 0 ? queried->nodes : 1;
  if (capacity.gpus_per_node > 0) return capacity;
  if (reason) *reason = error.empty() ? "sinfo lists none" : error;
  return std::nullopt;
}

}  // namespace ditbench
