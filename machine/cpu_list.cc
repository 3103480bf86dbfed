#include "machine/cpu_list.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "machine/text_fields.h"

namespace ditbench {

std::optional<std::vector<int>> ParseCpuList(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(TrimBlanks(text));
  for (std::string item; std::getline(in, item, ',');) {
    item = TrimBlanks(item);
    if (item.empty()) continue;
    const auto dash = item.find('-');
    const auto first = SmallNumber(item.substr(0, dash));
    const auto last = dash == std::string::npos ? first : SmallNumber(item.substr(dash + 1));
    if (!first || !last || *last < *first) return std::nullopt;
    for (int cpu = *first; cpu <= *last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string text;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return text;
}

int CpuThreadsPerRank(const char* rank_cpus, int cores, int local_world_size) {
  if (rank_cpus != nullptr)
    if (auto pinned = ParseCpuList(rank_cpus); pinned && !pinned->empty())
      return static_cast<int>(pinned->size());
  return std::max(1, cores / std::max(1, local_world_size));
}

}  // namespace ditbench
