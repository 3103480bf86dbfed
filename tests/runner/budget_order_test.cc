#include "runner/budget_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ditbench {
namespace {

PlannedTrial Trial(int ulysses, double seconds) {
  PlannedTrial t;
  t.config.ulysses = ulysses;
  t.estimate = TrialEstimate{};
  t.estimate->trial_s = seconds;
  return t;
}

TEST(BudgetOrderTest, BaselinesFirstThenTheCheapestWithTiesInSweepOrder) {
  const std::vector<PlannedTrial> trials = {Trial(4, 10), Trial(2, 30), Trial(1, 50),
                                            Trial(2, 10), Trial(1, 5)};
  std::vector<const PlannedTrial*> pointers;
  for (const PlannedTrial& t : trials) pointers.push_back(&t);
  EXPECT_THAT(BudgetOrder(pointers), ::testing::ElementsAre(4, 2, 0, 3, 1));
}

TEST(BudgetOrderTest, TrialsWithoutAnEstimateCountAsFree) {
  PlannedTrial unknown = Trial(2, 0);
  unknown.estimate.reset();
  const PlannedTrial costly = Trial(2, 100);
  EXPECT_THAT(BudgetOrder({&costly, &unknown}), ::testing::ElementsAre(1, 0));
}

TEST(BudgetOrderTest, FitCountsLaunchesRoundByRoundUntilTheBudgetIsSpent) {
  SweepPlan plan;
  plan.trials = {Trial(2, 30), Trial(1, 10)};
  plan.trials.push_back(Trial(4, 5));
  plan.trials.back().invalid_reason = "too many ranks";  // never runs
  const BudgetFit fit = FitBudget(plan, 2, 55);
  EXPECT_EQ(fit.launches, 4u);  // 2 valid trials x 2 replicates
  EXPECT_EQ(fit.fit, 3u);       // 10 + 30 + 10 <= 55, the next 30 is not
  EXPECT_DOUBLE_EQ(fit.fit_seconds, 50);
  EXPECT_DOUBLE_EQ(fit.seconds, 80);
}

}  // namespace
}  // namespace ditbench
