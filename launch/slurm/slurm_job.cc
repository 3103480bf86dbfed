#include "launch/slurm/slurm_job.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "base/run_folder_file.h"
#include "base/untrusted_input.h"
#include "contract/worker_environment.h"

namespace ditbench {

SlurmJobShape ShapeJob(int world_size, const SlurmOptions& options) {
  const int per_node_limit = options.gpus_per_node > 0 ? options.gpus_per_node : world_size;
  const int fewest = (world_size + per_node_limit - 1) / per_node_limit;
  SlurmJobShape shape;
  shape.nodes = options.nodes_per_trial > 0 ? options.nodes_per_trial : fewest;
  if (shape.nodes < fewest)
    throw std::invalid_argument(fmt::format(
        "--nodes-per-trial {}: {} ranks at {} per node need at least {} nodes",
        options.nodes_per_trial, world_size, per_node_limit, fewest));
  if (shape.nodes > world_size)
    throw std::invalid_argument(fmt::format("--nodes-per-trial {}: more nodes than the {} ranks",
                                            options.nodes_per_trial, world_size));
  if (world_size % shape.nodes != 0)
    throw std::invalid_argument(fmt::format(
        "{} ranks do not split evenly over {} nodes; expected a world size that is a multiple "
        "of the node count",
        world_size, shape.nodes));
  shape.tasks_per_node = world_size / shape.nodes;
  return shape;
}

std::string ShellQuote(const std::string& text) {
  static constexpr std::string_view kQuoteInQuotes = "'\\''";  // end quote, \', reopen
  std::string quoted(1, '\'');
  for (char c : text) {
    if (c == '\'') quoted.append(kQuoteInQuotes);
    else quoted.push_back(c);
  }
  quoted.push_back('\'');
  return quoted;
}

std::filesystem::path RankExitPath(const std::filesystem::path& run_dir, int rank) {
  return run_dir / fmt::format("rank{}.exit", rank);
}

namespace {

// The exports both scripts share: no GPU for CPU ranks, then the user's extra variables.
std::string ExtraExports(const SlurmOptions& options) {
  std::string exports;
  if (options.gpus_per_node == 0) exports += "export CUDA_VISIBLE_DEVICES=\n";
  for (const auto& entry : options.environment) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    exports += fmt::format("export {}={}\n", entry.substr(0, eq), ShellQuote(entry.substr(eq + 1)));
  }
  return exports;
}

}  // namespace

std::filesystem::path RanksFolder(const LaunchRequest& request) {
  return request.working_dir.empty() ? request.run_dir : request.working_dir;
}

// The ranks' PYTHONPATH with the request's folder first (LaunchRequest::python_path).
std::string PythonPathExport(const LaunchRequest& request) {
  if (request.python_path.empty()) return "";
  return "export PYTHONPATH=" + ShellQuote(request.python_path.string()) +
         "\"${PYTHONPATH:+:$PYTHONPATH}\"\n";
}

std::string SlurmJobScript(const LaunchRequest& request, const SlurmOptions& options,
                           const SlurmJobShape& shape) {
  const std::string kResults = std::string("$") + kResultDirVariable;  // in a rank's shell
  std::string script = fmt::format(
      "#!/bin/sh\n"
      "# ditbench trial {}: one Slurm job, ranks started by srun (written by `ditbench run`).\n"
      "export {}={}\n"
      "export {}={}\n"
      "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n"
      "export MASTER_PORT=$(({} + SLURM_JOB_ID % {}))\n"
      "export WORLD_SIZE=\"$SLURM_NTASKS\"\n"
      "export LOCAL_WORLD_SIZE={}\n",
      request.trial_key, kTrialFileVariable, ShellQuote((request.run_dir / "trial.json").string()),
      kResultDirVariable, ShellQuote(request.run_dir.string()), kSlurmRendezvousPortBase,
      kSlurmRendezvousPortSpan, shape.tasks_per_node);
  script += ExtraExports(options) + PythonPathExport(request);
  // Each task: its rank from Slurm, the worker, and its exit status left for the coordinator.
  const std::string task =
      "export RANK=\"$SLURM_PROCID\" LOCAL_RANK=\"$SLURM_LOCALID\"; \"$@\"; code=$?; "
      "echo $code > \"" +
      kResults +
      "/rank$RANK.exit.tmp\" && "
      "mv \"" +
      kResults + "/rank$RANK.exit.tmp\" \"" + kResults + "/rank$RANK.exit\"; exit $code";
  script += fmt::format(
      "srun --kill-on-bad-exit=1 --chdir={} --output={} /bin/sh -c {} ditbench-rank {}",
      ShellQuote(RanksFolder(request).string()),
      ShellQuote((request.run_dir / "rank%t.log").string()), ShellQuote(task),
      ShellQuote(request.worker.string()));
  for (const auto& arg : request.args) script.append(" ").append(ShellQuote(arg));
  return script + "\n";
}

