#include "plan/budget_order.h"
#include "base/user_error.h"
#include "plan/halving.h"

#include <gmock/gmock.h>
#include <stdexcept>

#include <gtest/gtest.h>

namespace ditbench::budget_order_test {
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

TEST(HalvingTest, TheFastestFractionOfEachGroupGoesOn) {
  const std::vector<HalvingEntry> entries = {{"a", "a1", 30}, {"a", "a2", 10}, {"a", "a3", 20},
                                             {"a", "a4", 40}, {"a", "a5", 50}, {"b", "b1", 5},
                                             {"c", "c1", 7}, {"c", "c2", 6}};
  // a: ceil(0.25 x 5) = 2 fastest; b alone has its winner; c: 1 of 2.
  EXPECT_THAT(HalvingSurvivors(entries, 0.25), ::testing::ElementsAre("a2", "a3", "c2"));
  EXPECT_TRUE(HalvingSurvivors({{"a", "a1", 1}}, 0.5).empty());
}

TEST(HalvingTest, LaunchesCountScreeningAndEveryRound) {
  // 8 trials at keep 0.25: 8 screened, 2 re-measured, then 1: 11 launches; a group of 1: 1.
  EXPECT_EQ(HalvingLaunches({8}, 0.25), 11);
  EXPECT_EQ(HalvingLaunches({1}, 0.25), 1);
  EXPECT_EQ(HalvingLaunches({8, 2}, 0.5), 8 + 4 + 2 + 1 + 2 + 1);
}

// `run --budget` and `plan --budget` read the one parser.
TEST(BudgetOrderTest, BudgetOptionIsADuration) {
  EXPECT_EQ(ParseBudgetOption("90s"), 90.0);
  EXPECT_EQ(ParseBudgetOption("30m"), 1800.0);
  EXPECT_EQ(ParseBudgetOption("8h"), 28800.0);
  try {
    ParseBudgetOption("soon");
    FAIL() << "accepted 'soon'";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "--budget 'soon': expected a duration such as 90s, 30m or 8h");
  }
}

}  // namespace
}  // namespace ditbench::budget_order_test
