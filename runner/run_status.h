// What `ditbench run` tells its user, as events: the sweep loop, the halving search and the
// campaign setup report through RunStatus and never print, so a test reads what a user sees
// by recording the events, and ConsoleRunStatus is the one place the text is written.
//
// A launch is named by its label (LaunchLabel, AdoptedLabel): "[3/8] <key> <axes>", with
// " launch 2/3" under replicates and " round 1" in a halving search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "experiments/trial.h"
#include "metrics/launch_summary.h"

namespace ditbench {

// "[<index + 1>/<total>] <key> <axes>" and, with more than one replicate, " launch
// <launch + 1>/<replicates>"; in a halving search " round <launch>".
std::string LaunchLabel(std::size_t index, std::size_t total, const std::string& key,
                        const TrialConfig& config, int launch, int replicates, bool halving);

// "[adopted] <key> <axes>", with " launch <launch + 1>" under replicates or halving.
std::string AdoptedLabel(const std::string& key, const TrialConfig& config, int launch,
                         int replicates, bool halving);

// How a run ended, for RunEnded.
struct RunTally {
  int ran = 0, ok = 0, skipped = 0, predicted_oom = 0;
  int kept = 0;         // trials already recorded, kept by the resume rules
  int kept_failed = 0;  // of `kept`, those recorded as failures (counted once: not in failed)
  int failed = 0;       // launches that failed in this run (part of `ran`)
  std::size_t not_started = 0;  // launches the budget left unstarted
};

// The events of one `run`, in the order they happen. Implementations need not be thread-safe
// (the loop is single-threaded).
class RunStatus {
 public:
  virtual ~RunStatus() = default;

  // Setup. `gpus`: Describe() of the driver's listing.
  virtual void GpusFound(const std::string& gpus, bool on_gpu) = 0;
  virtual void SweepChanged(const std::string& sweep, std::int64_t changed_from,
                            const std::string& diff) = 0;
  virtual void OrphansInterrupted(int count) = 0;  // left running by a coordinator that is gone
  virtual void StillRunningElsewhere(const std::string& key) = 0;
  // `selected`: the --only keys (0: every trial); `replicates`: launches per trial.
  virtual void CampaignStarted(std::int64_t campaign, const std::string& sweep,
                               std::size_t trials, std::size_t selected, int slots, bool on_gpu,
                               int replicates) = 0;

  // One launch of the sweep loop.
  virtual void LaunchSkipped(const std::string& label, const std::string& reason) = 0;
  virtual void LaunchPredictedOom(const std::string& label, const std::string& error) = 0;
  virtual void LaunchNotRun(const std::string& label) = 0;  // an earlier launch failed
  virtual void LaunchUnstartable(const std::string& label, const std::string& error) = 0;
  virtual void LaunchStarted(const std::string& label) = 0;
  virtual void LaunchSubmitted(const std::string& label, const std::string& job) = 0;
  virtual void LaunchInterrupted(const std::string& label) = 0;
  // An ok launch: its metrics, and the trial's over its launches when it has more than one.
  // `busy_note`: "" or "  [machine busy: ...]".
  virtual void LaunchOk(const std::string& label, const TrialMetrics& launch,
                        const std::optional<TrialMetrics>& trial,
                        const std::string& busy_note) = 0;
  // A failed launch, and where to look (the failing rank's log or the run folder).
  virtual void LaunchFailed(const std::string& label, TrialStatus status,
                            const std::string& error, const std::string& busy_note,
                            const std::filesystem::path& where) = 0;
  virtual void Progress(const std::string& line) = 0;  // runner/progress.h's line

  // The first `count` launches of the run all failed the same way (`signature`:
  // FailureSignature); `stopping`: --stop-after-failures stops the run.
  virtual void IdenticalFailures(int count, const std::string& signature, bool stopping) = 0;

  // --require-idle. `machine`: MachineHealth::Describe of the busy machine.
  virtual void MachineBusyWaiting(const std::string& machine, double wait_s) = 0;
  virtual void MachineStillBusy(const std::string& machine) = 0;

  // `search: halving`: a round ended and `going_on` of `ranked` trials go on; or the search
  // ended (one trial left in every group).
  virtual void HalvingRoundDone(int round, std::size_t going_on, std::size_t ranked,
                                double keep) = 0;
  virtual void HalvingDone(int round) = 0;

  // `run --search advise`: why the next launch is `key` (its reason is stored too), and why
  // the search ended.
  virtual void SearchChoice(const std::string& key, const std::string& reason) = 0;
  virtual void SearchDone(const std::string& why) = 0;

  // How the run ended.
  virtual void RunInterrupted() = 0;
  virtual void BudgetSpent(double budget_s, const RunTally& tally) = 0;
  virtual void StoppedBusy(const RunTally& tally) = 0;
  virtual void StoppedOnFailures(const RunTally& tally) = 0;  // --stop-after-failures
  virtual void RunEnded(const RunTally& tally) = 0;
};

// The console: every event as one or two lines of text on `out` (borrowed; it must outlive
// this), flushed where a line may be followed by a long wait.
class ConsoleRunStatus final : public RunStatus {
 public:
  explicit ConsoleRunStatus(std::ostream& out) : out_(out) {}

  void GpusFound(const std::string& gpus, bool on_gpu) override;
  void SweepChanged(const std::string& sweep, std::int64_t changed_from,
                    const std::string& diff) override;
  void OrphansInterrupted(int count) override;
  void StillRunningElsewhere(const std::string& key) override;
  void CampaignStarted(std::int64_t campaign, const std::string& sweep, std::size_t trials,
                       std::size_t selected, int slots, bool on_gpu, int replicates) override;
  void LaunchSkipped(const std::string& label, const std::string& reason) override;
  void LaunchPredictedOom(const std::string& label, const std::string& error) override;
  void LaunchNotRun(const std::string& label) override;
  void LaunchUnstartable(const std::string& label, const std::string& error) override;
  void LaunchStarted(const std::string& label) override;
  void LaunchSubmitted(const std::string& label, const std::string& job) override;
  void LaunchInterrupted(const std::string& label) override;
  void LaunchOk(const std::string& label, const TrialMetrics& launch,
                const std::optional<TrialMetrics>& trial, const std::string& busy_note) override;
  void LaunchFailed(const std::string& label, TrialStatus status, const std::string& error,
                    const std::string& busy_note, const std::filesystem::path& where) override;
  void Progress(const std::string& line) override;
  void IdenticalFailures(int count, const std::string& signature, bool stopping) override;
  void MachineBusyWaiting(const std::string& machine, double wait_s) override;
  void MachineStillBusy(const std::string& machine) override;
  void HalvingRoundDone(int round, std::size_t going_on, std::size_t ranked,
                        double keep) override;
  void HalvingDone(int round) override;
  void SearchChoice(const std::string& key, const std::string& reason) override;
  void SearchDone(const std::string& why) override;
  void RunInterrupted() override;
  void BudgetSpent(double budget_s, const RunTally& tally) override;
  void StoppedBusy(const RunTally& tally) override;
  void StoppedOnFailures(const RunTally& tally) override;
  void RunEnded(const RunTally& tally) override;

 private:
  std::ostream& out_;
};

}  // namespace ditbench
