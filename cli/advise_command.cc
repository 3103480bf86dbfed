// `ditbench advise SWEEP --db DB`: every valid layout of the sweep ranked by measured or
// predicted objective with intervals, the recommendation's regret, and what to measure next
// (plan/advisor.h). Runs nothing; reads the database only.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "base/user_error.h"
#include "cli/command.h"
#include "cli/format_option.h"
#include "cli/number_checks.h"
#include "machine/host_info.h"
#include "machine/placement.h"
#include "plan/advice_output.h"
#include "plan/advisor.h"
#include "plan/fitted_model.h"
#include "plan/plan_output.h"
#include "plan/stored_calibration.h"
#include "plan/sweep_plan.h"
#include "storage/results_db.h"

namespace ditbench {
namespace {

struct AdviseCliOptions {
  std::filesystem::path sweep;
  std::filesystem::path db = "results.db";
  std::string gpus = "auto";
  std::string device;
  std::string objective = "latency";
  double max_output_error = -1;
};

}  // namespace

std::function<int()> DefineAdviseCommand(CLI::App& sub) {
  auto options = std::make_shared<AdviseCliOptions>();
  sub.add_option("sweep", options->sweep, "sweep file (YAML)")->required();
  sub.add_option("--db", options->db, "results database the cost model is fitted on")
      ->capture_default_str();
  sub.add_option("--gpus", options->gpus,
                 "auto | 0,1,2,3 (positions among the visible GPUs) | cpu:N (what validity "
                 "assumes)")
      ->capture_default_str();
  sub.add_option("--device", options->device,
                 "device kind whose trials the model is fitted on (default: cpu, or the GPUs' "
                 "name)");
  sub.add_option("--objective", options->objective,
                 "latency (ms), throughput (images/s) or efficiency (images/s per rank)")
      ->check(CLI::IsMember({"latency", "throughput", "efficiency"}))
      ->capture_default_str();
  sub.add_option("--max-output-error", options->max_output_error,
                 "leave out measured trials whose output error (rel. L2 against 1 rank) is "
                 "above this")
      ->check(NonNegative());
  auto format = AddFormatOption(sub, "advise", EveryTableFormat());
  return [options, format] {
    const TableFormat output = format->Value();
    ParseResult parsed = ParseSweepFile(options->sweep);
    if (!parsed.ok()) {
      for (const auto& e : parsed.errors) std::cerr << e.ToString() << "\n";
      return kExitUsage;
    }
    std::error_code ec;
    if (!std::filesystem::exists(options->db, ec)) {
      std::cerr << "ditbench advise: error: no results database '" << options->db.string()
                << "' (run the sweep, or some of it, first: ditbench run --search advise)\n";
      return kExitUsage;
    }
    Placement placement;
    try {
      placement = ResolvePlacement(options->gpus, *MachineGpuDiscovery());
    } catch (const UserError& e) {  // a --gpus list that cannot be used; anything else is no
      // mistake of the user's and goes to RunGuarded (exit 1)
      std::cerr << "ditbench advise: error: " << e.what() << "\n";
      return kExitUsage;
    }
    PlanAssumptions assumptions;
    assumptions.device = !options->device.empty() ? options->device : DeviceFor(placement);
    // This machine's figures from the newest usable stored selfcheck (plan/stored_calibration.h).
    StoredCalibration stored = LoadCalibration(options->db, assumptions.device, Hostname());
    assumptions.calibration = std::move(stored.calibration);
    assumptions.uncalibrated_why = std::move(stored.why_not);
    const SweepPlan plan = PlanSweep(parsed.spec, placement.capacity, assumptions, options->db);
    const FittedModel fitted = FitFromDatabase(options->db, assumptions.device);
    AdviseOptions advise;
    advise.objective = *ParseObjective(options->objective);
    if (options->max_output_error >= 0) advise.max_output_error = options->max_output_error;
    Advice advice = Advise(plan, fitted, advise);
    // The speedups every output shows (analysis/speedup.h), over the answering campaigns.
    AttachSpeedups(advice, ResultsDb::Open(options->db, /*read_only=*/true)->reader());
    WriteAdvice(advice, output, parsed.spec.name, assumptions.device, std::cout);
    return kExitOk;  // RunGuarded flushes standard output and checks every write to it
  };
}

}  // namespace ditbench
