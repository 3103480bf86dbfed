// The sweep loop of `ditbench run`: one campaign's launches through a Launcher, on the slots
// a SlotPool gives them, each finished launch recorded in its own transaction. It decides
// nothing about what to run (the queue comes from plan/resume.h or the halving search) and
// prints nothing (every event goes to a RunStatus).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "experiments/sweep_spec.h"
#include "launch/launcher.h"
#include "machine/machine_health.h"
#include "machine/placement.h"
#include "metrics/launch_summary.h"
#include "plan/oom_prediction.h"
#include "plan/resume.h"
#include "runner/failure_streak.h"
#include "runner/progress.h"
#include "runner/run_status.h"
#include "runner/scheduler_adoption.h"
#include "runner/sweep_run.h"
#include "storage/campaign_writer.h"
#include "storage/output_error_store.h"

namespace ditbench {

// How the loop runs launches: fixed for the run.
struct LoopSettings {
  int replicates = 1;      // launches per trial (sweep field)
  bool halving = false;    // search: halving (launch index = round)
  double budget_s = -1;    // --budget
  bool skip_larger_after_oom = false;  // on_oom: skip_larger
  double require_idle_s = -1;          // --require-idle
  int stop_after_failures = 0;  // --stop-after-failures N (0: warn only, runner/failure_streak.h)
  // Rank 0 of ditbench-worker gets its rendezvous port already listening
  // (LaunchRequest::rendezvous_socket). Off for another build's worker under `bisect`, which
  // may be older than that hand-off and bind the port itself.
  bool rendezvous_socket = true;
};

// One campaign's trials through the launcher. Owns the bookkeeping of trials in flight; every
// method that touches the database may throw (storage trouble ends the sweep).
class SweepLoop {
 public:
  SweepLoop(const SweepSpec& spec, const Placement& placement, PlacementPolicy policy,
            CampaignWriter& writer, OutputErrorStore& output_errors, std::int64_t campaign,
            const SweepEffects& effects, std::filesystem::path worker,
            std::filesystem::path run_root, LoopSettings settings, std::vector<OomTrial> oomed,
            RunStatus& status)
      : spec_(spec),
        placement_(placement),
        pool_(placement.capacity.slots, policy, placement.topology),
        writer_(writer),
        output_errors_(output_errors),
        campaign_(campaign),
        effects_(effects),
        worker_(std::move(worker)),
        run_root_(std::move(run_root)),
        settings_(settings),
        oomed_(std::move(oomed)),
        status_(status),
        streak_(settings.stop_after_failures > 0 ? settings.stop_after_failures
                                                 : kWarnAfterIdenticalFailures) {}

  // Runs the launches `trials` (already filtered by resume rules and interleaved: every
  // trial's first launch, then every second one, ...) in order; returns when none is left to
  // start and none is in flight, or after an interrupt once the launches in flight have ended.
  //
  // The structure is ninja's Builder::Build: start launches while the slots allow, wait for
  // one to finish, reap and record it, repeat. Two launches of one trial never overlap, and a
  // trial whose launch failed starts no more launches.
  void Run(const std::vector<QueuedTrial>& trials, std::size_t total);

  // Takes over a launch an earlier coordinator started (Launcher::Attach): Run() waits for it
  // and records it, as that launch, like its own. No slot: its devices are the scheduler's.
  void Adopt(const AdoptedTrial& a);

  // Kills whatever is still in flight and waits for it: used when storage fails mid-sweep.
  void Abandon() noexcept;

  // A launch this loop started or adopted and has not recorded.
  struct UnrecordedLaunch {
    std::string trial_key;
    int launch = 0;
    std::filesystem::path run_dir;
  };
  // After Run() threw (storage failed) and Abandon(): the launch being recorded when it
  // failed, then those still in flight. The database holds them `running` until the next run.
  std::vector<UnrecordedLaunch> Unrecorded() const;

