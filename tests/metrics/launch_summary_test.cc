#include "metrics/launch_summary.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ditbench::launch_summary_test {
namespace {

// An ok launch whose timed iterations (one rank) are `ms`, with its own metrics as ingest
// computes them: median, and a marker in the fields that do not vary between launches.
LaunchMeasurement OkLaunch(int launch, const std::vector<double>& ms) {
  LaunchMeasurement l;
  l.launch = launch;
  l.status = TrialStatus::kOk;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  TrialMetrics m;
  m.latency_ms = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                   : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  m.ci_low_ms = sorted.front();
  m.ci_high_ms = sorted.back();
  m.iterations = static_cast<int>(ms.size());
  m.warmup = 1;
  m.peak_mem_mb = 100.0 + launch;
  m.flops = 1e12;
  m.tflops = 1e12 / (m.latency_ms / 1000) / 1e12;
  for (std::size_t i = 0; i < ms.size(); ++i)
    l.samples.push_back({0, static_cast<int>(i) + 1, kIterationStage, ms[i], false});
  l.metrics = m;
  return l;
}

LaunchMeasurement FailedLaunch(int launch, TrialStatus status, std::string error) {
  LaunchMeasurement l;
  l.launch = launch;
  l.status = status;
  l.error = std::move(error);
  return l;
}

TEST(LaunchSummaryTest, OneOkLaunchKeepsItsMetricsUnchanged) {
  const LaunchMeasurement only = OkLaunch(0, {10, 11, 12});
  const TrialOutcome outcome = SummarizeLaunches({only}, 1);
  EXPECT_EQ(outcome.status, TrialStatus::kOk);
  ASSERT_TRUE(outcome.metrics);
  EXPECT_EQ(outcome.metrics->latency_ms, 11);
  EXPECT_EQ(outcome.metrics->ci_low_ms, 10);
  EXPECT_EQ(outcome.metrics->ci_high_ms, 12);
  EXPECT_EQ(outcome.metrics->launches, 1);
  EXPECT_FALSE(outcome.metrics->launch_cov);
}

TEST(LaunchSummaryTest, ThreeLaunchesGiveTheMedianOfMediansAndABetweenLaunchInterval) {
  // Launch medians 10, 13, 11: each launch is tight, the launches are not.
  const TrialOutcome outcome = SummarizeLaunches(
      {OkLaunch(0, {9.9, 10, 10.1}), OkLaunch(2, {10.9, 11, 11.1}), OkLaunch(1, {12.9, 13, 13.1})},
      3);
  ASSERT_EQ(outcome.status, TrialStatus::kOk);
  const TrialMetrics& m = *outcome.metrics;
  EXPECT_EQ(m.launches, 3);
  EXPECT_DOUBLE_EQ(m.latency_ms, 11);
  EXPECT_EQ(m.iterations, 9);
  EXPECT_EQ(m.warmup, 3);
  // By hand: logs of 10, 11, 13; t(0.975, 2) = 4.302653.
  const double l[] = {std::log(10.0), std::log(11.0), std::log(13.0)};
  const double mean = (l[0] + l[1] + l[2]) / 3;
  double ss = 0;
  for (double x : l) ss += (x - mean) * (x - mean);
  const double half = 4.302653 * std::sqrt(ss / 2) / std::sqrt(3.0);
  EXPECT_NEAR(m.ci_low_ms, std::exp(mean - half), 1e-4);
  EXPECT_NEAR(m.ci_high_ms, std::exp(mean + half), 1e-4);
  // Far wider than any one launch's own interval (0.2 ms): between-launch variation counts.
  EXPECT_LT(m.ci_low_ms, 9.9);
  EXPECT_GT(m.ci_high_ms, 13.1);
  // Between-launch CoV of 10, 11, 13: std 1.5275 / mean 11.333.
  ASSERT_TRUE(m.launch_cov);
  EXPECT_NEAR(*m.launch_cov, 1.527525 / 11.333333, 1e-5);
  // Pooled spread over all nine iterations.
  EXPECT_DOUBLE_EQ(m.min_ms, 9.9);
  EXPECT_DOUBLE_EQ(m.max_ms, 13.1);
  EXPECT_EQ(*m.peak_mem_mb, 102);
  // Throughput follows the summary latency (the last launch's, rescaled).
  ASSERT_TRUE(m.tflops);
  EXPECT_NEAR(*m.tflops, 1e12 / 0.011 / 1e12, 1e-9);
}

TEST(LaunchSummaryTest, IdenticalLaunchesGiveAZeroWidthIntervalAtTheirMedian) {
  const TrialOutcome outcome =
      SummarizeLaunches({OkLaunch(0, {5, 5, 5}), OkLaunch(1, {5, 5, 5})}, 2);
  EXPECT_DOUBLE_EQ(outcome.metrics->latency_ms, 5);
  EXPECT_DOUBLE_EQ(outcome.metrics->ci_low_ms, 5);
  EXPECT_DOUBLE_EQ(outcome.metrics->ci_high_ms, 5);
}

TEST(LaunchSummaryTest, FirstFailedLaunchFailsTheTrialNamingTheLaunch) {
  const TrialOutcome outcome = SummarizeLaunches(
      {OkLaunch(0, {10, 11, 12}), FailedLaunch(2, TrialStatus::kTimeout, "too slow"),
       FailedLaunch(1, TrialStatus::kOom, "out of memory")},
      3);
  EXPECT_EQ(outcome.status, TrialStatus::kOom);
  EXPECT_EQ(outcome.error, "launch 2 of 3: out of memory");
  ASSERT_TRUE(outcome.metrics);  // what the ok launch measured is kept
  EXPECT_EQ(outcome.metrics->launches, 1);
}

// A launch stored ok at 0 ms over no timed iteration (an older ditbench's all-warm-up load) is
// no measurement: the trial fails naming it, and its 0 ms never enters the median.
TEST(LaunchSummaryTest, ALaunchStoredOkThatTimedNothingFailsTheTrial) {
  LaunchMeasurement empty = OkLaunch(0, {10});
  empty.metrics->latency_ms = 0;
  empty.metrics->iterations = 0;
  empty.samples.clear();
  const TrialOutcome outcome = SummarizeLaunches({empty, OkLaunch(1, {10, 11, 12})}, 2);
  EXPECT_EQ(outcome.status, TrialStatus::kFailed);
  EXPECT_EQ(outcome.error,
            "launch 1 of 2: stored ok with 0 timed iterations at 0 ms; a launch that timed "
            "nothing is no measurement");
  ASSERT_TRUE(outcome.metrics);  // the launch that timed something, alone
  EXPECT_EQ(outcome.metrics->launches, 1);
  EXPECT_EQ(outcome.metrics->latency_ms, 11);
  const TrialOutcome alone = SummarizeLaunches({empty}, 1);
  EXPECT_EQ(alone.status, TrialStatus::kFailed);
  EXPECT_FALSE(alone.metrics);
}

TEST(LaunchSummaryTest, ARunningLaunchMakesTheTrialRunning) {
  EXPECT_EQ(SummarizeLaunches({OkLaunch(0, {1, 2, 3}), FailedLaunch(1, TrialStatus::kRunning, "")},
                              2)
                .status,
            TrialStatus::kRunning);
}

TEST(LaunchSummaryTest, AnInterruptedLaunchMakesTheTrialInterrupted) {
  const TrialOutcome outcome = SummarizeLaunches(
      {OkLaunch(0, {1, 2, 3}), FailedLaunch(1, TrialStatus::kInterrupted, "by the user")}, 2);
  EXPECT_EQ(outcome.status, TrialStatus::kInterrupted);
  EXPECT_EQ(outcome.error, "launch 2 of 2: by the user");
}

TEST(LaunchSummaryTest, FewerOkLaunchesThanAskedIsOkWithTheLaunchCount) {
  const TrialOutcome outcome =
      SummarizeLaunches({OkLaunch(0, {1, 2, 3}), OkLaunch(1, {2, 3, 4})}, 3);
  EXPECT_EQ(outcome.status, TrialStatus::kOk);
  EXPECT_EQ(outcome.metrics->launches, 2);
}

TEST(LaunchSummaryTest, OneLaunchWithoutReplicatesKeepsItsErrorAsIs) {
  const TrialOutcome outcome =
      SummarizeLaunches({FailedLaunch(0, TrialStatus::kCrashed, "rank 0 killed")}, 1);
  EXPECT_EQ(outcome.status, TrialStatus::kCrashed);
  EXPECT_EQ(outcome.error, "rank 0 killed");
  EXPECT_FALSE(outcome.metrics);
}

TEST(LaunchSummaryTest, EnergyIsTheMedianOverLaunchesAndUnsetWhenALaunchLacksIt) {
  std::vector<LaunchMeasurement> launches = {OkLaunch(0, {10}), OkLaunch(1, {11}),
                                             OkLaunch(2, {12})};
  const double joules[] = {30, 90, 40};
  for (int i = 0; i < 3; ++i) {
    launches[i].metrics->energy_j = joules[i];
    launches[i].metrics->joules_per_image = joules[i] / 2;
  }
  launches[2].metrics->energy_note = "";
  TrialOutcome outcome = SummarizeLaunches(launches, 3);
  ASSERT_TRUE(outcome.metrics && outcome.metrics->energy_j && outcome.metrics->joules_per_image);
  EXPECT_DOUBLE_EQ(*outcome.metrics->energy_j, 40);  // one disturbed launch does not move it
  EXPECT_DOUBLE_EQ(*outcome.metrics->joules_per_image, 20);

  launches[1].metrics->energy_j.reset();  // a launch without a counter
  launches[1].metrics->joules_per_image.reset();
  launches[2].metrics->energy_note = "rank 0: no counter";
  outcome = SummarizeLaunches(launches, 3);
  ASSERT_TRUE(outcome.metrics);
  EXPECT_FALSE(outcome.metrics->energy_j.has_value());
  EXPECT_FALSE(outcome.metrics->joules_per_image.has_value());
  EXPECT_EQ(outcome.metrics->energy_note, "rank 0: no counter");
}

// The column metrics over launches as their rows say (metrics/metric_table.h): peak memory the
// maximum (kMax, launch 1's though not the newest), PSNR the launch just measured (kNewest),
// TFLOPS the newest's at the trial's latency (kScaledToLatency).
TEST(LaunchSummaryTest, ColumnMetricsAreReducedOverLaunchesAsTheirRowsSay) {
  std::vector<LaunchMeasurement> launches = {OkLaunch(0, {10}), OkLaunch(1, {20}),
                                             OkLaunch(2, {40})};
  launches[1].metrics->peak_mem_mb = 500;
  launches[0].metrics->psnr = 30;
  launches[2].metrics->psnr = 35;
  const TrialOutcome outcome = SummarizeLaunches(launches, 3);
  ASSERT_TRUE(outcome.metrics);
  EXPECT_EQ(outcome.metrics->latency_ms, 20);
  EXPECT_EQ(outcome.metrics->peak_mem_mb, 500);
  EXPECT_EQ(outcome.metrics->psnr, 35);
  ASSERT_TRUE(outcome.metrics->tflops);
  EXPECT_DOUBLE_EQ(*outcome.metrics->tflops, 1e12 / 0.020 / 1e12);  // the newest's FLOPs at 20 ms
}

// Extra metrics over launches as the metric table says: a program's own number by its median
// over the launches that have it, a table name by its row (busy requests: their sum; peak
// memory, a column metric a program named: the maximum).
TEST(LaunchSummaryTest, ExtraMetricsAreReducedOverLaunchesByTheMetricTable) {
  std::vector<LaunchMeasurement> launches = {OkLaunch(0, {10}), OkLaunch(1, {11}),
                                             OkLaunch(2, {12})};
  launches[0].metrics->extra = {{"items", 1}, {"peak_mem_mb", 5}, {"busy_requests", 1}};
  launches[1].metrics->extra = {{"items", 9}, {"peak_mem_mb", 3}, {"busy_requests", 2}};
  launches[2].metrics->extra = {{"items", 4}, {"peak_mem_mb", 4}, {"busy_requests", 3}};
  launches[2].metrics->extra_declared = {{"items", {"count", "higher"}}};
  const TrialOutcome outcome = SummarizeLaunches(launches, 3);
  ASSERT_TRUE(outcome.metrics);
  EXPECT_EQ(outcome.metrics->extra, (std::map<std::string, double>{
                                        {"busy_requests", 6}, {"items", 4}, {"peak_mem_mb", 5}}));
  EXPECT_EQ(outcome.metrics->extra_declared.at("items").better, "higher");
}

}  // namespace
}  // namespace ditbench::launch_summary_test
