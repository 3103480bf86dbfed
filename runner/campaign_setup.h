// `ditbench run` before its first launch, in two steps. PrepareSweep reads and checks
// everything that needs neither the database nor the lock: the sweep file, --policy, --gpus,
// the plan, --only and the worker. StartCampaign, under the coordinator lock, claims the run
// folder, opens the database, resumes or starts the campaign, and settles what an earlier
// coordinator left (scheduler jobs taken over, launches it never recorded, trials it left
// running). Both write one error line to `err` and return nothing on a problem (exit 2).
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "experiments/sweep_spec.h"
#include "machine/placement.h"
#include "plan/sweep_plan.h"
#include "plan/trial_selection.h"
#include "runner/run_status.h"
#include "runner/scheduler_adoption.h"
#include "runner/sweep_run.h"
#include "storage/results_db.h"

namespace ditbench {

// What a run is asked to do, checked. `plan` holds every trial of the sweep; `selection`
// says which of them --only keeps.
struct SweepSetup {
  SweepSpec spec;
  PlacementPolicy policy = PlacementPolicy::kExclusive;
  Placement placement;
  PlanAssumptions assumptions;
  SweepPlan plan;
  TrialSelection selection;
  // ditbench-worker (checked to exist unless dry_run); for a `command` workload the program
  // its command runs under (RunOptions::command_prefix), usually none.
  std::filesystem::path worker;
};

// Warnings (more CPU slots than cores) go to `err` too.
std::optional<SweepSetup> PrepareSweep(const RunOptions& options, const SweepEffects& effects,
                                       std::ostream& err);

// The campaign a run goes on with, and the state of its trials when the loop starts.
struct CampaignStart {
  std::unique_ptr<ResultsDb> db;
  std::int64_t campaign = 0;
  std::map<std::string, TrialStatus> statuses;
  std::map<std::string, std::map<int, TrialStatus>> launch_statuses;
  std::set<std::string> busy;  // keys measured while the machine was busy (--rerun busy)
  std::vector<std::string> still_running;  // keys run by a live coordinator elsewhere
  std::vector<AdoptedTrial> adopted;        // scheduler jobs this run watches again
};

// The keys of the campaign's trials measured while other work ran on the machine (the
// results view's `busy`): what --rerun busy runs again.
std::set<std::string> BusyTrials(ResultsDb& db, std::int64_t campaign);

// REQUIRES: the coordinator lock of options.db is held. `out`: where waiting for the
// database's lock and the settling of an earlier coordinator's launches are reported.
std::optional<CampaignStart> StartCampaign(const RunOptions& options, const SweepSetup& setup,
                                           const SweepEffects& effects,
                                           const std::filesystem::path& run_root,
                                           RunStatus& status, std::ostream& out,
                                           std::ostream& err);

}  // namespace ditbench