std::string SlurmStepScript(const LaunchRequest& request, const SlurmOptions& options,
                            const SlurmJobShape& shape) {
  const std::string kResults = std::string("$") + kResultDirVariable;  // in a rank's shell
  std::string script = fmt::format(
      "#!/bin/sh\n"
      "# ditbench trial {}: one Slurm job step, ranks started by srun (written by `ditbench "
      "run`).\n"
      "export {}={}\n"
      "export {}={}\n"
      "export LOCAL_WORLD_SIZE={}\n",
      request.trial_key, kTrialFileVariable, ShellQuote((request.run_dir / "trial.json").string()),
      kResultDirVariable, ShellQuote(request.run_dir.string()), shape.tasks_per_node);
  script += ExtraExports(options) + PythonPathExport(request);
  std::string time = options.time;
  if (time.empty())
    time = std::to_string(std::max(1, static_cast<int>(std::ceil(request.timeout_s / 60.0))));
  const std::string task =
      "export RANK=\"$SLURM_PROCID\" LOCAL_RANK=\"$SLURM_LOCALID\" WORLD_SIZE=\"$SLURM_NTASKS\"; "
      "export MASTER_ADDR=\"$(scontrol show hostnames "
      "\"${SLURM_STEP_NODELIST:-$SLURM_JOB_NODELIST}\" "
      "| head -n 1)\"; "
      "export MASTER_PORT=$((" +
      std::to_string(kSlurmRendezvousPortBase) + " + (SLURM_JOB_ID * 64 + SLURM_STEP_ID) % " +
      std::to_string(kSlurmRendezvousPortSpan) +
      ")); "
      "[ \"$RANK\" = 0 ] && echo \"$SLURM_JOB_ID.$SLURM_STEP_ID\" > \"" +
      kResults +
      "/slurm_step\"; "
      "\"$@\"; code=$?; "
      "echo $code > \"" +
      kResults +
      "/rank$RANK.exit.tmp\" && "
      "mv \"" +
      kResults + "/rank$RANK.exit.tmp\" \"" + kResults + "/rank$RANK.exit\"; exit $code";
  script += fmt::format(
      "exec srun --job-name={} --exact --kill-on-bad-exit=1 --nodes={} --ntasks={} "
      "--ntasks-per-node={} --time={}",
      ShellQuote("ditbench-" + request.trial_key), shape.nodes, shape.nodes * shape.tasks_per_node,
      shape.tasks_per_node, ShellQuote(time));
  if (options.gpus_per_node > 0) script += fmt::format(" --gpus-per-node={}", shape.tasks_per_node);
  if (!options.partition.empty()) script.append(" --partition=").append(ShellQuote(options.partition));
  if (!options.account.empty()) script.append(" --account=").append(ShellQuote(options.account));
  script += fmt::format(" --chdir={} --output={} /bin/sh -c {} ditbench-rank {}",
                        ShellQuote(RanksFolder(request).string()),
                        ShellQuote((request.run_dir / "rank%t.log").string()), ShellQuote(task),
                        ShellQuote(request.worker.string()));
  for (const auto& arg : request.args) script.append(" ").append(ShellQuote(arg));
  return script + "\n";
}

void ReadRankExits(const std::filesystem::path& run_dir, int world_size, LaunchOutcome* outcome) {
  outcome->ranks.assign(std::max(0, world_size), RankExit{});
  for (int r = 0; r < world_size; ++r) {
    RankExit& exit = outcome->ranks[r];
    exit.exited = true;
    // Written by the job script in the run folder the ranks share: untrusted (a regular file
    // of a few bytes; a FIFO or garbage reads as "no exit code", i.e. killed).
    int code = -1;
    try {
      std::istringstream in(ReadRunFolderFile(RankExitPath(run_dir, r), 64));
      if (!(in >> code)) code = -1;
    } catch (const std::exception&) {
      code = -1;
    }
    if (code < 0) {
      exit.signal = SIGKILL;
      exit.killed_by_us = true;
    } else if (code > 128) {
      exit.signal = code - 128;
    } else {
      exit.exit_code = code;
    }
    if (outcome->first_failed_rank < 0 && code > 0) outcome->first_failed_rank = r;
  }
}

std::vector<std::string> SbatchArguments(const LaunchRequest& request,
                                         const SlurmOptions& options, const SlurmJobShape& shape,
                                         const std::filesystem::path& script) {
  std::string time = options.time;
  if (time.empty()) {
    const int minutes = std::max(1, static_cast<int>(std::ceil(request.timeout_s / 60.0)));
    time = std::to_string(minutes);
  }
  std::vector<std::string> args = {
      "--parsable",
      "--job-name=ditbench-" + request.trial_key,
      "--chdir=" + RanksFolder(request).string(),
      "--output=" + (request.run_dir / "slurm-%j.out").string(),
      "--nodes=" + std::to_string(shape.nodes),
      "--ntasks=" + std::to_string(shape.nodes * shape.tasks_per_node),
      "--ntasks-per-node=" + std::to_string(shape.tasks_per_node),
      "--time=" + time,
      "--export=ALL",
  };
  if (options.gpus_per_node > 0)
    args.push_back("--gpus-per-node=" + std::to_string(shape.tasks_per_node));
  if (!options.partition.empty()) args.push_back("--partition=" + options.partition);
  if (!options.account.empty()) args.push_back("--account=" + options.account);
  args.push_back(script.string());
  return args;
}

}  // namespace ditbench
