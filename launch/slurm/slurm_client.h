// Talking to Slurm, behind a small interface so that the Slurm launcher is testable without a
// cluster: submit a job, ask how it stands, cancel it. SlurmCommands is the real thing (the
// sbatch, scontrol, sacct and scancel programs on PATH, reading SLURM_CONF like any Slurm
// client); tests of the launcher's bookkeeping may use a fake.
//
// Thread-safety: none needed; one thread (the sweep loop's) uses a client.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launch/slurm/slurm_states.h"

namespace ditbench {

class SlurmClient {
 public:
  virtual ~SlurmClient() = default;
  // Runs `sbatch` with `arguments` (which include --parsable) and returns the job id. Throws
  // std::runtime_error with sbatch's own words when the job was not accepted.
  virtual std::string Submit(const std::vector<std::string>& arguments) = 0;
  // How the job stands; nullopt when Slurm knows no such job (its controller forgot it and
  // there is no accounting to ask).
  virtual std::optional<SlurmJobState> Query(const std::string& job_id) = 0;
  // Asks Slurm to cancel the job (scancel); a job already ended is not an error.
  virtual void Cancel(const std::string& job_id) = 0;
};

class SlurmCommands final : public SlurmClient {
 public:
  std::string Submit(const std::vector<std::string>& arguments) override;
  // `scontrol show job -o`, then `sacct` for a job the controller no longer holds.
  std::optional<SlurmJobState> Query(const std::string& job_id) override;
  void Cancel(const std::string& job_id) override;
};

// What a program printed (stdout and stderr together) and how it exited.
struct ProgramOutput {
  int exit_code = -1;  // -1: could not be started, or killed by a signal
  std::string text;
};
// Runs `program` (searched on PATH unless it holds a '/') with `arguments`, stdin from
// /dev/null, and waits for it at most `time_limit`: a program still running then is killed
// (exit_code -1, the text says so). At most 64 KiB of output is kept.
ProgramOutput RunProgram(const std::string& program, const std::vector<std::string>& arguments,
                         std::chrono::milliseconds time_limit = std::chrono::seconds(60));

}  // namespace ditbench
