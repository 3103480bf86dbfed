#include "metrics/trial_metrics.h"

#include <fmt/format.h>
#include <functional>

#include <gtest/gtest.h>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {
namespace {

// Rank `rank`'s result: one warm-up iteration (100 ms), then the timed ones, each with one
// step sample of half its time.
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

TEST(SlowestPerIterationTest, IsTheMaxOverRanksOfEachTimedIterationOfOneStage) {
  std::vector<Sample> samples = {
      {0, 0, "iteration", 99, true},  {1, 0, "iteration", 1, true},   // warm-up: left out
      {0, 1, "iteration", 10, false}, {1, 1, "iteration", 14, false},
      {0, 2, "iteration", 12, false}, {1, 2, "iteration", 11, false},
      {0, 1, "step:0", 50, false},                                     // another stage
  };
  auto spread = SlowestPerIteration(samples);
  ASSERT_EQ(spread.size(), 2u);
  EXPECT_DOUBLE_EQ(spread.at(1).slowest_ms, 14);
  EXPECT_DOUBLE_EQ(spread.at(1).skew_ms(), 4);
  EXPECT_DOUBLE_EQ(spread.at(2).slowest_ms, 12);
  EXPECT_DOUBLE_EQ(spread.at(2).skew_ms(), 1);
  EXPECT_EQ(SlowestSeries(samples), (std::vector<double>{14, 12}));
  EXPECT_EQ(SlowestSeries(samples, "step:0"), (std::vector<double>{50}));
}

// The slowest rank per iteration needs every rank in every iteration: a rank that misses one
// would be left out of its maximum (a trial whose slow rank took 100 ms reported 1 ms).
TEST(TimedIterationsProblemTest, EveryRankMustTimeRankZerosIterationsAndAtLeastTheMinimum) {
  EXPECT_FALSE(TimedIterationsProblem({Rank(0, {1, 1, 1}), Rank(1, {100, 100, 100})}, 3));
  RankResult slow = Rank(1, {100, 100});  // iterations 1 and 2; rank 0 timed 1, 2 and 3
  auto missing = TimedIterationsProblem({Rank(0, {1, 1, 1}), slow}, 2);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->rank, 1);
  EXPECT_EQ(missing->problem, "'samples' has no timed iteration 3, which rank 0 timed; every "
                              "rank must time the same iterations");
  auto extra = TimedIterationsProblem({Rank(0, {1, 1}), Rank(1, {100, 100, 100})}, 2);
  ASSERT_TRUE(extra);
  EXPECT_EQ(extra->rank, 1);
  EXPECT_NE(extra->problem.find("has timed iteration 3, which rank 0 did not time"),
            std::string::npos);
  auto few = TimedIterationsProblem({Rank(0, {1, 1}), Rank(1, {1, 1})}, 3);
  ASSERT_TRUE(few);
  EXPECT_EQ(few->rank, 0);
  EXPECT_EQ(few->problem, "'samples' has 2 timed iterations; expected at least 3 (repeats.min)");
  // Warm-up and stage samples are not timed iterations of the whole.
  EXPECT_TRUE(TimedIterationsProblem({Rank(0, {1}, {5, 5, 5})}, 2));
}

TEST(TrialMetricsTest, LatencyIsTheSlowestRankAndSkewShowsTheGap) {
  // Rank 1 is deliberately slower by 5 ms every iteration.
  auto m = ComputeTrialMetrics(TinyTwoRanks(), {Rank(0, {10, 11, 12}), Rank(1, {15, 16, 17})},
                               "cpu");
  EXPECT_DOUBLE_EQ(m.latency_ms, 16);
  EXPECT_DOUBLE_EQ(m.rank0_ms, 11);
  EXPECT_DOUBLE_EQ(m.skew_ms, 5);
  EXPECT_EQ(m.iterations, 3);
  EXPECT_EQ(m.warmup, 1);  // the 100 ms warm-up is counted, not timed
  EXPECT_DOUBLE_EQ(m.max_ms, 17);
  EXPECT_DOUBLE_EQ(m.min_ms, 15);
  EXPECT_DOUBLE_EQ(m.mean_ms, 16);
  EXPECT_DOUBLE_EQ(m.std_ms, 1);  // {15, 16, 17}: squares 1 + 0 + 1, / (3 - 1)
  EXPECT_DOUBLE_EQ(m.cov, 1.0 / 16);
  EXPECT_DOUBLE_EQ(*m.peak_mem_mb, 101);
}

