// A RunStatus that records each event as one short line ("started <label>", "ok <label>
// 12.000", "ended ran=2 ok=2 ..."), so a test asserts what a run reported without parsing
// the console's text.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "runner/run_status.h"

namespace ditbench::test {

class RecordingRunStatus final : public RunStatus {
 public:
  std::vector<std::string> events;

  void GpusFound(const std::string& gpus, bool) override { Add("gpus " + gpus); }
  void SweepChanged(const std::string& sweep, std::int64_t from, const std::string&) override {
    Add(fmt::format("changed {} from {}", sweep, from));
  }
  void OrphansInterrupted(int count) override { Add(fmt::format("orphans {}", count)); }
  void StillRunningElsewhere(const std::string& key) override { Add("elsewhere " + key); }
  void CampaignStarted(std::int64_t campaign, const std::string& sweep, std::size_t trials,
                       std::size_t selected, int slots, bool, int replicates) override {
    Add(fmt::format("campaign {} {} trials={} selected={} slots={} replicates={}", campaign,
                    sweep, trials, selected, slots, replicates));
  }
  void LaunchSkipped(const std::string& label, const std::string&) override {
    Add("skipped " + label);
  }
  void LaunchPredictedOom(const std::string& label, const std::string&) override {
    Add("predicted-oom " + label);
  }
  void LaunchNotRun(const std::string& label) override { Add("not-run " + label); }
  void LaunchUnstartable(const std::string& label, const std::string&) override {
    Add("unstartable " + label);
  }
  void LaunchStarted(const std::string& label) override { Add("started " + label); }
  void LaunchSubmitted(const std::string& label, const std::string& job) override {
    Add("submitted " + label + " " + job);
  }
  void LaunchInterrupted(const std::string& label) override { Add("interrupted " + label); }
  void LaunchOk(const std::string& label, const TrialMetrics&, const std::optional<TrialMetrics>&,
                const std::string&) override {
    Add("ok " + label);
  }
  void LaunchFailed(const std::string& label, TrialStatus status, const std::string&,
                    const std::string&, const std::filesystem::path&) override {
    Add(fmt::format("{} {}", StatusName(status), label));
  }
  void Progress(const std::string&) override { Add("progress"); }
  void IdenticalFailures(int count, const std::string& signature, bool stopping) override {
    Add(fmt::format("identical-failures {} {} {}", count, stopping ? "stop" : "warn", signature));
  }
  void MachineBusyWaiting(const std::string&, double) override { Add("busy-waiting"); }
  void MachineStillBusy(const std::string&) override { Add("still-busy"); }
  void HalvingRoundDone(int round, std::size_t going_on, std::size_t ranked, double) override {
    Add(fmt::format("halving round {} {}/{}", round, going_on, ranked));
  }
  void HalvingDone(int round) override { Add(fmt::format("halving done {}", round)); }
  void SearchChoice(const std::string& key, const std::string& reason) override {
    Add(fmt::format("search {}: {}", key, reason));
  }
  void SearchDone(const std::string& why) override { Add("search done: " + why); }
  void RunInterrupted() override { Add("run-interrupted"); }
  void BudgetSpent(double, const RunTally& t) override { Add("budget-spent " + Tally(t)); }
  void StoppedBusy(const RunTally& t) override { Add("stopped-busy " + Tally(t)); }
  void StoppedOnFailures(const RunTally& t) override { Add("stopped-failures " + Tally(t)); }
  void RunEnded(const RunTally& t) override { Add("ended " + Tally(t)); }

 private:
  void Add(std::string event) { events.push_back(std::move(event)); }
  static std::string Tally(const RunTally& t) {
    return fmt::format("ran={} ok={} skipped={} predicted_oom={} kept={} failed={} not_started={}",
                       t.ran, t.ok, t.skipped, t.predicted_oom, t.kept, t.failed,
                       t.not_started);
  }
};

}  // namespace ditbench::test
