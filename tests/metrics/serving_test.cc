#include "metrics/serving.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "experiments/arrivals.h"
#include "experiments/serve_load.h"

namespace ditbench::serving_test {
namespace {

std::vector<Request> PoissonArrivals(double rate_per_s, int count, std::uint64_t seed = 11) {
  ServeLoad load;
  load.rate_per_s = rate_per_s;
  load.requests = count;
  load.mix = {RequestShape{}};
  load.seed = seed;
  return GenerateArrivals(load);
}

RequestRecord Record(double arrival_ms, double start_ms, double end_ms, double isolated_ms) {
  RequestRecord record;
  record.arrival_ms = arrival_ms;
  record.start_ms = start_ms;
  record.end_ms = end_ms;
  record.isolated_ms = isolated_ms;
  return record;
}

// The mean queue wait and its standard error by batch means (50 batches, each far longer than
// the queue's memory at utilisation 0.5, so the batch means are nearly independent).
struct MeanWait {
  double mean = 0, standard_error = 0;
};
MeanWait MeanQueueWait(const std::vector<RequestRecord>& records) {
  constexpr int kBatches = 50;
  const std::size_t batch = records.size() / kBatches;
  std::vector<double> means(kBatches);
  for (int b = 0; b < kBatches; ++b) {
    for (std::size_t i = b * batch; i < (b + 1) * batch; ++i)
      means[b] += (records[i].start_ms - records[i].arrival_ms) / batch;
  }
  double mean = 0, squares = 0;
  for (double m : means) mean += m / kBatches;
  for (double m : means) squares += (m - mean) * (m - mean);
  return {mean, std::sqrt(squares / (kBatches - 1) / kBatches)};
}

TEST(ServingTest, SimulatedQueueMatchesPollaczekKhinchineForOneServer) {
  // M/D/1: deterministic service D = 100 ms, Poisson arrivals at 5/s (utilisation 0.5). The
  // Pollaczek-Khinchine mean wait is rho D / (2 (1 - rho)) = 50 ms.
  const std::vector<Request> arrivals = PoissonArrivals(5, 200000);
  const MeanWait wait =
      MeanQueueWait(SimulateQueue(arrivals, std::vector<double>(arrivals.size(), 100), 1));
  EXPECT_LT(wait.standard_error, 1.0);  // a tolerance that can fail
  EXPECT_NEAR(wait.mean, 50, 5 * wait.standard_error);
}

TEST(ServingTest, SimulatedQueueMatchesTheMdcApproximationForFourServers) {
  // M/D/4 at utilisation 0.5 (20 requests/s, D = 100 ms). Erlang C gives M/M/4's wait:
  // a = 2, C = (2^4/4! / (1 - 0.5)) / (1 + 2 + 2 + 4/3 + 2^4/4! / 0.5) = 0.173913, and
  // W = C D / (c (1 - rho)) = 8.6957 ms. Cosmetatos's correction for deterministic service:
  // W_MDc = W / 2 * (1 + (1 - rho)(c - 1)(sqrt(4 + 5c) - 2) / (16 rho c)) = 4.939 ms, an
  // approximation good to a few percent here, hence 5% on top of the sampling error.
  const std::vector<Request> arrivals = PoissonArrivals(20, 200000);
  const MeanWait wait =
      MeanQueueWait(SimulateQueue(arrivals, std::vector<double>(arrivals.size(), 100), 4));
  const double rho = 0.5, c = 4, mmc = 0.173913 * 100 / (c * (1 - rho));
  const double mdc =
      mmc / 2 * (1 + (1 - rho) * (c - 1) * (std::sqrt(4 + 5 * c) - 2) / (16 * rho * c));
  EXPECT_NEAR(mdc, 4.939, 0.001);
  EXPECT_NEAR(wait.mean, mdc, 0.05 * mdc + 5 * wait.standard_error);
}

TEST(ServingTest, SimulatedQueueServesFirstComeFirstServedOnTheFirstFreeServer) {
  const std::vector<Request> arrivals = {{0, 0, 0}, {1, 0, 1}, {2, 0, 0}, {3, 0.05, 1}};
  const std::vector<RequestRecord> records = SimulateQueue(arrivals, {10, 20, 30, 5}, 2);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].replica, 0);
  EXPECT_EQ(records[1].replica, 1);
  EXPECT_EQ(records[2].replica, 0);  // free at 10 ms, before server 1 at 20 ms
  EXPECT_EQ(records[2].start_ms, 10);
  EXPECT_EQ(records[2].end_ms, 40);
  EXPECT_EQ(records[3].replica, 1);  // arrives at 50 ms: server 1 free since 20, 0 since 40
  EXPECT_EQ(records[3].start_ms, 50);
  EXPECT_EQ(records[3].isolated_ms, 5);
  EXPECT_EQ(records[3].shape, 1);
}

TEST(ServingTest, QueueGrowsWithTheIndexAboveCapacity) {
  // 15 requests/s against one server of 10 requests/s: request n waits about n x 33 ms.
  const std::vector<Request> arrivals = PoissonArrivals(15, 3000);
  const std::vector<RequestRecord> records =
      SimulateQueue(arrivals, std::vector<double>(arrivals.size(), 100), 1);
  const auto mean_wait = [&](std::size_t from) {
    double sum = 0;
    for (std::size_t i = from; i < from + 300; ++i)
      sum += records[i].start_ms - records[i].arrival_ms;
    return sum / 300;
  };
  EXPECT_LT(mean_wait(0), mean_wait(1350));
  EXPECT_LT(mean_wait(1350), mean_wait(2700));
  EXPECT_GT(mean_wait(2700), 2700 * 20.0);
}

