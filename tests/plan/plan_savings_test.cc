#include "plan/plan_savings.h"

#include <limits>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plan/plan_output.h"
#include "tests/support/sweeps.h"

namespace ditbench::plan_savings_test {
namespace {

SweepSpec Parse(const std::string& yaml) { return test::ParseValidSweep(yaml); }

// Three trials of one group (same model, resolution, precision...), by ulysses degree.
constexpr const char* kThree = R"(name: s
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1,
           repeats: {min: 3, max: 20}}
matrix:
  ulysses: [1, 2, 4]
)";

const PlannedTrial& ByUlysses(const SweepPlan& plan, int ulysses) {
  for (const auto& t : plan.trials)
    if (t.config.ulysses == ulysses) return t;
  throw std::runtime_error("no such trial");
}

// An estimate from a forward of 1e300 ms printed a 300-digit number of hours (issue 49): the
// plan's durations stop at a million hours, and a saving reads as its magnitude.
TEST(PlanDurationTest, AnAbsurdDurationReadsAsMoreThanAMillionHours) {
  EXPECT_EQ(DurationText(42), "42 s");
  EXPECT_EQ(DurationText(-300), "5.0 min");
  EXPECT_EQ(DurationText(36000), "10.0 h");
  EXPECT_EQ(DurationText(3.6e9 - 3600), "999999.0 h");
  EXPECT_EQ(DurationText(3.6e9), "> 10^6 h");
  EXPECT_EQ(DurationText(1e300), "> 10^6 h");
  EXPECT_EQ(DurationText(std::numeric_limits<double>::infinity()), "> 10^6 h");
  EXPECT_EQ(DurationText(std::numeric_limits<double>::quiet_NaN()), "unknown");
}

TEST(PlanSavingsTest, NoSearchAndNoBudgetSaveNothing) {
  const SweepSpec spec = Parse(kThree);
  const SweepPlan plan = PlanSweep(spec, {8, false});
  const PlanSavings savings = EstimateSavings(spec, plan, -1);
  EXPECT_FALSE(savings.on_oom || savings.halving || savings.budget);
  std::ostringstream table;
  WriteSavings(savings, table);
  EXPECT_EQ(table.str(), "");
}

TEST(PlanSavingsTest, OnOomCountsTrialsAtLeastAsLargeAsAnotherWithTheirSeconds) {
  const SweepSpec spec = Parse(std::string(kThree) + "on_oom: skip_larger\n");
  const SweepPlan plan = PlanSweep(spec, {8, false});
  const PlanSavings savings = EstimateSavings(spec, plan, -1);
  ASSERT_TRUE(savings.on_oom);
  // A lower degree keeps more per rank than a higher one: ulysses 1 and 2 are skipped if
  // ulysses 2 or 4 runs out of memory first; ulysses 4 never is.
  EXPECT_EQ(savings.on_oom->trials, 2u);
  const double expected =
      ByUlysses(plan, 1).estimate->trial_s + ByUlysses(plan, 2).estimate->trial_s;
  EXPECT_NEAR(savings.on_oom->seconds, expected, 1e-9);
}

TEST(PlanSavingsTest, HalvingScreensAllThenRemeasuresTheEstimatedFastest) {
  const SweepSpec spec = Parse(std::string(kThree) + "search: {strategy: halving, keep: 0.5}\n");
  const SweepPlan plan = PlanSweep(spec, {8, false});
  const PlanSavings savings = EstimateSavings(spec, plan, -1);
  ASSERT_TRUE(savings.halving);
  const auto& h = *savings.halving;
  EXPECT_EQ(h.trials, 3);
  EXPECT_EQ(h.groups, 1);
  EXPECT_EQ(h.remeasured, 3);  // 3 -> 2 -> 1
  // By hand: screening is start-up, warm-up and repeats.min iterations; the rounds keep the
  // two, then the one, trials estimated fastest.
  double full = 0, screening = 0;
  std::vector<const PlannedTrial*> by_speed;
  for (const auto& t : plan.trials) {
    const TrialEstimate& e = *t.estimate;
    full += e.trial_s;
    const double timed = TimedIterations(t.config, e.iteration_ms);
    screening += e.trial_s - (timed - 3) * e.iteration_ms / 1000;
    by_speed.push_back(&t);
  }
  std::sort(by_speed.begin(), by_speed.end(), [](const auto* a, const auto* b) {
    return a->estimate->iteration_ms < b->estimate->iteration_ms;
  });
  const double remeasured = 2 * by_speed[0]->estimate->trial_s + by_speed[1]->estimate->trial_s;
  EXPECT_NEAR(h.full_s, full, 1e-9);
  EXPECT_NEAR(h.screening_s, screening, 1e-9);
  EXPECT_LT(h.screening_s, h.full_s);
  EXPECT_NEAR(h.remeasured_s, remeasured, 1e-9);
  EXPECT_NEAR(h.saved_s, full - screening - remeasured, 1e-9);
}

