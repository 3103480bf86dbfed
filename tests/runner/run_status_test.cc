#include "runner/run_status.h"

#include <sstream>

#include <gtest/gtest.h>

namespace ditbench::run_status_test {
namespace {

TrialConfig Config() {
  TrialConfig c;
  c.model = "pixart-alpha";
  c.resolution = 256;
  c.precision = Precision::kFp32;
  c.ulysses = 2;
  return c;
}

TrialMetrics Metrics(double median_ms) {
  TrialMetrics m;
  m.latency_ms = median_ms;
  m.ci_low_ms = median_ms - 1;
  m.ci_high_ms = median_ms + 1;
  m.cov = 0.01;
  m.skew_ms = 0.5;
  m.iterations = 20;
  return m;
}

class ConsoleRunStatusTest : public ::testing::Test {
 protected:
  std::ostringstream out_;
  ConsoleRunStatus status_{out_};
};

TEST(LaunchLabelTest, NamesPositionKeyAxesAndLaunchOrRound) {
  EXPECT_EQ(LaunchLabel(2, 8, "k1", Config(), 0, 1, false),
            "[3/8] k1 pixart-alpha 256px fp32 u2 r1 pf1 cfg1 dp1");
  EXPECT_EQ(LaunchLabel(0, 4, "k1", Config(), 1, 3, false),
            "[1/4] k1 pixart-alpha 256px fp32 u2 r1 pf1 cfg1 dp1 launch 2/3");
  EXPECT_EQ(LaunchLabel(0, 4, "k1", Config(), 2, 1, true),
            "[1/4] k1 pixart-alpha 256px fp32 u2 r1 pf1 cfg1 dp1 round 2");
  TrialConfig command = Config();
  command.custom["threads"] = 4;
  command.custom["mode"] = "fast";
  EXPECT_EQ(LaunchLabel(0, 1, "k2", command, 0, 1, false),
            "[1/1] k2 pixart-alpha 256px fp32 u2 r1 pf1 cfg1 dp1 mode=fast threads=4");
}

TEST(LaunchLabelTest, AdoptedLaunchesAreNamedWithoutAPosition) {
  EXPECT_EQ(AdoptedLabel("k1", Config(), 0, 1, false),
            "[adopted] k1 pixart-alpha 256px fp32 u2 r1 pf1 cfg1 dp1");
  EXPECT_EQ(AdoptedLabel("k1", Config(), 1, 2, false),
            "[adopted] k1 pixart-alpha 256px fp32 u2 r1 pf1 cfg1 dp1 launch 2");
  EXPECT_EQ(AdoptedLabel("k1", Config(), 0, 1, true),
            "[adopted] k1 pixart-alpha 256px fp32 u2 r1 pf1 cfg1 dp1 launch 1");
}

TEST_F(ConsoleRunStatusTest, EachLaunchEventIsOneLineAfterItsLabel) {
  status_.LaunchSkipped("[1/2] a", "world size 4 exceeds the 2 CPU slots available");
  status_.LaunchPredictedOom("[2/2] b", "predicted OOM after a");
  status_.LaunchNotRun("[2/2] b");
  status_.LaunchUnstartable("[2/2] b", "needs 4 slot(s); this run has 2");
  status_.LaunchStarted("[2/2] b");
  status_.LaunchSubmitted("[2/2] b", "4242");
  status_.LaunchInterrupted("[2/2] b");
  status_.LaunchFailed("[2/2] b", TrialStatus::kOom, "out of memory", "",
                       "/runs/1/b/rank1.log");
  status_.Progress("progress: 2/2 done");
  EXPECT_EQ(out_.str(),
            "[1/2] a: skipped: world size 4 exceeds the 2 CPU slots available\n"
            "[2/2] b: skipped: predicted OOM after a (on_oom: skip_larger)\n"
            "[2/2] b: not run (an earlier launch of this trial failed)\n"
            "[2/2] b: failed: needs 4 slot(s); this run has 2\n"
            "[2/2] b: running\n"
            "[2/2] b: submitted as Slurm job 4242\n"
            "[2/2] b: interrupted\n"
            "[2/2] b: oom: out of memory  (see /runs/1/b/rank1.log)\n"
            "progress: 2/2 done\n");
}

TEST_F(ConsoleRunStatusTest, AnOkLaunchShowsItsMetricsAndTheTrialsOverSeveralLaunches) {
  status_.LaunchOk("[1/1] a", Metrics(10), std::nullopt, "  [machine busy: load 3.0]");
  TrialMetrics trial = Metrics(11);
  trial.launches = 3;
  trial.launch_cov = 0.02;
  status_.LaunchOk("[1/1] a launch 3/3", Metrics(12), trial, "");
  TrialMetrics one = Metrics(12);  // one ok launch: no summary line
  status_.LaunchOk("[1/1] a launch 1/3", Metrics(12), one, "");
  EXPECT_EQ(out_.str(),
            "[1/1] a: ok  median 10.000 ms  [9.000, 11.000]  cov 0.010  skew 0.500 ms  n=20"
            "  [machine busy: load 3.0]\n"
            "[1/1] a launch 3/3: ok  median 12.000 ms  [11.000, 13.000]  cov 0.010  skew 0.500 "
            "ms  n=20\n"
            "    over 3 launches: median 11.000 ms  [10.000, 12.000] (between launches)  launch "
            "cov 0.020\n"
            "[1/1] a launch 1/3: ok  median 12.000 ms  [11.000, 13.000]  cov 0.010  skew 0.500 "
            "ms  n=20\n");
}

TEST_F(ConsoleRunStatusTest, SetupAndEndOfRunLines) {
  status_.GpusFound("2 GPU(s) from nvidia-smi", true);
  status_.GpusFound("none", false);
  status_.OrphansInterrupted(2);
  status_.StillRunningElsewhere("k9");
  status_.CampaignStarted(3, "smoke", 8, 0, 2, true, 1);
  status_.CampaignStarted(3, "smoke", 8, 2, 4, false, 3);
  RunTally tally;
  tally.ran = 5;
  tally.ok = 4;
  tally.skipped = 1;
  tally.kept = 2;
  tally.failed = 1;
  tally.not_started = 3;
  status_.BudgetSpent(3600, tally);
  status_.StoppedBusy(tally);
  status_.RunEnded(tally);
  tally.predicted_oom = 2;
  status_.RunEnded(tally);
  status_.RunInterrupted();
  EXPECT_EQ(out_.str(),
            "GPUs: 2 GPU(s) from nvidia-smi\n"
            "GPUs: none; ranks run on CPU\n"
            "2 trial(s) left running by a coordinator that is gone marked interrupted\n"
            "trial k9 is still running under a live coordinator: not started\n"
            "campaign 3 of sweep 'smoke': 8 trials on 2 GPU(s)\n"
            "campaign 3 of sweep 'smoke': 8 trials (--only: 2 of them) on 4 CPU slot(s), 3 "
            "launches each, interleaved\n"
            "stopped: the budget of 3600 s is spent; 5 ran (4 ok), 3 launch(es) not started; "
            "run the same command again to resume\n"
            "stopped: 5 ran (4 ok); the machine was busy; run the same command again to resume\n"
            "done: 5 ran (4 ok, 1 failed), 1 skipped as invalid, 2 already recorded\n"
            "done: 5 ran (4 ok, 1 failed), 1 skipped as invalid, 2 skipped as predicted OOM, 2 "
            "already recorded\n"
            "interrupted: finished trials are saved; run the same command again to resume\n");
}

TEST_F(ConsoleRunStatusTest, MachineAndHalvingLines) {
  status_.MachineBusyWaiting("load 3.10 on 2 cores", 60);
  status_.MachineStillBusy("load 3.10 on 2 cores");
  status_.HalvingRoundDone(0, 2, 8, 0.25);
  status_.HalvingDone(1);
  status_.SweepChanged("smoke", 4, "  repeats.min: 5 -> 10\n");
  EXPECT_EQ(out_.str(),
            "machine busy (load 3.10 on 2 cores): waiting up to 60 s for it to be idle\n"
            "machine still busy (load 3.10 on 2 cores): no more trials started "
            "(--require-idle)\n"
            "halving search: round 0 done; 2 of 8 trial(s) go on to round 1 (the fastest 25% "
            "of each group, re-measured to the target CI)\n"
            "halving search: done after round 1 (one trial left in every group)\n"
            "sweep 'smoke' changed since campaign 4 began: starting a new campaign (--continue "
            "resumes campaign 4 instead)\n  repeats.min: 5 -> 10\n");
}

// A worker's error and another user's process name reach the progress line escaped, and an
// error of megabytes is cut to a few hundred characters there (it is stored in full up to
// its cap).
TEST_F(ConsoleRunStatusTest, HostileErrorsAndBusyNotesAreEscapedAndCutOnTheProgressLine) {
  status_.LaunchFailed("[1/1] k", TrialStatus::kFailed,
                       "boom\x1b]0;owned\a" + std::string(2 << 20, 'x'),
                       "  [machine busy: \x1b[2Jburn (pid 7) 0.90]", "/runs/k");
  status_.MachineStillBusy("burn\x1b[31m\xff (pid 7)");
  const std::string text = out_.str();
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text.substr(0, 200);
  EXPECT_NE(text.find("boom\\x1b]0;owned\\x07xxx"), std::string::npos);
  EXPECT_NE(
      text.find("more bytes cut]  [machine busy: \\x1b[2Jburn (pid 7) 0.90]  (see /runs/k)\n"),
      std::string::npos);
  EXPECT_NE(text.find("machine still busy (burn\\x1b[31m\xef\xbf\xbd (pid 7))"),
            std::string::npos);
  EXPECT_LT(text.size(), 2500u);
}

TEST(LaunchLabelTest, ACustomAxisValueIsEscaped) {
  TrialConfig c = Config();
  c.custom["tag"] = "a\x1b[2Jb";
  EXPECT_NE(LaunchLabel(0, 1, "k1", c, 0, 1, false).find(" tag=a\\x1b[2Jb"), std::string::npos);
}

}  // namespace
}  // namespace ditbench::run_status_test
