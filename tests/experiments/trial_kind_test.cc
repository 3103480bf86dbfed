#include "experiments/trial_kind.h"

#include <string>

#include <gtest/gtest.h>

#include "experiments/trial_requests.h"
#include "experiments/validity.h"
#include "tests/support/served_trials.h"

namespace ditbench::trial_kind_test {
namespace {

TrialConfig Tiny() {
  TrialConfig c = test::TinyServedTrial(4, 3);
  c.serve.reset();
  return c;
}

TrialConfig Served() { return test::TinyServedTrial(4, 3); }

TEST(TrialKindTest, EveryKindHasOneRowInEnumeratorOrder) {
  ASSERT_EQ(TrialKinds().size(), kTrialKinds);
  for (std::size_t i = 0; i < TrialKinds().size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(TrialKinds()[i].kind), i);
    EXPECT_EQ(&KindRow(TrialKinds()[i].kind), &TrialKinds()[i]);
  }
  EXPECT_EQ(TrialKindName(TrialKind::kTimed), "timed");
  EXPECT_EQ(TrialKindName(TrialKind::kServed), "served");
}

TEST(TrialKindTest, AServeLoadMakesATrialServed) {
  EXPECT_EQ(KindOf(Tiny()), TrialKind::kTimed);
  EXPECT_EQ(KindOf(Served()), TrialKind::kServed);
  EXPECT_FALSE(KindRow(TrialKind::kTimed).has_requests);
  EXPECT_TRUE(KindRow(TrialKind::kServed).has_requests);
}

// The timed row: no rule of its own, a program may run it.
TEST(TrialKindTest, TheTimedRowAddsNoRule) {
  const TrialKindRow& timed = KindRow(TrialKind::kTimed);
  EXPECT_TRUE(timed.program_refusal.empty());
  EXPECT_EQ(timed.broken_rule(Tiny()), std::nullopt);
  TrialVerdict v;
  timed.judge(Tiny(), {1, false}, nullptr, v);
  EXPECT_FALSE(v.invalid || v.unsupported);
}

// The served row: its load's fields, each shape its requests ask for (the given list's when a
// trial file gave one, not the load's), and a program cannot run it.
TEST(TrialKindTest, TheServedRowJudgesTheLoadAndTheGivenShapes) {
  const TrialKindRow& served = KindRow(TrialKind::kServed);
  EXPECT_FALSE(served.program_refusal.empty());
  EXPECT_EQ(served.broken_rule(Served()), std::nullopt);
  TrialConfig no_rate = Served();
  no_rate.serve->rate_per_s = 0;
  ASSERT_TRUE(served.broken_rule(no_rate));
  EXPECT_EQ(served.broken_rule(no_rate)->rfind("serve: ", 0), 0u) << *served.broken_rule(no_rate);

  EXPECT_EQ(InvalidReason(Served(), {1, false}), std::nullopt);
  RequestList list = MaterializeRequests(Served());
  EXPECT_EQ(InvalidReason(Served(), {1, false}, &list), std::nullopt);
  list.shapes.front().width = list.shapes.front().height = 100;  // no whole latent of patches
  const auto reason = InvalidReason(Served(), {1, false}, &list);
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("serve: request shape 0 (100x100, 4 steps)"), std::string::npos)
      << *reason;

  TrialConfig program = Served();
  program.workload = Workload::kCommand;
  program.command = {"run"};
  const auto refused = InvalidReason(program, {1, false});
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("ditbench's own worker serves requests"), std::string::npos) << *refused;
}

}  // namespace
}  // namespace ditbench::trial_kind_test
