// The verdicts of `ditbench selfcheck` (docs/selfcheck.md): from what the worker measured
// (contract/selfcheck_measurements.h) and what the coordinator observed around it (the GPU's
// state from NVML, its energy counter, the host), a table of rows, each pass / warn / fail /
// skip with its figure and the reason. Pure: the observations are values, so every row is
// tested with fakes (tests/runner/selfcheck_rules_test.cc).
//
// The rows are one table (SelfcheckRules()) of {name, what it checks, judge}; a judge gives
// one row, or several (attention: one per SDPA backend), or none (communication on one rank).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "contract/selfcheck_measurements.h"
#include "contract/selfcheck_row.h"
#include "machine/energy_counter.h"
#include "machine/gpu_state.h"
#include "machine/machine_health.h"

namespace ditbench {

// Everything the rules judge. `measurements` is unset when the worker gave none; then
// `worker_error` says why (missing, failed, timed out, a bad file).
struct SelfcheckObservations {
  bool gpu = false;
  std::optional<SelfcheckMeasurements> measurements;
  std::string worker_error;
  double worker_wall_s = 0;
  // The wall time of one `ditbench-worker --describe` launch right after the worker (process
  // start, LibTorch's load from a warm page cache, exit): the planner's start-up
  // (plan/calibration.h); unset when that launch failed (a fake worker, a broken install).
  std::optional<double> describe_wall_s;
  // GPU: the state before the worker started (idle) and the sample of highest power draw
  // while it ran (under load); unset, with why, when NVML could not tell.
  std::optional<GpuState> idle, load;
  std::string gpu_state_why_not;
  // GPU: the energy counter between the worker's start and end; unset, with why.
  std::optional<EnergyWindow> energy;
  std::string energy_why_not;
  // The host, sampled before the worker started.
  std::optional<MachineHealth> health;
  std::vector<std::string> gpu_uuids;        // the GPUs checked, for MachineHealth::BusyOn
  std::map<std::string, int> cpu_governors;  // machine/cpu_governor.h
};

// The thresholds of the rules (docs/selfcheck.md says why each).
struct SelfcheckThresholds {
  static constexpr double kTimingPass = 0.01, kTimingWarn = 0.03;  // relative clock error
  static constexpr double kGraphMaxAbsDiff = 1e-6;
  static constexpr double kSmClockShare = 0.90, kMemoryClockShare = 0.95;  // of the maximum
  static constexpr double kPowerOverLimit = 1.10;   // average power above the limit: wrong
  static constexpr double kMatmulPeakShare = 0.50;  // GPU bf16 matmul of the dense peak
};

struct SelfcheckRule {
  const char* name;
  const char* checks;  // one line: what it measures (docs/selfcheck.md has the why)
  std::vector<SelfcheckRow> (*judge)(const SelfcheckObservations&);
};

// The rows, in the order they print.
const std::vector<SelfcheckRule>& SelfcheckRules();

// Every rule's rows, in order.
std::vector<SelfcheckRow> JudgeSelfcheck(const SelfcheckObservations& observations);

}  // namespace ditbench
