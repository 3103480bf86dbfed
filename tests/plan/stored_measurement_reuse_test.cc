// `plan` takes an earlier measurement of a trial's key as its time (plan/sweep_plan.h): only a
// measurement that timed something. A row stored ok with no timed iteration or a latency of 0
// (older databases hold such rows, and a database is untrusted) is no measurement.
#include <gtest/gtest.h>

#include "plan/sweep_plan.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/sweeps.h"
#include "tests/support/temp_dir.h"

namespace ditbench::stored_measurement_reuse_test {
namespace {

// `config` stored ok with `latency_ms` over `iterations` timed iterations (only the warm-up
// sample when none).
TrialRecord StoredOk(const TrialConfig& config, double latency_ms, int iterations) {
  TrialRecord trial = test::MakeTrial(config, TrialStatus::kOk, latency_ms);
  trial.metrics->iterations = iterations;
  if (iterations == 0) std::erase_if(trial.samples, [](const Sample& s) { return !s.warmup; });
  return trial;
}

TEST(StoredMeasurementReuseTest, ARowWithNoTimedIterationOrNoLatencyIsNoMeasurement) {
  test::TempDir dir;
  const SweepSpec spec = test::ParseValidSweep(
      "name: m\ndefaults: {model: pixart-alpha-tiny, resolution: 256}\n"
      "matrix: {ulysses: [1, 2, 4]}\n");
  TrialConfig one = spec.defaults, two = spec.defaults, four = spec.defaults;
  two.ulysses = 2;
  four.ulysses = 4;
  const auto db_path = dir / "results.db";
  {
    auto db = ResultsDb::Open(db_path);
    const auto first = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("m", "a"), true);
    db->writer().RecordTrial(first, StoredOk(four, 42.0, 2));
    const auto second = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("m", "b"), true);
    db->writer().RecordTrial(second, StoredOk(one, 0.0, 0));    // all warm-up: 0 ms, n = 0
    db->writer().RecordTrial(second, StoredOk(two, 0.0, 2));    // a latency of 0
    db->writer().RecordTrial(second, StoredOk(four, 12.0, 0));  // no timed iteration
  }
  const SweepPlan plan = PlanSweep(spec, {4, false}, {}, db_path);
  ASSERT_EQ(plan.trials.size(), 3u);
  for (int i : {0, 1}) {
    ASSERT_TRUE(plan.trials[i].estimate);
    EXPECT_NE(plan.trials[i].estimate->source, "measured") << i;
    EXPECT_GT(plan.trials[i].estimate->iteration_ms, 0) << i;
  }
  // The newer row timed nothing: the older one that did is the trial's measurement.
  ASSERT_TRUE(plan.trials[2].estimate);
  EXPECT_EQ(plan.trials[2].estimate->source, "measured");
  EXPECT_DOUBLE_EQ(plan.trials[2].estimate->iteration_ms, 42.0);
}

}  // namespace
}  // namespace ditbench::stored_measurement_reuse_test
