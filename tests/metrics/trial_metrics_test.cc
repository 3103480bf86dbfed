#include "metrics/trial_metrics.h"

#include <fmt/format.h>
#include <functional>

#include <gtest/gtest.h>

#include "model_zoo/shapes/model_config.h"

namespace ditbench::trial_metrics_test {
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

// A trial with no timed iteration has no latency: refused even when repeats.min allows none,
// never stored ok as 0 ms over 0 iterations.
TEST(TimedIterationsProblemTest, NoTimedIterationIsAProblemWhateverTheMinimum) {
  const auto none = TimedIterationsProblem({Rank(0, {}, {5, 5})}, 0);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->rank, 0);
  EXPECT_EQ(none->problem,
            "'samples' has no timed 'iteration' sample; a trial is measured only by its timed "
            "iterations");
  EXPECT_FALSE(TimedIterationsProblem({Rank(0, {5})}, 0));
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
}  // namespace ditbench::trial_metrics_test

namespace ditbench::trial_metrics_test {
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

// What each denoising step ran, as a rank recorded it: `n` steps of one attention and form.
std::vector<StepKernels> StepRecords(int n) {
  std::vector<StepKernels> steps;
  for (int i = 0; i < n; ++i) steps.push_back({i, "math", "bf16", false, 0});
  return steps;
}

// A rank file's `steps` describe one iteration of the trial: no more entries than its steps.
TEST(StepRecordsTest, MoreStepsThanTheTrialHasAreRefused) {
  const TrialConfig config = TinyTwoRanks();  // 4 steps
  std::vector<RankResult> ranks = {Rank(0, {10, 11}), Rank(1, {12, 13})};
  ranks[0].steps = ranks[1].steps = StepRecords(4);
  EXPECT_FALSE(StepRecordsProblem(config, ranks));
  ranks[1].steps = StepRecords(100000);
  const auto problem = StepRecordsProblem(config, ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 1);
  EXPECT_EQ(problem->problem,
            "'steps' has 100000 entries; the trial's iteration has 4 denoising steps");
  TrialConfig forward = config;
  forward.scope = Scope::kForward;  // one forward: one step
  ranks[1].steps = StepRecords(2);
  ASSERT_TRUE(StepRecordsProblem(forward, ranks));
  EXPECT_EQ(StepRecordsProblem(forward, ranks)->problem,
            "'steps' has 4 entries; the trial's iteration has 1 denoising step");
}

TEST(StepRecordsTest, AReusedStepWithoutACacheIsRefused) {
  TrialConfig config = TinyTwoRanks();
  std::vector<RankResult> ranks = {Rank(0, {10, 11}), Rank(1, {12, 13})};
  ranks[0].steps = StepRecords(4);
  ranks[0].steps[2].reused = true;
  const auto problem = StepRecordsProblem(config, ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->rank, 0);
  EXPECT_EQ(problem->problem,
            "'steps[2].reused' is true; the trial has no cache, so no step reuses one");
  config.cache.kind = StepCache::Kind::kFbCache;
  EXPECT_FALSE(StepRecordsProblem(config, ranks));
}

// Only a model of two experts (Wan 2.2 A14B) runs expert 1, and none runs expert 7.
TEST(StepRecordsTest, AnExpertTheModelDoesNotHaveIsRefused) {
  TrialConfig config = TinyTwoRanks();
  std::vector<RankResult> ranks = {Rank(0, {10, 11}), Rank(1, {12, 13})};
  ranks[0].steps = StepRecords(4);
  ranks[0].steps[3].expert = 1;
  auto problem = StepRecordsProblem(config, ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->problem,
            "'steps[3].expert' is 1; the model 'pixart-alpha-tiny' has 1 expert (0)");
  config.model = "wan2.2-t2v-a14b-tiny";
  EXPECT_FALSE(StepRecordsProblem(config, ranks));
  ranks[0].steps[3].expert = 7;
  problem = StepRecordsProblem(config, ranks);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->problem,
            "'steps[3].expert' is 7; the model 'wan2.2-t2v-a14b-tiny' has 2 experts (0 to 1)");
}

}  // namespace
}  // namespace ditbench::trial_metrics_test
