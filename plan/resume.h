// Deciding what a resumed `run` does, before it does it: which campaign it continues, and for
// each planned trial whether what the campaign recorded is kept or the trial runs (again).
// Pure: `run` executes these verdicts and `run --dry-run` prints them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "experiments/trial.h"
#include "plan/rerun.h"
#include "plan/sweep_plan.h"
#include "storage/result_rows.h"

namespace ditbench {

// A trial that ended badly (run again only with --rerun failed).
bool IsFailure(TrialStatus status);

// The campaign a run continues. `resume`: the newest campaign of the sweep (a campaign that
// `bisect` ran to measure one build, marked "bisect" in its environment, never counts), unless
// `fresh`, none exists, or its spec means something else (SameSweepMeaning: comments and
// layout do not count; then `changed_from` names it and `diff` says what changed)
// and `keep_campaign` (--continue) is not set.
struct CampaignChoice {
  std::optional<std::int64_t> resume;
  std::optional<std::int64_t> changed_from;
  std::string diff;
};
CampaignChoice ChooseCampaign(const std::vector<CampaignInfo>& campaigns,
                              const CampaignRecord& wanted, bool fresh, bool keep_campaign);

// --rerun as it applies to the trial `key`: kBusy reruns (as kAll) the trials the resumed
// campaign measured while other work ran on the machine, listed in `busy`, and keeps the
// others (as kNone); any other value applies to every trial as it is.
Rerun RerunFor(Rerun rerun, const std::string& key, const std::set<std::string>& busy);

// What happens to one planned trial given its status in the resumed campaign (none: not
// recorded) and --rerun (kNone, kFailed or kAll; kBusy through RerunFor). `note` says why,
// for `--dry-run`; empty for a trial never recorded.
struct ResumeVerdict {
  bool run = true;
  std::string note;
};
ResumeVerdict JudgeResume(const PlannedTrial& trial, std::optional<TrialStatus> recorded,
                          Rerun rerun);

// `search: halving` (runner/halving_search.h): whether round `round` of a trial runs, given
// the trial's recorded status, the status of its launch `round` (none: not recorded) and
// --rerun. An ok launch is kept unless --rerun all, a failed one unless --rerun failed; a
// trial recorded as failed runs no later round (without --rerun). An invalid trial is judged
// by JudgeResume, in round 0 only (it is recorded as skipped, never launched).
bool RunsHalvingRound(const PlannedTrial& trial, int round, std::optional<TrialStatus> recorded,
                      std::optional<TrialStatus> launch, Rerun rerun);

// Replicates: which launches (0-based indices, increasing) of a trial a run starts, given the
// trial's recorded status (none: not recorded) and the status of each recorded launch. Each
// launch is judged as JudgeResume judges a trial: ok launches are kept, failed ones kept unless
// --rerun failed, interrupted/running/missing ones run. A kept failure ends the trial: its
// later launches are not run. A trial recorded without launch rows (skipped, or pending) is
// judged as a whole. With one replicate this is JudgeResume of the trial's recorded status
// exactly (the status of its one launch). An invalid trial that is
// to run gets launch 0 (it is recorded as skipped, never launched).
struct LaunchPlan {
  std::vector<int> launches;
  std::string note;  // for --dry-run; empty for a trial never recorded
};
LaunchPlan PlanLaunches(const PlannedTrial& trial, int replicates,
                        std::optional<TrialStatus> recorded,
                        const std::map<int, TrialStatus>& launches, Rerun rerun);

// One launch of a trial to run: the trial, its 0-based position in the sweep (for progress
// lines) and which of its launches (0-based; `replicates` per trial) this is.
struct QueuedTrial {
  std::size_t index;
  const PlannedTrial* trial;
  int launch = 0;
  bool screening = false;  // halving search, round 0: repeats.min iterations only
};

// What a run starts: every launch PlanLaunches does not keep, interleaved (each trial's first
// missing launch in sweep order, then the next round), so that drift over the campaign hits
// every configuration alike; with `budget_order`, each round in BudgetOrder
// (plan/budget_order.h). Trials in `skip` (running elsewhere, or not selected by --only) are
// left out. `kept` counts trials with nothing to run, `kept_failed` those kept as failures.
// `busy`: the keys --rerun busy reruns (RerunFor).
struct LaunchQueue {
  std::vector<QueuedTrial> launches;
  int kept = 0;
  int kept_failed = 0;
};
LaunchQueue QueueLaunches(const SweepPlan& plan, int replicates,
                          const std::map<std::string, TrialStatus>& statuses,
                          const std::map<std::string, std::map<int, TrialStatus>>& launch_statuses,
                          const std::function<bool(const std::string& key)>& skip, Rerun rerun,
                          bool budget_order, const std::set<std::string>& busy = {});

}  // namespace ditbench
