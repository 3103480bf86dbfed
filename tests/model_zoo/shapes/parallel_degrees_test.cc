#include "model_zoo/shapes/parallel_degrees.h"

#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "experiments/constraint.h"
#include "experiments/trial.h"
#include "experiments/trial_settings.h"
#include "storage/results_view.h"
#include "storage/schema.h"

namespace ditbench::parallel_degrees_test {
namespace {

ParallelDegrees UlyssesFourCfgTwo() {
  ParallelDegrees d;
  d.ulysses = 4;
  d.cfg = 2;
  return d;
}

TEST(ParallelDegreesTest, NamesAndShortLabelsAreUniqueAndEveryMemberIsInTheTable) {
  std::set<std::string_view> names, short_labels;
  ParallelDegrees marked;
  for (const DegreeInfo& d : kDegreeTable) {
    names.insert(d.name);
    short_labels.insert(d.short_label);
    marked.*d.member = 2;
    EXPECT_GE(d.max, 2) << d.name;
  }
  EXPECT_EQ(names.size(), kDegreeTable.size());
  EXPECT_EQ(short_labels.size(), kDegreeTable.size());
  // Every member reached through the table: the world size is the product of all of them.
  EXPECT_EQ(marked.world_size(), 1 << kDegreeTable.size());
}

TEST(ParallelDegreesTest, EachOutputKeepsItsLabelStyle) {
  const ParallelDegrees d = UlyssesFourCfgTwo();
  EXPECT_EQ(ShortDegreesLabel(d), "u4 r1 pf1 cfg2 dp1");
  EXPECT_EQ(DegreesAboveOne(d), "ulysses=4 cfg=2");
  EXPECT_EQ(StrategyName(d), "ulysses+cfg");
  EXPECT_EQ(LayoutProduct(d), "dp 1 x cfg 2 x pipefusion 1 x ring 1 x ulysses 4");
  EXPECT_EQ(DegreesAboveOne(ParallelDegrees{}), "");
  EXPECT_EQ(StrategyName(ParallelDegrees{}), "");
}

TEST(ParallelDegreesTest, AllAtMostComparesEveryDegree) {
  const ParallelDegrees big = UlyssesFourCfgTwo();
  EXPECT_TRUE(AllAtMost(ParallelDegrees{}, big));
  EXPECT_TRUE(AllAtMost(big, big));
  EXPECT_FALSE(AllAtMost(big, ParallelDegrees{}));
  for (const DegreeInfo& d : kDegreeTable) {
    ParallelDegrees one_more = big;
    ++(one_more.*d.member);
    EXPECT_FALSE(AllAtMost(one_more, big)) << d.name;
  }
}

// Each row of the table is a sweep setting from 1 to its maximum, a canonical key, a `where`
// variable and a column of the results view, all under its name.
TEST(ParallelDegreesTest, EveryDegreeIsASettingACanonicalKeyAVariableAndAColumn) {
  const std::vector<std::string>& columns = ResultsContractColumns();
  for (const DegreeInfo& d : kDegreeTable) {
    const std::string name(d.name);
    TrialConfig config;
    std::string expected;
    EXPECT_TRUE(ApplySetting(config, name, 2, &expected)) << name;
    EXPECT_EQ(config.*d.member, 2) << name;
    EXPECT_EQ(CanonicalJson(config).at(name), 2) << name;
    EXPECT_EQ(TrialConfigFromJson(CanonicalJson(config)).degrees(), config.degrees()) << name;
    EXPECT_FALSE(ApplySetting(config, name, 0, &expected)) << name;
    EXPECT_FALSE(ApplySetting(config, name, d.max + 1, &expected)) << name;
    EXPECT_EQ(expected, "an integer from 1 to " + std::to_string(d.max)) << name;

    ConstraintSet where({Constraint{name + " == 2"}});
    EXPECT_EQ(where.FirstFailing(config, 64), -1) << name;  // refused values leave it at 2
    EXPECT_EQ(where.FirstFailing(TrialConfig{}, 64), 0) << name;

    // The five older degrees lead the view (its contract); tp was added at its end.
    if (d.shown_at_one)
      EXPECT_NE(std::find(columns.begin(), columns.end(), name), columns.end()) << name;
    else
      EXPECT_NE(ResultsView(kSchemaVersion).find(" AS " + name + ","), std::string::npos) << name;
  }
}

TEST(ParallelDegreesTest, TensorParallelismIsLabelledAndKeyedOnlyAboveOne) {
  ParallelDegrees d = UlyssesFourCfgTwo();
  d.ulysses = 2;
  d.tp = 2;
  EXPECT_EQ(ShortDegreesLabel(d), "tp2 u2 r1 pf1 cfg2 dp1");
  EXPECT_EQ(DegreesAboveOne(d), "tp=2 ulysses=2 cfg=2");
  EXPECT_EQ(StrategyName(d), "tp+ulysses+cfg");
  EXPECT_EQ(LayoutProduct(d), "dp 1 x cfg 2 x pipefusion 1 x ring 1 x ulysses 2 x tp 2");
  // At 1 it is in no label and not in the key: every earlier trial keeps its key.
  TrialConfig config;
  config.ulysses = 2;
  EXPECT_FALSE(CanonicalJson(config).contains("tp"));
  EXPECT_EQ(ShortDegreesLabel(config.degrees()), "u2 r1 pf1 cfg1 dp1");
  config.tp = 2;
  EXPECT_EQ(CanonicalJson(config).at("tp"), 2);
}

}  // namespace
}  // namespace ditbench::parallel_degrees_test
