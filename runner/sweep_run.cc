#include "runner/sweep_run.h"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "base/exit_codes.h"
#include "base/terminal_text.h"
#include "plan/resume.h"
#include "plan/trial_selection.h"
#include "runner/advise_search.h"
#include "runner/campaign_setup.h"
#include "runner/coordinator_lock.h"
#include "runner/dry_run.h"
#include "runner/halving_search.h"
#include "runner/run_folder.h"
#include "runner/run_status.h"
#include "runner/sweep_loop.h"
#include "runner/unrecorded_launch.h"
#include "storage/storage_error.h"

namespace ditbench {
namespace {

// After storage failed mid-sweep: each launch left `running`, and what the next run does with
// it. A launch whose outcome is in its run folder (base/run_folder_file.h, unrecorded_launch.h)
// is recorded from there; one cut short is run again.
void SayWhatResumeDoes(const std::vector<SweepLoop::UnrecordedLaunch>& unrecorded,
                       std::ostream& err) {
  for (const SweepLoop::UnrecordedLaunch& launch : unrecorded) {
    const std::string what = launch.launch == 0
                                 ? fmt::format("trial {}", launch.trial_key)
                                 : fmt::format("trial {} (launch {})", launch.trial_key,
                                               launch.launch + 1);
    if (ReadLaunchOutcome(launch.run_dir))
      err << fmt::format("ditbench run: {} finished but is not recorded; the next `ditbench "
                         "run` records it from {}\n",
                         what, launch.run_dir.string());
    else
      err << fmt::format("ditbench run: {} was stopped before it finished; the next "
                         "`ditbench run` runs it again\n",
                         what);
  }
  if (unrecorded.empty())
    err << "ditbench run: every finished trial is recorded; the next `ditbench run` resumes "
           "the campaign\n";
}

}  // namespace

int RunSweep(const RunOptions& options, const SweepEffects& effects, std::ostream& out,
             std::ostream& err) {
  ConsoleRunStatus status(out);
  return RunSweep(options, effects, status, out, err);
}

namespace {

// How the loop runs the sweep's launches: its search, replicates, OOM policy and limits.
LoopSettings LoopSettingsFor(const RunOptions& options, const SweepSpec& spec) {
  LoopSettings settings;
  settings.halving = spec.halving_keep > 0;
  settings.replicates = spec.replicates;
  settings.skip_larger_after_oom = spec.skip_larger_after_oom;
  // The advise search keeps its own budget.
  settings.budget_s = options.search == SearchOrder::kAdvise ? -1 : options.budget_s;
  settings.require_idle_s = options.require_idle_s;
  settings.stop_after_failures = options.stop_after_failures;
  settings.rendezvous_socket = !options.build_under_test;
  return settings;
}

// The advise search's device, budget and clock (the effects' clock, else the steady clock).
AdviseSearchSettings AdviseSettingsFor(const RunOptions& options, const SweepEffects& effects,
                                       const std::string& device) {
  AdviseSearchSettings search;
  search.device = device;
  search.budget_s = options.budget_s;
  search.now = effects.now ? effects.now : [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  return search;
}

// The plan's trials that ran out of memory before this run.
std::vector<OomTrial> OomedEarlier(const SweepPlan& plan,
                                   const std::map<std::string, TrialStatus>& statuses) {
  std::vector<OomTrial> oomed;
  for (const PlannedTrial& t : plan.trials) {
    auto found = statuses.find(t.key);
    if (found != statuses.end() && found->second == TrialStatus::kOom)
      oomed.push_back({t.key, t.config});
  }
  return oomed;
}

// The exit code of a run that stopped before its launches were done (interrupted, out of
// budget, the machine busy, too many failures), said to `status`; nullopt for one that was not.
std::optional<int> StoppedEarly(const SweepLoop& loop, bool advise_budget_spent,
                                const RunOptions& options, const SweepEffects& effects,
                                const RunTally& tally, RunStatus& status) {
  if (effects.interrupt.Requested()) {
    status.RunInterrupted();
    return kExitInterrupted;
  }
  if (loop.budget_spent() || advise_budget_spent) {
    status.BudgetSpent(options.budget_s, tally);
    return tally.failed + tally.kept_failed > 0 ? 1 : 0;
  }
  if (loop.refused_busy()) {
    status.StoppedBusy(tally);
    return kExitTrialsFailed;
  }
  if (loop.stopped_on_failures()) {
    status.StoppedOnFailures(tally);
    return kExitTrialsFailed;
  }
  return std::nullopt;
}

int RunSweepOrThrow(const RunOptions& options, const SweepEffects& effects, RunStatus& status,
                    std::ostream& out, std::ostream& err) {
  const bool advise = options.search == SearchOrder::kAdvise;
  const std::optional<SweepSetup> prepared = PrepareSweep(options, effects, err);
  if (!prepared) return kExitUsage;
  const SweepSetup& setup = *prepared;  // the loop borrows its plan, spec and placement
  const SweepSpec& spec = setup.spec;
  const SweepPlan& plan = setup.plan;
  const Placement& placement = setup.placement;
  const TrialSelection& selection = setup.selection;
  if (advise && spec.halving_keep > 0) {
    err << "ditbench run: error: --search advise: the sweep has its own search (halving); "
           "leave out one of them\n";
    return kExitUsage;
  }
  if (options.dry_run) {
    SweepPlan shown = plan;
    std::erase_if(shown.trials, [&](const PlannedTrial& t) { return !selection.Selects(t.key); });
    WriteDryRun(options, spec, shown, setup.assumptions, out);
    return kExitOk;
  }

  // One coordinator per database, from before it is opened until this function returns.
  std::optional<CoordinatorLock> lock = LockForCommand(options.db, "run", err);
  if (!lock) return kExitStorageFailed;  // held by another run, or its lock cannot be made
  const auto run_root =
      options.run_root.empty() ? DefaultRunRoot(options.db) : options.run_root;
  std::optional<CampaignStart> started =
      StartCampaign(options, setup, effects, run_root, status, out, err);
  if (!started) return kExitUsage;
  ResultsDb& db = *started->db;
  const std::int64_t campaign = started->campaign;
  const auto& statuses = started->statuses;

  // Resume: launches already settled are kept; the rest interleaved (plan/resume.h).
  std::set<std::string> live(started->still_running.begin(), started->still_running.end());
  for (const AdoptedTrial& a : started->adopted) live.insert(a.trial->key);
  const LaunchQueue queue = QueueLaunches(
      plan, spec.replicates, statuses, started->launch_statuses,
      [&](const std::string& key) { return live.count(key) || !selection.Selects(key); },
      options.rerun, /*budget_order=*/options.budget_s >= 0, started->busy);
  const int kept = queue.kept, kept_failed = queue.kept_failed;

  status.CampaignStarted(campaign, spec.name, plan.trials.size(),
                         selection.Partial() ? selection.keys.size() : 0,
                         placement.capacity.slots, placement.capacity.on_gpu, spec.replicates);
  SweepLoop loop(spec, placement, setup.policy, db.writer(), db.output_errors(), campaign, effects,
                 setup.worker, run_root, LoopSettingsFor(options, spec),
                 OomedEarlier(plan, statuses), status);
  for (const AdoptedTrial& a : started->adopted) loop.Adopt(a);
  bool advise_budget_spent = false;
  try {
    if (advise) {
      auto run_round = [&](const std::vector<QueuedTrial>& launches) {
        if (!launches.empty()) loop.Run(launches, plan.trials.size());
        return !effects.interrupt.Requested() && !loop.refused_busy();
      };
      advise_budget_spent =
          RunAdviseSearch(plan, selection, db.reader(), db.planner_history(), db.writer(), campaign,
                          live, AdviseSettingsFor(options, effects, setup.assumptions.device),
                          run_round, status) == AdviseSearchEnd::kBudgetSpent;
    } else if (spec.halving_keep > 0) {
      auto run_round = [&](const std::vector<QueuedTrial>& launches) {
        if (!launches.empty()) loop.Run(launches, plan.trials.size());
        return !effects.interrupt.Requested() && !loop.refused_busy() && !loop.budget_spent() &&
               !loop.stopped_on_failures();
      };
      RunHalving(spec, plan, selection, db.reader(), campaign, options.rerun, started->busy, live,
                 run_round, status);
    } else {
      loop.Run(queue.launches, plan.trials.size());
    }
  } catch (const std::exception& e) {
    // Storage or filesystem trouble: stop every trial in flight and say so; results already
    // committed are safe.
    loop.Abandon();
    err << "ditbench run: error: " << e.what() << "\n";
    SayWhatResumeDoes(loop.Unrecorded(), err);
    // Ctrl-C while waiting for the database is an interrupt like any other.
    return effects.interrupt.Requested() ? kExitInterrupted : kExitStorageFailed;
  }
  RunTally tally = loop.tally();
  tally.kept = kept;
  tally.kept_failed = kept_failed;
  if (const std::optional<int> code =
          StoppedEarly(loop, advise_budget_spent, options, effects, tally, status))
    return *code;
  try {
    // A run limited by --only finishes the campaign only once every trial is recorded.
    // So does a bisect's: it is never resumed, and measures its selected trials only.
    if (!selection.Partial() || options.build_under_test ||
        EveryTrialSettled(plan, db.reader().TrialStatuses(campaign)))
      db.writer().FinishCampaign(campaign);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
  }
  status.RunEnded(tally);
  return tally.failed + tally.kept_failed > 0 ? 1 : 0;
}

}  // namespace

int RunSweep(const RunOptions& options, const SweepEffects& effects, RunStatus& status,
             std::ostream& out, std::ostream& err) {
  try {
    return RunSweepOrThrow(options, effects, status, out, err);
  } catch (const StorageError& e) {  // before any trial ran: reading or opening the database
    err << "ditbench run: error: " << OneLine(e.what()) << "\n";
    return StorageErrorExit(e);
  }
}

}  // namespace ditbench
