// `ditbench run SWEEP.yaml`: options only; the work is RunSweep (runner/sweep_run.h).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "experiments/trial_settings.h"
#include "runner/command.h"
#include "runner/gpu_discovery.h"
#include "runner/interrupt.h"
#include "runner/local_launcher.h"
#include "runner/machine_health.h"
#include "runner/sweep_run.h"

namespace ditbench {

std::function<int()> DefineRunCommand(CLI::App& sub) {
  auto options = std::make_shared<RunOptions>();
  sub.add_option("sweep", options->sweep, "sweep file (YAML)")->required();
  sub.add_option("--db", options->db, "results database")->capture_default_str();
  sub.add_option("--gpus", options->gpus,
                 "auto | 0,1,2,3 | cpu:N. Numbers are positions among the GPUs visible to "
                 "ditbench: with CUDA_VISIBLE_DEVICES=4,5 set, auto uses GPUs 4 and 5 and "
                 "--gpus 1 means GPU 5")
      ->capture_default_str();
  sub.add_option("--policy", options->policy,
                 "exclusive: one trial at a time; pack: several at once on disjoint GPUs/slots")
      ->check(CLI::IsMember({"exclusive", "pack"}))
      ->capture_default_str();
  sub.add_option("--rerun", options->rerun, "also run trials that already have a result")
      ->check(CLI::IsMember({"failed", "all"}));
  sub.add_flag("--new", options->fresh, "start a new campaign instead of resuming the newest");
  sub.add_flag("--continue", options->keep_campaign,
               "resume the newest campaign even though the sweep file changed since it began");
  sub.add_flag("--dry-run", options->dry_run, "print the plan (as `ditbench plan` does) and run nothing");
  sub.add_option("--worker", options->worker, "worker program (default: next to ditbench)");
  sub.add_option("--run-dir", options->run_root,
                 "folder for trial.json, rank results and logs (default: <db stem>.runs/ beside the db)");
  sub.add_option("--require-idle", options->require_idle_s,
                 "SECONDS: before each CPU trial wait up to this long for the machine to be "
                 "idle (no other process using half a core); if it stays busy, start no more "
                 "trials (exit 1)")
      ->check(CLI::NonNegativeNumber);
  auto budget = std::make_shared<std::string>();
  sub.add_option("--budget", *budget,
                 "DURATION (90s, 30m, 8h): run the 1-rank trials first, then the cheapest, and "
                 "start no launch that would end past it; run again to resume");
  return [options, budget] {
    if (!budget->empty()) {
      if (!ParseDuration(nlohmann::json(*budget), &options->budget_s)) {
        std::cerr << "ditbench run: error: --budget '" << *budget
                  << "': expected a duration such as 90s, 30m or 8h\n";
        return 2;
      }
    }
    SignalInterrupt interrupt;
    LocalLauncher launcher;
    NvidiaSmiDiscovery gpus;
    ProcHealthProbe health;
    return RunSweep(*options, SweepEffects{launcher, interrupt, gpus, &health}, std::cout,
                    std::cerr);
  };
}

}  // namespace ditbench
