// `ditbench plan SWEEP.yaml`: every trial of the sweep, valid or why not, with estimates.
// Runs nothing.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "analysis/configuration_group.h"
#include "base/choices.h"
#include "base/user_error.h"
#include "cli/command.h"
#include "cli/format_option.h"
#include "cli/number_checks.h"
#include "experiments/trial_fields.h"
#include "launch/command_program.h"
#include "launch/launchers.h"
#include "launch/slurm/slurm_cluster.h"
#include "machine/host_info.h"
#include "machine/placement.h"
#include "plan/budget_order.h"
#include "plan/cost_model.h"
#include "plan/fitted_model.h"
#include "plan/plan_output.h"
#include "plan/stored_calibration.h"
#include "plan/sweep_plan.h"
#include "report/output_file.h"
#include "runner/dry_run.h"
#include "runner/output_error.h"
#include "storage/results_db.h"

namespace ditbench {
namespace {

struct PlanOptions {
  std::filesystem::path sweep;
  std::string gpus = "auto";
  std::filesystem::path db = "results.db";
  std::string device;  // empty: "cpu" on CPU, "unknown GPU" when GPUs are listed
  std::string budget;  // --budget DURATION: how much of the sweep fits
  std::string launcher = "local";    // parsed into `launcher_kind` before anything runs
  std::string policy = "exclusive";  // parsed into `placement_policy` likewise
  LauncherKind launcher_kind = LauncherKind::kLocal;
  PlacementPolicy placement_policy = PlacementPolicy::kExclusive;
  std::string partition;
  int gpus_per_node = 0;  // --launcher slurm: 0 asks sinfo
  int nodes = 0;          // --launcher slurm: 0 asks sinfo
  bool explain = false;   // --explain: the cost model's leave-one-out error, printed and stored
};

// `plan --db --explain`: fits the device's trials, prints every term and each trial's
// leave-one-out prediction, and stores the fit (table model_fits). Returns an exit code.
int ExplainModel(const std::filesystem::path& path, const std::string& device) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    std::cerr << "ditbench plan: error: --explain: no results database '" << path.string() << "'\n";
    return kExitUsage;
  }
  auto db = ResultsDb::Open(path);
  const FittedModel fitted = FitFromDatabase(db->planner_history(), device);
  const LooReport loo = LeaveOneOut(fitted.observations);
  std::cout << "\n" << fitted.Explain() << "\n";
  if (fitted.model)
    for (const CostModel::Term& t : fitted.model->Terms())
      std::cout << fmt::format("  {:<36} {:>10.4g}  [{:.4g}, {:.4g}]{}\n", t.name,
                               t.coefficient.value, t.coefficient.low, t.coefficient.high,
                               t.active ? "" : "  (not used)");
  std::cout << fmt::format("leave-one-out over {} trials ({} predicted):", loo.entries.size(),
                           loo.predicted);
  if (loo.predicted == 0) {
    std::cout << " too few trials to fit without one\n";
  } else {
    std::cout << fmt::format(" median |error| {:.1f}%, worst {:.1f}%\n",
                             loo.median_abs_error * 100, loo.max_abs_error * 100);
    for (const LooEntry& e : loo.entries)
      if (e.predicted)
        std::cout << fmt::format("  {}  measured {:.4g} ms  predicted {:.4g} ms [{:.4g}, {:.4g}]  "
                                 "{:+.1f}%\n",
                                 e.trial_key, e.measured_ms, e.predicted->value,
                                 e.predicted->low, e.predicted->high, e.relative_error() * 100);
  }
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  db->planner_history().RecordModelFit(FitRecord(fitted, loo, now));
  return kExitOk;
}

// Under Slurm a trial may span nodes: the GPUs trials may use are SlurmCapacity's (sinfo, or
// --gpus-per-node and --nodes). Throws UserError when neither says how many GPUs a
// node has.
Placement SlurmPlacement(const PlanOptions& options) {
  std::string reason;
  const auto capacity =
      SlurmCapacity(options.partition, options.gpus_per_node, options.nodes, &reason);
  if (!capacity)
    throw UserError("--launcher slurm: cannot tell how many GPUs a node has (" + reason +
                    "); pass --gpus-per-node N (and --nodes N), or --gpus cpu:N");
  const std::string name = options.device.empty() ? "unknown GPU" : options.device;
  return ResolvePlacement("auto", AssumedGpus(capacity->nodes * capacity->gpus_per_node, name));
}

