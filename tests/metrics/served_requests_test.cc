#include "metrics/served_requests.h"

#include <algorithm>
#include <functional>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "experiments/trial_requests.h"
#include "stats/stats.h"

namespace ditbench::served_requests_test {
namespace {

// A serving trial of 2 replicas (dp 2), 6 requests at 4 a second: what its leaders served.
TrialConfig ServingTrial() {
  TrialConfig c;
  c.model = "pixart-alpha-tiny";
  c.resolution = 256;
  c.steps = 4;
  c.dp = 2;
  c.serve = ServeLoad{};
  c.serve->rate_per_s = 4;
  c.serve->requests = 6;
  return c;
}

// Each replica's leader serves every other request, 100 ms each, as it arrives (or when free).
std::vector<RankResult> ServedRanks(const TrialConfig& config) {
  std::vector<RankResult> ranks(2);
  std::vector<double> free_at(2, 0);
  for (const Request& request : TrialRequests(config)) {
    const int replica = request.index % 2;
    RequestRecord r;
    r.index = request.index;
    r.shape = request.shape;
    r.replica = replica;
    r.arrival_ms = request.arrival_s * 1000;
    r.start_ms = std::max(r.arrival_ms, free_at[replica]);
    r.end_ms = free_at[replica] = r.start_ms + 100;
    r.isolated_ms = 100;
    ranks[replica].rank = replica;
    ranks[replica].requests.push_back(r);
    ranks[replica].samples.push_back({replica, r.index, kIterationStage, r.end_ms - r.arrival_ms,
                                      r.index < config.serve->warmup_requests});
  }
  return ranks;
}

// Leaves request `index` out of what `rank` served: its record and its samples.
void Unserve(RankResult& rank, int index) {
  std::erase_if(rank.requests, [&](const RequestRecord& q) { return q.index == index; });
  std::erase_if(rank.samples, [&](const Sample& s) { return s.iteration == index; });
}

TEST(ServedRequestsTest, EveryRequestServedOnceAsTheLoadMadeIt) {
  const TrialConfig config = ServingTrial();
  std::vector<RankResult> ranks = ServedRanks(config);
  EXPECT_FALSE(ServedRequestsProblem(config, MaterializeRequests(config), ranks));
  struct Case {
    std::function<void(std::vector<RankResult>&)> tamper;
    int rank;
    std::string said;
  };
  const Case cases[] = {
      {[](auto& r) { r[1].requests.push_back(r[0].requests[0]); }, 1,
       "'requests' has request 0, which rank 0 served too; a request is served once"},
      {[](auto& r) { Unserve(r[1], 5); }, 0, "'requests': request 5 of 6 was served by no replica"},
      {[](auto& r) { r[0].requests[1].replica = 1; }, 0,
       "'requests' has request 2 on replica 1; this rank leads replica 0"},
      {[](auto& r) { r[0].requests[1].arrival_ms += 5; }, 0,
       "'requests' has request 2 arriving at"},
      {[](auto& r) { r[0].requests[1].start_ms = r[0].requests[1].arrival_ms - 1; }, 0,
       "expected arrival <= start <= end"},
      {[](auto& r) { r[0].requests[2].index = 9; }, 0,
       "'requests' has request 9; the load has 6 requests"},
      {[](auto& r) { r[0].requests[1].shape = 1; }, 0,
       "'requests' has request 2 of shape 1; the load's asks for shape 0"},
  };
  for (const Case& c : cases) {
    std::vector<RankResult> tampered = ranks;
    c.tamper(tampered);
    const auto problem = ServedRequestsProblem(config, MaterializeRequests(config), tampered);
    ASSERT_TRUE(problem) << c.said;
    EXPECT_EQ(problem->rank, c.rank) << c.said;
    EXPECT_NE(problem->problem.find(c.said), std::string::npos) << problem->problem;
  }
  // Under Ulysses 2 rank 1 is a member of replica 0: it records no requests.
  TrialConfig ulysses = config;
  ulysses.dp = 1;
  ulysses.ulysses = 2;
  std::vector<RankResult> member(2);
  member[1].rank = 1;
  member[1].requests = {ranks[0].requests[0]};
  const auto problem = ServedRequestsProblem(ulysses, MaterializeRequests(ulysses), member);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 1);
  EXPECT_NE(problem->problem.find("on a rank that leads no replica"), std::string::npos);
}

TEST(ServedRequestsTest, AServingTrialsMetricsAreItsRequests) {
  TrialConfig config = ServingTrial();
  config.serve->warmup_requests = 2;  // 8 requests, the first 2 left out
  const std::vector<RankResult> ranks = ServedRanks(config);
  const TrialMetrics m =
      ComputeTrialMetrics(config, ranks, "cpu", nullptr, MaterializeRequests(config));
  ASSERT_TRUE(m.extra.contains("requests_per_s"));
  EXPECT_GT(m.extra.at("requests_per_s"), 0);
  EXPECT_DOUBLE_EQ(m.extra.at("requests_per_s_per_gpu"), m.extra.at("requests_per_s") / 2);
  EXPECT_DOUBLE_EQ(*m.images_per_s, m.extra.at("requests_per_s"));
  EXPECT_DOUBLE_EQ(m.extra.at("isolated_ms"), 100);
  EXPECT_GE(m.extra.at("slo_attainment"), 0);
  EXPECT_LE(m.extra.at("slo_attainment"), 1);
  EXPECT_FALSE(m.tflops);  // waits are not work
  EXPECT_FALSE(m.mfu);
  // 6 requests past the warm-up bound no tail: said, and no p95 stored.
  EXPECT_FALSE(m.extra.contains("p95_ms"));
  EXPECT_NE(m.extra_note.find("serve: p90, p95, p99 of the latency not bounded by 6 requests"),
            std::string::npos)
      << m.extra_note;
}

// A replica that falls behind is said, never hidden in the pool: replica 1's requests take 3x
// replica 0's.
TEST(ServedRequestsTest, AReplicaThatFallsBehindIsNamed) {
  const TrialConfig config = ServingTrial();
  std::vector<RankResult> ranks = ServedRanks(config);
  TrialMetrics m = ComputeTrialMetrics(config, ranks, "cpu", nullptr, MaterializeRequests(config));
  EXPECT_DOUBLE_EQ(m.extra.at("replica_spread"), 1);  // both replicas take 100 ms a request
  EXPECT_EQ(m.extra_note.find("fell behind"), std::string::npos) << m.extra_note;
  for (RequestRecord& q : ranks[1].requests) q.end_ms = q.start_ms + 300;
  m = ComputeTrialMetrics(config, ranks, "cpu", nullptr, MaterializeRequests(config));
  EXPECT_DOUBLE_EQ(m.extra.at("replica_spread"), 3);
  EXPECT_NE(m.extra_note.find("serve: replica 1 fell behind: median service 300.0 ms over 3 "
                              "requests, against 100.0 ms on replica 0"),
            std::string::npos)
      << m.extra_note;
  // One replica: no spread.
  TrialConfig one = config;
  one.dp = 1;
  one.ulysses = 2;
  std::vector<RankResult> alone = ServedRanks(config);
  for (RequestRecord& q : alone[1].requests) q.replica = 0;
  EXPECT_FALSE(ComputeTrialMetrics(one, alone, "cpu", nullptr, MaterializeRequests(one))
                   .extra.contains("replica_spread"));
}

// Early stopping: the requests served are the load's first K, every one of them; a gap
// before a served request, or K within the warm-up, is refused. The note says how many of the
// load's requests were served.
TEST(ServedRequestsTest, AnEarlyStopServesAPrefixOfTheLoad) {
  TrialConfig config = ServingTrial();
  config.serve->requests = 8;
  config.serve->warmup_requests = 1;
  config.serve->stop_percentile = 90;
  std::vector<RankResult> ranks = ServedRanks(config);  // requests 0..8
  for (RankResult& r : ranks)
    for (int index = 6; index < 9; ++index) Unserve(r, index);
  EXPECT_FALSE(ServedRequestsProblem(config, MaterializeRequests(config), ranks));
  const TrialMetrics m =
      ComputeTrialMetrics(config, ranks, "cpu", nullptr, MaterializeRequests(config));
  EXPECT_NE(m.extra_note.find("serve: stopped early after 6 of 9 requests, p90 bounded within 10%"),
            std::string::npos)
      << m.extra_note;
  std::vector<RankResult> gap = ranks;
  Unserve(gap[0], 2);
  const auto problem = ServedRequestsProblem(config, MaterializeRequests(config), gap);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->problem.find("request 2 of 9 was served by no replica before a later one"),
            std::string::npos)
      << problem->problem;
  std::vector<RankResult> warmup_only = ranks;
  for (int index = 1; index < 6; ++index)
    for (RankResult& r : warmup_only) Unserve(r, index);
  const auto none_timed = ServedRequestsProblem(config, MaterializeRequests(config), warmup_only);
  ASSERT_TRUE(none_timed);
  EXPECT_NE(none_timed->problem.find("'requests': no timed request: all 1 requests were warm-up "
                                     "(warmup_requests: 1; the load has 9)"),
            std::string::npos)
      << none_timed->problem;
  config.serve->stop_percentile = 0;  // without early stopping every request is served
  ASSERT_TRUE(ServedRequestsProblem(config, MaterializeRequests(config), ranks));
}

