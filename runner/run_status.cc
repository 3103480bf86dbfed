#include "runner/run_status.h"

#include <ostream>

#include <fmt/format.h>

#include "analysis/configuration_group.h"
#include "base/terminal_text.h"

namespace ditbench {
namespace {

std::string Axes(const TrialConfig& c) {
  std::string axes = fmt::format("{} {}px{} {} {}", c.model, c.resolution_text(),
                                 c.frames > 0 ? fmt::format(" {} frames", c.frames) : "",
                                 PrecisionName(c.precision), ShortDegreesLabel(c));
  // Every other identity field away from its default (attention, quant, schedule, graph, ...),
  // as the report and `query` label them, so that two trials never read alike.
  if (const std::string settings = SettingsLabel(c, {}); !settings.empty())
    axes += fmt::format(" {}", ForTerminal(settings));
  for (const auto& [name, value] : c.custom)
    axes += fmt::format(" {}={}", name,
                        ForTerminal(value.is_string() ? value.get<std::string>() : value.dump()));
  return axes;
}

}  // namespace

std::string LaunchLabel(std::size_t index, std::size_t total, const std::string& key,
                        const TrialConfig& config, int launch, int replicates, bool halving) {
  std::string prefix = fmt::format("[{}/{}] {} {}", index + 1, total, key, Axes(config));
  if (replicates > 1) prefix += fmt::format(" launch {}/{}", launch + 1, replicates);
  if (halving) prefix += fmt::format(" round {}", launch);
  return prefix;
}

std::string AdoptedLabel(const std::string& key, const TrialConfig& config, int launch,
                         int replicates, bool halving) {
  std::string prefix = fmt::format("[adopted] {} {}", key, Axes(config));
  if (replicates > 1 || halving) prefix += fmt::format(" launch {}", launch + 1);
  return prefix;
}

void ConsoleRunStatus::GpusFound(const std::string& gpus, bool on_gpu) {
  out_ << "GPUs: " << gpus << (on_gpu ? "" : "; ranks run on CPU") << "\n";
}

void ConsoleRunStatus::SweepChanged(const std::string& sweep, std::int64_t changed_from,
                                    const std::string& diff) {
  out_ << fmt::format(
      "sweep '{}' changed since campaign {} began: starting a new campaign (--continue "
      "resumes campaign {} instead)\n{}",
      sweep, changed_from, changed_from, diff);
}

void ConsoleRunStatus::OrphansInterrupted(int count) {
  out_ << fmt::format(
      "{} trial(s) left running by a coordinator that is gone marked interrupted\n", count);
}

void ConsoleRunStatus::StillRunningElsewhere(const std::string& key) {
  out_ << fmt::format("trial {} is still running under a live coordinator: not started\n", key);
}

void ConsoleRunStatus::CampaignStarted(std::int64_t campaign, const std::string& sweep,
                                       std::size_t trials, std::size_t selected, int slots,
                                       bool on_gpu, int replicates) {
  out_ << fmt::format("campaign {} of sweep '{}': {} trials{} on {} {}{}\n", campaign, sweep,
                      trials,
                      selected > 0 ? fmt::format(" (--only: {} of them)", selected) : "", slots,
                      on_gpu ? "GPU(s)" : "CPU slot(s)",
                      replicates > 1
                          ? fmt::format(", {} launches each, interleaved", replicates)
                          : "");
}

void ConsoleRunStatus::LaunchSkipped(const std::string& label, const std::string& reason) {
  out_ << label << ": skipped: " << reason << "\n";
}

void ConsoleRunStatus::LaunchPredictedOom(const std::string& label, const std::string& error) {
  out_ << label << ": skipped: " << error << " (on_oom: skip_larger)\n";
}

void ConsoleRunStatus::LaunchNotRun(const std::string& label) {
  out_ << label << ": not run (an earlier launch of this trial failed)\n";
}

void ConsoleRunStatus::LaunchUnstartable(const std::string& label, const std::string& error) {
  out_ << label << ": failed: " << error << "\n";
}

void ConsoleRunStatus::LaunchStarted(const std::string& label) {
  out_ << label << ": running\n" << std::flush;
}

void ConsoleRunStatus::LaunchSubmitted(const std::string& label, const std::string& job) {
  out_ << label << ": submitted as Slurm job " << job << "\n" << std::flush;
}

void ConsoleRunStatus::LaunchInterrupted(const std::string& label) {
  out_ << label << ": interrupted\n";
}

void ConsoleRunStatus::LaunchOk(const std::string& label, const TrialMetrics& m,
                                const std::optional<TrialMetrics>& trial,
                                const std::string& busy_note) {
  out_ << label
       << fmt::format(": ok  median {:.3f} ms  [{:.3f}, {:.3f}]  cov {:.3f}  skew {:.3f} ms  n={}{}\n",
                      m.latency_ms, m.ci_low_ms, m.ci_high_ms, m.cov, m.skew_ms, m.iterations,
                      ForTerminal(busy_note, kConsoleErrorBytes));
  if (trial && trial->launches > 1) {
    const auto& all = *trial;
    out_ << fmt::format("    over {} launches: median {:.3f} ms  [{:.3f}, {:.3f}] (between "
                        "launches)  launch cov {:.3f}\n",
                        all.launches, all.latency_ms, all.ci_low_ms, all.ci_high_ms,
                        all.launch_cov.value_or(0));
  }
}

void ConsoleRunStatus::LaunchFailed(const std::string& label, TrialStatus status,
                                    const std::string& error, const std::string& busy_note,
                                    const std::filesystem::path& where) {
  out_ << label << ": " << StatusName(status) << ": " << ForTerminal(error, kConsoleErrorBytes)
       << ForTerminal(busy_note, kConsoleErrorBytes) << "  (see "
       << where.string() << ")\n";
}

void ConsoleRunStatus::Progress(const std::string& line) { out_ << line << "\n" << std::flush; }

void ConsoleRunStatus::IdenticalFailures(int count, const std::string& signature,
                                         bool stopping) {
  if (stopping) {
    out_ << fmt::format("STOPPING: the first {} launches all failed the same way ({}): the "
                        "setup is broken, not the configurations (--stop-after-failures {})\n",
                        count, signature, count);
  } else {
    out_ << fmt::format("WARNING: the first {} launches all failed the same way ({}): the setup "
                        "is likely broken, not the configurations; Ctrl-C stops the sweep "
                        "(--stop-after-failures N stops it by itself)\n",
                        count, signature);
  }
  out_.flush();
}

void ConsoleRunStatus::MachineBusyWaiting(const std::string& machine, double wait_s) {
  out_ << fmt::format("machine busy ({}): waiting up to {:.0f} s for it to be idle\n",
                      ForTerminal(machine, kConsoleErrorBytes), wait_s);
}

void ConsoleRunStatus::MachineStillBusy(const std::string& machine) {
  out_ << "machine still busy (" << ForTerminal(machine, kConsoleErrorBytes)
       << "): no more trials started "
       << "(--require-idle)\n";
}

void ConsoleRunStatus::HalvingRoundDone(int round, std::size_t going_on, std::size_t ranked,
                                        double keep) {
  out_ << fmt::format("halving search: round {} done; {} of {} trial(s) go on to round {} "
                      "(the fastest {:.0f}% of each group, re-measured to the target CI)\n",
                      round, going_on, ranked, round + 1, keep * 100);
}

void ConsoleRunStatus::HalvingDone(int round) {
  out_ << fmt::format("halving search: done after round {} (one trial left in every group)\n",
                      round);
}

void ConsoleRunStatus::SearchChoice(const std::string& key, const std::string& reason) {
  out_ << fmt::format("advise search: next {}: {}\n", key, reason) << std::flush;
}

void ConsoleRunStatus::SearchDone(const std::string& why) {
  out_ << "advise search: done: " << why << "\n";
}

void ConsoleRunStatus::RunInterrupted() {
  out_ << "interrupted: finished trials are saved; run the same command again to resume\n";
}

void ConsoleRunStatus::BudgetSpent(double budget_s, const RunTally& tally) {
  out_ << fmt::format("stopped: the budget of {:.0f} s is spent; {} ran ({} ok), {} launch(es) "
                      "not started; run the same command again to resume\n",
                      budget_s, tally.ran, tally.ok, tally.not_started);
}

void ConsoleRunStatus::StoppedBusy(const RunTally& tally) {
  out_ << fmt::format("stopped: {} ran ({} ok); the machine was busy; run the same command "
                      "again to resume\n",
                      tally.ran, tally.ok);
}

void ConsoleRunStatus::StoppedOnFailures(const RunTally& tally) {
  out_ << fmt::format("stopped: {} ran ({} ok, {} failed); fix the setup, then run the same "
                      "command with --rerun failed\n",
                      tally.ran, tally.ok, tally.failed);
}

void ConsoleRunStatus::RunEnded(const RunTally& tally) {
  // Each trial is counted once: a failure kept from an earlier run is one of the "already
  // recorded", not also one of this run's failures.
  out_ << fmt::format("done: {} ran ({} ok, {} failed), {} skipped as invalid, {}{} already "
                      "recorded{}\n",
                      tally.ran, tally.ok, tally.failed, tally.skipped,
                      tally.predicted_oom > 0
                          ? fmt::format("{} skipped as predicted OOM, ", tally.predicted_oom)
                          : "",
                      tally.kept,
                      tally.kept_failed > 0
                          ? fmt::format(" ({} of them failed earlier; --rerun failed runs them "
                                        "again)", tally.kept_failed)
                          : "");
}

}  // namespace ditbench
