#include "plan/resume.h"

#include <algorithm>

#include <fmt/format.h>

#include "experiments/sweep_meaning.h"
#include "plan/budget_order.h"
#include "plan/spec_diff.h"

namespace ditbench {

bool IsFailure(TrialStatus s) {
  return s == TrialStatus::kFailed || s == TrialStatus::kOom || s == TrialStatus::kTimeout ||
         s == TrialStatus::kCrashed;
}

CampaignChoice ChooseCampaign(const std::vector<CampaignInfo>& campaigns,
                              const CampaignRecord& wanted, bool fresh, bool keep_campaign) {
  CampaignChoice choice;
  if (fresh) return choice;
  const CampaignInfo* newest = nullptr;
  for (const auto& c : campaigns) {
    if (c.record.environment.contains("bisect")) continue;  // one build's, for `bisect`
    if (c.record.sweep_name == wanted.sweep_name && (!newest || c.id > newest->id)) newest = &c;
  }
  if (!newest) return choice;
  // The same sweep written differently (a comment, a blank line) is the same campaign.
  const bool changed = newest->record.spec_hash != wanted.spec_hash &&
                       !SameSweepMeaning(newest->record.spec_text, wanted.spec_text);
  if (changed && !keep_campaign) {
    choice.changed_from = newest->id;
    choice.diff = SpecDiff(newest->record.spec_text, wanted.spec_text);
    return choice;
  }
  choice.resume = newest->id;
  return choice;
}

Rerun RerunFor(Rerun rerun, const std::string& key, const std::set<std::string>& busy) {
  if (rerun != Rerun::kBusy) return rerun;
  return busy.count(key) ? Rerun::kAll : Rerun::kNone;
}

ResumeVerdict JudgeResume(const PlannedTrial& trial, std::optional<TrialStatus> recorded,
                          Rerun rerun) {
  if (!recorded) return {true, ""};
  const std::string status(StatusName(*recorded));
  if (rerun == Rerun::kAll) return {true, fmt::format("run again (was {}; --rerun all)", status)};
  switch (*recorded) {
    case TrialStatus::kOk:
      return {false, "recorded ok: kept"};
    case TrialStatus::kSkipped:
      // Judged again against this machine: more GPUs or CPU slots may make it runnable.
      if (trial.invalid_reason)
        return {false, "recorded skipped: kept (" + *trial.invalid_reason + ")"};
      return {true, "run (skipped earlier; fits this machine now)"};
    default:
      break;
  }
  if (IsFailure(*recorded)) {
    if (rerun == Rerun::kFailed)
      return {true, fmt::format("run again (was {}; --rerun failed)", status)};
    return {false, fmt::format("recorded {}: kept (--rerun failed retries it)", status)};
  }
  return {true, fmt::format("run again (was {})", status)};  // interrupted, pending, running
}

bool RunsHalvingRound(const PlannedTrial& trial, int round, std::optional<TrialStatus> recorded,
                      std::optional<TrialStatus> launch, Rerun rerun) {
  if (trial.invalid_reason) return round == 0 && JudgeResume(trial, recorded, rerun).run;
  if (launch == TrialStatus::kOk && rerun != Rerun::kAll) return false;
  if (launch && IsFailure(*launch) && rerun == Rerun::kNone) return false;
  if (round > 0 && recorded && IsFailure(*recorded) && rerun == Rerun::kNone) return false;
  return true;
}

LaunchPlan PlanLaunches(const PlannedTrial& trial, int replicates,
                        std::optional<TrialStatus> recorded,
                        const std::map<int, TrialStatus>& launches, Rerun rerun) {
  replicates = std::max(replicates, 1);
  LaunchPlan plan;
  std::map<int, TrialStatus> by_launch = launches;
  if (by_launch.empty() && recorded) {
    // No launch rows: a skipped or pending trial, judged as a whole.
    const ResumeVerdict verdict = JudgeResume(trial, recorded, rerun);
    plan.note = verdict.note;
    if (verdict.run)
      for (int i = 0; i < (trial.invalid_reason ? 1 : replicates); ++i) plan.launches.push_back(i);
    return plan;
  }
  if (replicates == 1) {  // the trial's status is its one launch's: judged as before
    auto it = by_launch.find(0);
    const ResumeVerdict verdict = JudgeResume(
        trial, recorded || it == by_launch.end() ? recorded : std::optional(it->second), rerun);
    plan.note = verdict.note;
    if (verdict.run) plan.launches.push_back(0);
    return plan;
  }
  std::vector<std::string> kept, run;
  for (int i = 0; i < replicates; ++i) {
    auto it = by_launch.find(i);
    const std::optional<TrialStatus> status =
        it == by_launch.end() ? std::nullopt : std::optional(it->second);
    const ResumeVerdict verdict = JudgeResume(trial, status, rerun);
    const std::string what = status ? std::string(StatusName(*status)) : "not run";
    if (verdict.run) {
      plan.launches.push_back(i);
      run.push_back(fmt::format("{} ({})", i + 1, what));
    } else {
      kept.push_back(fmt::format("{} ({})", i + 1, what));
      if (status && IsFailure(*status)) break;  // a kept failure ends the trial
    }
  }
  if (trial.invalid_reason && !plan.launches.empty()) plan.launches = {0};
  const auto join = [](const std::vector<std::string>& items) {
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
  };
  if (launches.empty() && !recorded) return plan;
  plan.note = fmt::format("launches of {}: ", replicates);
  if (!kept.empty()) plan.note += "kept " + join(kept);
  if (!kept.empty() && !run.empty()) plan.note += "; ";
  if (!run.empty()) plan.note += "run " + join(run);
  return plan;
}

LaunchQueue QueueLaunches(const SweepPlan& plan, int replicates,
                          const std::map<std::string, TrialStatus>& statuses,
                          const std::map<std::string, std::map<int, TrialStatus>>& launch_statuses,
                          const std::function<bool(const std::string& key)>& skip, Rerun rerun,
                          bool budget_order, const std::set<std::string>& busy) {
  LaunchQueue queue;
  std::vector<std::vector<QueuedTrial>> rounds(static_cast<std::size_t>(replicates));
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    const PlannedTrial& t = plan.trials[i];
    if (skip(t.key)) continue;
    auto found = statuses.find(t.key);
    const std::optional<TrialStatus> recorded =
        found == statuses.end() ? std::nullopt : std::optional<TrialStatus>(found->second);
    auto launches = launch_statuses.find(t.key);
    const LaunchPlan launch_plan = PlanLaunches(
        t, replicates, recorded,
        launches == launch_statuses.end() ? std::map<int, TrialStatus>{} : launches->second,
        RerunFor(rerun, t.key, busy));
    if (launch_plan.launches.empty()) {
      ++queue.kept;
      if (recorded && IsFailure(*recorded)) ++queue.kept_failed;
      continue;
    }
    for (int launch : launch_plan.launches) rounds[launch].push_back({i, &t, launch});
  }
  for (const auto& round : rounds) {
    if (!budget_order) {
      queue.launches.insert(queue.launches.end(), round.begin(), round.end());
      continue;
    }
    std::vector<const PlannedTrial*> trials;
    for (const QueuedTrial& queued : round) trials.push_back(queued.trial);
    for (std::size_t i : BudgetOrder(trials)) queue.launches.push_back(round[i]);
  }
  return queue;
}

}  // namespace ditbench
