#include "plan/trial_selection.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/did_you_mean.h"

namespace ditbench {
namespace {

constexpr std::size_t kMaxNearMatches = 5;

// The plan's keys that `wanted` is likely a mistyped or shortened form of.
std::vector<std::string> NearMatches(const std::string& wanted,
                                     const std::vector<std::string>& keys) {
  std::vector<std::string> near;
  if (!wanted.empty()) {
    for (const std::string& key : keys)
      if (key.rfind(wanted, 0) == 0 && near.size() < kMaxNearMatches) near.push_back(key);
  }
  const std::string closest = DidYouMean(wanted, keys);
  if (!closest.empty() && std::find(near.begin(), near.end(), closest) == near.end())
    near.push_back(closest);
  return near;
}

}  // namespace

TrialSelectionResult SelectTrials(const std::string& sweep_name, const SweepPlan& plan,
                                  const std::vector<std::string>& only) {
  TrialSelectionResult result;
  std::vector<std::string> keys;
  for (const PlannedTrial& t : plan.trials) keys.push_back(t.key);
  for (const std::string& wanted : only) {
    if (std::find(keys.begin(), keys.end(), wanted) != keys.end()) {
      result.selection.keys.insert(wanted);
      continue;
    }
    const std::vector<std::string> near = NearMatches(wanted, keys);
    result.error = fmt::format(
        "--only '{}': not a trial key of sweep '{}' (expected one of its {} trial keys, as "
        "`ditbench plan` lists them); {}",
        wanted, sweep_name, keys.size(),
        near.empty() ? std::string("no key is near it")
                     : fmt::format("did you mean {}?", fmt::join(near, " or ")));
    result.selection.keys.clear();
    return result;
  }
  return result;
}

bool EveryTrialSettled(const SweepPlan& plan, const std::map<std::string, TrialStatus>& statuses) {
  for (const PlannedTrial& t : plan.trials) {
    auto found = statuses.find(t.key);
    if (found == statuses.end()) return false;
    const TrialStatus status = found->second;
    if (status == TrialStatus::kPending || status == TrialStatus::kRunning ||
        status == TrialStatus::kInterrupted)
      return false;
  }
  return true;
}

}  // namespace ditbench
