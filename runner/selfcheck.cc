#include "runner/selfcheck.h"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "base/terminal_text.h"

namespace ditbench {
namespace {

// The last non-empty line of the rank 0 log, for a failure's reason ("" when none).
std::string LastLogLine(const std::filesystem::path& run_dir) {
  std::ifstream log(run_dir / "rank0.log");
  std::string line, last;
  while (std::getline(log, line))
    if (!line.empty()) last = line;
  return ForTerminal(last, 200);
}

// Why the worker's launch gave no measurements, or "" when it exited 0.
std::string LaunchFailure(const LaunchOutcome& outcome, const SelfcheckRequest& request) {
  if (!outcome.launch_error.empty()) return "could not start: " + outcome.launch_error;
  if (outcome.timed_out) return fmt::format("timed out after {:.0f} s (killed)", request.timeout_s);
  for (const auto& rank : outcome.ranks) {
    if (!rank.exited) continue;
    std::string why;
    if (rank.signal != 0)
      why = fmt::format("killed by signal {}", rank.signal);
    else if (rank.exit_code != 0)
      why = fmt::format("exited with code {}", rank.exit_code);
    if (why.empty()) continue;
    const std::string last = LastLogLine(request.run_dir);
    return last.empty() ? why : why + ": " + last;
  }
  return "";
}

// Keeps the sample of highest power draw: the moment of heaviest load.
void KeepHeaviest(std::optional<GpuState>& load, const GpuState& sample) {
  if (!load || sample.power_w.value_or(0) >= load->power_w.value_or(0)) load = sample;
}

// The wall time of one `ditbench-worker --describe` launch (one rank, on the first device
// checked): what a launch costs around its work once the worker's files are in the page cache,
// as they are for every trial but a sweep's first. nullopt when it fails.
std::optional<double> DescribeLaunchSeconds(const SelfcheckRequest& request, Launcher& launcher) {
  LaunchRequest launch;
  launch.trial_key = "selfcheck-describe";
  launch.run_dir = request.run_dir / "describe";
  launch.worker = request.worker;
  launch.args = {"--describe"};
  launch.world_size = 1;
  if (!request.devices.empty()) launch.devices = {request.devices.front()};
  launch.timeout_s = 60;
  try {
    std::filesystem::create_directories(launch.run_dir);
    launcher.Start(launch);
    std::optional<FinishedTrial> finished;
    while (!finished) finished = launcher.Wait(std::chrono::milliseconds(500));
    const LaunchOutcome& outcome = finished->outcome;
    if (!outcome.launch_error.empty() || outcome.timed_out) return std::nullopt;
    for (const auto& rank : outcome.ranks)
      if (rank.signal != 0 || rank.exit_code != 0) return std::nullopt;
    return outcome.wall_s;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::filesystem::path SelfcheckFile(const std::filesystem::path& run_dir) {
  return run_dir / "selfcheck.json";
}

SelfcheckResult RunSelfcheck(const SelfcheckRequest& request, SelfcheckEffects& effects) {
  SelfcheckObservations o;
  o.gpu = !request.devices.empty();
  o.gpu_uuids = request.gpu_uuids;
  o.cpu_governors = effects.cpu_governors;
  if (effects.health != nullptr)
    o.health = o.gpu ? effects.health->SampleWithGpus() : effects.health->Sample();
  if (o.gpu) {
    o.gpu_state_why_not = effects.gpu_state_why_not;
    o.energy_why_not = effects.energy_why_not;
  }
  std::string why;
  if (o.gpu && effects.gpu_state != nullptr) {
    o.idle = effects.gpu_state->Read(&why);
    if (!o.idle) o.gpu_state_why_not = why;
  }
  std::optional<EnergyReading> energy_start;
  if (o.gpu && effects.energy != nullptr) {
    energy_start = effects.energy->Read(&why);
    if (!energy_start) o.energy_why_not = why;
  }

  const std::filesystem::path file = SelfcheckFile(request.run_dir);
  std::filesystem::create_directories(request.run_dir);
  std::filesystem::remove(file);
  LaunchRequest launch;
  launch.trial_key = "selfcheck";
  launch.run_dir = request.run_dir;
  launch.worker = request.worker;
  launch.args = {"--selfcheck", file.string()};
  launch.world_size = request.world_size;
  launch.rendezvous_socket = true;  // this build's worker (LaunchRequest::rendezvous_socket)
  launch.devices = request.devices;
  launch.timeout_s = request.timeout_s;

  // Start the worker, then wait for it, reading the GPU's state between waits.
  std::optional<LaunchOutcome> outcome;
  try {
    effects.launcher.Start(launch);
    while (!outcome) {
      if (auto finished = effects.launcher.Wait(request.sample_every)) {
        outcome = finished->outcome;
      } else if (o.gpu && effects.gpu_state != nullptr) {
        if (auto sample = effects.gpu_state->Read(&why)) KeepHeaviest(o.load, *sample);
      }
    }
  } catch (const std::exception& e) {
    o.worker_error = std::string("could not start: ") + e.what();
  }
  if (outcome) {
    o.worker_wall_s = outcome->wall_s;
    o.worker_error = LaunchFailure(*outcome, request);
  }
  if (energy_start) {
    if (auto end = effects.energy->Read(&why)) {
      o.energy = EnergyBetween(*energy_start, *end, &why);
      if (!o.energy) o.energy_why_not = why;
    } else {
      o.energy_why_not = why;
    }
  }
  if (o.worker_error.empty()) {
    try {
      o.measurements = ReadSelfcheckMeasurements(file);
    } catch (const std::exception& e) {
      o.worker_error = ForTerminal(e.what(), 300);
    }
  }
  if (o.measurements) o.describe_wall_s = DescribeLaunchSeconds(request, effects.launcher);
  SelfcheckResult result{o, JudgeSelfcheck(o)};
  return result;
}

}  // namespace ditbench
