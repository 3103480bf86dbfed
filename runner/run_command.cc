// `ditbench run SWEEP.yaml`: options only; the work is RunSweep (runner/sweep_run.h).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "runner/command.h"
#include "runner/interrupt.h"
#include "runner/sweep_run.h"

namespace ditbench {

std::function<int()> DefineRunCommand(CLI::App& sub) {
  auto options = std::make_shared<RunOptions>();
  sub.add_option("sweep", options->sweep, "sweep file (YAML)")->required();
  sub.add_option("--db", options->db, "results database")->capture_default_str();
  sub.add_option("--gpus", options->gpus, "auto | 0,1,2,3 | cpu:N")->capture_default_str();
  sub.add_option("--rerun", options->rerun, "also run trials that already have a result")
      ->check(CLI::IsMember({"failed", "all"}));
  sub.add_flag("--new", options->fresh, "start a new campaign instead of resuming the newest");
  sub.add_flag("--dry-run", options->dry_run, "print the plan (as `ditbench plan` does) and run nothing");
  sub.add_option("--worker", options->worker, "worker program (default: next to ditbench)");
  sub.add_option("--run-dir", options->run_root,
                 "folder for trial.json, rank results and logs (default: runs/ beside the db)");
  return [options] {
    InstallInterruptHandler();
    LocalLauncher launcher;
    return RunSweep(*options, launcher, std::cout, std::cerr);
  };
}

}  // namespace ditbench