// A mix: each request's shape is the load's; each shape's figures are in the note.
TEST(ServedRequestsTest, AMixSaysEachShapesFigures) {
  TrialConfig config = ServingTrial();
  config.serve->requests = 40;
  config.serve->mix = {kTrialsOwn, RequestShape{512, 512, -1, 0, 1}};
  const std::vector<RankResult> ranks = ServedRanks(config);
  EXPECT_FALSE(ServedRequestsProblem(config, MaterializeRequests(config), ranks));
  int large = 0;
  for (const Request& r : TrialRequests(config)) large += r.shape;
  ASSERT_GT(large, 0);
  const TrialMetrics m =
      ComputeTrialMetrics(config, ranks, "cpu", nullptr, MaterializeRequests(config));
  EXPECT_NE(m.extra_note.find(
                fmt::format("serve: by shape: 256x256, 4 steps: {} requests, p50 ", 40 - large)),
            std::string::npos)
      << m.extra_note;
  EXPECT_NE(m.extra_note.find(fmt::format("; 512x512, 4 steps: {} requests, p50 ", large)),
            std::string::npos)
      << m.extra_note;
}

// The machine was busy while some requests were served (metrics/busy_requests.h): each leader's
// requests are placed on the host's clock by its own load start. Request i arrives at i s and
// takes 100 ms; replica 0's load started at 500 s, replica 1's at 499 s, and the machine was
// busy from 502.05 s to 502.06 s: request 2 (replica 0: 502.0 - 502.1 s) and request 3
// (replica 1: 499 + 3.0 - 3.1 s) were served through it.
TEST(ServedRequestsTest, RequestsABusyStretchTouchedAreCountedByTheirLeadersClock) {
  const TrialConfig config = ServingTrial();
  std::vector<RankResult> ranks = ServedRanks(config);
  for (RankResult& r : ranks)
    for (RequestRecord& q : r.requests) {
      q.arrival_ms = q.start_ms = 1000.0 * q.index;
      q.end_ms = q.start_ms + 100;
    }
  ranks[0].serve_start_monotonic_s = 500;
  ranks[1].serve_start_monotonic_s = 499;
  // Not judged one by one (the ranks on another host, or no health sampled): no count.
  EXPECT_FALSE(ComputeTrialMetrics(config, ranks, "cpu", nullptr, MaterializeRequests(config))
                   .extra.contains("busy_requests"));
  const IntervalSet quiet;
  EXPECT_EQ(ComputeTrialMetrics(config, ranks, "cpu", &quiet, MaterializeRequests(config))
                .extra.at("busy_requests"),
            0);
  const IntervalSet busy({{502.05, 502.06}});
  EXPECT_EQ(ComputeTrialMetrics(config, ranks, "cpu", &busy, MaterializeRequests(config))
                .extra.at("busy_requests"),
            2);
  ranks[1].serve_start_monotonic_s = 500;  // request 3 at 503.0 - 503.1 s: untouched
  EXPECT_EQ(ComputeTrialMetrics(config, ranks, "cpu", &busy, MaterializeRequests(config))
                .extra.at("busy_requests"),
            1);
  // A warm-up request is not counted, as it is not timed.
  TrialConfig warm = config;
  warm.serve->warmup_requests = 3;
  EXPECT_EQ(ComputeTrialMetrics(warm, ranks, "cpu", &busy, MaterializeRequests(warm))
                .extra.at("busy_requests"),
            0);
  // A leader that did not say when its load started: its requests cannot be placed, so no
  // count at all (a partial one would read as the whole), and the note says why.
  ranks[1].serve_start_monotonic_s.reset();
  const TrialMetrics m =
      ComputeTrialMetrics(config, ranks, "cpu", &busy, MaterializeRequests(config));
  EXPECT_FALSE(m.extra.contains("busy_requests"));
  EXPECT_NE(m.extra_note.find("serve: requests not marked busy: rank 1 did not say when its "
                              "load started (serve_start_monotonic_s)"),
            std::string::npos)
      << m.extra_note;
}

