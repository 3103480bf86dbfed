// `ditbench run SWEEP.yaml`: options only; the work is RunSweep (runner/sweep_run.h).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "base/choices.h"
#include "base/user_error.h"
#include "cli/command.h"
#include "cli/number_checks.h"
#include "launch/interrupt.h"
#include "launch/launchers.h"
#include "plan/budget_order.h"
#include "runner/sweep_run.h"

namespace ditbench {
namespace {

// The options given as names, as typed: parsed into RunOptions' enums before anything runs.
struct NamedOptions {
  std::string policy = "exclusive";
  std::string rerun;   // empty: not given
  std::string search;  // empty: not given
  std::string launcher = "local";
  std::string slurm_mode = "job";
};

}  // namespace

std::function<int()> DefineRunCommand(CLI::App& sub) {
  auto options = std::make_shared<RunOptions>();
  sub.add_option("sweep", options->sweep, "sweep file (YAML)")->required();
  sub.add_option("--db", options->db, "results database")->capture_default_str();
  sub.add_option("--gpus", options->gpus,
                 "auto | 0,1,2,3 | cpu:N. Numbers are positions among the GPUs visible to "
                 "ditbench: with CUDA_VISIBLE_DEVICES=4,5 set, auto uses GPUs 4 and 5 and "
                 "--gpus 1 means GPU 5")
      ->capture_default_str();
  auto named = std::make_shared<NamedOptions>();
  sub.add_option("--policy", named->policy, ChoicesHelp(kPlacementPolicies))->capture_default_str();
  sub.add_option("--rerun", named->rerun,
                 "also run trials that already have a result: " + ChoicesHelp(kRerunChoices));
  sub.add_flag("--new", options->fresh, "start a new campaign instead of resuming the newest");
  sub.add_flag("--continue", options->keep_campaign,
               "resume the newest campaign even though the sweep file changed since it began");
  sub.add_option("--only", options->only,
                 "KEY: run only this trial of the sweep (repeatable; keys as `plan`, `query` "
                 "and `report` show them), in the sweep's campaign as usual")
      ->allow_extra_args(false);
  sub.add_flag("--dry-run", options->dry_run, "print the plan (as `ditbench plan` does) and run nothing");
  sub.add_option("--worker", options->worker, "worker program (default: next to ditbench)");
  sub.add_option("--run-dir", options->run_root,
                 "folder for trial.json, rank results and logs (default: <db stem>.runs/ beside the db)");
  sub.add_option("--require-idle", options->require_idle_s,
                 "SECONDS: before each CPU trial wait up to this long for the machine to be "
                 "idle (no other process using half a core); if it stays busy, start no more "
                 "trials (exit 1)")
      ->check(NonNegative());
  sub.add_option("--stop-after-failures", options->stop_after_failures,
                 "N: stop when the first N trials of the run all fail the same way (a broken "
                 "setup); default: go on, with a warning after 3")
      ->check(Positive());
  auto launch = std::make_shared<LauncherSettings>();
  sub.add_option("--launcher", named->launcher, ChoicesHelp(kLaunchers))->capture_default_str();
  sub.add_option("--partition", launch->slurm.partition, "Slurm partition (default: the cluster's)");
  sub.add_option("--account", launch->slurm.account, "Slurm account to charge");
  sub.add_option("--time", launch->slurm.time,
                 "Slurm time limit per trial, as sbatch --time takes it (default: the trial's "
                 "timeout rounded up to minutes)");
  sub.add_option("--nodes-per-trial", launch->slurm.nodes_per_trial,
                 "auto (the fewest nodes that hold the ranks, one per GPU) or a node count")
      ->capture_default_str();
  sub.add_option("--gpus-per-node", launch->slurm.gpus_per_node,
                 "GPUs per Slurm node (default: from sinfo)")
      ->check(Positive());
  sub.add_option("--slurm-mode", named->slurm_mode, ChoicesHelp(kSlurmModes))
      ->capture_default_str();
  sub.add_option("--search", named->search, ChoicesHelp(kSearchChoices));
  auto budget = std::make_shared<std::string>();
  sub.add_option("--budget", *budget,
                 "DURATION (90s, 30m, 8h): run the 1-rank trials first, then the cheapest, and "
                 "start no launch that would end past it; run again to resume");
  return [options, named, launch, budget] {
    LaunchSetup setup;
    try {
      if (!budget->empty()) options->budget_s = ParseBudgetOption(*budget);
      options->policy = ParseChoice(kPlacementPolicies, named->policy, "--policy");
      if (!named->rerun.empty())
        options->rerun = ParseChoice(kRerunChoices, named->rerun, "--rerun");
      if (!named->search.empty())
        options->search = ParseChoice(kSearchChoices, named->search, "--search");
      options->launcher = ParseChoice(kLaunchers, named->launcher, "--launcher");
      launch->slurm.mode = ParseChoice(kSlurmModes, named->slurm_mode, "--slurm-mode");
      launch->gpus = options->gpus;
      launch->dry_run = options->dry_run;
      for (const LauncherChoice& choice : kLaunchers)
        if (choice.value == options->launcher) setup = choice.make(*launch);
    } catch (const UserError& e) {
      std::cerr << "ditbench run: error: " << e.what() << "\n";
      return kExitUsage;
    }
    options->gpus = setup.gpus_option;
    SignalInterrupt interrupt;
    return RunSweep(*options,
                    SweepEffects{*setup.launcher, interrupt, *setup.gpus, setup.health.get(),
                                 nullptr, setup.cpus.get()},
                    std::cout, std::cerr);
  };
}

}  // namespace ditbench
