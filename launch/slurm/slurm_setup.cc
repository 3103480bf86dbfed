// The Slurm row of the launcher table (launch/launchers.h).
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "base/user_error.h"
#include "launch/launchers.h"
#include "launch/slurm/slurm_client.h"
#include "launch/slurm/slurm_cluster.h"
#include "launch/slurm/slurm_job.h"
#include "launch/slurm/slurm_launcher.h"
#include "launch/slurm/slurm_step_launcher.h"
#include "machine/placement.h"

namespace ditbench {

// Every trial a Slurm job (or step). GPU trials: the partition's nodes and GPUs per node
// (sinfo, or --gpus-per-node) set which world sizes fit, multi-node included; with --gpus
// cpu:N the ranks run on CPU, at most N per trial.
LaunchSetup MakeSlurmLaunchSetup(const LauncherSettings& settings) {
  SlurmOptions slurm;
  slurm.partition = settings.slurm.partition;
  slurm.account = settings.slurm.account;
  slurm.time = settings.slurm.time;
  slurm.gpus_per_node = settings.slurm.gpus_per_node;
  const std::string& nodes = settings.slurm.nodes_per_trial;
  if (nodes != "auto") {
    try {
      std::size_t used = 0;
      slurm.nodes_per_trial = std::stoi(nodes, &used);
      if (used != nodes.size() || slurm.nodes_per_trial < 1)
        throw std::invalid_argument("not a count");
    } catch (const std::exception&) {
      throw UserError("--nodes-per-trial '" + nodes + "': expected auto or a node count >= 1",
                      InputLocation{"", 0, "--nodes-per-trial"});
    }
  }
  LaunchSetup setup;
  setup.gpus = std::make_unique<AssumedGpus>(0, "");
  setup.gpus_option = settings.gpus;
  if (AsksForCpu(settings.gpus)) {
    slurm.gpus_per_node = 0;
  } else {
    std::string reason;
    const auto capacity = SlurmCapacity(slurm.partition, slurm.gpus_per_node, 0, &reason);
    if (!capacity)
      throw UserError("--launcher slurm: cannot tell how many GPUs a node has (" + reason +
                          "); pass --gpus-per-node N, or --gpus cpu:N for CPU ranks",
                      InputLocation{"", 0, "--launcher"});
    slurm.gpus_per_node = capacity->gpus_per_node;
    setup.gpus =
        std::make_unique<AssumedGpus>(capacity->nodes * capacity->gpus_per_node, "Slurm GPU");
    setup.gpus_option = "auto";
  }
  if (const char* allocation = std::getenv("SLURM_JOB_ID")) slurm.allocation = allocation;
  auto client = std::make_shared<SlurmCommands>();
  setup.resources = client;
  if (settings.slurm.mode == SlurmMode::kStep)
    setup.launcher = std::make_unique<SlurmStepLauncher>(*client, slurm);
  else
    setup.launcher = std::make_unique<SlurmLauncher>(*client, slurm);
  return setup;
}

}  // namespace ditbench