// A load whose every request is warm-up (`duration_s` ends it within the warm-up ones) has no
// timed request: refused, never summarised as 0 ms over 0 requests.
TEST(ServedRequestsTest, ALoadOfOnlyWarmUpRequestsHasNoTimedRequest) {
  TrialConfig config = ServingTrial();
  config.serve->requests = 0;
  config.serve->duration_s = 2;
  config.serve->warmup_requests = 50;
  const std::size_t count = TrialRequests(config).size();
  ASSERT_GT(count, 0u);
  ASSERT_LT(count, 50u);
  const auto problem =
      ServedRequestsProblem(config, MaterializeRequests(config), ServedRanks(config));
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 0);
  EXPECT_EQ(problem->problem,
            fmt::format("'requests': no timed request: all {} requests were warm-up "
                        "(warmup_requests: 50)",
                        count));
}

// A leader's samples are its requests' times (metrics/serve_loop.h): a latency of 1 ms beside a
// request that took 100 ms is refused, naming the request, the field and both values.
TEST(ServedRequestsTest, ALatencySampleThatContradictsItsRequestIsNamed) {
  const TrialConfig config = ServingTrial();
  std::vector<RankResult> ranks = ServedRanks(config);
  const RequestRecord q = ranks[0].requests[1];  // request 2
  for (Sample& s : ranks[0].samples)
    if (s.iteration == 2) s.ms = 1;
  const auto problem = ServedRequestsProblem(config, MaterializeRequests(config), ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 0);
  EXPECT_EQ(problem->problem,
            fmt::format("request 2: 'samples' gives its 'iteration' as 1 ms; its 'requests' times "
                        "give {} ms (end_ms - arrival_ms)",
                        q.end_ms - q.arrival_ms));
}

