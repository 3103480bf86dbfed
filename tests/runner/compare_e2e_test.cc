// `compare` end to end, without LibTorch: the real coordinator runs tests/fixtures/fake_worker.sh
// (FAKE_WORKER_SAMPLES sets each campaign's latencies) three times for A, three times for B;
// then RunCompare reads the database as a user would.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runner/command.h"
#include "runner/compare.h"
#include "runner/local_launcher.h"
#include "runner/sweep_run.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

using ::testing::HasSubstr;

class CompareEndToEndTest : public ::testing::Test {
 protected:
  // One new campaign of a two-trial sweep whose every iteration takes about `ms`; the small
  // per-launch `offset` plays the launch-to-launch drift.
  void RunCampaign(double ms, double offset) {
    std::ofstream(dir_ / "sweep.yaml")
        << "name: ab\n"
           "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, "
           "repeats: 5, timeout: 30s}\n"
           "matrix: {ulysses: [1, 2]}\n";
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "results.db";
    o.gpus = "cpu:2";
    o.worker = DITBENCH_FAKE_WORKER;
    o.fresh = true;
    const double m = ms * (1 + offset);
    std::ostringstream samples;
    samples << m << ',' << m * 1.01 << ',' << m * 0.99 << ',' << m * 1.02 << ',' << m * 0.98;
    LocalLauncher launcher({"PATH=/usr/bin:/bin", "FAKE_WORKER_SAMPLES=" + samples.str()});
    std::stringstream out, err;
    ASSERT_EQ(RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out, err), 0)
        << out.str() << err.str();
  }

  nlohmann::json Compare(const std::string& a, const std::string& b, int expected_exit = 0,
                         std::optional<double> fail_pct = std::nullopt) {
    CompareOptions options;
    options.db = dir_ / "results.db";
    options.a = a;
    options.b = b;
    options.format = "json";
    options.fail_on_regression_pct = fail_pct;
    std::ostringstream out, err;
    EXPECT_EQ(RunCompare(options, out, err), expected_exit) << err.str();
    return nlohmann::json::parse(out.str());
  }

  test::TempDir dir_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
};

TEST_F(CompareEndToEndTest, AaCampaignsAreNeverSlowerAndARealSlowdownIs) {
  // A: campaigns 1-3 and A': campaigns 4-6 at 10 ms with 3% drift; B: campaigns 7-9 at 13 ms.
  for (double offset : {0.03, -0.02, 0.0}) RunCampaign(10, offset);
  for (double offset : {-0.03, 0.01, 0.02}) RunCampaign(10, offset);
  for (double offset : {0.02, -0.01, 0.0}) RunCampaign(13, offset);

  nlohmann::json aa = Compare("1,2,3", "4,5,6");
  ASSERT_EQ(aa["trials"].size(), 2u);
  for (const auto& trial : aa["trials"]) {
    EXPECT_EQ(trial["method"], "launches");
    EXPECT_TRUE(trial["verdict"] == "same" || trial["verdict"] == "inconclusive") << trial;
  }
  // One launch a side: judged against the CPU noise floor, never a false alarm here.
  // (Held in a variable: a range-for over a temporary's member would read freed memory.)
  const nlohmann::json single = Compare("1", "4");
  for (const auto& trial : single["trials"])
    EXPECT_TRUE(trial["verdict"] == "same" || trial["verdict"] == "inconclusive") << trial;

  nlohmann::json ab = Compare("1,2,3", "7,8,9", kExitTrialsFailed, 10.0);
  ASSERT_EQ(ab["trials"].size(), 2u);
  for (const auto& trial : ab["trials"]) {
    EXPECT_EQ(trial["verdict"], "slower") << trial;
    EXPECT_NEAR(trial["change_pct"].get<double>(), 30, 4);
  }
  Compare("1,2,3", "7,8,9", kExitOk, 50.0);  // below the threshold: exit 0
}

}  // namespace
}  // namespace ditbench
