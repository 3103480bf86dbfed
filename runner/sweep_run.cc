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
#include "experiments/oom_prediction.h"
#include "experiments/worker_contract.h"
#include "runner/build_info.h"
#include "runner/halving.h"
#include "runner/command.h"
#include "runner/command_program.h"
#include "runner/coordinator_lock.h"
#include "runner/database_wait.h"
#include "runner/dry_run.h"
#include "runner/environment.h"
#include "runner/ingest.h"
#include "runner/output_error.h"
#include "runner/placement.h"
#include "runner/plan_output.h"
#include "runner/progress.h"
#include "runner/resume.h"
#include "runner/run_folder.h"
#include "runner/scheduler_adoption.h"
#include "runner/sweep_plan.h"
#include "runner/trial_selection.h"
#include "runner/unrecorded_launch.h"
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
  std::string axes = fmt::format("{} {}px {} u{} r{} pf{} cfg{} dp{}", c.model, c.resolution,
                                 PrecisionName(c.precision), c.ulysses, c.ring, c.pipefusion,
                                 c.cfg, c.dp);
  for (const auto& [name, value] : c.custom)
    axes += fmt::format(" {}={}", name, value.is_string() ? value.get<std::string>() : value.dump());
  return axes;
}

// One campaign's trials through the launcher. Owns the bookkeeping of trials in flight; every
// method that touches the database may throw (storage trouble ends the sweep).
class SweepLoop {
 public:
  SweepLoop(const SweepSpec& spec, const Placement& placement, PlacementPolicy policy,
            ResultsDb& db, std::int64_t campaign, const SweepEffects& effects,
            std::filesystem::path worker, std::filesystem::path run_root, std::ostream& out)
      : spec_(spec), placement_(placement),
        pool_(placement.capacity.slots, policy, placement.topology), db_(db),
        campaign_(campaign), effects_(effects), worker_(std::move(worker)),
        run_root_(std::move(run_root)), out_(out) {}

  // Runs the launches `trials` (already filtered by resume rules and interleaved: every
  // trial's first launch, then every second one, ...) in order; returns when none is left to
  // start and none is in flight, or after an interrupt once the launches in flight have ended.
  //
  // The structure is ninja's Builder::Build: start launches while the slots allow, wait for
  // one to finish, reap and record it, repeat. Two launches of one trial never overlap, and a
  // trial whose launch failed starts no more launches.
  void Run(const std::vector<QueuedTrial>& trials, std::size_t total) {
    std::vector<double> estimated_s;
    for (const QueuedTrial& queued : trials) {
      const PlannedTrial& t = *queued.trial;
      estimated_s.push_back(!t.invalid_reason && t.estimate ? t.estimate->trial_s : 0.0);
    }
    progress_.emplace(std::move(estimated_s), UnixNow());
    const double began = Now();
    std::size_t next = 0;
    bool cancelled = false;
    while (true) {
      while (next < trials.size() && !effects_.interrupt.Requested() && !refused_busy &&
             !budget_spent) {
        const QueuedTrial& queued = trials[next];
        const PlannedTrial& t = *queued.trial;
        std::string prefix = fmt::format("[{}/{}] {} {}", queued.index + 1, total, t.key,
                                         Axes(t.config));
        if (replicates > 1) prefix += fmt::format(" launch {}/{}", queued.launch + 1, replicates);
        if (halving) prefix += fmt::format(" round {}", queued.launch);
        if (t.invalid_reason) {
          RecordSkipped(t, prefix, next);
          ++next;
          continue;
        }
        // on_oom: skip_larger: a trial at least as large as one that ran out of memory is not
        // started (only before its first launch: a trial measured already keeps its launches).
        if (skip_larger_after_oom && queued.launch == 0) {
          if (std::optional<std::string> after = PredictedOom(t.config, oomed)) {
            RecordPredictedOom(t, prefix, next, *after);
            ++next;
            continue;
          }
        }
        if (failed_keys_.count(t.key)) {  // an earlier launch failed: the trial has failed
          progress_->Finished(next, 0);
          out_ << prefix << ": not run (an earlier launch of this trial failed)\n";
          ++next;
          continue;
        }
        if (KeyInFlight(t.key)) break;  // wait for its other launch to end
        if (budget_s >= 0) {  // --budget: would this launch end past it?
          const double estimate = t.estimate ? t.estimate->trial_s : 0.0;
          if (Now() - began + estimate > budget_s) {
            budget_spent = true;
            not_started = trials.size() - next;
            break;
          }
        }
        std::string why_here;  // which NVLink island / NUMA node holds the slots
        auto slots = pool_.Acquire(t.config.world_size(), &why_here);
        if (!slots && effects_.launcher.InFlight() > 0) break;  // wait for slots to free up
        if (slots && !WaitUntilIdle()) {
          pool_.Release(*slots);
          refused_busy = true;
          break;
        }
        ++next;
        if (!slots) {
          RecordUnstartable(queued, next - 1, prefix,
                            fmt::format("needs {} slot(s); this run has {}",
                                        t.config.world_size(), pool_.size()));
          continue;
        }
        Start(queued, next - 1, prefix, *slots, why_here);
      }
      if (effects_.launcher.InFlight() == 0) return;
      if (effects_.interrupt.Requested() && !cancelled) {
        for (const auto& [handle, trial] : in_flight_) effects_.launcher.Cancel(handle);
        cancelled = true;
      }
      if (auto finished = effects_.launcher.Wait(kPollInterval)) Reap(*finished);
      else SampleDuringTrials();
    }
  }

