// `compare` end to end, without LibTorch: the real coordinator runs tests/fixtures/fake_worker.sh
// (FAKE_WORKER_SAMPLES sets each campaign's latencies) three times for A, three times for B;
// then RunCompare reads the database as a user would.
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "base/table_printers.h"

#include "cli/command.h"
#include "cli/compare.h"
#include "launch/local_launcher.h"
#include "runner/sweep_run.h"
#include "storage/results_db.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::compare_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
    options.format = TableFormat::kJson;
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

// The scenario of docs/measurement.md ("The noise floor"): four campaigns of one sweep of
// eight 1-rank trials with three replicates each, at about 12 ms; in campaign 2 one trial is
// disturbed (every iteration 1920 ms) while the machine did not look busy. Campaign 5 is a
// real slowdown to 32 ms. The floor learned from the A/A pairs of campaigns 1-3 must not be
// poisoned by the disturbed trial: 4 against 5 reads `slower`, and --fail-on-regression 10
// exits 1.
class PoisonedFloorTest : public ::testing::Test {
 protected:
  // One new campaign; a launch whose run folder contains `slow_run` takes 1920 ms.
  void RunCampaign(double ms, const std::string& slow_run = "") {
    std::ofstream(dir_ / "sweep.yaml")
        << "name: quick\n"
           "replicates: 3\n"
           "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, "
           "repeats: 5, timeout: 30s}\n"
           "matrix: {resolution: [256, 512], steps: [1, 2], batch: [1, 2]}\n";
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "cd.db";
    o.gpus = "cpu:2";
    o.worker = DITBENCH_FAKE_WORKER;
    o.fresh = true;
    std::ostringstream samples;
    samples << ms << ',' << ms * 1.01 << ',' << ms * 0.99 << ',' << ms * 1.02 << ',' << ms * 0.98;
    LocalLauncher launcher({"PATH=/usr/bin:/bin", "FAKE_WORKER_SAMPLES=" + samples.str(),
                            "FAKE_WORKER_SLOW_RUN=" + slow_run,
                            "FAKE_WORKER_SLOW_SAMPLES=1920,1920,1920,1920,1920"});
    std::stringstream out, err;
    ASSERT_EQ(RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out, err), 0)
        << out.str() << err.str();
  }

  // `ditbench compare A B --db cd.db [--fail-on-regression PCT]` in `format`.
  int Compare(const std::string& a, const std::string& b, const std::string& format,
              std::optional<double> fail_pct = std::nullopt) {
    CompareOptions options;
    options.db = dir_ / "cd.db";
    options.a = a;
    options.b = b;
    options.format = *ParseTableFormat(format);
    options.fail_on_regression_pct = fail_pct;
    out_.str("");
    err_.str("");
    return RunCompare(options, out_, err_);
  }

  test::TempDir dir_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::ostringstream out_, err_;
};

TEST_F(PoisonedFloorTest, OneDisturbedTrialDoesNotTurnARealSlowdownIntoSame) {
  RunCampaign(12.0);
  // The disturbed trial: the first trial key of campaign 1's run folders.
  std::set<std::string> keys;
  for (const auto& entry : std::filesystem::directory_iterator(dir_ / "cd.runs" / "1"))
    if (entry.path().filename().string().find('.') == std::string::npos)
      keys.insert(entry.path().filename().string());
  ASSERT_EQ(keys.size(), 8u);
  RunCampaign(12.0 * 1.02, "/2/" + *keys.begin());
  RunCampaign(12.0 * 0.99);
  RunCampaign(12.0 * 1.01);
  RunCampaign(32.0);

  ASSERT_EQ(Compare("4", "5", "json"), 0) << err_.str();
  const nlohmann::json json = nlohmann::json::parse(out_.str());
  ASSERT_EQ(json["trials"].size(), 8u);
  // The floor: 22 clean A/A pairs of campaigns 1-3, the disturbed measurement left out.
  const double floor = json["noise_floor"]["cpu"]["pct"].get<double>();
  EXPECT_LT(floor, 10) << json["noise_floor"];
  EXPECT_THAT(json["noise_floor"]["cpu"]["source"].get<std::string>(),
              HasSubstr("learned from 22 A/A pairs (1 measurement left out: busy or outlier)"));
  std::unique_ptr<ResultsDb> db = ResultsDb::Open(dir_ / "cd.db", /*read_only=*/true);
  std::map<std::string, double> a_latency, b_latency;  // what `query` calls latency_ms
  for (const ResultRow& row : db->reader().Results({4})) a_latency[row.trial_key] = *row.latency_ms;
  for (const ResultRow& row : db->reader().Results({5})) b_latency[row.trial_key] = *row.latency_ms;
  for (const auto& trial : json["trials"]) {
    EXPECT_EQ(trial["verdict"], "slower") << trial;
    EXPECT_EQ(trial["a_launches"], 3);
    EXPECT_NEAR(trial["change_pct"].get<double>(), (32.0 / 12.12 - 1) * 100, 1);
    // The change is B ms / A ms - 1, and each is the trial's latency_ms as `query` has it.
    const std::string key = trial["trial_key"];
    EXPECT_DOUBLE_EQ(trial["a_ms"].get<double>(), a_latency.at(key));
    EXPECT_DOUBLE_EQ(trial["b_ms"].get<double>(), b_latency.at(key));
    EXPECT_NEAR(trial["change_pct"].get<double>(),
                (trial["b_ms"].get<double>() / trial["a_ms"].get<double>() - 1) * 100, 1e-9);
    EXPECT_DOUBLE_EQ(trial["ci_coverage"].get<double>(), 0.9);  // 3 and 3 launches
  }

  // The table's headline says which floor judged them.
  ASSERT_EQ(Compare("4", "5", "table"), 0);
  EXPECT_THAT(out_.str(), HasSubstr("Matched trials: 8 (8 slower); noise floor "));
  EXPECT_THAT(out_.str(), HasSubstr("% (learned from 22 A/A pairs"));

  // --fail-on-regression 10 fails, and each message labels the interval with its coverage.
  EXPECT_EQ(Compare("4", "5", "table", 10.0), kExitTrialsFailed);
  EXPECT_THAT(err_.str(), HasSubstr("ditbench compare: regression: "));
  EXPECT_THAT(err_.str(), HasSubstr("] 90%), above 10%"));
  EXPECT_THAT(err_.str(), Not(HasSubstr("95% CI")));
}

}  // namespace
}  // namespace ditbench::compare_e2e_test
