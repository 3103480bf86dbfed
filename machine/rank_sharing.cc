#include "machine/rank_sharing.h"

#include <algorithm>
#include <set>
#include <string>

#include "machine/cpu_list.h"

namespace ditbench {

double SharingFactor(double threads, double cores) {
  if (!(cores > 0)) return 1.0;
  return std::max(1.0, threads / cores);
}

double UnpinnedCpuSharing(int ranks, int cores) {
  if (cores <= 0) return 1.0;
  ranks = std::max(1, ranks);
  return SharingFactor(double(ranks) * CpuThreadsPerRank(nullptr, cores, ranks), cores);
}

double PinnedCpuSharing(int ranks, int cores, int slots) {
  if (cores <= 0) return 1.0;
  const int per_slot = std::max(1, cores / std::max(1, slots));
  return SharingFactor(double(std::max(1, ranks)) * per_slot, cores);
}

double RecordedSharing(const nlohmann::json& placement, int ranks, std::optional<int> cpu_cores) {
  if (placement.is_object()) {
    if (const auto devices = placement.find("devices");
        devices != placement.end() && devices->is_array() && !devices->empty()) {
      std::set<std::string> distinct;
      for (const auto& d : *devices) distinct.insert(d.is_string() ? d.get<std::string>() : d.dump());
      return SharingFactor(double(devices->size()), double(distinct.size()));
    }
    if (const auto cpus = placement.find("cpus"); cpus != placement.end() && cpus->is_array()) {
      std::set<int> covered;
      double threads = 0;
      for (const auto& list : *cpus) {
        const auto parsed = list.is_string() ? ParseCpuList(list.get<std::string>()) : std::nullopt;
        if (!parsed || parsed->empty()) return 1.0;  // not as PlacementJson writes it
        threads += double(parsed->size());
        covered.insert(parsed->begin(), parsed->end());
      }
      if (!covered.empty()) return SharingFactor(threads, double(covered.size()));
    }
  }
  return cpu_cores ? UnpinnedCpuSharing(ranks, *cpu_cores) : 1.0;
}

}  // namespace ditbench