  // Takes over a launch an earlier coordinator started (Launcher::Attach): Run() waits for it
  // and records it, as that launch, like its own. No slot: its devices are the scheduler's.
  void Adopt(const AdoptedTrial& a) {
    std::string prefix = fmt::format("[adopted] {} {}", a.trial->key, Axes(a.trial->config));
    if (replicates > 1 || halving) prefix += fmt::format(" launch {}", a.launch + 1);
    in_flight_.emplace(a.handle, InFlight{a.trial, a.launch, kAdoptedPosition, std::move(prefix),
                                          a.run_dir, {}, {}, a.started_at, std::nullopt, a.job});
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
  int replicates = 1;  // launches per trial (sweep field)
  int predicted_oom = 0;  // trials skipped by on_oom: skip_larger
  bool halving = false;   // search: halving (launch index = round)
  double budget_s = -1;      // --budget
  bool budget_spent = false;  // the budget ended the run before every launch started
  std::size_t not_started = 0;
  bool skip_larger_after_oom = false;
  std::vector<OomTrial> oomed;  // trials that ran out of memory (this run and recorded ones)
  bool refused_busy = false;  // --require-idle: the machine stayed busy; nothing more started
  double require_idle_s = -1;

 private:
  bool SampleHealth() const { return effects_.health != nullptr; }

  // The machine now; on GPU also the other programs on the GPUs.
  MachineHealth SampleNow() const {
    return placement_.capacity.on_gpu ? effects_.health->SampleWithGpus()
                                      : effects_.health->Sample();
  }

  // While trials run: a sample every HealthSamplePeriodS, folded into each (TrialHealth).
  void SampleDuringTrials() {
    if (!SampleHealth() || Now() < next_sample_at_) return;
    next_sample_at_ = Now() + HealthSamplePeriodS(placement_.capacity.on_gpu);
    const MachineHealth now = SampleNow();
    for (auto& [handle, trial] : in_flight_) if (trial.health) trial.health->Add(now);
  }
  double next_sample_at_ = -1e300;

  // The UUIDs of the GPUs behind `slots` (none on CPU).
  std::vector<std::string> GpuUuids(const std::vector<int>& slots) const {
    std::vector<std::string> uuids;
    if (!placement_.capacity.on_gpu) return uuids;
    for (int slot : slots)
      if (slot < static_cast<int>(placement_.uuids.size()) && !placement_.uuids[slot].empty())
        uuids.push_back(placement_.uuids[slot]);
    return uuids;
  }

  // --require-idle: true once the machine is idle, false when it stayed busy for the whole
  // wait (or the user interrupted). Bounded by require_idle_s.
  bool WaitUntilIdle() {
    if (require_idle_s < 0 || !SampleHealth()) return true;
    const auto give_up = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(require_idle_s));
    bool said = false;
    while (true) {
      // Before a trial: busy anywhere the sweep may run.
      const std::vector<std::string> all = placement_.uuids;
      const MachineHealth health = SampleNow();
      if (!health.BusyOn(all)) return true;
      if (std::chrono::steady_clock::now() >= give_up || effects_.interrupt.Requested()) {
        out_ << "machine still busy (" << health.Describe(all) << "): no more trials started "
             << "(--require-idle)\n";
        return false;
      }
      if (!said) {
        out_ << fmt::format("machine busy ({}): waiting up to {:.0f} s for it to be idle\n",
                            health.Describe(all), require_idle_s);
        said = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }

  static constexpr std::size_t kAdoptedPosition = static_cast<std::size_t>(-1);

  struct InFlight {
    const PlannedTrial* trial;
    int launch;
    std::size_t position;  // in the queue Run() was given
    std::string prefix;
    std::filesystem::path run_dir;
    std::vector<int> slots;
    std::string slots_reason;  // SlotPool's: which NVLink island / NUMA node holds them
    double started_at;
    std::optional<TrialHealth> health;  // sampled from its start to its end
    std::string scheduler_job;  // the launcher's ExternalId(), recorded with the trial
    // Other trials in flight at any time during this one (packed beside it): they share the
    // host's CPU, memory bandwidth and PCIe with it.
    int concurrent = 0;
  };

  double Now() const {
    if (effects_.now) return effects_.now();
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  bool KeyInFlight(const std::string& key) const {
    for (const auto& [handle, trial] : in_flight_)
      if (trial.trial->key == key) return true;
    return false;
  }

  TrialRecord BaseRecord(const PlannedTrial& t, int launch = 0) const {
    TrialRecord record;
    record.trial_key = t.key;
    record.config = CanonicalJson(t.config);
    record.world_size = t.config.world_size();
    record.launch = launch;
    record.replicates = replicates;
    return record;
  }

  // Records one launch and what the trial's launches add up to (experiments/launch_summary.h):
  // the other launches of the trial are read back, so a resumed trial sums up every launch.
  TrialOutcome RecordLaunch(const TrialRecord& record) {
    std::vector<LaunchMeasurement> launches;
    for (LaunchMeasurement& stored : db_.Launches(campaign_, record.trial_key, record.launch))
      if (stored.launch < replicates || halving) launches.push_back(std::move(stored));
    LaunchMeasurement latest;
    latest.launch = record.launch;
    latest.status = record.status;
    latest.error = record.error;
    latest.metrics = record.metrics;
    for (const Sample& sample : record.samples)
      if (!sample.warmup && sample.stage == kIterationStage) latest.samples.push_back(sample);
    launches.push_back(std::move(latest));
    TrialOutcome outcome = SummarizeLaunches(launches, replicates);
    db_.RecordLaunch(campaign_, record, outcome);
    return outcome;
  }

  void RecordSkipped(const PlannedTrial& t, const std::string& prefix, std::size_t position) {
    TrialRecord record = BaseRecord(t);
    record.status = TrialStatus::kSkipped;
    record.error = *t.invalid_reason;
    record.started_at = record.finished_at = UnixNow();
    db_.RecordTrial(campaign_, record);
    progress_->Finished(position, 0);
    ++skipped;
    out_ << prefix << ": skipped: " << *t.invalid_reason << "\n";
  }

  void RecordPredictedOom(const PlannedTrial& t, const std::string& prefix, std::size_t position,
                          const std::string& after) {
    TrialRecord record = BaseRecord(t);
    record.status = TrialStatus::kSkipped;
    record.error = "predicted OOM after " + after;
    record.started_at = record.finished_at = UnixNow();
    db_.RecordTrial(campaign_, record);
    progress_->Finished(position, 0);
    ++predicted_oom;
    failed_keys_.insert(t.key);  // its later launches are not run either
    out_ << prefix << ": skipped: " << record.error << " (on_oom: skip_larger)\n";
  }

  // A launch that could not be prepared or started: a failed launch, with the reason.
  void RecordUnstartable(const QueuedTrial& queued, std::size_t position,
                         const std::string& prefix, const std::string& error,
                         double started_at = UnixNow()) {
    TrialRecord record = BaseRecord(*queued.trial, queued.launch);
    record.status = TrialStatus::kFailed;
    record.error = error;
    record.started_at = started_at;
    record.finished_at = UnixNow();
    RecordLaunch(record);
    failed_keys_.insert(queued.trial->key);
    progress_->Finished(position, record.finished_at - started_at);
    ++ran;
    ++failed;
    out_ << prefix << ": failed: " << error << "\n";
  }

  void Start(const QueuedTrial& queued, std::size_t position, const std::string& prefix,
             const std::vector<int>& slots, const std::string& slots_reason) {
    const PlannedTrial& t = *queued.trial;
    const auto run_dir = LaunchRunDir(run_root_, campaign_, t.key, queued.launch);
    const double started_at = UnixNow();
    try {
      std::filesystem::remove_all(run_dir);
      std::filesystem::create_directories(run_dir);
      TrialConfig config = t.config;
      if (queued.screening) {  // a screening round: the fewest iterations the sweep allows
        config.repeats.max = config.repeats.min;
        config.repeats.target_rel_ci = 0;
      }
      TrialFile file{t.key, spec_.name, config, placement_.capacity.on_gpu ? "cuda" : "cpu"};
      // Not fsynced: a trial whose result is not committed runs again and rewrites it.
      WriteFileAtomically(run_dir / "trial.json", ToJson(file).dump(2), /*durable=*/false);
    } catch (const std::exception& e) {
      pool_.Release(slots);
      RecordUnstartable(queued, position, prefix,
                        fmt::format("cannot prepare {}: {}", run_dir.string(), e.what()),
                        started_at);
      return;
    }
    TrialRecord running = BaseRecord(t, queued.launch);
    running.status = TrialStatus::kRunning;
    running.run_dir = run_dir.string();
    running.started_at = started_at;
    running.coordinator_host = Hostname();
    running.coordinator_pid = ::getpid();
    db_.MarkRunning(campaign_, running);
    out_ << prefix << ": running\n" << std::flush;

    std::optional<TrialHealth> health;
    if (SampleHealth()) health.emplace(GpuUuids(slots), SampleNow());

    LaunchRequest request = TrialRequest(spec_, t, run_dir, worker_);
    if (placement_.capacity.on_gpu)
      for (int slot : slots) request.devices.push_back(placement_.devices.at(slot));
    else if (!placement_.topology.empty())  // --policy pack on CPU: each rank on its slot's cores
      for (int slot : slots) request.rank_cpus.push_back(placement_.topology.at(slot).cpus);
    LaunchHandle handle = 0;
    try {
      handle = effects_.launcher.Start(request);
    } catch (const std::exception& e) {  // launchers should not throw; if one does, it is data
      pool_.Release(slots);
      RecordUnstartable(queued, position, prefix,
                        fmt::format("cannot start the trial: {}", e.what()), started_at);
      return;
    }
    const std::string job = effects_.launcher.ExternalId(handle);
    if (!job.empty()) {
      db_.SetSchedulerJob(campaign_, t.key, job);
      out_ << prefix << ": submitted as Slurm job " << job << "\n" << std::flush;
    }
    for (auto& [other_handle, other] : in_flight_) ++other.concurrent;
    const int beside = static_cast<int>(in_flight_.size());
    auto [entry, inserted] = in_flight_.emplace(
        handle, InFlight{&t, queued.launch, position, prefix, run_dir, slots, slots_reason,
                         started_at, std::move(health), job});
    if (inserted) entry->second.concurrent = beside;
  }

  void Reap(const FinishedTrial& finished) {
    auto it = in_flight_.find(finished.handle);
    if (it == in_flight_.end()) return;  // not ours: nothing to record
    const InFlight trial = std::move(it->second);
    in_flight_.erase(it);
    pool_.Release(trial.slots);
    const PlannedTrial& t = *trial.trial;

    // Kept until the launch is recorded: a launch not recorded now is recorded by the next run.
    if (!finished.outcome.cancelled) WriteLaunchOutcome(trial.run_dir, finished.outcome);
    TrialRecord record = IngestTrial(t.config, t.key, trial.run_dir, finished.outcome);
    record.launch = trial.launch;
    record.replicates = replicates;
    if (finished.outcome.cancelled ||
        (effects_.interrupt.Requested() && record.status != TrialStatus::kOk)) {
      record.status = TrialStatus::kInterrupted;
      record.error = "interrupted by the user";
    }
    record.started_at = trial.started_at;
    record.finished_at = UnixNow();
    record.scheduler_job = trial.scheduler_job;
    record.placement = PlacementJson(placement_, trial.slots, trial.slots_reason);
    record.placement["concurrent_trials"] = trial.concurrent;
    std::string busy_note;
    if (trial.health) {
      TrialHealth health = *trial.health;
      health.Finish(SampleNow());
      record.health = health.ToJson();
      if (health.Busy()) busy_note = fmt::format("  [machine busy: {}]", health.Note());
    }
    if (record.status == TrialStatus::kOk) AttachOutputReference(record, t.config);
    const TrialOutcome outcome = RecordLaunch(record);
    if (outcome.status == TrialStatus::kOk && outcome.metrics) {
      TrialRecord summary = record;
      summary.metrics = outcome.metrics;
      UpdateOutputErrors(db_, summary);
    }
    if (!worker_described_ && record.status == TrialStatus::kOk &&
        record.worker_environment.is_object() && !record.worker_environment.empty()) {
      db_.UpdateCampaignEnvironment(campaign_, {{"worker", record.worker_environment}});
      worker_described_ = true;
    }
    if (record.status == TrialStatus::kInterrupted) {
      out_ << trial.prefix << ": interrupted\n";
      return;
    }
    if (trial.position != kAdoptedPosition)  // adopted trials are not in the queue
      progress_->Finished(trial.position, finished.outcome.wall_s);
    ++ran;
    if (record.status == TrialStatus::kOk) {
      ++ok;
      const auto& m = *record.metrics;
      out_ << trial.prefix
           << fmt::format(": ok  median {:.3f} ms  [{:.3f}, {:.3f}]  cov {:.3f}  skew {:.3f} ms  n={}{}\n",
                          m.latency_ms, m.ci_low_ms, m.ci_high_ms, m.cov, m.skew_ms, m.iterations,
                          busy_note);
      if (outcome.metrics && outcome.metrics->launches > 1) {
        const auto& all = *outcome.metrics;
        out_ << fmt::format("    over {} launches: median {:.3f} ms  [{:.3f}, {:.3f}] (between "
                            "launches)  launch cov {:.3f}\n",
                            all.launches, all.latency_ms, all.ci_low_ms, all.ci_high_ms,
                            all.launch_cov.value_or(0));
      }
    } else {
      ++failed;
      failed_keys_.insert(t.key);
      if (record.status == TrialStatus::kOom) oomed.push_back({t.key, t.config});
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
  std::set<std::string> failed_keys_;  // trials with a failed launch in this run
  std::optional<Progress> progress_;
  bool worker_described_ = false;
};

// `search: halving`: round r is launch r of each trial still in the race. Each round is
// derived from what the database holds (launch r ok: kept), so a resumed search goes on where
// it stopped.
void RunHalving(const SweepSpec& spec, const SweepPlan& plan, const TrialSelection& selection,
                ResultsDb& db, std::int64_t campaign, const std::string& rerun,
                const std::set<std::string>& live, SweepLoop& loop, const SweepEffects& effects,
                std::ostream& out) {
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < plan.trials.size(); ++i)
    if (!live.count(plan.trials[i].key) && selection.Selects(plan.trials[i].key))
      candidates.push_back(i);
  for (int round = 0;; ++round) {
    const auto statuses = db.TrialStatuses(campaign);
    const auto launch_statuses = db.LaunchStatuses(campaign);
    std::vector<QueuedTrial> queue;
    for (std::size_t i : candidates) {
      const PlannedTrial& t = plan.trials[i];
      auto trial_status = statuses.find(t.key);
      const std::optional<TrialStatus> recorded =
          trial_status == statuses.end() ? std::nullopt : std::optional(trial_status->second);
      if (t.invalid_reason) {
        if (round == 0 && JudgeResume(t, recorded, rerun).run) queue.push_back({i, &t, 0});
        continue;
      }
      std::optional<TrialStatus> launch;
      if (auto found = launch_statuses.find(t.key); found != launch_statuses.end())
        if (auto l = found->second.find(round); l != found->second.end()) launch = l->second;
      if (launch == TrialStatus::kOk && rerun != "all") continue;
      if (launch && IsFailure(*launch) && rerun.empty()) continue;
      if (round > 0 && recorded && IsFailure(*recorded) && rerun.empty()) continue;
      queue.push_back({i, &t, round, round == 0});
    }
    if (!queue.empty()) loop.Run(queue, plan.trials.size());
    if (effects.interrupt.Requested() || loop.refused_busy || loop.budget_spent) return;
    // Who goes on: the fastest fraction of each group among the trials ok in this round.
    const auto now_launches = db.LaunchStatuses(campaign);
    std::map<std::string, double> latency;
    for (const ResultRow& row : db.Results({campaign}))
      // Its summary over its ok launches, also while a later launch is interrupted.
      if (row.latency_ms) latency[row.trial_key] = *row.latency_ms;
    std::vector<HalvingEntry> entries;
    for (std::size_t i : candidates) {
      const PlannedTrial& t = plan.trials[i];
      auto found = now_launches.find(t.key);
      if (t.invalid_reason || !latency.count(t.key) || found == now_launches.end()) continue;
      auto l = found->second.find(round);
      if (l == found->second.end() || l->second != TrialStatus::kOk) continue;
      entries.push_back({HalvingGroup(t.config), t.key, latency.at(t.key)});
    }
    const std::vector<std::string> survivors = HalvingSurvivors(entries, spec.halving_keep);
    if (survivors.empty()) {
      out << fmt::format("halving search: done after round {} (one trial left in every group)\n",
                         round);
      return;
    }
    const std::set<std::string> going_on(survivors.begin(), survivors.end());
    std::vector<std::size_t> next;
    for (std::size_t i : candidates)
      if (going_on.count(plan.trials[i].key)) next.push_back(i);
    out << fmt::format("halving search: round {} done; {} of {} trial(s) go on to round {} "
                       "(the fastest {:.0f}% of each group, re-measured to the target CI)\n",
                       round, next.size(), entries.size(), round + 1, spec.halving_keep * 100);
    candidates = std::move(next);
  }
}

}  // namespace

int RunSweep(const RunOptions& options, const SweepEffects& effects, std::ostream& out,
             std::ostream& err) {
  ParseResult parsed = ParseSweepFile(options.sweep);
  if (!parsed.ok()) {
    for (const auto& e : parsed.errors) err << e.ToString() << "\n";
    return kExitUsage;
  }
  const SweepSpec& spec = parsed.spec;
  const auto policy = ParsePlacementPolicy(options.policy);
  if (!policy) {
    err << "ditbench run: error: --policy '" << options.policy << "': expected exclusive or pack\n";
    return kExitUsage;
  }
  Placement placement;
  try {
    // Under pack, CPU slots are pinned to cores (exclusive: a trial's ranks share them all).
    placement = ResolvePlacement(options.gpus, effects.gpus,
                                 *policy == PlacementPolicy::kPack ? effects.cpus : nullptr);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
    return kExitUsage;
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
  // Under pack, CPU estimates are for pinned cores (the --budget order uses them).
  SweepPlan plan = PlanSweepForPolicy(spec, placement.capacity, assumptions, options.db,
                                      *policy == PlacementPolicy::kPack,
                                      /*show_pack=*/options.dry_run);
  const TrialSelectionResult selected = SelectTrials(spec.name, plan, options.only);
  if (selected.error) {
    err << "ditbench run: error: " << *selected.error << "\n";
    return kExitUsage;
  }
  const TrialSelection& selection = selected.selection;
  const auto worker = options.worker.empty() ? DefaultWorker() : options.worker;
  if (TraitsOf(spec.workload).launch == WorkloadLaunch::kProgram) {
    if (auto problem = CommandProgramProblem(spec); problem && !options.dry_run) {
      err << *problem << "\n";
      return kExitUsage;
    }
  } else if (!options.dry_run && !std::filesystem::exists(worker)) {
    err << "ditbench run: error: worker not found at " << worker.string()
        << " (build ditbench-worker or pass --worker)\n";
    return kExitUsage;
  }
  if (options.dry_run) {
    SweepPlan shown = plan;
    std::erase_if(shown.trials, [&](const PlannedTrial& t) { return !selection.Selects(t.key); });
    WriteDryRun(options, spec, shown, assumptions, out);
    return kExitOk;
  }

  // One coordinator per database, from before it is opened until this function returns.
  std::optional<CoordinatorLock> lock = LockForCommand(options.db, "run", err);
  if (!lock) return kExitUsage;
  const auto run_root =
      options.run_root.empty() ? DefaultRunRoot(options.db) : options.run_root;
  try {
    if (std::string owned = ClaimRunRoot(run_root, options.db); !owned.empty()) {
      err << "ditbench run: error: " << owned << "\n";
      return kExitUsage;
    }
  } catch (const std::exception& e) {
    err << "ditbench run: error: cannot use run folder '" << run_root.string()
        << "': " << e.what() << "\n";
    return kExitUsage;
  }

  std::unique_ptr<ResultsDb> db;
  std::int64_t campaign = 0;
  std::map<std::string, TrialStatus> statuses;
  std::map<std::string, std::map<int, TrialStatus>> launch_statuses;
  std::vector<std::string> still_running;
  std::vector<AdoptedTrial> adopted;
  try {
    db = ResultsDb::Open(options.db, false, ConsoleBusyWait(effects.interrupt, out));
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
    if (options.gpus.rfind("cpu", 0) != 0) {  // the driver was asked: by which source, and why
      record.environment["gpu_discovery"] = ToJson(effects.gpus.Listing());
      out << "GPUs: " << Describe(effects.gpus.Listing())
          << (placement.capacity.on_gpu ? "" : "; ranks run on CPU") << "\n";
    }
    const std::vector<CampaignInfo> campaigns = db->Campaigns();
    if (auto lost = UnknownCampaignFolders(run_root, campaigns); !lost.empty()) {
      err << "ditbench run: error: " << UnknownCampaignsProblem(run_root, options.db, lost) << "\n";
      return kExitUsage;
    }
    // A campaign is one spec: a changed sweep file starts a new one, and says what changed.
    const CampaignChoice choice =
        ChooseCampaign(campaigns, record, options.fresh, options.keep_campaign);
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
    adopted = AdoptSchedulerJobs(*db, campaign, spec, plan, effects.launcher, worker, gone, out);
    std::set<std::string> taken_over;
    for (const AdoptedTrial& a : adopted) taken_over.insert(a.trial->key);
    RecordUnrecordedLaunches(*db, campaign, plan, spec.replicates, gone, taken_over, out);
    if (int n = db->MarkRunningAsInterrupted(campaign, gone, &still_running, taken_over))
      out << fmt::format(
          "{} trial(s) left running by a coordinator that is gone marked interrupted\n", n);
    for (const auto& key : still_running)
      out << fmt::format("trial {} is still running under a live coordinator: not started\n", key);
    statuses = db->TrialStatuses(campaign);
    launch_statuses = db->LaunchStatuses(campaign);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
    return kExitUsage;
  }

  // Resume: launches already settled are kept; the rest interleaved (runner/resume.h).
  std::set<std::string> live(still_running.begin(), still_running.end());
  for (const AdoptedTrial& a : adopted) live.insert(a.trial->key);
  const LaunchQueue queue = QueueLaunches(
      plan, spec.replicates, statuses, launch_statuses,
      [&](const std::string& key) { return live.count(key) || !selection.Selects(key); },
      options.rerun, /*budget_order=*/options.budget_s >= 0);
  const int kept = queue.kept, kept_failed = queue.kept_failed;

  out << fmt::format("campaign {} of sweep '{}': {} trials{} on {} {}{}\n", campaign, spec.name,
                     plan.trials.size(),
                     selection.Partial()
                         ? fmt::format(" (--only: {} of them)", selection.keys.size())
                         : "",
                     placement.capacity.slots,
                     placement.capacity.on_gpu ? "GPU(s)" : "CPU slot(s)",
                     spec.replicates > 1
                         ? fmt::format(", {} launches each, interleaved", spec.replicates)
                         : "");
  SweepLoop loop(spec, placement, *policy, *db, campaign, effects, worker, run_root, out);
  loop.halving = spec.halving_keep > 0;
  loop.replicates = spec.replicates;
  loop.skip_larger_after_oom = spec.skip_larger_after_oom;
  loop.budget_s = options.budget_s;
  for (const PlannedTrial& t : plan.trials) {  // what ran out of memory before this run
    auto found = statuses.find(t.key);
    if (found != statuses.end() && found->second == TrialStatus::kOom)
      loop.oomed.push_back({t.key, t.config});
  }
  loop.require_idle_s = options.require_idle_s;
  for (const AdoptedTrial& a : adopted) loop.Adopt(a);  // after replicates and halving are set
  try {
    if (spec.halving_keep > 0) {
      RunHalving(spec, plan, selection, *db, campaign, options.rerun, live, loop, effects,
                 out);
    } else {
      loop.Run(queue.launches, plan.trials.size());
    }
  } catch (const std::exception& e) {
    // Storage or filesystem trouble: stop every trial in flight and say so; results already
    // committed are safe.
    loop.Abandon();
    err << "ditbench run: error: " << e.what() << "\n";
    return kExitTrialsFailed;
  }
  if (effects.interrupt.Requested()) {
    out << "interrupted: finished trials are saved; run the same command again to resume\n";
    return kExitInterrupted;
  }
  if (loop.budget_spent) {
    out << fmt::format("stopped: the budget of {:.0f} s is spent; {} ran ({} ok), {} launch(es) "
                       "not started; run the same command again to resume\n",
                       options.budget_s, loop.ran, loop.ok, loop.not_started);
    return loop.failed + kept_failed > 0 ? 1 : 0;
  }
  if (loop.refused_busy) {
    out << fmt::format("stopped: {} ran ({} ok); the machine was busy; run the same command "
                       "again to resume\n",
                       loop.ran, loop.ok);
    return kExitTrialsFailed;
  }
  try {
    // A run limited by --only finishes the campaign only once every trial is recorded.
    if (!selection.Partial() || EveryTrialSettled(plan, db->TrialStatuses(campaign)))
      db->FinishCampaign(campaign);
  } catch (const std::exception& e) {
    err << "ditbench run: error: " << e.what() << "\n";
  }
  const int failed = loop.failed + kept_failed;
  out << fmt::format("done: {} ran ({} ok), {} skipped as invalid, {}{} already recorded, {} "
                     "failed\n",
                     loop.ran, loop.ok, loop.skipped,
                     loop.predicted_oom > 0
                         ? fmt::format("{} skipped as predicted OOM, ", loop.predicted_oom)
                         : "",
                     kept, failed);
  return failed > 0 ? 1 : 0;
}

}  // namespace ditbench
