#include "runner/ingest.h"

#include <signal.h>

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

RankResult Rank(int rank, std::vector<double> timed, std::vector<double> warmup = {100}) {
  RankResult r;
  r.rank = rank;
  r.world_size = 2;
  r.device = "cpu";
  int iteration = 0;
  for (double ms : warmup) r.samples.push_back({rank, iteration++, "iteration", ms, true});
  for (double ms : timed) {
    r.samples.push_back({rank, iteration, "iteration", ms, false});
    r.samples.push_back({rank, iteration++, "step:0", ms / 2, false});
  }
  r.peak_mem_mb = 100.0 + rank;
  return r;
}

TrialConfig TinyTwoRanks() {
  TrialConfig c;
  c.model = "pixart-alpha-tiny";
  c.resolution = 256;
  c.ulysses = 2;
  c.steps = 4;
  return c;
}

TEST(IngestTest, LatencyIsTheSlowestRankAndSkewShowsTheGap) {
  // Rank 1 is deliberately slower by 5 ms every iteration.
  auto m = ComputeMetrics(TinyTwoRanks(), {Rank(0, {10, 11, 12}), Rank(1, {15, 16, 17})}, "cpu");
  EXPECT_DOUBLE_EQ(m.latency_ms, 16);
  EXPECT_DOUBLE_EQ(m.rank0_ms, 11);
  EXPECT_DOUBLE_EQ(m.skew_ms, 5);
  EXPECT_EQ(m.iterations, 3);
  EXPECT_EQ(m.warmup, 1);  // the 100 ms warm-up is counted, not timed
  EXPECT_DOUBLE_EQ(m.max_ms, 17);
  EXPECT_DOUBLE_EQ(*m.peak_mem_mb, 101);
}

TEST(IngestTest, SlowestRankIsTakenPerIteration) {
  // The slow rank alternates; per-iteration max is 20 every time, while each rank's median is 10.
  auto m = ComputeMetrics(TinyTwoRanks(), {Rank(0, {20, 10, 20, 10, 20}), Rank(1, {10, 20, 10, 20, 10})}, "cpu");
  EXPECT_DOUBLE_EQ(m.latency_ms, 20);
  EXPECT_DOUBLE_EQ(m.skew_ms, 10);
}

TEST(IngestTest, ThroughputFromAnalyticFlopsAndNoMfuOnCpu) {
  auto m = ComputeMetrics(TinyTwoRanks(), {Rank(0, {10}), Rank(1, {10})}, "cpu");
  ASSERT_TRUE(m.flops && m.tflops && m.images_per_s);
  EXPECT_DOUBLE_EQ(*m.images_per_s, 100.0);  // 1 image per 10 ms
  EXPECT_NEAR(*m.tflops, *m.flops / 0.010 / 1e12, 1e-12);
  EXPECT_FALSE(m.mfu.has_value());
  auto gpu = ComputeMetrics(TinyTwoRanks(), {Rank(0, {10}), Rank(1, {10})}, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(gpu.mfu);
  EXPECT_NEAR(*gpu.mfu, *gpu.tflops / (989.0 * 2), 1e-15);
}

class IngestTrialTest : public ::testing::Test {
 protected:
  void WriteRank(const RankResult& r) {
    WriteFileAtomically(RankResultPath(dir_.path(), r.rank), ToJson(r).dump());
  }
  LaunchOutcome Outcome(std::vector<RankExit> ranks, int failed = -1) {
    LaunchOutcome o;
    o.ranks = std::move(ranks);
    o.first_failed_rank = failed;
    return o;
  }
  test::TempDir dir_;
};

TEST_F(IngestTrialTest, AllRanksOkGiveAnOkRecordWithEverySample) {
  WriteRank(Rank(0, {10, 11}));
  WriteRank(Rank(1, {12, 13}));
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kOk);
  ASSERT_TRUE(r.metrics);
  EXPECT_EQ(r.samples.size(), 2u * (1 + 2 * 2));
}

TEST_F(IngestTrialTest, OomExitCodeIsClassifiedAsOom) {
  RankResult failed = Rank(1, {});
  failed.status = "oom";
  failed.error = "out of memory: tried to allocate 20 GiB";
  WriteRank(failed);
  RankExit oom{true, kWorkerOutOfMemory, 0, false};
  RankExit killed{true, 0, SIGKILL, true};
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({killed, oom}, 1));
  EXPECT_EQ(r.status, TrialStatus::kOom);
  EXPECT_NE(r.error.find("tried to allocate"), std::string::npos) << r.error;
}

TEST_F(IngestTrialTest, CrashUsesTheLastLogLine) {
  std::ofstream(RankLogPath(dir_.path(), 0)) << "starting\nSegmentation fault in attention\n\n";
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(),
                       Outcome({{true, 0, SIGSEGV, false}, {true, 0, SIGKILL, true}}, 0));
  EXPECT_EQ(r.status, TrialStatus::kCrashed);
  EXPECT_NE(r.error.find("signal 11"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("Segmentation fault in attention"), std::string::npos) << r.error;
}

TEST_F(IngestTrialTest, CleanExitWithoutResultFilesIsAFailure) {
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
  EXPECT_NE(r.error.find("result file"), std::string::npos) << r.error;
}

TEST_F(IngestTrialTest, TruncatedRankFileIsAFailureNotACrash) {
  WriteRank(Rank(0, {10}));
  std::ofstream(RankResultPath(dir_.path(), 1)) << "{\"format\": \"ditbench-rank-res";
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), Outcome({{true}, {true}}));
  EXPECT_EQ(r.status, TrialStatus::kFailed);
}

TEST_F(IngestTrialTest, TimeoutIsRecorded) {
  LaunchOutcome o = Outcome({{true, 0, SIGKILL, true}, {true, 0, SIGKILL, true}});
  o.timed_out = true;
  auto r = IngestTrial(TinyTwoRanks(), "k", dir_.path(), o);
  EXPECT_EQ(r.status, TrialStatus::kTimeout);
}

}  // namespace
}  // namespace ditbench

namespace ditbench {
namespace {

TEST(IngestClocksTest, AnyThrottledRankFlagsTheTrialAndClocksSpanRanks) {
  RankResult a = Rank(0, {10}), b = Rank(1, {10});
  a.clocks = {{"available", true}, {"sm_mhz_min", 1980.0}, {"sm_mhz_max", 1980.0}, {"throttled", false}};
  b.clocks = {{"available", true}, {"sm_mhz_min", 1410.0}, {"sm_mhz_max", 1980.0}, {"throttled", true}};
  auto m = ComputeMetrics(TinyTwoRanks(), {a, b}, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(m.throttled);
  EXPECT_TRUE(*m.throttled);
  EXPECT_DOUBLE_EQ(*m.sm_clock_min_mhz, 1410);
  EXPECT_DOUBLE_EQ(*m.sm_clock_max_mhz, 1980);
}

TEST(IngestClocksTest, NoClockSamplesMeansUnknownNotUnthrottled) {
  auto m = ComputeMetrics(TinyTwoRanks(), {Rank(0, {10}), Rank(1, {10})}, "cpu");
  EXPECT_FALSE(m.throttled.has_value());
}

}  // namespace
}  // namespace ditbench
