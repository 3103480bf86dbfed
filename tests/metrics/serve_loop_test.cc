// The serving loop (metrics/serve_loop.h) with fakes: a host clock that only moves when a
// request is served (each takes a known service time) or when the loop sleeps until an
// arrival, so every time it records is exact.
#include "metrics/serve_loop.h"

#include <map>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "experiments/arrivals.h"
#include "metrics/serving.h"
#include "stats/order_statistics.h"

namespace ditbench::serve_loop_test {
namespace {

class FakeHost : public HostClock {
 public:
  double NowMs() override { return now_ms; }
  void SleepUntilMs(double ms) override { now_ms = std::max(now_ms, ms); }
  double now_ms = 1000;  // not 0: the loop must measure from the load's start
};

class NoDevice : public IterationClock {
 public:
  void Mark(int) override {}
  void Synchronize() override {}
  double ElapsedMs(int, int) override { return 0; }
};

class FakeQueue : public ServeQueue {
 public:
  int Take() override { return next++; }
  void Tell(int replica, int turn, int request) override { told[{replica, turn}] = request; }
  int Hear(int replica, int turn) override { return told.at({replica, turn}); }
  void Complete(double end_ms) override { completions.push_back(end_ms); }
  double CompletedAt(int n) override { return completions.at(n); }
  void Publish(double latency_ms) override { published.push_back(latency_ms); }
  std::vector<double> Latencies(int from) override {
    return {published.begin() + from, published.end()};
  }
  void Stop() override { next = 1 << 30; }
  int next = 0;
  std::vector<double> published;
  std::map<std::pair<int, int>, int> told;
  std::vector<double> completions;
};

struct Served {
  ServedRequests requests;
  int runs = 0;  // requests run, isolated ones included
};

// One replica of one rank serving `load`, a request of shape i taking service_ms[i].
Served ServeAlone(const ServeLoad& load, const std::vector<double>& service_ms) {
  ServeRankOptions options;
  options.load = load;
  options.requests = GenerateArrivals(load);
  options.shapes = static_cast<int>(load.mix.size());
  options.leader = true;
  SingleRankGroup world;
  NoDevice device;
  FakeHost host;
  FakeQueue queue;
  Served served;
  served.requests =
      ServeRequests(options, world, device, host, queue, [&](int shape, Stages& stages) {
        stages.Begin("step:0");
        host.now_ms += service_ms.at(static_cast<std::size_t>(shape));
        stages.End();
        ++served.runs;
      });
  return served;
}

Served ServeAlone(const ServeLoad& load, double service_ms) {
  return ServeAlone(load, std::vector<double>{service_ms});
}

ServeLoad Poisson(double rate_per_s, int requests) {
  ServeLoad load;
  load.rate_per_s = rate_per_s;
  load.requests = requests;
  load.mix = {RequestShape{}};
  load.seed = 5;
  return load;
}

// One replica, first come first served: exactly the FIFO queue of one server that
// SimulateQueue plays (whose M/D/1 waits tests/metrics/serving_test.cc checks against
// Pollaczek-Khinchine), after its isolated requests.
TEST(ServeLoopTest, OneReplicaServesAsTheSimulatedQueue) {
  const ServeLoad load = Poisson(5, 400);  // 100 ms a request at 5/s: utilisation 0.5
  const Served served = ServeAlone(load, 100);
  EXPECT_EQ(served.runs, 3 + 400);
  EXPECT_EQ(served.requests.isolated_ms, std::vector<double>{100});
  EXPECT_DOUBLE_EQ(served.requests.start_ms, 1000 + 3 * 100);  // after the isolated requests
  // Every request of the load (not the isolated ones) has its stages, by its index.
  ASSERT_EQ(served.requests.stage_samples.size(), 400u);
  EXPECT_EQ(served.requests.stage_samples[7].iteration, 7);
  EXPECT_EQ(served.requests.stage_samples[7].stage, "step:0");
  const std::vector<RequestRecord> expected =
      SimulateQueue(GenerateArrivals(load), std::vector<double>(400, 100.0), 1);
  ASSERT_EQ(served.requests.records.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const RequestRecord& got = served.requests.records[i];
    EXPECT_EQ(got.index, expected[i].index);
    EXPECT_NEAR(got.arrival_ms, expected[i].arrival_ms, 1e-6) << i;
    EXPECT_NEAR(got.start_ms, expected[i].start_ms, 1e-6) << i;
    EXPECT_NEAR(got.end_ms, expected[i].end_ms, 1e-6) << i;
    EXPECT_DOUBLE_EQ(got.isolated_ms, 100);
  }
}

// The percentiles a run reports hold the queue's own: the p50, p95 and p99 latency of a long
// simulated M/D/1 run (200,000 requests: its quantiles nearly exact) fall within the 95%
// intervals of 1,000 requests served through the loop, as does its throughput and SLO
// attainment within a few percent.
TEST(ServeLoopTest, PercentilesOfAServedLoadHoldTheQueuesOwn) {
  const Served served = ServeAlone(Poisson(6, 1000), 100);  // utilisation 0.6
  const ServingSummary got = SummarizeServing(served.requests.records, 1, 3);
  const std::vector<RequestRecord> long_run =
      SimulateQueue(GenerateArrivals(Poisson(6, 200000)), std::vector<double>(200000, 100.0), 1);
  const ServingSummary truth = SummarizeServing(long_run, 1, 3);
  for (auto [name, run, exact] : {std::tuple{"p50", got.p50_ms, truth.p50_ms.estimate},
                                  std::tuple{"p95", got.p95_ms, truth.p95_ms.estimate},
                                  std::tuple{"p99", got.p99_ms, truth.p99_ms.estimate}}) {
    ASSERT_TRUE(run.bounded) << name;
    EXPECT_LE(run.low, exact) << name;
    EXPECT_GE(run.high, exact) << name;
  }
  EXPECT_NEAR(got.throughput_per_s, 6, 0.4);
  EXPECT_NEAR(got.slo_attainment, truth.slo_attainment, 0.05);
}

// Above capacity the queue grows: later requests wait longer, and fewer meet their SLO.
TEST(ServeLoopTest, AboveCapacityTheWaitGrowsAndTheSloAttainmentFalls) {
  const Served under = ServeAlone(Poisson(5, 300), 100);  // utilisation 0.5
  const Served over = ServeAlone(Poisson(15, 300), 100);  // 1.5
  const ServingSummary calm = SummarizeServing(under.requests.records, 1, 5);
  const ServingSummary busy = SummarizeServing(over.requests.records, 1, 5);
  EXPECT_GT(calm.slo_attainment, 0.9);
  EXPECT_LT(busy.slo_attainment, 0.2);
  EXPECT_GT(busy.p95_ms.estimate, 10 * calm.p95_ms.estimate);
  const auto wait = [](const RequestRecord& r) { return r.start_ms - r.arrival_ms; };
  const std::vector<RequestRecord>& records = over.requests.records;
  EXPECT_GT(wait(records[299]), wait(records[150]));
  EXPECT_GT(wait(records[150]), wait(records[10]));
  // Over capacity the replica is never idle: throughput is its service rate, 10 a second.
  EXPECT_NEAR(busy.throughput_per_s, 10, 0.5);
}

// A mix of shapes: each shape's isolated latency is timed alone, each request is judged
// against its own shape's, and the queue plays the mix's service times request by request.
TEST(ServeLoopTest, AMixTimesEachShapeAloneAndServesEachRequestAtItsOwn) {
  ServeLoad load = Poisson(2, 300);
  load.mix = {RequestShape{256, 256, 0, 4, 3}, RequestShape{512, 512, 0, 4, 1}};
  const Served served = ServeAlone(load, {100, 400});
  EXPECT_EQ(served.runs, 2 * 3 + 300);
  EXPECT_EQ(served.requests.isolated_ms, (std::vector<double>{100, 400}));
  const std::vector<Request> arrivals = GenerateArrivals(load);
  std::vector<double> service;
  int large = 0;
  for (const Request& r : arrivals) {
    service.push_back(r.shape == 0 ? 100.0 : 400.0);
    large += r.shape;
  }
  EXPECT_NEAR(large / 300.0, 0.25, 0.08);  // weights 3 : 1
  const std::vector<RequestRecord> expected = SimulateQueue(arrivals, service, 1);
  ASSERT_EQ(served.requests.records.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const RequestRecord& got = served.requests.records[i];
    EXPECT_EQ(got.shape, arrivals[i].shape) << i;
    EXPECT_DOUBLE_EQ(got.isolated_ms, service[i]) << i;
    EXPECT_NEAR(got.start_ms, expected[i].start_ms, 1e-6) << i;
    EXPECT_NEAR(got.end_ms, expected[i].end_ms, 1e-6) << i;
  }
}

// Early stopping: once p95's interval over the timed requests is within 10% of it, no request
// is taken; the requests served are the load's first, every one of them, and at least the 59
// that bound p95 at all. Without it, every request is served.
TEST(ServeLoopTest, AnEarlyStopServesTheFirstRequestsUntilTheTailIsBounded) {
  ServeLoad load = Poisson(2, 2000);  // 100 ms a request at 2/s: little queueing
  load.warmup_requests = 3;
  load.stop_percentile = 95;
  load.stop_within = 0.1;
  const Served served = ServeAlone(load, 100);
  ASSERT_TRUE(served.requests.stopped_early);
  const std::vector<RequestRecord>& records = served.requests.records;
  ASSERT_LT(records.size(), 2003u);
  ASSERT_GE(records.size(), 3u + MinSamplesToBound(0.95));
  std::vector<double> timed;
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].index, static_cast<int>(i));
    if (records[i].index >= 3) timed.push_back(records[i].end_ms - records[i].arrival_ms);
  }
  EXPECT_TRUE(PercentileBoundWithin(timed, 95, 0.1));
  timed.pop_back();  // one request fewer was not enough
  EXPECT_FALSE(PercentileBoundWithin(timed, 95, 0.1));
  load.stop_percentile = 0;
  EXPECT_EQ(ServeAlone(load, 100).requests.records.size(), 2003u);
}

