// What `plan` expects a step cache to skip (plan/step_cache_fraction.h): earlier measurements
// of the same model, shape and cache, whatever their layout; threshold 0 computes every step;
// otherwise every step is assumed computed, and each says which it used.
#include "plan/step_cache_fraction.h"

#include <gtest/gtest.h>

#include "plan/sweep_plan.h"

namespace ditbench::step_cache_fraction_test {
namespace {

TrialConfig Cached(double threshold) {
  TrialConfig c;
  c.model = "pixart-alpha-tiny";
  c.resolution = 256;
  c.steps = 10;
  c.cache = {StepCache::Kind::kFbCache, threshold, 1};
  return c;
}

PlannerHistory::StepCacheObservation Observed(const TrialConfig& c, double skipped) {
  return {CanonicalJson(c), skipped};
}

TEST(StepCacheFractionTest, EarlierTrialsOfTheSameCacheInAnyLayoutGiveTheFraction) {
  TrialConfig two_ranks = Cached(0.2);
  two_ranks.ulysses = 2;
  TrialConfig other_threshold = Cached(0.3);
  TrialConfig other_steps = Cached(0.2);
  other_steps.steps = 20;
  const std::vector<PlannerHistory::StepCacheObservation> earlier = {
      Observed(Cached(0.2), 4),
      Observed(two_ranks, 2),
      Observed(other_threshold, 8),
      Observed(other_steps, 15),
      {nlohmann::json{{"model", 7}}, 9}};
  const ComputedFraction f = ExpectedComputedFraction(Cached(0.2), earlier);
  EXPECT_DOUBLE_EQ(f.computed, 0.7);  // (4 + 2) / 2 trials / 10 steps skipped
  EXPECT_EQ(f.source, "measured (2 earlier trials of this model, shape and cache)");
  // A reused FBCache step still runs block 0 of pixart-alpha-tiny's blocks.
  std::string unused;
  const int blocks = ResolveModel("pixart-alpha-tiny", {}, &unused)->depth;
  EXPECT_DOUBLE_EQ(f.work, 0.7 + 0.3 / blocks);
  TrialConfig tea = Cached(0.2);
  tea.model = "flux-dev-tiny";
  tea.cache.kind = StepCache::Kind::kTeaCache;
  const ComputedFraction t = ExpectedComputedFraction(tea, {Observed(tea, 5)});
  EXPECT_DOUBLE_EQ(t.computed, 0.5);
  EXPECT_DOUBLE_EQ(t.work, 0.5);  // a reused TeaCache step runs no block
}

TEST(StepCacheFractionTest, WithoutMeasurementsItSaysWhatItAssumed) {
  const ComputedFraction zero = ExpectedComputedFraction(Cached(0), {});
  EXPECT_DOUBLE_EQ(zero.computed, 1);
  EXPECT_EQ(zero.source, "threshold 0: every step computes");
  const ComputedFraction prior = ExpectedComputedFraction(Cached(0.2), {});
  EXPECT_DOUBLE_EQ(prior.computed, 1);
  EXPECT_DOUBLE_EQ(prior.work, 1);
  EXPECT_NE(prior.source.find("prior: no earlier measurement"), std::string::npos);
}

// The analytic estimate scales the denoising work, never the decode.
TEST(StepCacheFractionTest, TheEstimateScalesTheStepsButNotTheDecode) {
  PlanAssumptions a;
  TrialConfig c = Cached(0.2);
  c.scope = Scope::kPipeline;
  const TrialEstimate full = AnalyticEstimate(c, a), half = AnalyticEstimate(c, a, 0.5);
  ASSERT_TRUE(full.decode_ms);
  EXPECT_NEAR(half.iteration_ms - *half.decode_ms, 0.5 * (full.iteration_ms - *full.decode_ms),
              1e-9 * full.iteration_ms);
  EXPECT_DOUBLE_EQ(*half.decode_ms, *full.decode_ms);
}

}  // namespace
}  // namespace ditbench::step_cache_fraction_test