  // What this run did so far (kept and kept_failed are the caller's).
  const RunTally& tally() const { return tally_; }
  // The budget ended the run before every launch started.
  bool budget_spent() const { return budget_spent_; }
  // --require-idle: the machine stayed busy; nothing more was started.
  bool refused_busy() const { return refused_busy_; }
  // --stop-after-failures: the first launches all failed the same way; nothing more started.
  bool stopped_on_failures() const { return stopped_on_failures_; }

 private:
  bool SampleHealth() const { return effects_.health != nullptr; }

  // The machine now; on GPU also the other programs on the GPUs.
  MachineHealth SampleNow() const;

  // While trials run: a sample every HealthSamplePeriodS, folded into each (TrialHealth).
  void SampleDuringTrials();
  double next_sample_at_ = -1e300;

  // The UUIDs of the GPUs behind `slots` (none on CPU).
  std::vector<std::string> GpuUuids(const std::vector<int>& slots) const;

  // --require-idle: true once the machine is idle, false when it stayed busy for the whole
  // wait (or the user interrupted). Bounded by settings_.require_idle_s.
  bool WaitUntilIdle();

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
    // A share of capacity: the capacity trial's requests_per_s its rate was made from, and
    // whether that trial was measured while the machine was busy.
    std::optional<double> capacity_per_s;
    bool capacity_busy = false;
  };

  double Now() const;

  bool KeyInFlight(const std::string& key) const;

  TrialRecord BaseRecord(const PlannedTrial& t, int launch = 0) const;

  // Records one launch and what the trial's launches add up to (metrics/launch_summary.h):
  // the other launches of the trial are read back, so a resumed trial sums up every launch.
  TrialOutcome RecordLaunch(const TrialRecord& record);

  void RecordSkipped(const PlannedTrial& t, const std::string& prefix, std::size_t position);

  void RecordPredictedOom(const PlannedTrial& t, const std::string& prefix, std::size_t position,
                          const std::string& after);

  // A launch that could not be prepared or started: a failed launch, with the reason.
  void RecordUnstartable(const QueuedTrial& queued, std::size_t position,
                         const std::string& prefix, const std::string& error,
                         double started_at);

  // `capacity_per_s`: a share of capacity's (ServeLoad::of_capacity) measured capacity, which
  // its rate is made from.
  void Start(const QueuedTrial& queued, std::size_t position, const std::string& prefix,
             const std::vector<int>& slots, const std::string& slots_reason,
             std::optional<double> capacity_per_s, bool capacity_busy);

  // The throughput (requests_per_s) capacity trial `capacity_key` measured in this campaign,
  // or nullopt with why not in `*why` (not run, failed, no figure); `*busy`: it was measured
  // while the machine was busy.
  std::optional<double> MeasuredCapacity(const std::string& capacity_key, std::string* why,
                                         bool* busy);

  void Reap(const FinishedTrial& finished);

  const SweepSpec& spec_;
  const Placement& placement_;
  SlotPool pool_;
  CampaignWriter& writer_;
  OutputErrorStore& output_errors_;
  std::int64_t campaign_;
  const SweepEffects& effects_;
  std::filesystem::path worker_;
  std::filesystem::path run_root_;
  const LoopSettings settings_;
  std::vector<OomTrial> oomed_;  // trials that ran out of memory (this run and recorded ones)
  RunStatus& status_;
  RunTally tally_;
  FailureStreak streak_;  // the first launches of the run failing the same way
  bool budget_spent_ = false;
  bool refused_busy_ = false;
  bool stopped_on_failures_ = false;
  std::map<LaunchHandle, InFlight> in_flight_;
  std::optional<UnrecordedLaunch> recording_;  // the launch Reap is recording, until it is
  std::set<std::string> failed_keys_;  // trials with a failed launch in this run
  std::optional<Progress> progress_;
  bool worker_described_ = false;
};


}  // namespace ditbench
