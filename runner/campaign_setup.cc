#include "runner/campaign_setup.h"

#include <algorithm>
#include <ostream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "base/user_error.h"
#include "launch/command_program.h"
#include "launch/local_launcher.h"
#include "machine/build_info.h"
#include "machine/environment.h"
#include "machine/host_info.h"
#include "plan/plan_output.h"
#include "plan/resume.h"
#include "runner/coordinator_lock.h"
#include "runner/database_wait.h"
#include "runner/engine_server.h"
#include "runner/run_folder.h"
#include "runner/unrecorded_launch.h"
#include "storage/storage_error.h"

namespace ditbench {
namespace {

// The engine servers that clients killed with their coordinator left on this host
// (runner/engine_server.h, StopLeftoverServer): stopped before the campaign goes on, each said
// in one line. A trial whose coordinator ran on another host is that host's to clean.
void StopServersLeftBehind(CampaignWriter& writer, std::int64_t campaign,
                           const CampaignWriter::CoordinatorIsGone& gone,
                           const std::set<std::string>& taken_over, std::ostream& out) {
  const std::string host = Hostname();
  for (const CampaignWriter::RunningTrial& running : writer.RunningTrials(campaign)) {
    if (taken_over.count(running.trial_key) || running.run_dir.empty() ||
        running.coordinator_host != host ||
        !gone(running.coordinator_host, running.coordinator_pid))
      continue;
    if (auto done = StopLeftoverServer(running.run_dir))
      out << fmt::format("trial {}: {}\n", running.trial_key, *done);
  }
}

}  // namespace

std::optional<SweepSetup> PrepareSweep(const RunOptions& options, const SweepEffects& effects,
                                       std::ostream& err) {
  ParseResult parsed = ParseSweepFile(options.sweep);
  if (!parsed.ok()) {
    for (const auto& e : parsed.errors) err << e.ToString() << "\n";
    return std::nullopt;
  }
  SweepSetup setup;
  setup.spec = std::move(parsed.spec);
  if (options.replicates) {
    if (*options.replicates < 1 || *options.replicates > kMaxReplicates) {
      err << fmt::format("ditbench run: error: replicates {}: expected 1 to {}\n",
                         *options.replicates, kMaxReplicates);
      return std::nullopt;
    }
    setup.spec.replicates = *options.replicates;
  }
  const SweepSpec& spec = setup.spec;
  setup.policy = options.policy;
  Placement& placement = setup.placement;
  try {
    // Under pack, CPU slots are pinned to cores (exclusive: a trial's ranks share them all).
    placement = ResolvePlacement(options.gpus, effects.gpus,
                                 options.policy == PlacementPolicy::kPack ? effects.cpus : nullptr);
  } catch (const UserError& e) {  // a --gpus list that cannot be used; anything else is a bug
    err << "ditbench run: error: " << e.what() << "\n";
    return std::nullopt;
  }
  if (const unsigned cores = std::thread::hardware_concurrency();
      !placement.capacity.on_gpu && cores > 0 &&
      placement.capacity.slots > static_cast<int>(cores)) {
    err << fmt::format("ditbench run: warning: --gpus {} asks for {} CPU slots on a machine with "
                       "{} cores: ranks will share cores and their times will show it\n",
                       options.gpus, placement.capacity.slots, cores);
  }
  PlanAssumptions& assumptions = setup.assumptions;
  assumptions.device = DeviceFor(placement);
  // Under pack, CPU estimates are for pinned cores (the --budget order uses them).
  setup.plan = PlanSweepForPolicy(spec, placement.capacity, assumptions, options.db,
                                  options.policy == PlacementPolicy::kPack,
                                  /*show_pack=*/options.dry_run);
  const SweepPlan& plan = setup.plan;
  const TrialSelectionResult selected = SelectTrials(spec.name, plan, options.only);
  if (selected.error) {
    err << "ditbench run: error: " << *selected.error << "\n";
    return std::nullopt;
  }
  setup.selection = selected.selection;
  const auto worker = options.worker.empty() ? DefaultWorkerProgram() : options.worker;
  setup.worker = worker;
  if (TraitsOf(spec.workload).launch == WorkloadLaunch::kProgram) {
    if (auto problem = CommandProgramProblem(spec); problem && !options.dry_run) {
      err << *problem << "\n";
      return std::nullopt;
    }
    setup.worker = options.command_prefix;  // the program's prefix, if any
    if (!options.dry_run && !setup.worker.empty() && !std::filesystem::exists(setup.worker)) {
      err << "ditbench run: error: command prefix not found at " << setup.worker.string() << "\n";
      return std::nullopt;
    }
  } else if (TraitsOf(spec.workload).launch == WorkloadLaunch::kEngine) {
    // `ditbench engine-trial` (runner/engine_trial.h): this program, or --worker's.
    setup.worker = options.worker.empty() ? EngineClientProgram() : options.worker;
  } else if (!options.dry_run && !std::filesystem::exists(worker)) {
    err << "ditbench run: error: worker not found at " << worker.string()
        << " (build ditbench-worker or pass --worker)\n";
    return std::nullopt;
  }
  return setup;
}

std::set<std::string> BusyTrials(ResultsDb& db, std::int64_t campaign) {
  std::set<std::string> busy;
  for (const ResultRow& row : db.reader().Results({campaign}))
    if (row.busy) busy.insert(row.trial_key);
  return busy;
}

std::optional<CampaignStart> StartCampaign(const RunOptions& options, const SweepSetup& setup,
                                           const SweepEffects& effects,
                                           const std::filesystem::path& run_root,
                                           RunStatus& status, std::ostream& out,
                                           std::ostream& err) {
  const SweepSpec& spec = setup.spec;
  const SweepPlan& plan = setup.plan;
  const Placement& placement = setup.placement;
  try {
    if (std::string owned = ClaimRunRoot(run_root, options.db); !owned.empty()) {
      err << "ditbench run: error: " << owned << "\n";
      return std::nullopt;
    }
  } catch (const std::exception& e) {
    err << "ditbench run: error: cannot use run folder '" << run_root.string()
        << "': " << e.what() << "\n";
    return std::nullopt;
  }

  CampaignStart start;
  try {
    start.db = ResultsDb::Open(options.db, false, ConsoleBusyWait(effects.interrupt, out));
    ResultsDb& db = *start.db;
    CampaignRecord record;
    record.sweep_name = spec.name;
    record.sweep_path = options.sweep.string();
    record.spec_hash = Sha256Hex(spec.text);
    record.spec_text = spec.text;
    record.build = BuildId();
    record.host = Hostname();
    record.environment = CoordinatorEnvironment();
    if (const auto& tested = options.build_under_test) {
      record.environment["bisect"] = {{"build", tested->build},
                                      {"session", tested->session},
                                      {"position", tested->position},
                                      {"worker", setup.worker.string()},
                                      {"coordinator_build", record.build}};
      record.build = tested->build;
    }
    record.environment["gpus"] = options.gpus;
    record.environment["devices"] = placement.devices;
    record.environment["policy"] = std::string(ChoiceName(kPlacementPolicies, options.policy));
    record.environment["launcher"] = std::string(ChoiceName(kLaunchers, options.launcher));
    record.environment["slots"] = placement.capacity.slots;
    record.environment["on_gpu"] = placement.capacity.on_gpu;
    if (!AsksForCpu(options.gpus)) {  // the driver was asked: by which source, and why
      record.environment["gpu_discovery"] = ToJson(effects.gpus.Listing());
      status.GpusFound(Describe(effects.gpus.Listing()), placement.capacity.on_gpu);
    }
    const std::vector<CampaignInfo> campaigns = db.reader().Campaigns();
    if (auto lost = UnknownCampaignFolders(run_root, campaigns); !lost.empty()) {
      err << "ditbench run: error: " << UnknownCampaignsProblem(run_root, options.db, lost) << "\n";
      return std::nullopt;
    }
    // A campaign is one spec: a changed sweep file starts a new one, and says what changed.
    const CampaignChoice choice =
        ChooseCampaign(campaigns, record, options.fresh, options.keep_campaign);
    const bool fresh = !choice.resume.has_value();
    if (choice.changed_from) status.SweepChanged(spec.name, *choice.changed_from, choice.diff);
    const std::int64_t campaign = start.campaign =
        db.writer().ResumeOrCreateCampaign(record, fresh);
    auto gone = [](const std::string& host, std::int64_t pid) {
      return CoordinatorGone(host, static_cast<long>(pid));
    };
    start.adopted = AdoptSchedulerJobs(db.writer(), campaign, spec, plan, effects.launcher,
                                       setup.worker, gone, out);
    std::set<std::string> taken_over;
    for (const AdoptedTrial& a : start.adopted) taken_over.insert(a.trial->key);
    StopServersLeftBehind(db.writer(), campaign, gone, taken_over, out);
    RecordUnrecordedLaunches(db.writer(), db.output_errors(), campaign, plan, spec.replicates, gone,
                             taken_over, out);
    if (int n =
            db.writer().MarkRunningAsInterrupted(campaign, gone, &start.still_running, taken_over))
      status.OrphansInterrupted(n);
    for (const auto& key : start.still_running) status.StillRunningElsewhere(key);
    start.statuses = db.reader().TrialStatuses(campaign);
    start.launch_statuses = db.reader().LaunchStatuses(campaign);
    start.busy = BusyTrials(db, campaign);
  } catch (const StorageError&) {
    throw;  // the database failed: RunSweep says so and exits 3
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
    return std::nullopt;
  }
  return start;
}

}  // namespace ditbench