TEST(ServingTest, SloAttainmentFallsAsTheRateRises) {
  // One seed at every rate: the same gaps compressed, so each request waits at least as long
  // at a higher rate, and attainment cannot rise.
  double previous = 2;
  for (double rate_per_s : {2.0, 5.0, 8.0, 9.5, 12.0, 20.0}) {
    const std::vector<Request> arrivals = PoissonArrivals(rate_per_s, 2000);
    const ServingSummary summary = SummarizeServing(
        SimulateQueue(arrivals, std::vector<double>(arrivals.size(), 100), 1), 1, 3);
    SCOPED_TRACE(rate_per_s);
    EXPECT_LE(summary.slo_attainment, previous);
    previous = summary.slo_attainment;
    if (rate_per_s == 2.0) {
      EXPECT_GT(summary.slo_attainment, 0.99);
    }
  }
  EXPECT_LT(previous, 0.05);
}

TEST(ServingTest, PercentilesOfAKnownListAreHandComputed) {
  // Latencies 10, 20, ..., 100 ms (shuffled). R type 7: p50 at position 4.5 = 55, p90 at 8.1
  // = 91, p95 at 8.55 = 95.5, p99 at 8.91 = 99.1. The median's 95% interval of 10 samples is
  // order statistics 1..8 (0-based): P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024.
  std::vector<RequestRecord> records;
  for (int latency : {50, 10, 40, 20, 30, 100, 90, 80, 70, 60})
    records.push_back(Record(1000, 1000, 1000 + latency, latency));
  const ServingSummary summary = SummarizeServing(records, 1, 2);
  EXPECT_DOUBLE_EQ(summary.p50_ms.estimate, 55);
  EXPECT_DOUBLE_EQ(summary.p90_ms.estimate, 91);
  EXPECT_DOUBLE_EQ(summary.p95_ms.estimate, 95.5);
  EXPECT_DOUBLE_EQ(summary.p99_ms.estimate, 99.1);
  EXPECT_DOUBLE_EQ(summary.p50_ms.low, 20);
  EXPECT_DOUBLE_EQ(summary.p50_ms.high, 90);
  EXPECT_TRUE(summary.p50_ms.bounded);
  EXPECT_FALSE(summary.p90_ms.bounded);  // 0.9^10 = 0.35 > 0.025: no upper bound
  EXPECT_DOUBLE_EQ(summary.mean_latency_ms, 55);
  EXPECT_EQ(summary.slo_attainment, 1);
}

TEST(ServingTest, TailOfFiftyRequestsIsUnbounded) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < 50; ++i) records.push_back(Record(i, i, i + 10 + i % 7, 10));
  const ServingSummary summary = SummarizeServing(records, 1, 2);
  EXPECT_FALSE(summary.p99_ms.bounded);
  EXPECT_EQ(summary.p99_ms.high, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(summary.p50_ms.bounded);
}

TEST(ServingTest, ThroughputGoodputAndWaitFollowTheirDefinitions) {
  // Two GPUs. Latencies 500, 1000, 500, 1000 ms against isolated 500, 500, 500, 250 at
  // slo_scale 2: the second meets its SLO exactly at the limit, the fourth misses it.
  std::vector<RequestRecord> records = {Record(0, 0, 500, 500), Record(0, 500, 1000, 500),
                                        Record(1000, 1000, 1500, 500),
                                        Record(1000, 1500, 2000, 250)};
  records[2].busy = true;
  ServingSummary summary = SummarizeServing(records, 2, 2);
  EXPECT_EQ(summary.requests, 4);
  EXPECT_EQ(summary.busy_requests, 1);
  EXPECT_DOUBLE_EQ(summary.window_s, 2);  // last end - first arrival
  EXPECT_DOUBLE_EQ(summary.throughput_per_s, 2);
  EXPECT_DOUBLE_EQ(summary.throughput_per_gpu_per_s, 1);
  EXPECT_DOUBLE_EQ(summary.slo_attainment, 0.75);
  EXPECT_DOUBLE_EQ(summary.goodput_per_s, 1.5);
  EXPECT_DOUBLE_EQ(summary.mean_latency_ms, 750);
  EXPECT_DOUBLE_EQ(summary.mean_queue_ms, 250);
  summary = SummarizeServing(records, 2, 2, 4.0);  // the caller's window
  EXPECT_DOUBLE_EQ(summary.throughput_per_s, 1);
  EXPECT_DOUBLE_EQ(summary.goodput_per_s, 0.75);
}

// A queue that falls behind: the later half's median latency above 1.5 x the earlier half's.
TEST(ServingTest, LatencyStillGrowsComparesTheHalvesMedians) {
  EXPECT_FALSE(LatencyStillGrows({}));
  EXPECT_FALSE(LatencyStillGrows({100, 300, 120, 280, 110, 150}));  // medians 120 and 150
  EXPECT_TRUE(LatencyStillGrows({100, 200, 300, 400, 500, 600}));   // 200 and 500
  EXPECT_FALSE(LatencyStillGrows({100, 200, 150, 300}));            // 150 and 225: exactly 1.5x
}

}  // namespace
}  // namespace ditbench::serving_test
