// `ditbench selfcheck` (cli/selfcheck.h).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/table.h"
#include "base/table_printers.h"
#include "base/user_error.h"
#include "cli/command.h"
#include "cli/format_option.h"
#include "cli/selfcheck.h"
#include "launch/local_launcher.h"
#include "machine/build_info.h"
#include "machine/cpu_governor.h"
#include "machine/host_info.h"
#include "machine/placement.h"
#include "runner/selfcheck.h"
#include "storage/iso_time.h"
#include "storage/results_db.h"

namespace ditbench {
namespace {

Table VerdictTable(const std::vector<SelfcheckRow>& rows) {
  Table table({{"check"}, {"verdict"}, {"figure"}, {"reason"}});
  for (const auto& row : rows)
    table.AddRow({row.name, VerdictName(row.verdict), row.figure, row.reason});
  return table;
}

// The PCI bus id of the GPU with `uuid` ("" when not known).
std::string PciBusId(const GpuDiscovery& discovery, const std::string& uuid) {
  for (const auto& gpu : discovery.ListGpus())
    if (!uuid.empty() && gpu.uuid == uuid) return gpu.pci_bus_id;
  return "";
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

int RunSelfcheckCommand(const SelfcheckOptions& options, const GpuDiscovery& discovery,
                        std::ostream& out, std::ostream& err) {
  Placement placement;
  try {
    placement = ResolvePlacement(options.gpus, discovery);
  } catch (const UserError& e) {
    err << "ditbench selfcheck: error: " << e.what() << "\n";
    return kExitUsage;
  }
  const bool gpu = placement.capacity.on_gpu;
  SelfcheckRequest request;
  request.worker = options.worker.empty() ? DefaultWorkerProgram() : options.worker;
  request.run_dir = options.db.parent_path() / (options.db.stem().string() + ".runs") / "selfcheck";
  request.devices = placement.devices;
  request.gpu_uuids = placement.uuids;
  // CPU: `cpu:N` ranks, else two on a machine of two cores or more, so that Gloo's collectives
  // are measured too (what `plan` calibrates 2-rank trials with).
  const int cpu_ranks =
      std::min(2, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  request.world_size = gpu ? static_cast<int>(placement.devices.size())
                       : options.gpus.rfind("cpu:", 0) == 0 ? placement.capacity.slots
                                                            : cpu_ranks;
  request.timeout_s = options.timeout_s > 0 ? options.timeout_s
                      : gpu                 ? kSelfcheckTimeoutGpuS
                                            : kSelfcheckTimeoutCpuS;

  // The first GPU's state and energy counter, through NVML: the others run the same load.
  std::unique_ptr<GpuStateProbe> state;
  std::unique_ptr<EnergyCounter> energy;
  LocalLauncher launcher;
  ProcHealthProbe health;
  SelfcheckEffects effects{launcher};
  effects.health = &health;
  effects.cpu_governors = CpuGovernors();
  if (gpu) {
    const std::string bus_id =
        PciBusId(discovery, placement.uuids.empty() ? "" : placement.uuids[0]);
    if (bus_id.empty()) {
      effects.gpu_state_why_not = effects.energy_why_not = "the GPU's PCI bus id is unknown";
    } else {
      state = OpenNvmlGpuStateProbe(bus_id, &effects.gpu_state_why_not);
      energy = OpenNvmlEnergyCounter(bus_id, &effects.energy_why_not);
    }
    effects.gpu_state = state.get();
    effects.energy = energy.get();
  }
  err << fmt::format("ditbench selfcheck: {} on {} ({} rank(s), at most {:.0f} s)\n",
                     request.worker.string(), placement.device_name, request.world_size,
                     request.timeout_s);
  const double started = UnixNow();
  const SelfcheckResult result = RunSelfcheck(request, effects);
  PrintTable(VerdictTable(result.rows), options.format, out);

  SelfcheckRecord record;
  record.device = placement.device_name;
  record.build = BuildId();
  record.host = Hostname();
  record.started_at = IsoUtc(started);
  record.rows = result.rows;
  if (result.observations.measurements) {
    SelfcheckMeasurements stored = *result.observations.measurements;
    stored.launch_wall_s = result.observations.describe_wall_s;  // the planner's start-up
    record.measurements = SelfcheckJson(stored);
  }
  try {
    auto db = ResultsDb::Open(options.db);
    db->selfchecks().Record(record);
  } catch (const std::exception& e) {
    err << "ditbench selfcheck: could not store the verdict: " << e.what() << "\n";
    return kExitStorageFailed;
  }
  return AnyFailed(result.rows) ? kExitCheckFailed : kExitOk;
}

nlohmann::json StoredSelfchecksJson(const std::filesystem::path& db) {
  if (!std::filesystem::exists(db))
    return fmt::format("no results database at '{}' (run `ditbench selfcheck`)", db.string());
  try {
    auto results = ResultsDb::Open(db, /*read_only=*/true);
    nlohmann::json checks = nlohmann::json::object();
    for (const auto& record : results->selfchecks().LatestPerDevice())
      checks[record.device + " on " + record.host] = {{"build", record.build},
                                                      {"started_at", record.started_at},
                                                      {"rows", NotPassingLines(record.rows)}};
    if (checks.empty())
      return fmt::format("none stored in '{}' (run `ditbench selfcheck`)", db.string());
    return checks;
  } catch (const std::exception& e) {
    return std::string("not read: ") + e.what();
  }
}

std::function<int()> DefineSelfcheckCommand(CLI::App& sub) {
  auto options = std::make_shared<SelfcheckOptions>();
  sub.add_option("--gpus", options->gpus,
                 "auto | 0,1 | cpu | cpu:N: the devices checked, as `run --gpus` (2+ devices "
                 "also check communication)")
      ->capture_default_str();
  sub.add_option("--db", options->db, "results database the verdict is stored in")
      ->capture_default_str();
  auto format = AddFormatOption(sub, "selfcheck", EveryTableFormat());
  sub.add_option("--worker", options->worker, "worker program (default: next to ditbench)");
  return [options, format] {
    options->format = format->Value();
    return RunSelfcheckCommand(*options, *MachineGpuDiscovery(), std::cout, std::cerr);
  };
}

}  // namespace ditbench
