#include "runner/sweep_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "experiments/host_info.h"
#include "experiments/worker_contract.h"
#include "runner/build_info.h"
#include "runner/coordinator_lock.h"
#include "runner/environment.h"
#include "runner/ingest.h"
#include "runner/output_error.h"
#include "runner/placement.h"
#include "runner/plan_output.h"
#include "runner/progress.h"
#include "runner/resume.h"
#include "runner/run_folder.h"
#include "runner/sweep_plan.h"
#include "storage/results_db.h"

namespace ditbench {
namespace {

// How long one Wait() may block before the loop looks at the interrupt source again.
constexpr std::chrono::milliseconds kPollInterval{100};

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::filesystem::path DefaultWorker() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "ditbench-worker";
  return self.parent_path() / "ditbench-worker";
}

std::string Axes(const TrialConfig& c) {
  return fmt::format("{} {}px {} u{} r{} pf{} cfg{} dp{}", c.model, c.resolution,
                     PrecisionName(c.precision), c.ulysses, c.ring, c.pipefusion, c.cfg, c.dp);
}

// What the launcher needs to run `t` in `run_dir` (devices are added by the caller).
LaunchRequest TrialRequest(const PlannedTrial& t, const std::filesystem::path& run_dir,
                           const std::filesystem::path& worker) {
  LaunchRequest request;
  request.trial_key = t.key;
  request.run_dir = run_dir;
  request.worker = worker;
  request.args = {"--trial", (run_dir / "trial.json").string()};
  request.world_size = t.config.world_size();
  request.timeout_s = t.config.timeout_s;
  return request;
}

// A trial to run and its 0-based position in the sweep (for progress lines).
struct QueuedTrial {
  std::size_t index;
  const PlannedTrial* trial;
};

// One campaign's trials through the launcher. Owns the bookkeeping of trials in flight; every
// method that touches the database may throw (storage trouble ends the sweep).
class SweepLoop {
 public:
  SweepLoop(const SweepSpec& spec, const Placement& placement, PlacementPolicy policy,
            ResultsDb& db, std::int64_t campaign, const SweepEffects& effects,
            std::filesystem::path worker, std::filesystem::path run_root, std::ostream& out)
      : spec_(spec), placement_(placement), pool_(placement.capacity.slots, policy), db_(db),
        campaign_(campaign), effects_(effects), worker_(std::move(worker)),
        run_root_(std::move(run_root)), out_(out) {}

  // Runs `trials` (already filtered by resume rules) in order; returns when none is left to
  // start and none is in flight, or after an interrupt once the trials in flight have ended.
  //
  // The structure is ninja's Builder::Build: start trials while the slots allow, wait for one
  // to finish, reap and record it, repeat.
  void Run(const std::vector<QueuedTrial>& trials, std::size_t total) {
    std::vector<double> estimated_s;
    for (std::size_t i = 0; i < trials.size(); ++i) {
      const PlannedTrial& t = *trials[i].trial;
      position_[&t] = i;
      estimated_s.push_back(!t.invalid_reason && t.estimate ? t.estimate->trial_s : 0.0);
    }
    progress_.emplace(std::move(estimated_s), UnixNow());
    std::size_t next = 0;
    bool cancelled = false;
    while (true) {
      while (next < trials.size() && !effects_.interrupt.Requested() && !refused_busy) {
        const PlannedTrial& t = *trials[next].trial;
        const std::string prefix = fmt::format("[{}/{}] {} {}", trials[next].index + 1, total,
                                               t.key, Axes(t.config));
        if (t.invalid_reason) {
          RecordSkipped(t, prefix);
          ++next;
          continue;
        }
        auto slots = pool_.Acquire(t.config.world_size());
        if (!slots && effects_.launcher.InFlight() > 0) break;  // wait for slots to free up
        if (slots && !WaitUntilIdle()) {
          pool_.Release(*slots);
          refused_busy = true;
          break;
        }
        ++next;
        if (!slots) {
          RecordUnstartable(t, prefix,
                            fmt::format("needs {} slot(s); this run has {}",
                                        t.config.world_size(), pool_.size()));
          continue;
        }
        Start(t, prefix, *slots);
      }
      if (effects_.launcher.InFlight() == 0) return;
      if (effects_.interrupt.Requested() && !cancelled) {
        for (const auto& [handle, trial] : in_flight_) effects_.launcher.Cancel(handle);
        cancelled = true;
      }
      if (auto finished = effects_.launcher.Wait(kPollInterval)) Reap(*finished);
    }
  }

