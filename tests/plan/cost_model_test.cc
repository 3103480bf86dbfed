// The cost model and the advisor against a synthetic campaign: trials whose latency follows a
// known law (the model's own terms with chosen coefficients) plus 1% noise.
#include "plan/cost_model.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include <gtest/gtest.h>

#include "plan/advisor.h"
#include "plan/fitted_model.h"
#include "plan/halving.h"
#include "plan/sweep_plan.h"
#include "tests/support/cost_law.h"
#include "tests/support/sweeps.h"

namespace ditbench {
namespace {

using test::CostLawMs;
using test::kCostLaw;
using test::kCostLawSweep;

class CostModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = PlanSweep(test::ParseValidSweep(kCostLawSweep), {16, false}, PlanAssumptions{});
    std::uint32_t state = 12345;
    for (const PlannedTrial& t : plan_.trials) {
      ASSERT_FALSE(t.invalid_reason) << t.key << ": " << *t.invalid_reason;
      CostObservation o;
      o.trial_key = t.key;
      o.config = t.config;
      o.latency_ms = CostLawMs(t.config) * (1 + test::CostLawNoise(state));
      o.startup_s = 1.5 + 0.25 * t.config.world_size() + test::CostLawNoise(state);
      all_.push_back(o);
    }
  }

  // The best trial of each group by the law (no noise).
  std::map<std::string, std::string> TrueBest() const {
    std::map<std::string, std::pair<double, std::string>> best;
    for (const PlannedTrial& t : plan_.trials) {
      auto& b = best[HalvingGroup(t.config)];
      const double ms = CostLawMs(t.config);
      if (b.second.empty() || ms < b.first) b = {ms, t.key};
    }
    std::map<std::string, std::string> keys;
    for (const auto& [group, b] : best) keys[group] = b.second;
    return keys;
  }

  SweepPlan plan_;
  std::vector<CostObservation> all_;
};

TEST_F(CostModelTest, RecoversTheLawsTermsWithinTheirIntervals) {
  const auto model = CostModel::Fit(all_);
  ASSERT_TRUE(model);
  EXPECT_FALSE(model->reduced());
  std::size_t active = 0;
  for (std::size_t j = 0; j < kCostLaw.size(); ++j) {
    const CostModel::Term term = model->Terms()[j];
    if (!term.active) continue;
    ++active;
    EXPECT_LE(term.coefficient.low, kCostLaw[j]) << term.name;
    EXPECT_GE(term.coefficient.high, kCostLaw[j]) << term.name;
  }
  EXPECT_GE(active, 6u);
  // Every trial's interval holds its noiseless latency; the leave-one-out error is small.
  for (const CostObservation& o : all_) {
    const auto p = model->Iteration(o.config);
    ASSERT_TRUE(p);
    EXPECT_LE(p->low, CostLawMs(o.config)) << o.trial_key;
    EXPECT_GE(p->high, CostLawMs(o.config)) << o.trial_key;
  }
  const LooReport loo = LeaveOneOut(all_);
  EXPECT_EQ(loo.predicted, all_.size());
  EXPECT_LT(loo.median_abs_error, 0.05);
  EXPECT_TRUE(model->Startup(all_.front().config));
}

TEST_F(CostModelTest, TooFewTrialsKeepTheAnalyticEstimate) {
  FittedModel fitted;
  fitted.device = "cpu";
  fitted.observations.assign(all_.begin(), all_.begin() + kMinimumTrialsToFit - 1);
  fitted.model = CostModel::Fit(fitted.observations);
  EXPECT_FALSE(fitted.model);
  EXPECT_NE(fitted.Explain().find("analytic estimate: 7 ok trial(s) of 'cpu'"), std::string::npos)
      << fitted.Explain();
  EXPECT_EQ(fitted.Explain().find("busy"), std::string::npos);
  // A campaign measured on a busy machine is why: the line says so and how to measure again.
  fitted.busy_left_out = 40;
  EXPECT_NE(fitted.Explain().find("40 more measured only on a busy machine, left out "
                                  "(`ditbench run SWEEP --rerun busy --require-idle 600`"),
            std::string::npos)
      << fitted.Explain();
}

