// `ditbench bisect`: options only; the work is RunBisect (runner/bisect_run.h).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "launch/build_command.h"
#include "launch/interrupt.h"
#include "launch/local_launcher.h"
#include "machine/gpu_discovery.h"
#include "machine/machine_health.h"
#include "runner/bisect_run.h"

namespace ditbench {

std::function<int()> DefineBisectCommand(CLI::App& sub) {
  auto options = std::make_shared<BisectOptions>();
  auto build_command = std::make_shared<std::string>();
  sub.add_option("--db", options->db, "results database")->capture_default_str();
  sub.add_option("--only", options->key, "KEY: the trial to bisect (as `query` lists keys)")
      ->required();
  sub.add_option("--good", options->good,
                 "CAMPAIGN|BUILD: a campaign that measured KEY fast, or a build of the list")
      ->required();
  sub.add_option("--bad", options->bad,
                 "CAMPAIGN|BUILD: a campaign that measured KEY slow, or a build of the list")
      ->required();
  auto* builds = sub.add_option(
      "--builds", options->builds,
      "LIST: worker programs oldest first, comma-separated (for a `command` workload: "
      "programs its command runs under)")
      ->delimiter(',');
  auto* command = sub.add_option("--build-command", *build_command,
                                 "'CMD {rev}': builds a revision and prints the worker's path "
                                 "on its last line of stdout");
  auto* revs = sub.add_option("--revs", options->builds,
                              "LIST: revisions for --build-command, oldest first, comma-separated")
                   ->delimiter(',');
  builds->excludes(command)->excludes(revs);
  command->needs(revs);
  revs->needs(command);
  sub.add_option("--replicates", options->replicates, "launches per measured build")
      ->capture_default_str();
  sub.add_option("--gpus", options->gpus,
                 "as `run` takes it (default: what the reference campaign ran with)");
  sub.add_option("--run-dir", options->run_root,
                 "folder for the measured builds' run folders (default: <db stem>.runs/)");
  sub.add_option("--noise-floor", options->noise_floor_pct,
                 "as `compare` takes it (default: learned or per device)");
  sub.add_option("--min-effect", options->min_effect_pct, "as `compare` takes it");
  return [options, build_command] {
    BuildWorker worker;
    // A template that cannot be expanded safely is refused before anything is measured.
    if (!build_command->empty()) (void)BuildCommandFor(*build_command);
    if (!build_command->empty()) {
      worker = [command = *build_command](const std::string& rev, std::string& problem)
          -> std::optional<std::filesystem::path> {
        const BuiltWorker built = BuildRevision(command, rev);
        problem = built.problem;
        return built.worker;
      };
    } else {
      worker = [](const std::string& build,
                  std::string& problem) -> std::optional<std::filesystem::path> {
        std::error_code ec;
        if (std::filesystem::is_regular_file(build, ec)) return std::filesystem::absolute(build);
        problem = "no such file: " + build;
        return std::nullopt;
      };
    }
    SignalInterrupt interrupt;
    ProcHealthProbe health;
    health.Prime();
    LocalLauncher launcher;
    const std::unique_ptr<GpuDiscovery> gpus = MachineGpuDiscovery();
    return RunBisect(*options,
                     BisectEffects{SweepEffects{launcher, interrupt, *gpus, &health}, worker},
                     std::cout, std::cout, std::cerr);
  };
}

}  // namespace ditbench
