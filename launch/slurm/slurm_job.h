// One trial as one Slurm job: the batch script and the sbatch arguments. Pure.
//
// The batch script runs on the job's first node. It derives the torchrun environment
// (docs/architecture.md, "Worker contract") from Slurm's: MASTER_ADDR is the first host of
// SLURM_JOB_NODELIST, MASTER_PORT comes from the job id (the coordinator cannot know which ports
// are free on a compute node), WORLD_SIZE is SLURM_NTASKS; then `srun` starts the ranks, and each
// task sets RANK and LOCAL_RANK from SLURM_PROCID and SLURM_LOCALID before it runs the worker. Each
// rank logs to rank<r>.log and leaves its exit status in rank<r>.exit (a shell's $?: 128+N for a
// death by signal N), which is how the coordinator learns how each rank ended.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "launch/launcher.h"

namespace ditbench {

// How trials are submitted (`ditbench run --launcher slurm ...`).
struct SlurmOptions {
  std::string partition;  // --partition; empty: the cluster's default
  std::string account;    // --account; empty: the user's default
  std::string time;       // --time as Slurm takes it ("30", "1:00:00"); empty: the trial's
                          // timeout rounded up to whole minutes (Slurm counts minutes)
  int gpus_per_node = 0;  // 0: CPU ranks (CUDA_VISIBLE_DEVICES empty); else GPUs per node,
                          // asked with --gpus-per-node and one rank per GPU
  int nodes_per_trial = 0;  // 0: auto, the fewest nodes that hold the world size
  // Extra "NAME=value" variables every rank gets (on top of what sbatch exports).
  std::vector<std::string> environment;
  // --slurm-mode step: the job id of the allocation the coordinator runs in (its SLURM_JOB_ID),
  // empty outside one. A step of another job was allocated by its own srun, and cancelling it
  // cancels that whole job.
  std::string allocation;
};

// The job's shape: nodes and ranks per node for `world_size` ranks.
struct SlurmJobShape {
  int nodes = 1;
  int tasks_per_node = 1;
};
// REQUIRES: world_size >= 1. Throws std::invalid_argument when nodes_per_trial is set and too
// small to hold the ranks at one per GPU, or larger than the world size.
SlurmJobShape ShapeJob(int world_size, const SlurmOptions& options);

// The folder the ranks start in (sbatch --chdir, srun --chdir): the request's working_dir (a
// `command` workload's sweep folder), else its run folder.
std::filesystem::path RanksFolder(const LaunchRequest& request);

// The batch script's text for `request` (written to <run_dir>/slurm_job.sh).
std::string SlurmJobScript(const LaunchRequest& request, const SlurmOptions& options,
                           const SlurmJobShape& shape);

// `--slurm-mode step`: the script the coordinator runs (with /bin/sh, as a local process) for
// `request`: one `srun` whose tasks are the ranks, a job step of the allocation the coordinator
// runs in (or, outside one, a job srun allocates itself). Every rank derives the torchrun
// environment from its step (SLURM_STEP_NODELIST, SLURM_STEP_ID), since steps of one
// allocation may run side by side; rank 0 leaves "<job>.<step>" in slurm_step, which is what
// a cancel scancels.
std::string SlurmStepScript(const LaunchRequest& request, const SlurmOptions& options,
                            const SlurmJobShape& shape);

// The arguments of `sbatch` (after the program name) that submit `script` for `request`.
std::vector<std::string> SbatchArguments(const LaunchRequest& request,
                                         const SlurmOptions& options, const SlurmJobShape& shape,
                                         const std::filesystem::path& script);

// `text` as one shell word in single quotes.
std::string ShellQuote(const std::string& text);

// Where rank `rank` leaves its exit status.
std::filesystem::path RankExitPath(const std::filesystem::path& run_dir, int rank);

// How each rank of a trial run by one of these scripts ended, from its rank<r>.exit: the
// shell's code (128+N: killed by signal N); a rank that left none was killed before its shell
// could write one (SIGKILL, killed_by_us). Fills outcome->ranks (world_size of them) and
// first_failed_rank (the lowest rank with a non-zero code).
void ReadRankExits(const std::filesystem::path& run_dir, int world_size, LaunchOutcome* outcome);

}  // namespace ditbench
