// The report's Planner data (plan/planner_view.h) from a synthetic results database: trials
// whose latency follows a known law (the cost model's own terms) plus 1% noise, recorded in a
// campaign of a stored sweep, as `ditbench run` records them.
#include "plan/planner_view.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/configuration_group.h"
#include "plan/cost_model.h"
#include "plan/fitted_model.h"
#include "plan/halving.h"
#include "plan/sweep_plan.h"
#include "storage/results_db.h"
#include "tests/support/cost_law.h"
#include "tests/support/sample_results.h"
#include "tests/support/sweeps.h"
#include "tests/support/temp_dir.h"

namespace ditbench::planner_view_test {
namespace {

using test::CostLawMs;
using test::kCostLawSweep;

class PlannerViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = PlanSweep(test::ParseValidSweep(kCostLawSweep), {16, false}, PlanAssumptions{});
  }

  // Records the trials `keep` accepts (index within its group in the law's order) as ok;
  // `busy`: measured while other work ran on the machine.
  // `store_sweep` false: the campaign's stored sweep text is one that no longer parses.
  // `seeds`: each trial recorded with seeds 0, 1, ... (one measurement each).
  // `oom`: trials recorded as out of memory instead (no measurement).
  void Record(const std::function<bool(std::size_t)>& keep, bool busy = false,
              bool store_sweep = true, int seeds = 1,
              const std::function<bool(std::size_t)>& oom = nullptr) {
    std::map<std::string, std::vector<const PlannedTrial*>> groups;
    for (const PlannedTrial& t : plan_.trials) groups[HalvingGroup(t.config)].push_back(&t);
    auto db = ResultsDb::Open(dir_ / "results.db");
    CampaignRecord record = test::MakeCampaign("synthetic");
    record.spec_text = store_sweep ? kCostLawSweep : "name: synthetic\n";
    record.spec_hash = Sha256Hex(record.spec_text);
    record.environment = {{"slots", 16}, {"on_gpu", false}};
    const std::int64_t id = db->writer().ResumeOrCreateCampaign(record, false);
    std::uint32_t state = 12345;
    for (auto& [group, members] : groups) {
      std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
        return CostLawMs(a->config) < CostLawMs(b->config);
      });
      for (std::size_t i = 0; i < members.size(); ++i) {
        const double ms = CostLawMs(members[i]->config) * (1 + test::CostLawNoise(state));
        if (oom && oom(i)) {
          db->writer().RecordTrial(
              id, test::MakeTrial(members[i]->config, TrialStatus::kOom, 0, "CUDA out of memory"));
          continue;
        }
        if (!keep(i)) continue;
        for (int seed = 0; seed < seeds; ++seed) {
          TrialConfig config = members[i]->config;
          config.seed = seed;
          const double seed_ms = seed ? ms * (1 + test::CostLawNoise(state)) : ms;
          TrialRecord trial = test::MakeTrial(config, TrialStatus::kOk, seed_ms);
          if (busy) trial.health = {{"busy", true}, {"note", "load 3.00 on 2 cores"}};
          db->writer().RecordTrial(id, trial);
        }
      }
    }
    db->writer().FinishCampaign(id);
  }

  PlannerView View() {
    auto db = ResultsDb::Open(dir_ / "results.db", /*read_only=*/true);
    campaigns_ = db->reader().Campaigns();
    std::vector<std::int64_t> ids;
    for (const CampaignInfo& c : campaigns_) ids.push_back(c.id);
    rows_ = db->reader().Results(ids);
    return BuildPlannerView(db->planner_history(), campaigns_, rows_);
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

  test::TempDir dir_;
  SweepPlan plan_;
  std::vector<CampaignInfo> campaigns_;
  std::vector<ResultRow> rows_;
};