TEST(ServedRequestsTest, AQueueSampleThatContradictsItsRequestIsNamed) {
  const TrialConfig config = ServingTrial();
  std::vector<RankResult> ranks = ServedRanks(config);
  const RequestRecord q = ranks[1].requests[0];  // request 1
  ranks[1].samples.push_back({1, 1, "queue", q.start_ms - q.arrival_ms + 36, false});
  const auto problem = ServedRequestsProblem(config, MaterializeRequests(config), ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 1);
  EXPECT_NE(problem->problem.find("request 1: 'samples' gives its 'queue' as "), std::string::npos)
      << problem->problem;
  EXPECT_NE(problem->problem.find("(start_ms - arrival_ms)"), std::string::npos)
      << problem->problem;
}

// A request served without a latency sample would leave the percentiles silently.
TEST(ServedRequestsTest, ARequestWithoutALatencySampleIsNamed) {
  const TrialConfig config = ServingTrial();
  std::vector<RankResult> ranks = ServedRanks(config);
  std::erase_if(ranks[1].samples, [](const Sample& s) { return s.iteration == 3; });
  const auto problem = ServedRequestsProblem(config, MaterializeRequests(config), ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 1);
  EXPECT_EQ(problem->problem,
            "request 3: 'samples' has no latency of it (stage 'iteration', iteration 3); every "
            "request served is timed");
}

