#include "metrics/trial_kind_metrics.h"

#include <stdexcept>

#include <gtest/gtest.h>

#include "experiments/trial_requests.h"
#include "tests/support/served_trials.h"

namespace ditbench::trial_kind_metrics_test {
namespace {

TrialConfig Tiny() {
  TrialConfig c = test::TinyServedTrial(4, 2);
  c.serve.reset();
  c.repeats.min = 1;
  return c;
}

TEST(TrialKindMetricsTest, EveryKindHasOneRowInEnumeratorOrder) {
  ASSERT_EQ(KindMetricsTable().size(), kTrialKinds);
  for (std::size_t i = 0; i < KindMetricsTable().size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(KindMetricsTable()[i].kind), i);
    EXPECT_EQ(&MetricsOfKind(KindMetricsTable()[i].kind), &KindMetricsTable()[i]);
  }
}

// The timed row: the ranks' timed iterations, the trial's own iteration, no figures of its own.
TEST(TrialKindMetricsTest, TheTimedRowChecksTimedIterations) {
  const KindMetrics& timed = MetricsOfKind(TrialKind::kTimed);
  RankResult rank;
  const auto problem = timed.records_problem(Tiny(), {}, {rank});
  ASSERT_TRUE(problem);  // no timed iteration
  rank.samples = {{0, 0, kIterationStage, 10, false}};
  EXPECT_FALSE(timed.records_problem(Tiny(), {}, {rank}));
  EXPECT_EQ(timed.recorded_iteration(Tiny(), {}), Tiny());
  EXPECT_FALSE(timed.rank_may_time_nothing);
  TrialMetrics m;
  timed.summarize(Tiny(), {}, {rank}, nullptr, m);
  EXPECT_TRUE(m.extra.empty());
}

// The served row: requests against the given list, the list's first shape as the recorded
// iteration, and no figures without a list.
TEST(TrialKindMetricsTest, TheServedRowReadsTheGivenRequests) {
  const KindMetrics& served = MetricsOfKind(TrialKind::kServed);
  const TrialConfig config = test::TinyServedTrial(4, 2);
  RequestList list = MaterializeRequests(config);
  list.shapes.front().width = list.shapes.front().height = 512;
  const TrialConfig iteration = served.recorded_iteration(config, list);
  EXPECT_EQ(iteration.resolution, 512);
  EXPECT_FALSE(iteration.serve);
  EXPECT_TRUE(served.rank_may_time_nothing);
  RankResult nothing;
  const auto problem = served.records_problem(config, list, {nothing});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->problem.find("request 0 of 2 was served by no replica"), std::string::npos)
      << problem->problem;
  TrialMetrics m;
  EXPECT_THROW(served.summarize(config, {}, {nothing}, nullptr, m), std::invalid_argument);
  EXPECT_THROW(served.recorded_iteration(config, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ditbench::trial_kind_metrics_test
