// The launchers a run may start trials with (--launcher), as one table: each one's name (what
// the user types and what a campaign records as its "launcher"), its help, and how to make it
// with the GPUs its trials may use. The CLI parses --launcher into a LauncherKind and walks
// the table; it never assembles a launcher itself.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "base/choices.h"
#include "launch/launcher.h"
#include "machine/gpu_discovery.h"
#include "machine/gpu_topology.h"
#include "machine/machine_health.h"

namespace ditbench {

enum class LauncherKind {
  kLocal,  // LocalLauncher (launch/local_launcher.h)
  kSlurm,  // SlurmLauncher or SlurmStepLauncher (launch/slurm/)
};

// --slurm-mode: what one trial is under --launcher slurm.
enum class SlurmMode {
  kJob,   // one sbatch job (SlurmLauncher)
  kStep,  // one srun step of the allocation ditbench runs in (SlurmStepLauncher)
};
inline constexpr std::array<Choice<SlurmMode>, 2> kSlurmModes{{
    {SlurmMode::kJob, "job", "each trial one sbatch job (survives a coordinator restart)"},
    {SlurmMode::kStep, "step",
     "each trial one srun step of the allocation ditbench runs in (dies with it)"},
}};

// What the command line says about starting trials.
struct LauncherSettings {
  std::string gpus = "auto";  // --gpus as given
  bool dry_run = false;       // nothing will run: machine health is not primed
  struct Slurm {              // --launcher slurm only (launch/slurm/slurm_job.h, SlurmOptions)
    std::string partition;    // --partition
    std::string account;      // --account
    std::string time;         // --time
    int gpus_per_node = 0;    // --gpus-per-node; 0: from sinfo
    std::string nodes_per_trial = "auto";  // --nodes-per-trial: auto or a node count >= 1
    SlurmMode mode = SlurmMode::kJob;
  } slurm;
};

// A launcher ready to run a sweep and what it runs on. The members own what SweepEffects
// borrows; `resources` (what the launcher itself borrows, such as a Slurm client) is declared
// first so that it outlives the launcher.
struct LaunchSetup {
  std::shared_ptr<void> resources;
  std::unique_ptr<Launcher> launcher;
  std::unique_ptr<GpuDiscovery> gpus;   // the GPUs trials may use
  std::unique_ptr<HealthProbe> health;  // none: machine health not sampled
  std::unique_ptr<CpuTopology> cpus;    // none: CPU ranks not pinned under --policy pack
  std::string gpus_option;              // --gpus as the run resolves it against `gpus`
};

struct LauncherChoice {
  LauncherKind value;
  std::string_view name;
  std::string_view help;
  // Throws UserError for settings the launcher cannot use (a bad --nodes-per-trial, a Slurm
  // partition whose GPUs per node cannot be told).
  LaunchSetup (*make)(const LauncherSettings& settings);
};
extern const std::array<LauncherChoice, 2> kLaunchers;

// The Slurm row's `make` (launch/slurm/slurm_setup.cc): declared here, where the table is, so
// that launch/ includes nothing of launch/slurm/.
LaunchSetup MakeSlurmLaunchSetup(const LauncherSettings& settings);

}  // namespace ditbench
