#include "runner/sweep_plan.h"

#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/sweeps.h"

#include "runner/plan_output.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

SweepSpec Parse(const std::string& yaml) { return test::ParseValidSweep(yaml); }

TEST(SweepPlanTest, UnsupportedTrialsAreEstimatedButNotScheduled) {
  auto spec = Parse("name: f\ndefaults: {model: flux-dev, resolution: 1024, steps: 28}\n"
                    "matrix: {ulysses: [1, 2], cfg: [1, 2]}\n");
  PlanAssumptions a;
  a.device = "NVIDIA H100 80GB HBM3";
  SweepPlan plan = PlanSweep(spec, {8, true}, a);
  ASSERT_EQ(plan.trials.size(), 4u);
  for (const auto& t : plan.trials) {
    ASSERT_TRUE(t.invalid_reason);
    if (t.config.cfg == 2) {
      EXPECT_FALSE(t.unsupported);  // invalid by the rules: no estimate
      EXPECT_FALSE(t.estimate);
    } else {
      EXPECT_TRUE(t.unsupported);
      ASSERT_TRUE(t.estimate);
      EXPECT_GT(t.estimate->iteration_ms, 0);
    }
  }
  EXPECT_DOUBLE_EQ(plan.estimated_wall_s, 0);  // nothing will run in this build
}

TEST(SweepPlanTest, AdaptiveStopBelowSixIterationsIsWarnedAboutWithItsRealCoverage) {
  const std::string base = "name: w\ndefaults: {model: pixart-alpha-tiny, resolution: 256, "
                           "steps: 1, repeats: ";
  PlanAssumptions a;
  for (auto [repeats, warned] : {std::pair{"{min: 3, max: 50, target_rel_ci: 0.01}", true},
                                 std::pair{"{min: 6, max: 50, target_rel_ci: 0.01}", false},
                                 std::pair{"3", false}}) {
    auto spec = Parse(base + repeats + "}\n");
    SweepPlan plan = PlanSweep(spec, {2, false}, a);
    std::ostringstream out;
    WritePlanTable(spec, plan, a, out);
    EXPECT_EQ(out.str().find("warning: 1 trial(s) may stop after 3 iteration(s)") !=
                  std::string::npos, warned) << repeats << "\n" << out.str();
    if (warned) {
      EXPECT_NE(out.str().find("covers 75.0%, not 95%"), std::string::npos);
    }
  }
}

TEST(SweepPlanTest, AnalyticEstimateScalesWithWorkAndDegree) {
  PlanAssumptions a;
  a.device = "NVIDIA A100-SXM4-80GB";
  TrialConfig one;
  one.model = "pixart-alpha";
  TrialConfig two = one;
  two.ulysses = 2;
  TrialConfig big = one;
  big.resolution = 2048;
  auto e1 = AnalyticEstimate(one, a), e2 = AnalyticEstimate(two, a), eb = AnalyticEstimate(big, a);
  EXPECT_NEAR(e2.iteration_ms, e1.iteration_ms / 2, 1e-9);
  EXPECT_GT(eb.iteration_ms, 4 * e1.iteration_ms);
  EXPECT_LT(e2.memory_mb, e1.memory_mb);  // activations split, weights replicated
  // Weights alone: 0.6 B parameters in bf16 is about 1.15 GB.
  EXPECT_GT(e1.memory_mb, 1100);
  // fp32 doubles the bytes.
  TrialConfig fp32 = one;
  fp32.precision = Precision::kFp32;
  EXPECT_NEAR(AnalyticEstimate(fp32, a).memory_mb, 2 * e1.memory_mb, 1e-6);
}

TEST(SweepPlanTest, EarlierResultOfTheSameKeyReplacesTheAnalyticTime) {
  test::TempDir dir;
  auto spec = Parse("name: m\ndefaults: {model: pixart-alpha-tiny, resolution: 256}\n"
                    "matrix: {ulysses: [1, 2]}\n");
  const auto db_path = dir / "results.db";
  {
    auto db = ResultsDb::Open(db_path);
    auto campaign = db->ResumeOrCreateCampaign(test::MakeCampaign("m"), false);
    TrialConfig measured = spec.defaults;  // ulysses 1
    db->RecordTrial(campaign, test::MakeTrial(measured, TrialStatus::kOk, 42.0));
  }
  SweepPlan plan = PlanSweep(spec, {2, false}, {}, db_path);
  ASSERT_EQ(plan.trials.size(), 2u);
  EXPECT_EQ(plan.trials[0].estimate->source, "measured");
  EXPECT_DOUBLE_EQ(plan.trials[0].estimate->iteration_ms, 42.0);
  EXPECT_EQ(plan.trials[1].estimate->source, "analytic");
  EXPECT_GT(plan.estimated_wall_s, 0);
}

TEST(SweepPlanTest, TrialsDifferingOnlyInMeasurementPolicyAreOneComputation) {
  auto spec = Parse("name: p\ndefaults: {model: pixart-alpha-tiny, resolution: 256}\n"
                    "matrix: {warmup: [1, 2], repeats: [3, 5], seed: [0, 1]}\n");
  SweepPlan plan = PlanSweep(spec, {2, false});
  ASSERT_EQ(plan.trials.size(), 2u);  // one per seed
  EXPECT_EQ(plan.duplicates, 6u);
  EXPECT_EQ(plan.trials[0].config.warmup, 1);  // the first written is the one run
  EXPECT_EQ(plan.trials[0].config.repeats.min, 3);
  EXPECT_NE(plan.trials[0].key, plan.trials[1].key);
}

TEST(SweepPlanTest, IdenticalTrialsAreMergedAndCounted) {
  auto spec = Parse("name: d\nmatrix: {ulysses: [1, 2]}\ninclude:\n  - {ulysses: 2}\n");
  SweepPlan plan = PlanSweep(spec, {8, true});
  EXPECT_EQ(plan.trials.size(), 2u);
  EXPECT_EQ(plan.duplicates, 1u);
}

}  // namespace
}  // namespace ditbench
