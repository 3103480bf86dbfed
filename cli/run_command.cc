// `ditbench run SWEEP.yaml`: options only; the work is RunSweep (runner/sweep_run.h).
#include <cstdlib>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "base/choices.h"
#include "base/user_error.h"
#include "cli/command.h"
#include "cli/number_checks.h"
#include "launch/interrupt.h"
#include "launch/local_launcher.h"
#include "launch/slurm/slurm_client.h"
#include "launch/slurm/slurm_cluster.h"
#include "launch/slurm/slurm_launcher.h"
#include "launch/slurm/slurm_step_launcher.h"
#include "machine/gpu_discovery.h"
#include "machine/gpu_topology.h"
#include "machine/machine_health.h"
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
};

// How trials are started under Slurm (launch/slurm/slurm_launcher.h).
struct LaunchOptions {
  std::string slurm_mode = "job";  // job | step
  std::string nodes_per_trial = "auto";
  SlurmOptions slurm;
};

// Runs the sweep with every trial a Slurm job. GPU trials: the partition's nodes and GPUs per
// node (sinfo, or --gpus-per-node) set which world sizes fit, multi-node included; with
// --gpus cpu:N the ranks run on CPU, at most N per trial.
int RunOnSlurm(RunOptions options, const LaunchOptions& launch, const InterruptSource& interrupt) {
  SlurmOptions slurm = launch.slurm;
  if (launch.nodes_per_trial != "auto") {
    try {
      std::size_t used = 0;
      slurm.nodes_per_trial = std::stoi(launch.nodes_per_trial, &used);
      if (used != launch.nodes_per_trial.size() || slurm.nodes_per_trial < 1)
        throw std::invalid_argument("not a count");
    } catch (const std::exception&) {
      std::cerr << "ditbench run: error: --nodes-per-trial '" << launch.nodes_per_trial
                << "': expected auto or a node count >= 1\n";
      return kExitUsage;
    }
  }
  std::unique_ptr<GpuDiscovery> gpus = std::make_unique<AssumedGpus>(0, "");
  if (options.gpus.rfind("cpu", 0) == 0) {
    slurm.gpus_per_node = 0;
  } else {
    std::string reason;
    const auto capacity = SlurmCapacity(slurm.partition, slurm.gpus_per_node, 0, &reason);
    if (!capacity) {
      std::cerr << "ditbench run: error: --launcher slurm: cannot tell how many GPUs a node has ("
                << reason << "); pass --gpus-per-node N, or --gpus cpu:N for CPU ranks\n";
      return kExitUsage;
    }
    slurm.gpus_per_node = capacity->gpus_per_node;
    gpus = std::make_unique<AssumedGpus>(capacity->nodes * capacity->gpus_per_node, "Slurm GPU");
    options.gpus = "auto";
  }
  if (const char* allocation = std::getenv("SLURM_JOB_ID")) slurm.allocation = allocation;
  SlurmCommands client;
  std::unique_ptr<Launcher> launcher;
  if (launch.slurm_mode == "step") launcher = std::make_unique<SlurmStepLauncher>(client, slurm);
  else launcher = std::make_unique<SlurmLauncher>(client, slurm);
  return RunSweep(options, SweepEffects{*launcher, interrupt, *gpus, nullptr}, std::cout,
                  std::cerr);
}

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
  auto launch = std::make_shared<LaunchOptions>();
  sub.add_option("--launcher", named->launcher, ChoicesHelp(kLaunchers))->capture_default_str();
  sub.add_option("--partition", launch->slurm.partition, "Slurm partition (default: the cluster's)");
  sub.add_option("--account", launch->slurm.account, "Slurm account to charge");
  sub.add_option("--time", launch->slurm.time,
                 "Slurm time limit per trial, as sbatch --time takes it (default: the trial's "
                 "timeout rounded up to minutes)");
  sub.add_option("--nodes-per-trial", launch->nodes_per_trial,
                 "auto (the fewest nodes that hold the ranks, one per GPU) or a node count")
      ->capture_default_str();
  sub.add_option("--gpus-per-node", launch->slurm.gpus_per_node,
                 "GPUs per Slurm node (default: from sinfo)")
      ->check(Positive());
  sub.add_option("--slurm-mode", launch->slurm_mode,
                 "job: each trial one sbatch job (survives a coordinator restart); step: each "
                 "trial one srun step of the allocation ditbench runs in (dies with it)")
      ->check(CLI::IsMember({"job", "step"}))
      ->capture_default_str();
  sub.add_option("--search", named->search, ChoicesHelp(kSearchChoices));
  auto budget = std::make_shared<std::string>();
  sub.add_option("--budget", *budget,
                 "DURATION (90s, 30m, 8h): run the 1-rank trials first, then the cheapest, and "
                 "start no launch that would end past it; run again to resume");
  return [options, named, launch, budget] {
    try {
      if (!budget->empty()) options->budget_s = ParseBudgetOption(*budget);
      options->policy = ParseChoice(kPlacementPolicies, named->policy, "--policy");
      if (!named->rerun.empty())
        options->rerun = ParseChoice(kRerunChoices, named->rerun, "--rerun");
      if (!named->search.empty())
        options->search = ParseChoice(kSearchChoices, named->search, "--search");
      options->launcher = ParseChoice(kLaunchers, named->launcher, "--launcher");
    } catch (const UserError& e) {
      std::cerr << "ditbench run: error: " << e.what() << "\n";
      return kExitUsage;
    }
    SignalInterrupt interrupt;
    if (options->launcher == LauncherKind::kSlurm) return RunOnSlurm(*options, *launch, interrupt);
    ProcHealthProbe health;
    if (!options->dry_run) health.Prime();
    LocalLauncher launcher;
    const std::unique_ptr<GpuDiscovery> gpus = MachineGpuDiscovery();
    const CpuTopology cpus = ReadCpuTopology();
    return RunSweep(*options,
                    SweepEffects{launcher, interrupt, *gpus, &health, nullptr, &cpus},
                    std::cout, std::cerr);
  };
}

}  // namespace ditbench
