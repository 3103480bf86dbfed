// `run --only KEY`: the pure selection (plan/trial_selection.h) and the sweep loop limited
// by it.
#include "plan/trial_selection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/worker_contract.h"
#include "experiments/trial.h"
#include "storage/statement.h"
#include "tests/support/sweep_run_fixture.h"

namespace ditbench::trial_selection_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using test::SweepRunTest;

constexpr const char* kSweep = R"(name: s
defaults: {model: pixart-alpha-tiny, steps: 2, warmup: 1, repeats: 3}
matrix:
  resolution: [256]
  ulysses: [1, 2]
  seed: [0, 1]
)";

SweepPlan PlanOf(const std::vector<std::string>& keys) {
  SweepPlan plan;
  for (const std::string& key : keys) {
    PlannedTrial t;
    t.key = key;
    plan.trials.push_back(t);
  }
  return plan;
}

TEST(TrialSelectionTest, NoKeysSelectsEveryTrial) {
  const auto result = SelectTrials("s", PlanOf({"0123456789abcdef"}), {});
  EXPECT_FALSE(result.error);
  EXPECT_FALSE(result.selection.Partial());
  EXPECT_TRUE(result.selection.Selects("anything"));
}

TEST(TrialSelectionTest, KnownKeysSelectOnlyThemselves) {
  const auto result = SelectTrials(
      "s", PlanOf({"0123456789abcdef", "fedcba9876543210", "00000000aaaaaaaa"}),
      {"fedcba9876543210", "0123456789abcdef"});
  ASSERT_FALSE(result.error) << *result.error;
  EXPECT_TRUE(result.selection.Selects("0123456789abcdef"));
  EXPECT_TRUE(result.selection.Selects("fedcba9876543210"));
  EXPECT_FALSE(result.selection.Selects("00000000aaaaaaaa"));
}

TEST(TrialSelectionTest, MistypedKeyIsOneLineNamingTheClosestKey) {
  const auto result = SelectTrials("s", PlanOf({"0123456789abcdef", "fedcba9876543210"}),
                                    {"0123456789abcdee"});
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->find('\n'), std::string::npos) << *result.error;
  EXPECT_THAT(*result.error,
              HasSubstr("--only '0123456789abcdee': not a trial key of sweep 's'"));
  EXPECT_THAT(*result.error, HasSubstr("expected one of its 2 trial keys"));
  EXPECT_THAT(*result.error, HasSubstr("did you mean 0123456789abcdef?"));
  EXPECT_FALSE(result.selection.Partial());
}

TEST(TrialSelectionTest, ShortenedKeyListsEveryKeyItStarts) {
  const auto result = SelectTrials(
      "s", PlanOf({"0123456789abcdef", "0123aaaaaaaaaaaa", "fedcba9876543210"}), {"0123"});
  ASSERT_TRUE(result.error);
  EXPECT_THAT(*result.error, HasSubstr("did you mean 0123456789abcdef or 0123aaaaaaaaaaaa?"));
  EXPECT_THAT(*result.error, Not(HasSubstr("fedcba")));
}

TEST(TrialSelectionTest, KeyNearNothingSaysSo) {
  const auto result = SelectTrials("s", PlanOf({"0123456789abcdef"}), {"zzzzzzzzzzzzzzzz"});
  ASSERT_TRUE(result.error);
  EXPECT_THAT(*result.error, HasSubstr("no key is near it"));
}

TEST(TrialSelectionTest, ACampaignIsSettledOnlyWhenEveryTrialHasAFinalStatus) {
  const SweepPlan plan = PlanOf({"a", "b"});
  EXPECT_FALSE(EveryTrialSettled(plan, {{"a", TrialStatus::kOk}}));
  EXPECT_FALSE(
      EveryTrialSettled(plan, {{"a", TrialStatus::kOk}, {"b", TrialStatus::kInterrupted}}));
  EXPECT_FALSE(EveryTrialSettled(plan, {{"a", TrialStatus::kRunning}, {"b", TrialStatus::kOk}}));
  EXPECT_TRUE(
      EveryTrialSettled(plan, {{"a", TrialStatus::kFailed}, {"b", TrialStatus::kSkipped}}));
}