  // Takes over a trial that an earlier coordinator started and the launcher attached to
  // (Launcher::Attach): Run() waits for it and records it like its own. It holds no slot: its
  // devices are the scheduler's business.
  void Adopt(LaunchHandle handle, const PlannedTrial& t, std::string prefix,
             std::filesystem::path run_dir, double started_at, std::string job) {
    in_flight_.emplace(handle, InFlight{&t, std::move(prefix), std::move(run_dir), {},
                                        started_at, std::nullopt, std::move(job)});
  }

  // Kills whatever is still in flight and waits for it: used when storage fails mid-sweep.
  void Abandon() noexcept {
    try {
      for (const auto& [handle, trial] : in_flight_) effects_.launcher.Cancel(handle);
      while (effects_.launcher.InFlight() > 0) effects_.launcher.Wait(kPollInterval);
    } catch (...) {
    }
  }

  int ran = 0, ok = 0, failed = 0, skipped = 0;
  bool refused_busy = false;  // --require-idle: the machine stayed busy; nothing more started
  double require_idle_s = -1;

 private:
  bool SampleHealth() const { return effects_.health != nullptr && !placement_.capacity.on_gpu; }

  // --require-idle: true once the machine is idle, false when it stayed busy for the whole
  // wait (or the user interrupted). Bounded by require_idle_s.
  bool WaitUntilIdle() {
    if (require_idle_s < 0 || !SampleHealth()) return true;
    const auto give_up = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(require_idle_s));
    bool said = false;
    while (true) {
      const MachineHealth health = effects_.health->Sample();
      if (!health.busy) return true;
      if (std::chrono::steady_clock::now() >= give_up || effects_.interrupt.Requested()) {
        out_ << "machine still busy (" << health.Describe() << "): no more trials started "
             << "(--require-idle)\n";
        return false;
      }
      if (!said) {
        out_ << fmt::format("machine busy ({}): waiting up to {:.0f} s for it to be idle\n",
                            health.Describe(), require_idle_s);
        said = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }

  struct InFlight {
    const PlannedTrial* trial;
    std::string prefix;
    std::filesystem::path run_dir;
    std::vector<int> slots;
    double started_at;
    std::optional<MachineHealth> health_at_start;
    std::string scheduler_job;  // the launcher's ExternalId(), recorded with the trial
  };

  TrialRecord BaseRecord(const PlannedTrial& t) const {
    TrialRecord record;
    record.trial_key = t.key;
    record.config = CanonicalJson(t.config);
    record.world_size = t.config.world_size();
    return record;
  }

  void RecordSkipped(const PlannedTrial& t, const std::string& prefix) {
    TrialRecord record = BaseRecord(t);
    record.status = TrialStatus::kSkipped;
    record.error = *t.invalid_reason;
    record.started_at = record.finished_at = UnixNow();
    db_.RecordTrial(campaign_, record);
    progress_->Finished(position_.at(&t), 0);
    ++skipped;
    out_ << prefix << ": skipped: " << *t.invalid_reason << "\n";
  }

  // A trial that could not be prepared or started: a failed trial, with the reason.
  void RecordUnstartable(const PlannedTrial& t, const std::string& prefix,
                         const std::string& error, double started_at = UnixNow()) {
    TrialRecord record = BaseRecord(t);
    record.status = TrialStatus::kFailed;
    record.error = error;
    record.started_at = started_at;
    record.finished_at = UnixNow();
    db_.RecordTrial(campaign_, record);
    progress_->Finished(position_.at(&t), record.finished_at - started_at);
    ++ran;
    ++failed;
    out_ << prefix << ": failed: " << error << "\n";
  }

  void Start(const PlannedTrial& t, const std::string& prefix, const std::vector<int>& slots) {
    const auto run_dir = run_root_ / std::to_string(campaign_) / t.key;
    const double started_at = UnixNow();
    try {
      std::filesystem::remove_all(run_dir);
      std::filesystem::create_directories(run_dir);
      TrialFile file{t.key, spec_.name, t.config, placement_.capacity.on_gpu ? "cuda" : "cpu"};
      WriteFileAtomically(run_dir / "trial.json", ToJson(file).dump(2));
    } catch (const std::exception& e) {
      pool_.Release(slots);
      RecordUnstartable(t, prefix, fmt::format("cannot prepare {}: {}", run_dir.string(), e.what()),
                        started_at);
      return;
    }
    TrialRecord running = BaseRecord(t);
    running.status = TrialStatus::kRunning;
    running.run_dir = run_dir.string();
    running.started_at = started_at;
    running.coordinator_host = Hostname();
    running.coordinator_pid = ::getpid();
    db_.MarkRunning(campaign_, running);
    out_ << prefix << ": running\n" << std::flush;

    std::optional<MachineHealth> health_at_start;
    if (SampleHealth()) health_at_start = effects_.health->Sample();

    LaunchRequest request = TrialRequest(t, run_dir, worker_);
    if (placement_.capacity.on_gpu)
      for (int slot : slots) request.devices.push_back(placement_.devices.at(slot));
    LaunchHandle handle = 0;
    try {
      handle = effects_.launcher.Start(request);
    } catch (const std::exception& e) {  // launchers should not throw; if one does, it is data
      pool_.Release(slots);
      RecordUnstartable(t, prefix, fmt::format("cannot start the trial: {}", e.what()), started_at);
      return;
    }
    const std::string job = effects_.launcher.ExternalId(handle);
    if (!job.empty()) {
      db_.SetSchedulerJob(campaign_, t.key, job);
      out_ << prefix << ": submitted as Slurm job " << job << "\n" << std::flush;
    }
    in_flight_.emplace(handle, InFlight{&t, prefix, run_dir, slots, started_at, health_at_start,
                                        job});
  }

  void Reap(const FinishedTrial& finished) {
    auto it = in_flight_.find(finished.handle);
    if (it == in_flight_.end()) return;  // not ours: nothing to record
    const InFlight trial = std::move(it->second);
    in_flight_.erase(it);
    pool_.Release(trial.slots);
    const PlannedTrial& t = *trial.trial;

    TrialRecord record = IngestTrial(t.config, t.key, trial.run_dir, finished.outcome);
    if (finished.outcome.cancelled ||
        (effects_.interrupt.Requested() && record.status != TrialStatus::kOk)) {
      record.status = TrialStatus::kInterrupted;
      record.error = "interrupted by the user";
    }
    record.started_at = trial.started_at;
    record.finished_at = UnixNow();
    record.scheduler_job = trial.scheduler_job;
    std::string busy_note;
    if (trial.health_at_start) {
      const MachineHealth end = effects_.health->Sample();
      const bool busy = trial.health_at_start->busy || end.busy;
      record.health = {{"start", trial.health_at_start->ToJson()},
                       {"end", end.ToJson()},
                       {"busy", busy}};
      if (busy)
        busy_note = fmt::format("  [machine busy: {}]",
                                (trial.health_at_start->busy ? *trial.health_at_start : end)
                                    .Describe());
    }
    if (record.status == TrialStatus::kOk) AttachOutputReference(record, t.config);
    db_.RecordTrial(campaign_, record);
    if (record.status == TrialStatus::kOk) UpdateOutputErrors(db_, record);
    if (!worker_described_ && record.status == TrialStatus::kOk &&
        record.worker_environment.is_object() && !record.worker_environment.empty()) {
      db_.UpdateCampaignEnvironment(campaign_, {{"worker", record.worker_environment}});
      worker_described_ = true;
    }
    if (record.status == TrialStatus::kInterrupted) {
      out_ << trial.prefix << ": interrupted\n";
      return;
    }
    if (auto p = position_.find(&t); p != position_.end())  // adopted trials are not queued
      progress_->Finished(p->second, finished.outcome.wall_s);
    ++ran;
    if (record.status == TrialStatus::kOk) {
      ++ok;
      const auto& m = *record.metrics;
      out_ << trial.prefix
           << fmt::format(": ok  median {:.3f} ms  [{:.3f}, {:.3f}]  cov {:.3f}  skew {:.3f} ms  n={}{}\n",
                          m.latency_ms, m.ci_low_ms, m.ci_high_ms, m.cov, m.skew_ms, m.iterations,
                          busy_note);
    } else {
      ++failed;
      // Where to look: the failing rank's log, or the trial's folder.
      const int rank = finished.outcome.first_failed_rank;
      const auto where = rank >= 0 ? RankLogPath(trial.run_dir, rank) : trial.run_dir;
      out_ << trial.prefix << ": " << StatusName(record.status) << ": " << record.error
           << busy_note << "  (see " << where.string() << ")\n";
    }
    out_ << progress_->Line(UnixNow()) << "\n" << std::flush;
  }

  const SweepSpec& spec_;
  const Placement& placement_;
  SlotPool pool_;
  ResultsDb& db_;
  std::int64_t campaign_;
  const SweepEffects& effects_;
  std::filesystem::path worker_;
  std::filesystem::path run_root_;
  std::ostream& out_;
  std::map<LaunchHandle, InFlight> in_flight_;
  std::map<const PlannedTrial*, std::size_t> position_;  // in the queue Run() was given
  std::optional<Progress> progress_;
  bool worker_described_ = false;
};

// A trial an earlier coordinator left running as a scheduler job, watched again.
struct AdoptedTrial {
  LaunchHandle handle;
  const PlannedTrial* trial;
  std::filesystem::path run_dir;
  double started_at;
  std::string job;
};

// After a restart: trials recorded `running` with a scheduler job (a Slurm job id) whose
// coordinator is gone are handed to the launcher again (Launcher::Attach) and recorded as
// ours, so that they are waited for and ingested instead of run twice. Trials the launcher
// cannot attach to stay as they are (resume marks them interrupted and runs them again).
std::vector<AdoptedTrial> AdoptSchedulerJobs(ResultsDb& db, std::int64_t campaign,
                                             const SweepPlan& plan, Launcher& launcher,
                                             const std::filesystem::path& worker,
                                             const ResultsDb::CoordinatorIsGone& gone,
                                             std::ostream& out) {
  std::vector<AdoptedTrial> adopted;
  for (const ResultsDb::RunningTrial& r : db.RunningTrials(campaign)) {
    if (r.scheduler_job.empty() || r.run_dir.empty()) continue;
    if (!r.coordinator_host.empty() && r.coordinator_pid > 0 &&
        !gone(r.coordinator_host, r.coordinator_pid))
      continue;  // its own coordinator still watches it
    auto planned = std::find_if(plan.trials.begin(), plan.trials.end(),
                                [&r](const PlannedTrial& t) { return t.key == r.trial_key; });
    if (planned == plan.trials.end()) continue;
    const auto handle =
        launcher.Attach(r.scheduler_job, TrialRequest(*planned, r.run_dir, worker));
    if (!handle) {
      out << fmt::format("trial {}: Slurm job {} of an earlier coordinator cannot be watched "
                         "again (Slurm forgot it, or this run does not use --launcher slurm "
                         "--slurm-mode job): it runs again\n",
                         r.trial_key, r.scheduler_job);
      continue;
    }
    TrialRecord running;
    running.trial_key = planned->key;
    running.config = CanonicalJson(planned->config);
    running.world_size = planned->config.world_size();
    running.status = TrialStatus::kRunning;
    running.run_dir = r.run_dir;
    running.started_at = r.started_at;
    running.coordinator_host = Hostname();
    running.coordinator_pid = ::getpid();
    running.scheduler_job = r.scheduler_job;
    db.MarkRunning(campaign, running);
    out << fmt::format("trial {}: Slurm job {} of an earlier coordinator is known to Slurm: "
                       "watching it again\n",
                       r.trial_key, r.scheduler_job);
    adopted.push_back({*handle, &*planned, r.run_dir, r.started_at, r.scheduler_job});
  }
  return adopted;
}

// `--dry-run`: the plan, and what resuming would do with what the database already holds
// (read-only: no lock, nothing created).
void WriteDryRun(const RunOptions& options, const SweepSpec& spec, const SweepPlan& plan,
                 const PlanAssumptions& assumptions, std::ostream& out) {
  std::vector<std::string> notes;
  std::string resume_line = "would start a new campaign (no database yet)\n";
  std::error_code ec;
  if (std::filesystem::is_regular_file(options.db, ec)) {
    try {
      auto db = ResultsDb::Open(options.db, /*read_only=*/true);
      CampaignRecord wanted;
      wanted.sweep_name = spec.name;
      wanted.spec_hash = Sha256Hex(spec.text);
      wanted.spec_text = spec.text;
      const CampaignChoice choice =
          ChooseCampaign(db->Campaigns(), wanted, options.fresh, options.keep_campaign);
      if (choice.resume) {
        const auto statuses = db->TrialStatuses(*choice.resume);
        int kept = 0, runs = 0;
        for (const PlannedTrial& t : plan.trials) {
          auto found = statuses.find(t.key);
          const ResumeVerdict verdict = JudgeResume(
              t, found == statuses.end() ? std::nullopt : std::optional(found->second),
              options.rerun);
          notes.push_back(verdict.note);
          if (!verdict.run) ++kept;
          else if (!t.invalid_reason) ++runs;
        }
        resume_line = fmt::format(
            "would resume campaign {}: {} trial(s) already recorded and kept, {} to run\n",
            *choice.resume, kept, runs);
      } else if (choice.changed_from) {
        resume_line = fmt::format("would start a new campaign: sweep '{}' changed since campaign "
                                  "{} began (--continue resumes it)\n{}",
                                  spec.name, *choice.changed_from, choice.diff);
      } else {
        resume_line = "would start a new campaign\n";
      }
    } catch (const std::exception& e) {
      resume_line = fmt::format("cannot tell what is already recorded: {}\n", e.what());
    }
  }
  WritePlanTable(spec, plan, assumptions, out, notes);
  out << resume_line;
}

}  // namespace

int RunSweep(const RunOptions& options, const SweepEffects& effects, std::ostream& out,
             std::ostream& err) {
  ParseResult parsed = ParseSweepFile(options.sweep);
  if (!parsed.ok()) {
    for (const auto& e : parsed.errors) err << e.ToString() << "\n";
    return 2;
  }
  const SweepSpec& spec = parsed.spec;
  const auto policy = ParsePlacementPolicy(options.policy);
  if (!policy) {
    err << "ditbench run: error: --policy '" << options.policy << "': expected exclusive or pack\n";
    return 2;
  }
  Placement placement;
  try {
    placement = ResolvePlacement(options.gpus, effects.gpus);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
    return 2;
  }
  if (const unsigned cores = std::thread::hardware_concurrency();
      !placement.capacity.on_gpu && cores > 0 &&
      placement.capacity.slots > static_cast<int>(cores)) {
    err << fmt::format("ditbench run: warning: --gpus {} asks for {} CPU slots on a machine with "
                       "{} cores: ranks will share cores and their times will show it\n",
                       options.gpus, placement.capacity.slots, cores);
  }
  PlanAssumptions assumptions;
  assumptions.device = DeviceFor(placement);
  SweepPlan plan = PlanSweep(spec, placement.capacity, assumptions, options.db);
  const auto worker = options.worker.empty() ? DefaultWorker() : options.worker;
  if (!options.dry_run && !std::filesystem::exists(worker)) {
    err << "ditbench run: error: worker not found at " << worker.string()
        << " (build ditbench-worker or pass --worker)\n";
    return 2;
  }
  if (options.dry_run) {
    WriteDryRun(options, spec, plan, assumptions, out);
    return 0;
  }

  // One coordinator per database, from before it is opened until this function returns.
  std::optional<CoordinatorLock> lock;
  try {
    LockHolder holder;
    lock = CoordinatorLock::TryAcquire(options.db, &holder);
    if (!lock) {
      err << "ditbench run: error: '" << options.db.string()
          << "' is in use by another `ditbench run` (" << holder.Describe()
          << "); wait for it to end, or pass another --db\n";
      return 2;
    }
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
    return 2;
  }
  const auto run_root =
      options.run_root.empty() ? DefaultRunRoot(options.db) : options.run_root;
  try {
    if (std::string owned = ClaimRunRoot(run_root, options.db); !owned.empty()) {
      err << "ditbench run: error: " << owned << "\n";
      return 2;
    }
  } catch (const std::exception& e) {
    err << "ditbench run: error: cannot use run folder '" << run_root.string()
        << "': " << e.what() << "\n";
    return 2;
  }

  std::unique_ptr<ResultsDb> db;
  std::int64_t campaign = 0;
  std::map<std::string, TrialStatus> statuses;
  std::vector<std::string> still_running;
  std::vector<AdoptedTrial> adopted;
  try {
    db = ResultsDb::Open(options.db);
    CampaignRecord record;
    record.sweep_name = spec.name;
    record.sweep_path = options.sweep.string();
    record.spec_hash = Sha256Hex(spec.text);
    record.spec_text = spec.text;
    record.build = BuildId();
    record.host = Hostname();
    record.environment = CoordinatorEnvironment();
    record.environment["gpus"] = options.gpus;
    record.environment["devices"] = placement.devices;
    record.environment["policy"] = options.policy;
    record.environment["launcher"] = options.launcher;
    record.environment["slots"] = placement.capacity.slots;
    record.environment["on_gpu"] = placement.capacity.on_gpu;
    // A campaign is one spec: a changed sweep file starts a new one, and says what changed.
    const CampaignChoice choice =
        ChooseCampaign(db->Campaigns(), record, options.fresh, options.keep_campaign);
    const bool fresh = !choice.resume.has_value();
    if (choice.changed_from)
      out << fmt::format(
          "sweep '{}' changed since campaign {} began: starting a new campaign (--continue "
          "resumes campaign {} instead)\n{}",
          spec.name, *choice.changed_from, *choice.changed_from, choice.diff);
    campaign = db->ResumeOrCreateCampaign(record, fresh);
    auto gone = [](const std::string& host, std::int64_t pid) {
      return CoordinatorGone(host, static_cast<long>(pid));
    };
    adopted = AdoptSchedulerJobs(*db, campaign, plan, effects.launcher, worker, gone, out);
    std::set<std::string> taken_over;
    for (const AdoptedTrial& a : adopted) taken_over.insert(a.trial->key);
    if (int n = db->MarkRunningAsInterrupted(campaign, gone, &still_running, taken_over))
      out << fmt::format(
          "{} trial(s) left running by a coordinator that is gone marked interrupted\n", n);
    for (const auto& key : still_running)
      out << fmt::format("trial {} is still running under a live coordinator: not started\n", key);
    statuses = db->TrialStatuses(campaign);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
    return 2;
  }

  // Resume: trials already settled are kept, not run again (runner/resume.h decides).
  std::vector<QueuedTrial> to_run;
  int kept = 0, kept_failed = 0;
  std::set<std::string> live(still_running.begin(), still_running.end());
  for (const AdoptedTrial& a : adopted) live.insert(a.trial->key);
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    const PlannedTrial& t = plan.trials[i];
    if (live.count(t.key)) continue;
    auto found = statuses.find(t.key);
    const std::optional<TrialStatus> recorded =
        found == statuses.end() ? std::nullopt : std::optional<TrialStatus>(found->second);
    if (!JudgeResume(t, recorded, options.rerun).run) {
      ++kept;
      if (IsFailure(*recorded)) ++kept_failed;
      continue;
    }
    to_run.push_back({i, &t});
  }