TEST_F(PlannerViewTest, TheScattersPointsAreTheFitsLeaveOneOutPredictions) {
  Record([](std::size_t) { return true; });
  const PlannerView view = View();
  ASSERT_EQ(view.devices.size(), 1u);
  const DeviceFit& fit = view.devices[0];
  EXPECT_EQ(fit.device, "cpu");
  ASSERT_FALSE(fit.refused) << *fit.refused;
  EXPECT_EQ(fit.trials, plan_.trials.size());

  auto db = ResultsDb::Open(dir_ / "results.db", /*read_only=*/true);
  const FittedModel fitted = FitFromDatabase(db->planner_history(), "cpu");
  const LooReport loo = LeaveOneOut(fitted.observations);
  ASSERT_EQ(fit.points.size(), loo.predicted);
  ASSERT_EQ(loo.predicted, plan_.trials.size());
  EXPECT_EQ(fit.predicted, loo.predicted);
  for (const LooEntry& e : loo.entries) {
    const auto p = std::find_if(fit.points.begin(), fit.points.end(),
                                [&](const PredictionPoint& p) { return p.trial_key == e.trial_key; });
    ASSERT_NE(p, fit.points.end()) << e.trial_key;
    EXPECT_DOUBLE_EQ(p->measured_ms, e.measured_ms);
    EXPECT_DOUBLE_EQ(p->predicted_ms, e.predicted->value);
    EXPECT_DOUBLE_EQ(p->low_ms, e.predicted->low);
    EXPECT_DOUBLE_EQ(p->high_ms, e.predicted->high);
    EXPECT_NE(p->label.find(e.trial_key), std::string::npos) << p->label;
  }
  EXPECT_DOUBLE_EQ(fit.median_abs_error, loo.median_abs_error);
  EXPECT_DOUBLE_EQ(fit.max_abs_error, loo.max_abs_error);
  EXPECT_LT(fit.median_abs_error, 0.05);
}

TEST_F(PlannerViewTest, EachGroupsRecommendationIsTheTrueBestLayout) {
  Record([](std::size_t) { return true; });
  const PlannerView view = View();
  const auto best = TrueBest();
  ASSERT_EQ(view.groups.size(), best.size());
  for (const auto& [group, key] : best) {
    ASSERT_TRUE(view.groups.count(group)) << group;
    const auto& recommendations = view.groups.at(group);
    ASSERT_EQ(recommendations.size(), 1u);
    EXPECT_EQ(recommendations[0].trial_key, key) << group;
    EXPECT_TRUE(recommendations[0].measured);
    EXPECT_EQ(recommendations[0].device, "cpu");
    EXPECT_EQ(recommendations[0].ranked, plan_.trials.size() / best.size());
  }
  // The report finds them under its own group of each row.
  for (const ResultRow& row : rows_) EXPECT_TRUE(view.groups.count(ReportGroupOf(row).Text()));
}

TEST_F(PlannerViewTest, WithHalfTheLayoutsUnmeasuredItNamesTheTrialsThatDecide) {
  // The fastest of every group is not measured: the campaign's stored sweep still holds it.
  Record([](std::size_t i) { return i % 2 == 1; });
  const PlannerView view = View();
  ASSERT_EQ(view.devices.size(), 1u);
  ASSERT_FALSE(view.devices[0].refused) << *view.devices[0].refused;
  for (const auto& [group, key] : TrueBest()) {
    ASSERT_TRUE(view.groups.count(group)) << group;
    const GroupRecommendation& r = view.groups.at(group).front();
    EXPECT_FALSE(r.decided) << group;
    EXPECT_EQ(r.ranked, plan_.trials.size() / 2);
    const bool named = r.trial_key == key ||
                       std::any_of(r.to_measure.begin(), r.to_measure.end(),
                                   [&](const std::string& t) {
                                     return t.find(key) != std::string::npos;
                                   });
    EXPECT_TRUE(named) << group << ": " << r.trial_key;
  }
}

TEST_F(PlannerViewTest, TooFewTrialsRefuseTheFitAndGiveNoAdvice) {
  Record([](std::size_t i) { return i < 2; });  // 2 per group: 4 trials
  const PlannerView view = View();
  ASSERT_EQ(view.devices.size(), 1u);
  ASSERT_TRUE(view.devices[0].refused);
  EXPECT_EQ(*view.devices[0].refused, "4 ok trials of it in the database, a fit needs 8");
  EXPECT_TRUE(view.devices[0].points.empty());
  EXPECT_TRUE(view.groups.empty());
}