// A parallel trial whose sweep has no 1-rank trial of the same computation (ReferenceConfig)
// gets neither a speedup nor an output error: say so before anything runs.
void WarnMissingReferences(const SweepPlan& plan, std::ostream& err) {
  std::set<std::string> valid;
  for (const PlannedTrial& t : plan.trials)
    if (!t.invalid_reason) valid.insert(t.key);
  std::vector<std::string> missing;
  for (const PlannedTrial& t : plan.trials) {
    if (t.invalid_reason || t.config.world_size() <= 1) continue;
    if (!TraitsOf(t.config.workload).builtin_model) continue;
    if (!valid.contains(TrialKey(ReferenceConfig(t.config))))
      missing.push_back(fmt::format("{} ({} {})", t.key, PrecisionName(t.config.precision),
                                    ConfigurationLabel(t.config)));
  }
  if (missing.empty()) return;
  const std::size_t shown = std::min<std::size_t>(missing.size(), 5);
  err << fmt::format(
      "warning: {} parallel trial(s) have no 1-rank trial of the same computation in this "
      "sweep, so their speedup and output error stay unjudged: {}{} (add the 1-rank layout, "
      "e.g. ulysses: [1, ...])\n",
      missing.size(), fmt::join(missing.begin(), missing.begin() + shown, ", "),
      missing.size() > shown ? ", ..." : "");
}

// Where the plan's trials would be placed: on the Slurm cluster's GPUs, on the GPUs that --device
// and a --gpus list name on another machine, or on this machine's. Throws UserError for a --gpus
// list or a cluster that cannot be used.
Placement PlanPlacement(const PlanOptions& options) {
  if (options.launcher_kind == LauncherKind::kSlurm && !AsksForCpu(options.gpus))
    return SlurmPlacement(options);
  // With --device and a GPU list the sweep is planned for another machine: assume the
  // GPUs the list names instead of probing this one.
  if (!options.device.empty() && options.gpus != "auto" && !AsksForCpu(options.gpus)) {
    int highest = 0;
    std::stringstream list(options.gpus);
    for (std::string item; std::getline(list, item, ',');)
      if (!item.empty() && item.find_first_not_of("0123456789") == std::string::npos)
        highest = std::max(highest, std::stoi(item) + 1);
    return ResolvePlacement(options.gpus, AssumedGpus(highest, options.device));
  }
  return ResolvePlacement(options.gpus, *MachineGpuDiscovery());
}

// What the plan's estimates assume: the device, this machine's calibration, the node size.
PlanAssumptions AssumptionsFor(const PlanOptions& options, const Placement& placement) {
  PlanAssumptions assumptions;
  assumptions.device = !options.device.empty() ? options.device : DeviceFor(placement);
  // This machine's figures from the newest usable stored selfcheck (plan/stored_calibration.h).
  StoredCalibration stored = LoadCalibration(options.db, assumptions.device, Hostname());
  assumptions.calibration = std::move(stored.calibration);
  assumptions.uncalibrated_why = std::move(stored.why_not);
  // Under Slurm a trial wider than a node crosses InfiniBand (when the node size is given).
  if (options.launcher_kind == LauncherKind::kSlurm)
    assumptions.gpus_per_node = options.gpus_per_node;
  return assumptions;
}

// Adds plan's options after the sweep and the format to `sub`, each stored in `options`.
void AddPlanOptions(CLI::App& sub, PlanOptions& options) {
  sub.add_option("--gpus", options.gpus,
                 "auto | 0,1,2,3 (positions among the visible GPUs) | cpu:N (what validity "
                 "assumes)")
      ->capture_default_str();
  sub.add_option("--db", options.db, "earlier results, for measured estimates")
      ->capture_default_str();
  sub.add_option("--device", options.device,
                 "device name for the estimates, e.g. \"NVIDIA H100 80GB HBM3\" (default: "
                 "cpu, or the GPUs' name)");
  sub.add_option("--budget", options.budget,
                 "DURATION (90s, 30m, 8h): how many launches `run --budget` would start");
  sub.add_option("--policy", options.policy,
                 ChoicesHelp(kPlacementPolicies) + " (as `run` takes it)")
      ->capture_default_str();
  sub.add_flag("--explain", options.explain,
               "with --db: print the cost model fitted on the database's trials of the device, "
               "its leave-one-out error on them, and store it (table model_fits)");
  sub.add_option("--launcher", options.launcher,
                 ChoicesHelp(kLaunchers) +
                     " (under slurm, GPUs per node and nodes from sinfo or the options below)")
      ->capture_default_str();
  sub.add_option("--partition", options.partition, "--launcher slurm: the partition sinfo reads");
  sub.add_option("--gpus-per-node", options.gpus_per_node,
                 "--launcher slurm: GPUs per node (default: from sinfo)")
      ->check(Positive());
  sub.add_option("--nodes", options.nodes,
                 "--launcher slurm: nodes trials may use (default: the partition's, from sinfo)")
      ->check(Positive());
}

}  // namespace

