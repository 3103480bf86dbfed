#include "plan/halving.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/configuration_group.h"

namespace ditbench {
namespace {

std::int64_t Kept(std::int64_t n, double keep) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(keep * double(n) - 1e-9)));
}

}  // namespace

std::string HalvingGroup(const TrialConfig& config) { return ReportGroupOf(config).Text(); }

std::vector<std::string> HalvingSurvivors(const std::vector<HalvingEntry>& entries, double keep) {
  std::map<std::string, std::vector<const HalvingEntry*>> groups;
  for (const HalvingEntry& e : entries) groups[e.group].push_back(&e);
  std::vector<std::string> survivors;
  for (auto& [group, members] : groups) {
    if (members.size() < 2) continue;
    std::stable_sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return a->latency_ms < b->latency_ms;
    });
    const std::int64_t kept = Kept(static_cast<std::int64_t>(members.size()), keep);
    for (std::int64_t i = 0; i < kept; ++i) survivors.push_back(members[i]->trial_key);
  }
  return survivors;
}

std::vector<std::int64_t> HalvingRounds(std::int64_t n, double keep) {
  std::vector<std::int64_t> rounds;
  while (n > 1) {
    n = Kept(n, keep);
    rounds.push_back(n);
  }
  return rounds;
}

std::int64_t HalvingLaunches(const std::vector<std::int64_t>& group_sizes, double keep) {
  std::int64_t launches = 0;
  for (std::int64_t n : group_sizes) {
    launches += n;
    for (std::int64_t kept : HalvingRounds(n, keep)) launches += kept;
  }
  return launches;
}

}  // namespace ditbench