TEST_F(PlannerViewTest, MeasuredTrialsAreRankedWhenTheStoredSweepNoLongerParses) {
  Record([](std::size_t) { return true; }, /*busy=*/false, /*store_sweep=*/false);
  const PlannerView view = View();
  for (const auto& [group, key] : TrueBest()) {
    ASSERT_TRUE(view.groups.count(group)) << group;
    EXPECT_EQ(view.groups.at(group).front().trial_key, key) << group;
    EXPECT_EQ(view.groups.at(group).front().ranked, plan_.trials.size() / 2);
  }
}

TEST_F(PlannerViewTest, TrialsThatDifferOnlyInSeedAreOnePointOfTheirMedians) {
  Record([](std::size_t) { return true; }, /*busy=*/false, /*store_sweep=*/true, /*seeds=*/3);
  const PlannerView view = View();
  ASSERT_EQ(view.devices.size(), 1u);
  const DeviceFit& fit = view.devices[0];
  ASSERT_FALSE(fit.refused) << *fit.refused;
  EXPECT_EQ(fit.trials, 3 * plan_.trials.size());
  EXPECT_EQ(fit.predicted, 3 * plan_.trials.size());
  ASSERT_EQ(fit.points.size(), plan_.trials.size());
  auto db = ResultsDb::Open(dir_ / "results.db", /*read_only=*/true);
  const FittedModel fitted = FitFromDatabase(db->planner_history(), "cpu");
  const LooReport loo = LeaveOneOut(fitted.observations);
  for (const PredictionPoint& p : fit.points) {
    EXPECT_EQ(p.seeds, 3u);
    EXPECT_NE(p.label.find("and 2 more seeds"), std::string::npos) << p.label;
    // The median of the three seeds' measurements and predictions.
    const CostObservation* first = fitted.Observed(p.trial_key);
    ASSERT_TRUE(first);
    std::vector<double> measured, predicted;
    for (std::size_t i = 0; i < loo.entries.size(); ++i) {
      TrialConfig a = fitted.observations[i].config, b = first->config;
      a.seed = b.seed = 0;
      if (TrialKey(a) != TrialKey(b)) continue;
      measured.push_back(loo.entries[i].measured_ms);
      predicted.push_back(loo.entries[i].predicted->value);
    }
    ASSERT_EQ(measured.size(), 3u);
    std::sort(measured.begin(), measured.end());
    std::sort(predicted.begin(), predicted.end());
    EXPECT_DOUBLE_EQ(p.measured_ms, measured[1]);
    EXPECT_DOUBLE_EQ(p.predicted_ms, predicted[1]);
  }
}

TEST_F(PlannerViewTest, ATrialThatRanOutOfMemoryIsNeitherRecommendedNorToMeasure) {
  // The fastest of every group ran out of memory; every other one is measured.
  Record([](std::size_t i) { return i % 2 == 1; }, false, true, 1,
         [](std::size_t i) { return i == 0; });
  const PlannerView view = View();
  for (const auto& [group, key] : TrueBest()) {
    ASSERT_TRUE(view.groups.count(group)) << group;
    const GroupRecommendation& r = view.groups.at(group).front();
    EXPECT_NE(r.trial_key, key) << group;
    for (const std::string& t : r.to_measure) EXPECT_EQ(t.find(key), std::string::npos) << t;
    EXPECT_EQ(r.ranked, plan_.trials.size() / 2 - 1);
  }
}

// Busy is the machine's normal state: with no quiet measurement of the device the model is
// fitted on the busy ones, and says so (issue 34), rather than refused for ever.
TEST_F(PlannerViewTest, WithNoQuietMeasurementTheFitUsesTheBusyOnesAndSaysSo) {
  Record([](std::size_t) { return true; }, /*busy=*/true);
  const PlannerView view = View();
  ASSERT_EQ(view.devices.size(), 1u);
  EXPECT_FALSE(view.devices[0].refused) << *view.devices[0].refused;
  EXPECT_EQ(view.devices[0].trials, plan_.trials.size());
  EXPECT_THAT(view.devices[0].fitted,
              ::testing::HasSubstr("measured on a busy machine (no quiet measurement"));
}

}  // namespace
}  // namespace ditbench::planner_view_test