std::function<int()> DefinePlanCommand(CLI::App& sub) {
  auto options = std::make_shared<PlanOptions>();
  sub.add_option("sweep", options->sweep, "sweep file (YAML)")->required();
  // Markdown: the table's trials as a pipe table.
  auto format = AddFormatOption(sub, "plan",
                                {TableFormat::kText, TableFormat::kJson, TableFormat::kMarkdown});
  AddPlanOptions(sub, *options);
  return [options, format] {
    const TableFormat output = format->Value();
    double budget_s = -1;
    try {
      if (!options->budget.empty()) budget_s = ParseBudgetOption(options->budget);
      options->placement_policy = ParseChoice(kPlacementPolicies, options->policy, "--policy");
      options->launcher_kind = ParseChoice(kLaunchers, options->launcher, "--launcher");
    } catch (const UserError& e) {
      std::cerr << "ditbench plan: error: " << e.what() << "\n";
      return kExitUsage;
    }
    ParseResult parsed = ParseSweepFile(options->sweep);
    if (!parsed.ok()) {
      for (const auto& e : parsed.errors) std::cerr << e.ToString() << "\n";
      return kExitUsage;
    }
    if (auto problem = CommandProgramProblem(parsed.spec)) {  // as `run` refuses it
      std::cerr << *problem << "\n";
      return kExitUsage;
    }
    Placement placement;
    try {
      placement = PlanPlacement(*options);
    } catch (const UserError& e) {  // a --gpus list or a cluster that cannot be used; anything
      // else is no mistake of the user's and goes to RunGuarded (exit 1)
      std::cerr << "ditbench plan: error: " << e.what() << "\n";
      return kExitUsage;
    }
    const PlanAssumptions assumptions = AssumptionsFor(*options, placement);
    SweepPlan plan = PlanSweepForPolicy(parsed.spec, placement.capacity, assumptions, options->db,
                                        options->placement_policy == PlacementPolicy::kPack,
                                        /*show_pack=*/true);
    // With a database, each row says what a `run` would do with the trial (as --dry-run).
    std::error_code ec;
    std::optional<ResumePreview> preview;
    if (std::filesystem::is_regular_file(options->db, ec)) {
      RunOptions run;
      run.db = options->db;
      preview = PreviewResume(run, parsed.spec, plan);
    }
    PrintAs(
        output,
        {{TableFormat::kJson,
          [&](std::ostream& out) { WritePlanJson(parsed.spec, plan, assumptions, out, budget_s); }},
         {TableFormat::kMarkdown, [&](std::ostream& out) { WritePlanMarkdown(plan, out); }},
         {TableFormat::kText,
          [&](std::ostream& out) {
            WritePlanTable(parsed.spec, plan, assumptions, out,
                           preview ? preview->notes : std::vector<std::string>{}, budget_s);
            if (preview) out << "a run with --db " << options->db.string() << " " << preview->line;
          }}},
        {}, std::cout);
    WarnMissingReferences(plan, std::cerr);
    if (options->explain) {
      try {
        if (const int code = ExplainModel(options->db, assumptions.device)) return code;
      } catch (const StorageError& e) {
        std::cerr << "ditbench plan: error: " << e.what() << "\n";
        return kExitTrialsFailed;
      }
    }
    try {
      CheckOutput(std::cout, "the plan to standard output");
    } catch (const std::exception& e) {
      std::cerr << "ditbench plan: error: " << e.what() << "\n";
      return kExitTrialsFailed;
    }
    return kExitOk;
  };
}

}  // namespace ditbench