TEST_F(CostModelTest, AdviseRecommendsTheTrueBestLayoutOfEveryGroup) {
  FittedModel fitted;
  fitted.device = "cpu";
  fitted.observations = all_;
  fitted.model = CostModel::Fit(all_);
  const Advice advice = Advise(plan_, fitted, {});
  const auto best = TrueBest();
  ASSERT_EQ(advice.groups.size(), 2u);
  for (const GroupAdvice& g : advice.groups) {
    ASSERT_FALSE(g.ranked.empty());
    EXPECT_EQ(g.ranked.front().trial->key, best.at(g.group)) << g.group;
    EXPECT_TRUE(g.ranked.front().measured);
    ASSERT_TRUE(g.regret);
    EXPECT_EQ(*g.regret, 0.0);
    EXPECT_TRUE(g.decided);
  }
}

// A sweep's quality gates: a measured layout that misses one is never recommended, however
// fast; it is listed as excluded with the gate it missed.
TEST_F(CostModelTest, AdviseNeverRecommendsALayoutBelowTheSweepsQualityGates) {
  const auto best = TrueBest();
  FittedModel fitted;
  fitted.device = "cpu";
  fitted.observations = all_;
  for (CostObservation& o : fitted.observations) {
    const bool is_best = o.trial_key == best.at(HalvingGroup(o.config));
    o.output_error = is_best && o.config.world_size() > 1 ? 0.01 : 1e-6;
  }
  fitted.model = CostModel::Fit(fitted.observations);
  for (PlannedTrial& t : plan_.trials) t.config.quality.max_output_error = 1e-3;
  const Advice advice = Advise(plan_, fitted, {});
  std::size_t excluded = 0;
  for (const GroupAdvice& g : advice.groups) {
    ASSERT_FALSE(g.ranked.empty());
    for (const AdvisedTrial& t : g.ranked) EXPECT_FALSE(IsBelowQuality(t.quality)) << g.group;
    for (const AdvisedTrial& t : g.excluded) {
      ++excluded;
      EXPECT_EQ(t.trial->key, best.at(g.group));
      EXPECT_EQ(t.quality, "below: output error 0.01 > 0.001");
    }
    if (!g.excluded.empty()) {
      EXPECT_NE(g.ranked.front().trial->key, best.at(g.group));
    }
  }
  EXPECT_EQ(excluded, advice.groups.size());  // every group's true best is parallel
  // Without the gate the same observations recommend it again.
  for (PlannedTrial& t : plan_.trials) t.config.quality = {};
  for (const GroupAdvice& g : Advise(plan_, fitted, {}).groups) {
    EXPECT_TRUE(g.excluded.empty());
    EXPECT_EQ(g.ranked.front().trial->key, best.at(g.group));
  }
}

TEST_F(CostModelTest, WithHalfTheTrialsMissingItNamesTheTrialsThatDecideBetweenTheLeaders) {
  // Every other trial of each group, in the law's order, is left unmeasured: the true best
  // among them.
  std::map<std::string, std::vector<const CostObservation*>> by_group;
  for (const CostObservation& o : all_) by_group[HalvingGroup(o.config)].push_back(&o);
  FittedModel fitted;
  fitted.device = "cpu";
  for (auto& [group, members] : by_group) {
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return CostLawMs(a->config) < CostLawMs(b->config);
    });
    for (std::size_t i = 1; i < members.size(); i += 2) fitted.observations.push_back(*members[i]);
  }
  fitted.model = CostModel::Fit(fitted.observations);
  ASSERT_TRUE(fitted.model) << fitted.Explain();
  const Advice advice = Advise(plan_, fitted, {});
  const auto best = TrueBest();
  for (const GroupAdvice& g : advice.groups) {
    EXPECT_FALSE(g.decided) << g.group;
    std::vector<std::string> named;
    for (std::size_t i : g.to_measure) named.push_back(g.ranked[i].trial->key);
    // The true best was not measured: it is one of the trials to measure next, and each named
    // trial is unmeasured.
    EXPECT_NE(std::find(named.begin(), named.end(), best.at(g.group)), named.end()) << g.group;
    for (std::size_t i : g.to_measure) EXPECT_FALSE(g.ranked[i].measured);
  }
}

}  // namespace
}  // namespace ditbench
