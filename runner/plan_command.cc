// `ditbench plan SWEEP.yaml`: every trial of the sweep, valid or why not, with estimates.
// Runs nothing.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <memory>

#include <CLI/CLI.hpp>

#include "runner/command.h"
#include "runner/plan_output.h"
#include "runner/sweep_plan.h"
#include "runner/placement.h"

namespace ditbench {
namespace {

struct PlanOptions {
  std::filesystem::path sweep;
  std::string format = "table";
  std::string gpus = "auto";
  std::filesystem::path db = "results.db";
  std::string device;  // empty: "cpu" on CPU, "unknown GPU" when GPUs are listed
};

}  // namespace

std::function<int()> DefinePlanCommand(CLI::App& sub) {
  auto options = std::make_shared<PlanOptions>();
  sub.add_option("sweep", options->sweep, "sweep file (YAML)")->required();
  sub.add_option("--format", options->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  sub.add_option("--gpus", options->gpus,
                 "auto | 0,1,2,3 (positions among the visible GPUs) | cpu:N (what validity "
                 "assumes)")
      ->capture_default_str();
  sub.add_option("--db", options->db, "earlier results, for measured estimates")
      ->capture_default_str();
  sub.add_option("--device", options->device,
                 "device name for the estimates, e.g. \"NVIDIA H100 80GB HBM3\" (default: "
                 "cpu, or the GPUs' name)");
  return [options] {
    ParseResult parsed = ParseSweepFile(options->sweep);
    if (!parsed.ok()) {
      for (const auto& e : parsed.errors) std::cerr << e.ToString() << "\n";
      return kExitUsage;
    }
    Placement placement;
    try {
      // With --device and a GPU list the sweep is planned for another machine: assume the
      // GPUs the list names instead of probing this one.
      const bool elsewhere = !options->device.empty() && options->gpus != "auto" &&
                             options->gpus.rfind("cpu", 0) != 0;
      if (elsewhere) {
        int highest = 0;
        std::stringstream list(options->gpus);
        for (std::string item; std::getline(list, item, ',');)
          if (!item.empty() && item.find_first_not_of("0123456789") == std::string::npos)
            highest = std::max(highest, std::stoi(item) + 1);
        placement = ResolvePlacement(options->gpus, AssumedGpus(highest, options->device));
      } else {
        placement = ResolvePlacement(options->gpus, NvidiaSmiDiscovery());
      }
    } catch (const std::exception& e) {
      std::cerr << "ditbench plan: error: " << e.what() << "\n";
      return kExitUsage;
    }
    PlanAssumptions assumptions;
    assumptions.device = !options->device.empty() ? options->device : DeviceFor(placement);
    SweepPlan plan = PlanSweep(parsed.spec, placement.capacity, assumptions, options->db);
    if (options->format == "json") WritePlanJson(parsed.spec, plan, assumptions, std::cout);
    else WritePlanTable(parsed.spec, plan, assumptions, std::cout);
    return kExitOk;
  };
}

}  // namespace ditbench