TEST(ServedRequestsTest, ALatencySampleOfARequestNotServedIsNamed) {
  const TrialConfig config = ServingTrial();
  std::vector<RankResult> ranks = ServedRanks(config);
  ranks[0].samples.push_back({0, 3, kIterationStage, 100, false});  // replica 1 served 3
  const auto problem = ServedRequestsProblem(config, MaterializeRequests(config), ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 0);
  EXPECT_EQ(problem->problem,
            "'samples' has a latency of request 3 (stage 'iteration'), which its 'requests' do "
            "not hold");
}

TEST(ServedRequestsTest, AWarmUpFlagThatContradictsTheLoadIsNamed) {
  TrialConfig config = ServingTrial();
  config.serve->warmup_requests = 2;
  std::vector<RankResult> ranks = ServedRanks(config);
  EXPECT_FALSE(ServedRequestsProblem(config, MaterializeRequests(config), ranks));
  for (Sample& s : ranks[0].samples)
    if (s.iteration == 4) s.warmup = true;
  const auto problem = ServedRequestsProblem(config, MaterializeRequests(config), ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->problem,
            "request 4: 'samples' flags its latency warmup true; the load's first 2 requests are "
            "the warm-up ones");
}

// A request cannot end after every rank was killed: a last end of 1e9 ms would make the load's
// window 11 days and its throughput 2e-5 requests a second.
TEST(ServedRequestsTest, ARequestEndingAfterTheTrialsTimeoutIsRefused) {
  TrialConfig config = ServingTrial();
  config.timeout_s = 60;
  std::vector<RankResult> ranks = ServedRanks(config);
  EXPECT_FALSE(ServedRequestsProblem(config, MaterializeRequests(config), ranks));
  ranks[1].requests.back().end_ms = 1e9;  // request 5
  for (Sample& s : ranks[1].samples)
    if (s.iteration == 5) s.ms = 1e9 - ranks[1].requests.back().arrival_ms;
  const auto problem = ServedRequestsProblem(config, MaterializeRequests(config), ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 1);
  EXPECT_NE(problem->problem.find("'requests' has request 5 ending at "), std::string::npos)
      << problem->problem;
  EXPECT_NE(problem->problem.find(" ms, after the trial's timeout of 60 s"), std::string::npos)
      << problem->problem;
}

// The latency's median and spread are the requests' (end - arrival), whatever the samples beside
// them claim.
TEST(ServedRequestsTest, AServingTrialsLatencyIsItsRequestsNotItsSamples) {
  TrialConfig config = ServingTrial();
  config.serve->requests = 40;
  std::vector<RankResult> ranks = ServedRanks(config);
  std::vector<double> latencies;
  for (RankResult& r : ranks) {
    for (const RequestRecord& q : r.requests) latencies.push_back(q.end_ms - q.arrival_ms);
    for (Sample& s : r.samples) s.ms = 1;
  }
  std::sort(latencies.begin(), latencies.end());
  const TrialMetrics m =
      ComputeTrialMetrics(config, ranks, "cpu", nullptr, MaterializeRequests(config));
  EXPECT_DOUBLE_EQ(m.latency_ms, Quantile(latencies, 0.5));
  EXPECT_GE(m.latency_ms, 100);
  EXPECT_DOUBLE_EQ(m.min_ms, latencies.front());
  EXPECT_DOUBLE_EQ(m.max_ms, latencies.back());
  EXPECT_EQ(m.iterations, 40);
  EXPECT_LE(m.ci_low_ms, m.latency_ms);
  EXPECT_GE(m.ci_high_ms, m.latency_ms);
}

}  // namespace
}  // namespace ditbench::served_requests_test