TEST(TrialMetricsTest, SlowestRankIsTakenPerIteration) {
  // The slow rank alternates; per-iteration max is 20 every time, while each rank's median is 10
  // or 20.
  auto m = ComputeTrialMetrics(
      TinyTwoRanks(), {Rank(0, {20, 10, 20, 10, 20}), Rank(1, {10, 20, 10, 20, 10})}, "cpu");
  EXPECT_DOUBLE_EQ(m.latency_ms, 20);
  EXPECT_DOUBLE_EQ(m.skew_ms, 10);
  EXPECT_DOUBLE_EQ(m.rank0_ms, 20);
}

TEST(TrialMetricsTest, ThroughputFromHandComputedFlopsAndNoMfuOnCpu) {
  const TrialConfig config = TinyTwoRanks();
  auto m = ComputeTrialMetrics(config, {Rank(0, {10}), Rank(1, {10})}, "cpu");
  ASSERT_TRUE(m.flops && m.tflops && m.images_per_s && m.tokens_per_s);
  std::string error;
  auto model = ResolveModel(config.model, config.model_overrides, &error);
  ASSERT_TRUE(model) << error;
  // denoise: 4 forwards; CFG batches a negative prompt: 1 image x 2 samples per forward.
  EXPECT_DOUBLE_EQ(*m.flops, 4 * ForwardFlops(*model, 256, 2));
  EXPECT_DOUBLE_EQ(*m.images_per_s, 100.0);  // 1 image per 10 ms
  EXPECT_NEAR(*m.tflops, *m.flops / 0.010 / 1e12, 1e-12);
  // 256 px / 8 (VAE) / 2 (patch) = 16 patches per side: 256 tokens x 2 samples x 4 forwards.
  EXPECT_DOUBLE_EQ(*m.tokens_per_s, 256.0 * 2 * 4 / 0.010);
  EXPECT_FALSE(m.mfu.has_value());
  auto gpu = ComputeTrialMetrics(config, {Rank(0, {10}), Rank(1, {10})}, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(gpu.mfu);
  EXPECT_NEAR(*gpu.mfu, *gpu.tflops / (989.0 * 2), 1e-15);
}

TEST(TrialMetricsTest, AnyThrottledRankFlagsTheTrialAndClocksSpanRanks) {
  RankResult a = Rank(0, {10}), b = Rank(1, {10});
  a.clocks = {{"available", true}, {"sm_mhz_min", 1980.0}, {"sm_mhz_max", 1980.0},
              {"throttled", false}};
  b.clocks = {{"available", true}, {"sm_mhz_min", 1410.0}, {"sm_mhz_max", 1980.0},
              {"throttled", true}};
  auto m = ComputeTrialMetrics(TinyTwoRanks(), {a, b}, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(m.throttled);
  EXPECT_TRUE(*m.throttled);
  EXPECT_DOUBLE_EQ(*m.sm_clock_min_mhz, 1410);
  EXPECT_DOUBLE_EQ(*m.sm_clock_max_mhz, 1980);
}

TEST(TrialMetricsTest, NoClockSamplesMeansUnknownNotUnthrottled) {
  auto m = ComputeTrialMetrics(TinyTwoRanks(), {Rank(0, {10}), Rank(1, {10})}, "cpu");
  EXPECT_FALSE(m.throttled.has_value());
}

TEST(TrialMetricsTest, EnergyIsSummedOverRanksPerTimedIterationAndPerImage) {
  TrialConfig config = TinyTwoRanks();
  config.ulysses = 1;
  config.dp = 2;     // two replicas ...
  config.batch = 3;  // ... of 3 images each: 6 images per iteration
  RankResult a = Rank(0, {10, 10, 10, 10}), b = Rank(1, {10, 10, 10, 10});
  a.energy = RankEnergy{12.0, 45.0};  // 4 timed iterations on each rank
  b.energy = RankEnergy{20.0, 44.0};
  auto m = ComputeTrialMetrics(config, {a, b}, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(m.energy_j && m.joules_per_image);
  EXPECT_DOUBLE_EQ(*m.energy_j, (12.0 + 20.0) / 4);
  EXPECT_DOUBLE_EQ(*m.joules_per_image, 8.0 / 6);
  EXPECT_EQ(m.energy_note, "");
}

TEST(TrialMetricsTest, EnergyIsUnsetWhenARankLacksItAndSaysWhyOnce) {
  RankResult a = Rank(0, {10}), b = Rank(1, {10});
  a.energy = RankEnergy{1.0, 11.0};
  b.energy_unavailable = "this GPU has no total energy counter";
  auto m = ComputeTrialMetrics(TinyTwoRanks(), {a, b}, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(m.energy_j.has_value());
  EXPECT_FALSE(m.joules_per_image.has_value());
  EXPECT_EQ(m.energy_note, "rank 1: this GPU has no total energy counter");

  b.energy_unavailable.clear();  // a rank that says nothing while another measured
  m = ComputeTrialMetrics(TinyTwoRanks(), {a, b}, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(m.energy_j.has_value());
  EXPECT_EQ(m.energy_note, "rank 1 reported no energy while others did");
}

TEST(TrialMetricsTest, NoEnergyAndNoNoteOnCpu) {
  auto m = ComputeTrialMetrics(TinyTwoRanks(), {Rank(0, {10}), Rank(1, {10})}, "cpu");
  EXPECT_FALSE(m.energy_j.has_value());
  EXPECT_FALSE(m.joules_per_image.has_value());
  EXPECT_EQ(m.energy_note, "");
}

TEST(TrialMetricsTest, ACommandsEnergyHasNoImagesToDivideBy) {
  TrialConfig config;
  config.workload = Workload::kCommand;
  config.model = "my-model";
  RankResult a = Rank(0, {10});
  a.energy = RankEnergy{2.0, 11.0};
  auto m = ComputeTrialMetrics(config, {a}, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(m.energy_j);
  EXPECT_DOUBLE_EQ(*m.energy_j, 2.0);
  EXPECT_FALSE(m.joules_per_image.has_value());
}

// A program's own numbers: rank 0's value (the metric table's rule for names it lacks), a name
// of the table reduced as its row says, bad names and undeclared directions dropped with a note.
TEST(TrialMetricsTest, ExtraMetricsAreCheckedAndReducedOverRanksByTheMetricTable) {
  RankResult a = Rank(0, {10}), b = Rank(1, {10});
  a.metrics = {{"items", 3}, {"images_per_s", 2}, {"bad name", 1}};
  b.metrics = {{"items", 5}, {"images_per_s", 4}, {"only_rank1", 7}};
  a.metric_declarations = {{"items", {"count", "sideways"}}};
  const TrialMetrics m = ComputeTrialMetrics(TinyTwoRanks(), {a, b}, "cpu");
  EXPECT_EQ(m.extra,
            (std::map<std::string, double>{{"images_per_s", 6}, {"items", 3}, {"only_rank1", 7}}));
  ASSERT_TRUE(m.extra_declared.contains("items"));
  EXPECT_EQ(m.extra_declared.at("items").unit, "count");
  EXPECT_EQ(m.extra_declared.at("items").better, "");
  EXPECT_NE(m.extra_note.find("metric 'bad name' dropped"), std::string::npos) << m.extra_note;
  EXPECT_NE(m.extra_note.find("better 'sideways' ignored"), std::string::npos) << m.extra_note;
}

}  // namespace
}  // namespace ditbench

namespace ditbench {
namespace {

// Two ranks, 4 steps per iteration, one warm-up and two timed iterations; steps 1 and 2 reused
// (a computed step 10 ms, a reused one 1 ms; rank 1 a little slower).
std::vector<RankResult> CachedRanks() {
  std::vector<RankResult> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    RankResult r;
    r.rank = rank;
    r.world_size = 2;
    r.device = "cpu";
    for (int iteration = 0; iteration < 3; ++iteration) {
      const bool warmup = iteration == 0;
      r.samples.push_back({rank, iteration, "iteration", 22.0 + rank, warmup});
      for (int step = 0; step < 4; ++step) {
        const bool reused = step == 1 || step == 2;
        r.samples.push_back({rank, iteration, fmt::format("step:{}", step),
                             (reused ? 1.0 : 10.0) + rank, warmup, reused});
        r.samples.push_back({rank, iteration, fmt::format("step:{}/block:0", step), 0.5, warmup});
      }
    }
    ranks.push_back(r);
  }
  return ranks;
}

TEST(StepReuseTest, ComputedAndReusedStepsAreTimedApartFromTheTimedIterations) {
  std::vector<Sample> all;
  for (const RankResult& r : CachedRanks())
    all.insert(all.end(), r.samples.begin(), r.samples.end());
  const StepReuse reuse = SummarizeStepReuse(all);
  EXPECT_EQ(reuse.timed_steps, 8);  // 4 steps x 2 timed iterations; blocks and warm-up left out
  EXPECT_DOUBLE_EQ(reuse.skipped_steps, 2);
  EXPECT_DOUBLE_EQ(reuse.hit_rate, 0.5);
  EXPECT_DOUBLE_EQ(reuse.computed_step_ms.value(), 11);  // the slowest rank's
  EXPECT_DOUBLE_EQ(reuse.reused_step_ms.value(), 2);

  TrialConfig config = TinyTwoRanks();
  config.cache = {StepCache::Kind::kFbCache, 0.1, 1};
  const TrialMetrics m = ComputeTrialMetrics(config, CachedRanks(), "cpu");
  EXPECT_DOUBLE_EQ(m.extra.at("skipped_steps"), 2);
  EXPECT_DOUBLE_EQ(m.extra.at("cache_hit_rate"), 0.5);
  EXPECT_DOUBLE_EQ(m.extra.at("computed_step_ms"), 11);
  EXPECT_DOUBLE_EQ(m.extra.at("reused_step_ms"), 2);
  // FLOPs count the work done: 2 computed steps and 2 that ran block 0 alone.
  TrialConfig uncached = TinyTwoRanks();
  const TrialMetrics full = ComputeTrialMetrics(uncached, CachedRanks(), "cpu");
  std::string unused;
  const int blocks = ResolveModel("pixart-alpha-tiny", {}, &unused)->depth;
  EXPECT_NEAR(*m.flops / *full.flops, (2 + 2.0 / blocks) / 4, 1e-12);
  EXPECT_FALSE(full.extra.contains("skipped_steps"));  // no cache: no cache metrics
}

// Scope pipeline: decode_ms is the slowest rank's decode per timed iteration (a rank past a
// vae_parallel split times none), decode_share its part of the latency.
TEST(TrialMetricsTest, DecodeTimeAndShareComeFromTheSlowestRanksDecodeStage) {
  std::vector<RankResult> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    RankResult r;
    r.rank = rank;
    r.world_size = 2;
    r.device = "cpu";
    for (int iteration = 0; iteration < 4; ++iteration) {
      const bool warmup = iteration == 0;
      r.samples.push_back({rank, iteration, "iteration", 40.0 + iteration, warmup});
      if (rank == 0) r.samples.push_back({rank, iteration, "decode", 10.0 + iteration, warmup});
    }
    ranks.push_back(r);
  }
  TrialConfig config = TinyTwoRanks();
  config.scope = Scope::kPipeline;
  const TrialMetrics m = ComputeTrialMetrics(config, ranks, "cpu");
  EXPECT_DOUBLE_EQ(m.extra.at("decode_ms"), 12);  // iterations 1-3: 11, 12, 13
  EXPECT_DOUBLE_EQ(m.extra.at("decode_share"), 12.0 / 42);
  config.scope = Scope::kDenoise;
  EXPECT_FALSE(ComputeTrialMetrics(config, ranks, "cpu").extra.contains("decode_ms"));
}

TEST(StepReuseTest, RanksThatReusedDifferentStepsAreAProblemNamingTheStep) {
  std::vector<RankResult> ranks = CachedRanks();
  EXPECT_FALSE(StepReuseProblem(ranks));
  for (Sample& s : ranks[1].samples)
    if (s.iteration == 2 && s.stage == "step:2") s.reused = false;
  const auto problem = StepReuseProblem(ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 1);
  EXPECT_EQ(problem->problem,
            "'samples' has step:2 of iteration 2 computed, which rank 0 reused; the ranks' cache "
            "decisions disagree (every rank must reuse the same steps, or a collective of a step "
            "one rank computes waits for one that skipped it)");
}

// The computed shape: a rank whose latent is not the clip the key names fails the trial with the
// sizes it computed and the ones expected; a rank file without the field is not checked.
TEST(LatentShapeTest, ARankThatComputedAnotherClipIsAProblemNamingBothShapes) {
  TrialConfig config;
  config.model = "wan2.1-t2v-1.3b";
  config.resolution = 832;
  config.height = 480;
  config.frames = 81;  // 21 latent frames of 60 x 104
  std::vector<RankResult> ranks(2);
  ranks[1].rank = 1;
  EXPECT_FALSE(LatentShapeProblem(config, ranks));  // a program's rank files: nothing to check
  ranks[0].latent_shape = ranks[1].latent_shape = {1, 16, 21, 60, 104};
  EXPECT_FALSE(LatentShapeProblem(config, ranks));
  ranks[0].latent_shape[1] = 48;  // the channels are the model's, not the key's
  EXPECT_FALSE(LatentShapeProblem(config, ranks));
  ranks[1].latent_shape = {1, 16, 22, 60, 104};  // 85 frames: padded for a layout
  const auto problem = LatentShapeProblem(config, ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 1);
  EXPECT_EQ(problem->problem,
            "'latent_shape' is [1, 16, 22, 60, 104], a different clip from the trial's 832x480 x "
            "81 frames (batch, channels, latent frames, latent rows, latent columns: [1, *, 21, "
            "60, 104]); ditbench times only the shape its key names");
  ranks[1].latent_shape = {1, 16, 60, 104};  // an image's rank: a size missing
  EXPECT_TRUE(LatentShapeProblem(config, ranks));
  // An image: four sizes.
  config = TinyTwoRanks();
  ranks[0].latent_shape =
      ranks[1].latent_shape = {1, 4, config.resolution / 8, config.resolution / 8};
  EXPECT_FALSE(LatentShapeProblem(config, ranks));
  ranks[0].latent_shape[3] += 1;
  EXPECT_TRUE(LatentShapeProblem(config, ranks));
}

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
    ranks[replica].samples.push_back(
        {replica, r.index, kIterationStage, r.end_ms - r.arrival_ms, false});
  }
  return ranks;
}

TEST(ServedRequestsTest, EveryRequestServedOnceAsTheLoadMadeIt) {
  const TrialConfig config = ServingTrial();
  std::vector<RankResult> ranks = ServedRanks(config);
  EXPECT_FALSE(ServedRequestsProblem(config, ranks));
  struct Case {
    std::function<void(std::vector<RankResult>&)> tamper;
    int rank;
    std::string said;
  };
  const Case cases[] = {
      {[](auto& r) { r[1].requests.push_back(r[0].requests[0]); }, 1,
       "'requests' has request 0, which rank 0 served too; a request is served once"},
      {[](auto& r) { r[1].requests.pop_back(); }, 0,
       "'requests': request 5 of 6 was served by no replica"},
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
    const auto problem = ServedRequestsProblem(config, tampered);
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
  const auto problem = ServedRequestsProblem(ulysses, member);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 1);
  EXPECT_NE(problem->problem.find("on a rank that leads no replica"), std::string::npos);
}

TEST(ServedRequestsTest, AServingTrialsMetricsAreItsRequests) {
  TrialConfig config = ServingTrial();
  config.serve->warmup_requests = 2;  // 8 requests, the first 2 left out
  const std::vector<RankResult> ranks = ServedRanks(config);
  const TrialMetrics m = ComputeTrialMetrics(config, ranks, "cpu");
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
  TrialMetrics m = ComputeTrialMetrics(config, ranks, "cpu");
  EXPECT_DOUBLE_EQ(m.extra.at("replica_spread"), 1);  // both replicas take 100 ms a request
  EXPECT_EQ(m.extra_note.find("fell behind"), std::string::npos) << m.extra_note;
  for (RequestRecord& q : ranks[1].requests) q.end_ms = q.start_ms + 300;
  m = ComputeTrialMetrics(config, ranks, "cpu");
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
  EXPECT_FALSE(ComputeTrialMetrics(one, alone, "cpu").extra.contains("replica_spread"));
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
    while (!r.requests.empty() && r.requests.back().index >= 6) r.requests.pop_back();
  EXPECT_FALSE(ServedRequestsProblem(config, ranks));
  const TrialMetrics m = ComputeTrialMetrics(config, ranks, "cpu");
  EXPECT_NE(m.extra_note.find("serve: stopped early after 6 of 9 requests, p90 bounded within 10%"),
            std::string::npos)
      << m.extra_note;
  std::vector<RankResult> gap = ranks;
  gap[0].requests.erase(gap[0].requests.begin() + 1);  // request 2
  const auto problem = ServedRequestsProblem(config, gap);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->problem.find("request 2 of 9 was served by no replica before a later one"),
            std::string::npos)
      << problem->problem;
  std::vector<RankResult> warmup_only = ranks;
  warmup_only[0].requests.resize(1);
  warmup_only[1].requests.clear();
  ASSERT_TRUE(ServedRequestsProblem(config, warmup_only));
  config.serve->stop_percentile = 0;  // without early stopping every request is served
  ASSERT_TRUE(ServedRequestsProblem(config, ranks));
}

// A mix: each request's shape is the load's; each shape's figures are in the note.
TEST(ServedRequestsTest, AMixSaysEachShapesFigures) {
  TrialConfig config = ServingTrial();
  config.serve->requests = 40;
  config.serve->mix = {kTrialsOwn, RequestShape{512, 512, -1, 0, 1}};
  const std::vector<RankResult> ranks = ServedRanks(config);
  EXPECT_FALSE(ServedRequestsProblem(config, ranks));
  int large = 0;
  for (const Request& r : TrialRequests(config)) large += r.shape;
  ASSERT_GT(large, 0);
  const TrialMetrics m = ComputeTrialMetrics(config, ranks, "cpu");
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
  EXPECT_FALSE(ComputeTrialMetrics(config, ranks, "cpu").extra.contains("busy_requests"));
  const IntervalSet quiet;
  EXPECT_EQ(ComputeTrialMetrics(config, ranks, "cpu", &quiet).extra.at("busy_requests"), 0);
  const IntervalSet busy({{502.05, 502.06}});
  EXPECT_EQ(ComputeTrialMetrics(config, ranks, "cpu", &busy).extra.at("busy_requests"), 2);
  ranks[1].serve_start_monotonic_s = 500;  // request 3 at 503.0 - 503.1 s: untouched
  EXPECT_EQ(ComputeTrialMetrics(config, ranks, "cpu", &busy).extra.at("busy_requests"), 1);
  // A warm-up request is not counted, as it is not timed.
  TrialConfig warm = config;
  warm.serve->warmup_requests = 3;
  EXPECT_EQ(ComputeTrialMetrics(warm, ranks, "cpu", &busy).extra.at("busy_requests"), 0);
  // A leader that did not say when its load started: its requests cannot be placed, so no
  // count at all (a partial one would read as the whole), and the note says why.
  ranks[1].serve_start_monotonic_s.reset();
  const TrialMetrics m = ComputeTrialMetrics(config, ranks, "cpu", &busy);
  EXPECT_FALSE(m.extra.contains("busy_requests"));
  EXPECT_NE(m.extra_note.find("serve: requests not marked busy: rank 1 did not say when its "
                              "load started (serve_start_monotonic_s)"),
            std::string::npos)
      << m.extra_note;
}

}  // namespace
}  // namespace ditbench
