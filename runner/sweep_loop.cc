#include "runner/sweep_loop.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "base/terminal_text.h"
#include "contract/worker_contract.h"
#include "experiments/trial_kind.h"
#include "experiments/trial_requests.h"
#include "experiments/workload.h"
#include "launch/command_program.h"
#include "machine/host_info.h"
#include "metrics/time_intervals.h"
#include "runner/engine_trial.h"
#include "runner/ingest.h"
#include "runner/output_error.h"
#include "runner/output_image.h"
#include "runner/run_folder.h"
#include "runner/unrecorded_launch.h"

namespace ditbench {
namespace {

// How long one Wait() may block before the loop looks at the interrupt source again.
constexpr std::chrono::milliseconds kPollInterval{100};

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

IntervalSet BusyStretches(const TrialHealth& health) {
  std::vector<TimeInterval> stretches;
  for (const HostWindow& w : health.BusyWindows()) stretches.push_back({w.begin_s, w.end_s});
  return IntervalSet(std::move(stretches));
}

}  // namespace

void SweepLoop::Run(const std::vector<QueuedTrial>& trials, std::size_t total) {
  std::vector<std::optional<double>> estimated_s;
  for (const QueuedTrial& queued : trials) {
    const PlannedTrial& t = *queued.trial;
    if (t.invalid_reason) estimated_s.push_back(0.0);  // recorded as skipped, never launched
    else if (t.estimate) estimated_s.push_back(t.estimate->trial_s);
    else estimated_s.push_back(std::nullopt);  // the plan cannot estimate it (`command`)
  }
  progress_.emplace(std::move(estimated_s), UnixNow());
  const double began = Now();
  std::size_t next = 0;
  bool cancelled = false;
  while (true) {
    while (next < trials.size() && !effects_.interrupt.Requested() && !refused_busy_ &&
           !budget_spent_ && !stopped_on_failures_) {
      const QueuedTrial& queued = trials[next];
      const PlannedTrial& t = *queued.trial;
      const std::string prefix = LaunchLabel(queued.index, total, t.key, t.config,
                                             queued.launch, settings_.replicates,
                                             settings_.halving);
      if (t.invalid_reason) {
        RecordSkipped(t, prefix, next);
        ++next;
        continue;
      }
      // on_oom: skip_larger: a trial at least as large as one that ran out of memory is not
      // started (only before its first launch: a trial measured already keeps its launches).
      if (settings_.skip_larger_after_oom && queued.launch == 0) {
        if (std::optional<std::string> after = PredictedOom(t.config, oomed_)) {
          RecordPredictedOom(t, prefix, next, *after);
          ++next;
          continue;
        }
      }
      if (failed_keys_.count(t.key)) {  // an earlier launch failed: the trial has failed
        progress_->Finished(next, 0);
        status_.LaunchNotRun(prefix);
        ++next;
        continue;
      }
      if (KeyInFlight(t.key)) break;  // wait for its other launch to end
      // A share of capacity runs once its capacity trial is recorded, at the rate it measured.
      std::optional<double> capacity_per_s;
      bool capacity_busy = false;
      if (t.config.serve && t.config.serve->of_capacity != 0) {
        const std::string capacity_key = TrialKey(CapacityTrial(t.config));
        if (KeyInFlight(capacity_key)) break;
        std::string why;
        capacity_per_s = MeasuredCapacity(capacity_key, &why, &capacity_busy);
        if (!capacity_per_s) {
          ++next;
          RecordUnstartable(queued, next - 1, prefix, why, UnixNow());
          continue;
        }
      }
      if (settings_.budget_s >= 0) {  // --budget: would this launch end past it?
        const double estimate = t.estimate ? t.estimate->trial_s : 0.0;
        if (Now() - began + estimate > settings_.budget_s) {
          budget_spent_ = true;
          tally_.not_started = trials.size() - next;
          break;
        }
      }
      std::string why_here;  // which NVLink island / NUMA node holds the slots
      auto slots = pool_.Acquire(t.config.world_size(), &why_here);
      if (!slots && effects_.launcher.InFlight() > 0) break;  // wait for slots to free up
      if (slots && !WaitUntilIdle()) {
        pool_.Release(*slots);
        refused_busy_ = true;
        break;
      }
      ++next;
      if (!slots) {
        RecordUnstartable(queued, next - 1, prefix,
                          fmt::format("needs {} slot(s); this run has {}",
                                      t.config.world_size(), pool_.size()),
                          UnixNow());
        continue;
      }
      // A share of capacity says the rate it came to in every line about it.
      const std::string shown =
          capacity_per_s ? fmt::format("{} (offered {:.3g}/s: {:g} x capacity {:.3g}/s)", prefix,
                                       t.config.serve->of_capacity * *capacity_per_s,
                                       t.config.serve->of_capacity, *capacity_per_s)
                         : prefix;
      Start(queued, next - 1, shown, *slots, why_here, capacity_per_s, capacity_busy);
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

void SweepLoop::Adopt(const AdoptedTrial& a) {
  std::string prefix = AdoptedLabel(a.trial->key, a.trial->config, a.launch,
                                    settings_.replicates, settings_.halving);
  in_flight_.emplace(a.handle, InFlight{a.trial,
                                        a.launch,
                                        kAdoptedPosition,
                                        std::move(prefix),
                                        a.run_dir,
                                        {},
                                        {},
                                        a.started_at,
                                        std::nullopt,
                                        a.job,
                                        0,
                                        std::nullopt,
                                        false});
  // A share of capacity started by an earlier coordinator ran at the capacity recorded then.
  if (const TrialConfig& c = a.trial->config; c.serve && c.serve->of_capacity != 0) {
    std::string unused;
    InFlight& adopted = in_flight_.at(a.handle);
    adopted.capacity_per_s =
        MeasuredCapacity(TrialKey(CapacityTrial(c)), &unused, &adopted.capacity_busy);
  }
}

void SweepLoop::Abandon() noexcept {
  try {
    for (const auto& [handle, trial] : in_flight_) effects_.launcher.Cancel(handle);
    while (effects_.launcher.InFlight() > 0) effects_.launcher.Wait(kPollInterval);
  } catch (...) {
  }
}

std::vector<SweepLoop::UnrecordedLaunch> SweepLoop::Unrecorded() const {
  std::vector<UnrecordedLaunch> unrecorded;
  if (recording_) unrecorded.push_back(*recording_);
  for (const auto& [handle, trial] : in_flight_)
    unrecorded.push_back({trial.trial->key, trial.launch, trial.run_dir});
  return unrecorded;
}

MachineHealth SweepLoop::SampleNow() const {
  return placement_.capacity.on_gpu ? effects_.health->SampleWithGpus()
                                    : effects_.health->Sample();
}

void SweepLoop::SampleDuringTrials() {
  if (!SampleHealth() || Now() < next_sample_at_) return;
  next_sample_at_ = Now() + HealthSamplePeriodS(placement_.capacity.on_gpu);
  const MachineHealth now = SampleNow();
  for (auto& [handle, trial] : in_flight_) if (trial.health) trial.health->Add(now);
}

std::vector<std::string> SweepLoop::GpuUuids(const std::vector<int>& slots) const {
  std::vector<std::string> uuids;
  if (!placement_.capacity.on_gpu) return uuids;
  for (int slot : slots)
    if (slot < static_cast<int>(placement_.uuids.size()) && !placement_.uuids[slot].empty())
      uuids.push_back(placement_.uuids[slot]);
  return uuids;
}

bool SweepLoop::WaitUntilIdle() {
  if (settings_.require_idle_s < 0 || !SampleHealth()) return true;
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(settings_.require_idle_s));
  bool said = false;
  while (true) {
    // Before a trial: busy anywhere the sweep may run.
    const std::vector<std::string> all = placement_.uuids;
    const MachineHealth health = SampleNow();
    if (!health.BusyOn(all)) return true;
    if (std::chrono::steady_clock::now() >= give_up || effects_.interrupt.Requested()) {
      status_.MachineStillBusy(health.Describe(all));
      return false;
    }
    if (!said) {
      status_.MachineBusyWaiting(health.Describe(all), settings_.require_idle_s);
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

double SweepLoop::Now() const {
  if (effects_.now) return effects_.now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool SweepLoop::KeyInFlight(const std::string& key) const {
  for (const auto& [handle, trial] : in_flight_)
    if (trial.trial->key == key) return true;
  return false;
}

TrialRecord SweepLoop::BaseRecord(const PlannedTrial& t, int launch) const {
  TrialRecord record;
  record.trial_key = t.key;
  record.config = t.config;
  record.world_size = t.config.world_size();
  record.launch = launch;
  record.replicates = settings_.replicates;
  return record;
}

TrialOutcome SweepLoop::RecordLaunch(const TrialRecord& record) {
  std::vector<LaunchMeasurement> launches;
  for (LaunchMeasurement& stored : writer_.Launches(campaign_, record.trial_key, record.launch))
    if (stored.launch < settings_.replicates || settings_.halving)
      launches.push_back(std::move(stored));
  LaunchMeasurement latest;
  latest.launch = record.launch;
  latest.status = record.status;
  latest.error = record.error;
  latest.metrics = record.metrics;
  for (const Sample& sample : record.samples)
    if (!sample.warmup && sample.stage == kIterationStage) latest.samples.push_back(sample);
  launches.push_back(std::move(latest));
  TrialOutcome outcome = SummarizeLaunches(launches, settings_.replicates);
  writer_.RecordLaunch(campaign_, record, outcome);
  return outcome;
}

void SweepLoop::RecordSkipped(const PlannedTrial& t, const std::string& prefix,
                              std::size_t position) {
  TrialRecord record = BaseRecord(t);
  record.status = TrialStatus::kSkipped;
  record.error = *t.invalid_reason;
  record.started_at = record.finished_at = UnixNow();
  writer_.RecordTrial(campaign_, record);
  progress_->Finished(position, 0);
  ++tally_.skipped;
  status_.LaunchSkipped(prefix, *t.invalid_reason);
}

void SweepLoop::RecordPredictedOom(const PlannedTrial& t, const std::string& prefix,
                                   std::size_t position, const std::string& after) {
  TrialRecord record = BaseRecord(t);
  record.status = TrialStatus::kSkipped;
  record.error = "predicted OOM after " + after;
  record.started_at = record.finished_at = UnixNow();
  writer_.RecordTrial(campaign_, record);
  progress_->Finished(position, 0);
  ++tally_.predicted_oom;
  failed_keys_.insert(t.key);  // its later launches are not run either
  status_.LaunchPredictedOom(prefix, record.error);
}

void SweepLoop::RecordUnstartable(const QueuedTrial& queued, std::size_t position,
                       const std::string& prefix, const std::string& error,
                       double started_at) {
  TrialRecord record = BaseRecord(*queued.trial, queued.launch);
  record.status = TrialStatus::kFailed;
  record.error = error;
  record.started_at = started_at;
  record.finished_at = UnixNow();
  RecordLaunch(record);
  failed_keys_.insert(queued.trial->key);
  progress_->Finished(position, record.finished_at - started_at);
  ++tally_.ran;
  ++tally_.failed;
  status_.LaunchUnstartable(prefix, error);
}

std::optional<double> SweepLoop::MeasuredCapacity(const std::string& capacity_key, std::string* why,
                                                  bool* busy) {
  const auto figure = writer_.TrialExtraMetric(campaign_, capacity_key, "requests_per_s");
  const std::string rate = fmt::format("its rate is a share of capacity trial {}", capacity_key);
  if (!figure || figure->status == TrialStatus::kPending ||
      figure->status == TrialStatus::kRunning) {
    *why = rate + ", which has not run in this campaign";
  } else if (figure->status != TrialStatus::kOk) {
    *why = fmt::format("{}, which is {}: {}", rate, StatusName(figure->status),
                       OneLine(figure->error));
  } else if (!figure->value || !(*figure->value > 0) || !std::isfinite(*figure->value)) {
    *why = rate + ", which measured no throughput (requests_per_s)";
  } else {
    *busy = figure->busy;
    return figure->value;
  }
  return std::nullopt;
}

void SweepLoop::Start(const QueuedTrial& queued, std::size_t position, const std::string& prefix,
                      const std::vector<int>& slots, const std::string& slots_reason,
                      std::optional<double> capacity_per_s, bool capacity_busy) {
  const PlannedTrial& t = *queued.trial;
  const auto run_dir = LaunchRunDir(run_root_, campaign_, t.key, queued.launch);
  const double started_at = UnixNow();
  try {
    std::filesystem::remove_all(run_dir);
    std::filesystem::create_directories(run_dir);
    TrialConfig config = t.config;
    if (capacity_per_s) config = ResolveCapacityShare(config, *capacity_per_s);
    if (queued.screening) {  // a screening round: the fewest iterations the sweep allows
      config.repeats.max = config.repeats.min;
      config.repeats.target_rel_ci = 0;
    }
    // A served trial's requests, made here once (generated, or read from its trace): every
    // rank serves this list and ingest checks against it.
    RequestList requests;
    if (KindRow(KindOf(config)).has_requests) requests = MaterializeRequests(config);
    TrialFile file{t.key, spec_.name, config, placement_.capacity.on_gpu ? "cuda" : "cpu",
                   std::move(requests)};
    // Not fsynced: a trial whose result is not committed runs again and rewrites it.
    WriteFileAtomically(run_dir / kTrialFileName, ToJson(file).dump(2), /*durable=*/false);
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
  writer_.MarkRunning(campaign_, running);
  status_.LaunchStarted(prefix);

  std::optional<TrialHealth> health;
  if (SampleHealth()) health.emplace(GpuUuids(slots), SampleNow());

  LaunchRequest request = TrialRequest(spec_, t, run_dir, worker_);
  request.rendezvous_socket =
      settings_.rendezvous_socket && TraitsOf(t.config.workload).launch == WorkloadLaunch::kWorker;
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
    writer_.SetSchedulerJob(campaign_, t.key, job);
    status_.LaunchSubmitted(prefix, job);
  }
  for (auto& [other_handle, other] : in_flight_) ++other.concurrent;
  const int beside = static_cast<int>(in_flight_.size());
  auto [entry, inserted] = in_flight_.emplace(
      handle, InFlight{&t, queued.launch, position, prefix, run_dir, slots, slots_reason,
                       started_at, std::move(health), job, 0, capacity_per_s, capacity_busy});
  if (inserted) entry->second.concurrent = beside;
}

void SweepLoop::Reap(const FinishedTrial& finished) {
  auto it = in_flight_.find(finished.handle);
  if (it == in_flight_.end()) return;  // not ours: nothing to record
  const InFlight trial = std::move(it->second);
  in_flight_.erase(it);
  pool_.Release(trial.slots);
  const PlannedTrial& t = *trial.trial;

  // Kept until the launch is recorded: a launch not recorded now is recorded by the next run.
  if (!finished.outcome.cancelled) WriteLaunchOutcome(trial.run_dir, finished.outcome);
  std::optional<TrialHealth> health = trial.health;
  if (health) health->Finish(SampleNow());
  // The stretches the machine was busy, for a serving trial's requests: placed on the ranks'
  // own clock, so only when they share this host's (docs/measurement.md, "Serving under load").
  std::optional<IntervalSet> busy_s;
  if (health && effects_.launcher.RanksShareHost()) busy_s = BusyStretches(*health);
  // An interrupt while the files are read ends the read: the trial is then recorded as
  // interrupted (below) and runs again on resume.
  TrialRecord record = IngestTrial(
      t.config, t.key, trial.run_dir, finished.outcome,
      [this] { return effects_.interrupt.Requested(); }, busy_s ? &*busy_s : nullptr);
  record.launch = trial.launch;
  record.replicates = settings_.replicates;
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
  if (health) {
    record.health = health->ToJson();
    if (health->Busy()) busy_note = fmt::format("  [machine busy: {}]", health->Note());
  }
  if (record.status == TrialStatus::kOk && trial.capacity_per_s) {
    // The rate a share of capacity came to, and the capacity it is a share of.
    record.metrics->extra["capacity_per_s"] = *trial.capacity_per_s;
    record.metrics->extra["offered_per_s"] = t.config.serve->of_capacity * *trial.capacity_per_s;
    // A rate made from a figure in doubt is in doubt too, whatever this trial's own health.
    if (trial.capacity_busy)
      record.metrics->extra_note += fmt::format(
          "{}serve: its rate comes from capacity trial {}, measured while the "
          "machine was busy",
          record.metrics->extra_note.empty() ? "" : "; ", TrialKey(CapacityTrial(t.config)));
  }
  if (record.status == TrialStatus::kOk) AttachOutputReference(record, t.config);
  if (record.status == TrialStatus::kOk && t.config.scope == Scope::kPipeline)
    KeepOutputImages(trial.run_dir);
  recording_ = UnrecordedLaunch{t.key, trial.launch, trial.run_dir};
  const TrialOutcome outcome = RecordLaunch(record);
  recording_.reset();
  if (outcome.status == TrialStatus::kOk && outcome.metrics) {
    TrialRecord summary = record;
    summary.metrics = outcome.metrics;
    UpdateOutputErrors(output_errors_, summary);
  }
  if (t.config.workload == Workload::kEngine)  // the engine's version, not the trial's own
    record.worker_environment = EngineCampaignEnvironment(record.worker_environment);
  if (!worker_described_ && record.status == TrialStatus::kOk &&
      record.worker_environment.is_object() && !record.worker_environment.empty()) {
    writer_.UpdateCampaignEnvironment(campaign_, {{"worker", record.worker_environment}});
    worker_described_ = true;
  }
  if (record.status == TrialStatus::kInterrupted) {
    status_.LaunchInterrupted(trial.prefix);
    return;
  }
  if (trial.position != kAdoptedPosition)  // adopted trials are not in the queue
    progress_->Finished(trial.position, finished.outcome.wall_s);
  ++tally_.ran;
  if (record.status == TrialStatus::kOk) {
    ++tally_.ok;
    status_.LaunchOk(trial.prefix, *record.metrics, outcome.metrics, busy_note);
  } else {
    ++tally_.failed;
    failed_keys_.insert(t.key);
    if (record.status == TrialStatus::kOom) oomed_.push_back({t.key, t.config});
    // Where to look: the failing rank's log, or the trial's folder.
    const int rank = finished.outcome.first_failed_rank;
    const auto where = rank >= 0 ? RankLogPath(trial.run_dir, rank) : trial.run_dir;
    status_.LaunchFailed(trial.prefix, record.status, record.error, busy_note, where);
  }
  if (streak_.Add(record.status, record.error)) {  // a broken setup, not N bad configurations
    stopped_on_failures_ = settings_.stop_after_failures > 0;
    status_.IdenticalFailures(streak_.length(), streak_.signature(), stopped_on_failures_);
  }
  status_.Progress(progress_->Line(UnixNow()));
}

}  // namespace ditbench