// Beyond capacity the latency grows with the queue: however narrow p95's interval (the last
// requests' latencies are alike), the load does not stop early while it grows.
TEST(ServeLoopTest, AnEarlyStopWaitsWhileTheQueueGrows) {
  ServeLoad load = Poisson(15, 300);  // 100 ms a request at 15/s: utilisation 1.5
  load.stop_percentile = 95;
  load.stop_within = 0.25;
  const Served served = ServeAlone(load, 100);
  EXPECT_FALSE(served.requests.stopped_early);
  EXPECT_EQ(served.requests.records.size(), 300u);
  std::vector<double> latencies;
  for (const RequestRecord& r : served.requests.records)
    latencies.push_back(r.end_ms - r.arrival_ms);
  EXPECT_TRUE(LatencyStillGrows(latencies));
  EXPECT_TRUE(PercentileBoundWithin(latencies, 95, 0.25)) << "bounded, yet not stationary";
}

// A closed loop of concurrency c: request k is issued when request k - c completes.
TEST(ServeLoopTest, AClosedLoopIssuesARequestAsOneCompletes) {
  ServeLoad load;
  load.concurrency = 1;
  load.requests = 5;
  load.mix = {RequestShape{}};
  const Served one = ServeAlone(load, 40);
  ASSERT_EQ(one.requests.records.size(), 5u);
  for (int k = 0; k < 5; ++k) {
    const RequestRecord& r = one.requests.records[k];
    EXPECT_DOUBLE_EQ(r.arrival_ms, 40.0 * k);  // as the one before ended: no wait
    EXPECT_DOUBLE_EQ(r.start_ms, r.arrival_ms);
  }
  load.concurrency = 2;  // one replica, two in flight: every request after the first waits
  const Served two = ServeAlone(load, 40);
  for (int k = 1; k < 5; ++k) {
    const RequestRecord& r = two.requests.records[k];
    EXPECT_DOUBLE_EQ(r.start_ms - r.arrival_ms, 40) << k;
  }
  // As SimulateQueue plays a closed loop (what `plan` predicts with).
  const std::vector<RequestRecord> simulated =
      SimulateQueue(GenerateArrivals(load), std::vector<double>(5, 40.0), 1, 2);
  for (int k = 0; k < 5; ++k) {
    EXPECT_DOUBLE_EQ(simulated[k].arrival_ms, two.requests.records[k].arrival_ms) << k;
    EXPECT_DOUBLE_EQ(simulated[k].start_ms, two.requests.records[k].start_ms) << k;
  }
}

}  // namespace
}  // namespace ditbench::serve_loop_test
