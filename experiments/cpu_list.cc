#include "experiments/cpu_list.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

namespace ditbench {
namespace {

std::string Trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::optional<int> Number(const std::string& text) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(text);
}

}  // namespace

std::optional<std::vector<int>> ParseCpuList(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(Trim(text));
  for (std::string item; std::getline(in, item, ',');) {
    item = Trim(item);
    if (item.empty()) continue;
    const auto dash = item.find('-');
    const auto first = Number(item.substr(0, dash));
    const auto last = dash == std::string::npos ? first : Number(item.substr(dash + 1));
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