  out << fmt::format("campaign {} of sweep '{}': {} trials on {} {}\n", campaign, spec.name,
                     plan.trials.size(), placement.capacity.slots,
                     placement.capacity.on_gpu ? "GPU(s)" : "CPU slot(s)");
  SweepLoop loop(spec, placement, *policy, *db, campaign, effects, worker, run_root, out);
  loop.require_idle_s = options.require_idle_s;
  for (const AdoptedTrial& a : adopted)
    loop.Adopt(a.handle, *a.trial,
               fmt::format("[adopted] {} {}", a.trial->key, Axes(a.trial->config)), a.run_dir,
               a.started_at, a.job);
  try {
    loop.Run(to_run, plan.trials.size());
  } catch (const std::exception& e) {
    // Storage or filesystem trouble: stop every trial in flight and say so; results already
    // committed are safe.
    loop.Abandon();
    err << "ditbench run: error: " << e.what() << "\n";
    return 1;
  }
  if (effects.interrupt.Requested()) {
    out << "interrupted: finished trials are saved; run the same command again to resume\n";
    return 130;
  }
  if (loop.refused_busy) {
    out << fmt::format("stopped: {} ran ({} ok); the machine was busy; run the same command "
                       "again to resume\n",
                       loop.ran, loop.ok);
    return 1;
  }
  try {
    db->FinishCampaign(campaign);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
  }
  const int failed = loop.failed + kept_failed;
  out << fmt::format("done: {} ran ({} ok), {} skipped as invalid, {} already recorded, {} failed\n",
                     loop.ran, loop.ok, loop.skipped, kept, failed);
  return failed > 0 ? 1 : 0;
}

}  // namespace ditbench