TEST_F(SweepRunTest, OnlyRunsTheNamedTrialsIntoTheSweepsCampaign) {
  auto o = Options(kSweep);
  // Run everything once in another database to learn the keys, then only two of them here.
  RunOptions all = Options(kSweep);
  all.db = dir_ / "all.db";
  all.run_root = dir_ / "all.runs";
  ASSERT_EQ(Run(all), 0) << err_.str();
  SqliteConnection db = OpenSqlite((dir_ / "all.db").string(), SQLITE_OPEN_READONLY);
  std::vector<std::string> every;
  {
    Statement query(db.get(), "SELECT trial_key FROM results ORDER BY ulysses, seed");
    while (query.Step()) every.push_back(query.Text(0));
  }
  ASSERT_EQ(every.size(), 4u);
  launcher_.started.clear();

  o.only = {every[1], every[2]};
  ASSERT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 2u);
  EXPECT_THAT(out_.str(), HasSubstr("4 trials (--only: 2 of them)"));
  EXPECT_EQ(Column("SELECT trial_key FROM results ORDER BY ulysses, seed"),
            (std::vector<std::string>{every[1], every[2]}));
  // Two of four trials recorded: the campaign is not finished.
  EXPECT_EQ(Column("SELECT finished_at IS NULL FROM campaigns"),
            (std::vector<std::string>{"1"}));

  // The same campaign resumed: the named trial is already recorded, so nothing starts.
  launcher_.started.clear();
  o.only = {every[1]};
  ASSERT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 0u);

  // The rest of the sweep runs into the same campaign, which is then finished.
  o.only.clear();
  ASSERT_EQ(Run(o), 0) << err_.str();
  EXPECT_EQ(launcher_.started.size(), 2u);
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT campaign) FROM results")[0], "1");
  EXPECT_EQ(Column("SELECT finished_at IS NULL FROM campaigns"),
            (std::vector<std::string>{"0"}));
}

constexpr const char* kHalving = R"(name: halving
search: {strategy: halving, keep: 0.25}
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1,
           repeats: {min: 3, max: 6}}
matrix:
  seed: [5, 1, 7, 0, 3, 2, 6, 4]
)";

std::string HalvingKey(int seed) {
  TrialConfig config;
  config.model = "pixart-alpha-tiny";
  config.resolution = 256;
  config.steps = 2;
  config.seed = seed;
  return TrialKey(config);
}

TEST_F(SweepRunTest, OnlyLimitsAHalvingSearchToTheNamedTrials) {
  launcher_.ms_per_seed = 1;  // seed 0 is the fastest, but it is not selected
  auto o = Options(kHalving);
  o.only = {HalvingKey(5), HalvingKey(1), HalvingKey(7), HalvingKey(3)};
  ASSERT_EQ(Run(o), 0) << err_.str();
  // Round 0 screens the 4 selected trials; round 1 re-measures the fastest quarter (seed 1).
  ASSERT_EQ(launcher_.started.size(), 5u) << out_.str();
  std::vector<int> seeds;
  for (const LaunchRequest& request : launcher_.started)
    seeds.push_back(ReadTrialFile(request.run_dir / "trial.json").config.seed);
  EXPECT_EQ(seeds, (std::vector<int>{5, 1, 7, 3, 1}));
}

TEST_F(SweepRunTest, OnlyWithAnUnknownKeyIsAUsageErrorBeforeAnythingRuns) {
  auto o = Options(kSweep);
  o.only = {"0123456789abcdef"};
  EXPECT_EQ(Run(o), 2);
  EXPECT_THAT(err_.str(), HasSubstr("ditbench run: error: --only '0123456789abcdef': not a trial "
                                    "key of sweep 's'"));
  const std::string err = err_.str();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_TRUE(launcher_.started.empty());
  EXPECT_FALSE(std::filesystem::exists(o.db));
}

}  // namespace
}  // namespace ditbench::trial_selection_test
