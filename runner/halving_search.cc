#include "runner/halving_search.h"

#include <map>
#include <optional>

#include "plan/halving.h"

namespace ditbench {

void RunHalving(const SweepSpec& spec, const SweepPlan& plan, const TrialSelection& selection,
                ResultsReader& db, std::int64_t campaign, Rerun rerun,
                const std::set<std::string>& busy, const std::set<std::string>& live,
                const RunRound& run_round, RunStatus& status) {
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < plan.trials.size(); ++i)
    if (!live.count(plan.trials[i].key) && selection.Selects(plan.trials[i].key))
      candidates.push_back(i);
  for (int round = 0;; ++round) {
    const auto statuses = db.TrialStatuses(campaign);
    const auto launch_statuses = db.LaunchStatuses(campaign);
    std::vector<QueuedTrial> queue;
    for (std::size_t i : candidates) {
      const PlannedTrial& t = plan.trials[i];
      auto trial_status = statuses.find(t.key);
      const std::optional<TrialStatus> recorded =
          trial_status == statuses.end() ? std::nullopt : std::optional(trial_status->second);
      std::optional<TrialStatus> launch;
      if (auto found = launch_statuses.find(t.key); found != launch_statuses.end())
        if (auto l = found->second.find(round); l != found->second.end()) launch = l->second;
      if (!RunsHalvingRound(t, round, recorded, launch, RerunFor(rerun, t.key, busy))) continue;
      if (t.invalid_reason) queue.push_back({i, &t, 0});
      else queue.push_back({i, &t, round, round == 0});
    }
    if (!run_round(queue)) return;
    // Who goes on: the fastest fraction of each group among the trials ok in this round.
    const auto now_launches = db.LaunchStatuses(campaign);
    std::map<std::string, double> latency;
    for (const ResultRow& row : db.Results({campaign}))
      // Its summary over its ok launches, also while a later launch is interrupted.
      if (row.latency_ms) latency[row.trial_key] = *row.latency_ms;
    std::vector<HalvingEntry> entries;
    for (std::size_t i : candidates) {
      const PlannedTrial& t = plan.trials[i];
      auto found = now_launches.find(t.key);
      if (t.invalid_reason || !latency.count(t.key) || found == now_launches.end()) continue;
      auto l = found->second.find(round);
      if (l == found->second.end() || l->second != TrialStatus::kOk) continue;
      entries.push_back({HalvingGroup(t.config), t.key, latency.at(t.key)});
    }
    const std::vector<std::string> survivors = HalvingSurvivors(entries, spec.halving_keep);
    if (survivors.empty()) {
      status.HalvingDone(round);
      return;
    }
    const std::set<std::string> going_on(survivors.begin(), survivors.end());
    std::vector<std::size_t> next;
    for (std::size_t i : candidates)
      if (going_on.count(plan.trials[i].key)) next.push_back(i);
    status.HalvingRoundDone(round, next.size(), entries.size(), spec.halving_keep);
    candidates = std::move(next);
  }
}

}  // namespace ditbench
