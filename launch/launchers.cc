#include "launch/launchers.h"

#include "launch/local_launcher.h"

namespace ditbench {
namespace {

// Processes on this machine: its GPUs, its health sampled around each trial, and under
// --policy pack CPU slots pinned to its cores.
LaunchSetup MakeLocal(const LauncherSettings& settings) {
  LaunchSetup setup;
  auto health = std::make_unique<ProcHealthProbe>();
  if (!settings.dry_run) health->Prime();  // before discovery, which fills its first window
  setup.health = std::move(health);
  setup.launcher = std::make_unique<LocalLauncher>();
  setup.gpus = MachineGpuDiscovery();
  setup.cpus = std::make_unique<CpuTopology>(ReadCpuTopology());
  setup.gpus_option = settings.gpus;
  return setup;
}

}  // namespace

const std::array<LauncherChoice, 2> kLaunchers{{
    {LauncherKind::kLocal, "local", "ranks are processes on this machine", MakeLocal},
    {LauncherKind::kSlurm, "slurm",
     "each trial is a Slurm job whose ranks srun starts (multi-node trials allowed)",
     MakeSlurmLaunchSetup},
}};

}  // namespace ditbench