TEST(PlanSavingsTest, BudgetCutsTheLaunchesThatDoNotFit) {
  const SweepSpec spec = Parse(std::string(kThree) + "replicates: 2\n");
  const SweepPlan plan = PlanSweep(spec, {8, false});
  const PlanSavings none = EstimateSavings(spec, plan, 0);
  ASSERT_TRUE(none.budget);
  EXPECT_EQ(none.budget->launches, 6u);
  EXPECT_EQ(none.budget->fit, 0u);
  EXPECT_EQ(none.budget->cut, 6u);
  EXPECT_NEAR(none.budget->cut_seconds, plan.estimated_wall_s, 1e-6);
  const PlanSavings all = EstimateSavings(spec, plan, 1e9);
  EXPECT_EQ(all.budget->cut, 0u);
  EXPECT_DOUBLE_EQ(all.budget->cut_seconds, 0);
  // Just the cheapest launch: the 1-rank trial goes first whatever it costs.
  const double first = ByUlysses(plan, 1).estimate->trial_s;
  const PlanSavings one = EstimateSavings(spec, plan, first);
  EXPECT_EQ(one.budget->fit, 1u);
  EXPECT_NEAR(one.budget->fit_seconds, first, 1e-9);
}

TEST(PlanSavingsTest, TableAndJsonOfPlanShowEverySaving) {
  const SweepSpec spec = Parse(std::string(kThree) +
                               "on_oom: skip_larger\nsearch: {strategy: halving, keep: 0.5}\n");
  PlanAssumptions a;
  const SweepPlan plan = PlanSweep(spec, {8, false}, a);
  std::ostringstream table, json;
  WritePlanTable(spec, plan, a, table, {}, 0);
  WritePlanJson(spec, plan, a, json, 0);
  EXPECT_NE(table.str().find("savings: on_oom: skip_larger: up to 2 trial(s)"), std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("savings: search: halving: 3 trial(s) screened with repeats.min"),
            std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("then at most 3 re-measurement launch(es)"), std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("savings: --budget 0 s: 0 of 3 launch(es) fit"), std::string::npos)
      << table.str();
  const nlohmann::json savings = nlohmann::json::parse(json.str())["savings"];
  EXPECT_EQ(savings["on_oom"]["trials"], 2);
  EXPECT_EQ(savings["halving"]["remeasured_launches"], 3);
  EXPECT_GT(savings["halving"]["full_s"].get<double>(), 0);
  EXPECT_EQ(savings["budget"]["cut"], 3);
  EXPECT_NEAR(savings["budget"]["cut_seconds"].get<double>(), plan.estimated_wall_s, 1e-6);
  EXPECT_EQ(savings["unestimated_trials"], 0);
  // Without a budget the JSON has no budget figures.
  std::ostringstream plain;
  WritePlanJson(spec, plan, a, plain);
  EXPECT_FALSE(nlohmann::json::parse(plain.str())["savings"].contains("budget"));
}

TEST(PlanSavingsTest, CommandsNeverMeasuredAreCountedAsWithoutAnEstimate) {
  const SweepSpec spec = Parse(
      "name: c\nworkload: command\ncommand: [true, \"{size}\"]\n"
      "defaults: {model: pixart-alpha-tiny, steps: 2}\nmatrix: {size: [1, 2]}\n"
      "search: {strategy: halving, keep: 0.5}\n");
  const SweepPlan plan = PlanSweep(spec, {8, false});
  const PlanSavings savings = EstimateSavings(spec, plan, -1);
  EXPECT_EQ(savings.unestimated, 2u);
  std::ostringstream table;
  WriteSavings(savings, table);
  EXPECT_NE(table.str().find("2 trial(s) without an estimate count as 0 s"), std::string::npos)
      << table.str();
}

}  // namespace
}  // namespace ditbench::plan_savings_test
