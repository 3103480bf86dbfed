// `ditbench run`: a sweep file in, one campaign of recorded trials out.
//
// Deciding and running are kept apart: PlanSweep expands and classifies the trials (pure);
// RunSweep records skipped ones, starts the rest through a Launcher on the slots a SlotPool
// gives them (one at a time by default), and commits each finished trial in its own
// transaction. Every side effect it has besides the database and the run folders comes in
// through SweepEffects, so the loop is tested with fakes. RunSweep only orders the steps:
// runner/campaign_setup.h (checks, then the campaign), runner/sweep_loop.h (the loop),
// runner/halving_search.h (search: halving), and runner/run_status.h (what the user sees).
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "base/choices.h"
#include "launch/interrupt.h"
#include "launch/launcher.h"
#include "launch/launchers.h"
#include "machine/gpu_discovery.h"
#include "machine/gpu_topology.h"
#include "machine/machine_health.h"
#include "machine/placement_policy.h"
#include "plan/rerun.h"

namespace ditbench {

// --search: the order a run measures trials in.
enum class SearchOrder {
  kSweep,   // --search not given: the sweep's own order
  kAdvise,  // the advisor's (runner/advise_search.h)
};
inline constexpr std::array<Choice<SearchOrder>, 1> kSearchChoices{{
    {SearchOrder::kAdvise, "advise",
     "measure trials in the advisor's order, most informative first, until --budget is spent "
     "or every group's leader is decided (the reasons are printed and stored)"},
}};

// What `ditbench run` was asked, its options parsed (names into their enums) at the CLI edge.
struct RunOptions {
  std::filesystem::path sweep;
  std::filesystem::path db = "results.db";
  std::string gpus = "auto";         // auto | 0,1,2 (positions among the visible GPUs) | cpu:N
  PlacementPolicy policy = PlacementPolicy::kExclusive;
  Rerun rerun = Rerun::kNone;
  bool fresh = false;                // --new: start a new campaign
  bool keep_campaign = false;        // --continue: resume the newest campaign even if the
                                     // sweep file changed since it started
  bool dry_run = false;              // print the plan, run nothing
  std::filesystem::path worker;      // ditbench-worker; default: next to this executable
  // A `command` workload's program runs under this one (its path and arguments become this
  // program's arguments): how `bisect` runs a command against one build. Empty: none.
  std::filesystem::path command_prefix;
  std::filesystem::path run_root;    // default: <db folder>/<db stem>.runs (runner/run_folder.h)
  // --require-idle SECONDS: before each trial on CPU, wait up to this long for the machine to
  // be idle (HealthProbe), else stop starting trials (exit 1). Negative: do not wait.
  double require_idle_s = -1;
  // --stop-after-failures N: stop starting trials once the first N launches of the run all
  // failed the same way (runner/failure_streak.h); 0: only warn, after 3.
  int stop_after_failures = 0;
  // --budget 8h: launches ordered by plan/budget_order.h, and none started once the time
  // spent plus its estimate would pass this many seconds. Negative: no budget.
  double budget_s = -1;
  SearchOrder search = SearchOrder::kSweep;
  LauncherKind launcher = LauncherKind::kLocal;  // recorded with the campaign (its name)
  // --only KEY (repeatable): run only these trials of the sweep, in its campaign as usual
  // (plan/trial_selection.h). Empty: every trial.
  std::vector<std::string> only;
  // Launches per trial instead of the sweep's `replicates` (outside the key); none: the sweep's.
  std::optional<int> replicates;
  // Set by `ditbench bisect` (runner/bisect_run.h): this run measures one build of a list, so
  // its campaign records `build` instead of this ditbench's (CampaignRecord::build, which
  // `compare` and its A/A pairs tell campaigns apart by) and the rest under its environment's
  // "bisect"; a later plain `run` never resumes it (plan/resume.h), and it is stamped finished
  // once its selected trials are settled.
  struct BuildUnderTest {
    std::string build;    // the build as the user named it (a worker path, a revision)
    std::string session;  // which bisection: one value for all its campaigns
    int position = 0;     // 0-based, in the list of builds
  };
  std::optional<BuildUnderTest> build_under_test;
};

// What RunSweep does to the world besides storage: borrowed, not owned.
struct SweepEffects {
  Launcher& launcher;
  const InterruptSource& interrupt;
  const GpuDiscovery& gpus;
  // Machine health at trial start and end (stored with the trial, busy ones flagged): the CPU,
  // and on GPU the other programs on the trial's GPUs; none: not sampled.
  const HealthProbe* health = nullptr;
  // Seconds on a monotonic clock, for --budget; empty: the steady clock.
  std::function<double()> now = nullptr;
  // The cores this process may use, by NUMA node: under --policy pack, CPU slots are pinned to
  // them (machine/placement.h, CpuSlots). None: CPU ranks are not pinned.
  const CpuTopology* cpus = nullptr;
};

// Runs the sweep; returns the exit code (0 ok/skipped, 1 some failed, 2 spec or usage error or
// a run folder of another database, 3 the database failed: damaged, foreign, newer, held by
// another coordinator, or a write failed mid-run; 130 interrupted). The database's coordinator lock
// (runner/coordinator_lock.h) is held from before the database is opened until return.
// Progress goes to `out`, errors to `err`. A trial that cannot be prepared or started is
// recorded as failed, with the reason, and the sweep goes on. On return no trial it started
// is still running. With `only`, an unknown key is a usage error (exit 2) before anything is
// opened, and the campaign is stamped finished only once every trial of the sweep is recorded.
int RunSweep(const RunOptions& options, const SweepEffects& effects, std::ostream& out,
             std::ostream& err);

// The same, its events reported to `status` (runner/run_status.h) rather than written to
// `out` as ConsoleRunStatus writes them; `out` still gets the dry-run plan and what setup's
// helpers print (waiting for the database, launches an earlier coordinator left).
class RunStatus;
int RunSweep(const RunOptions& options, const SweepEffects& effects, RunStatus& status,
             std::ostream& out, std::ostream& err);

}  // namespace ditbench
