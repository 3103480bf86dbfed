// `ditbench selfcheck`'s run (docs/selfcheck.md): starts `ditbench-worker --selfcheck FILE` as
// one trial-like launch (world_size ranks on the devices checked), watches the GPU's state and
// energy counter while it runs, reads its file and judges everything (runner/selfcheck_rules.h).
//
// Deciding stays in the rules; this only runs and observes, through seams: the Launcher
// (LocalLauncher, or a fake), an optional GpuStateProbe and EnergyCounter (NVML, or fakes),
// the HealthProbe and the CPU governors. A worker that cannot start, fails, runs past its
// timeout or writes a bad file becomes the "worker" row's failure, never an exception: the
// other rows are still judged.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "machine/energy_counter.h"
#include "machine/gpu_state.h"
#include "machine/machine_health.h"
#include "runner/selfcheck_rules.h"

namespace ditbench {

struct SelfcheckRequest {
  std::filesystem::path worker;
  std::filesystem::path run_dir;       // holds the measurements file and rank<r>.log
  std::vector<std::string> devices;    // CUDA_VISIBLE_DEVICES entries; empty: CPU
  std::vector<std::string> gpu_uuids;  // the same GPUs' UUIDs, for the host row
  int world_size = 1;
  double timeout_s = 60;                        // kSelfcheckTimeoutGpuS or kSelfcheckTimeoutCpuS
  std::chrono::milliseconds sample_every{500};  // how often the GPU state is read under load
};

// The worker's budget: the 3 minutes on one GPU, 1 on a CPU.
inline constexpr double kSelfcheckTimeoutGpuS = 180;
inline constexpr double kSelfcheckTimeoutCpuS = 60;

// What a selfcheck run touches. Pointers may be null: no GPU state, no energy counter, no
// host sample. REQUIRES: `launcher` has nothing in flight.
struct SelfcheckEffects {
  explicit SelfcheckEffects(Launcher& l) : launcher(l) {}
  Launcher& launcher;
  GpuStateProbe* gpu_state = nullptr;
  std::string gpu_state_why_not;  // why gpu_state is null on a GPU run
  EnergyCounter* energy = nullptr;
  std::string energy_why_not;  // why energy is null on a GPU run
  const HealthProbe* health = nullptr;
  std::map<std::string, int> cpu_governors;
};

struct SelfcheckResult {
  SelfcheckObservations observations;
  std::vector<SelfcheckRow> rows;
};

// Runs the worker once and judges. Never throws for the worker's trouble.
SelfcheckResult RunSelfcheck(const SelfcheckRequest& request, SelfcheckEffects& effects);

// The measurements file in `run_dir`.
std::filesystem::path SelfcheckFile(const std::filesystem::path& run_dir);

}  // namespace ditbench
