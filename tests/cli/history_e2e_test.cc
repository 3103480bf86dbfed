// `history` and `campaigns` end to end, without LibTorch (issue 23, "Done when"): thirty nightly
// campaigns of one sweep run by the real coordinator with tests/fixtures/fake_worker.sh, night
// N reporting build "rev-NNN" and its driver (FAKE_WORKER_ENVIRONMENT) and timing its
// iterations as FAKE_WORKER_SAMPLES says: 15% slower from night 18 on, night 9 wildly
// disturbed, a new driver from night 24 with no change in speed. Then RunHistory and
// RunCampaigns read the database as a user would. bench/nightly-history makes the same
// database through the `ditbench` executable.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "base/table_printers.h"

#include "base/exit_codes.h"
#include "cli/campaigns.h"
#include "cli/compare.h"
#include "cli/history.h"
#include "launch/local_launcher.h"
#include "runner/sweep_run.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::history_e2e_test {
namespace {

using ::testing::HasSubstr;

class HistoryEndToEndTest : public ::testing::Test {
 protected:
  // Night `night` (1-based) of the sweep in `db`; `slowdown` from night 18 on.
  void RunNight(const std::filesystem::path& db, int night, double slowdown) {
    std::ofstream(dir_ / "nightly.yaml")
        << "name: nightly\n"
           "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, "
           "repeats: 5, timeout: 30s}\n";
    RunOptions o;
    o.sweep = dir_ / "nightly.yaml";
    o.db = db;
    o.gpus = "cpu:1";
    o.worker = DITBENCH_FAKE_WORKER;
    o.fresh = true;
    std::ostringstream samples;
    if (night == 9) {
      samples << "31,12,55,28,90";  // wildly disturbed: 3x slower, a wide interval
    } else {
      double ms = 10 * (1 + 0.02 * std::sin(night * 2.4));  // +-2% night to night
      if (night >= 18) ms *= slowdown;
      samples << ms << ',' << ms * 1.01 << ',' << ms * 0.99 << ',' << ms * 1.02 << ','
              << ms * 0.98;
    }
    char build[16];
    std::snprintf(build, sizeof(build), "rev-%03d", night);
    const std::string environment =
        nlohmann::json{{"build", build},
                       {"driver", night >= 24 ? "560.35.03" : "550.54.15"},
                       {"cuda_runtime", "12.4"}}
            .dump();
    LocalLauncher launcher({"PATH=/usr/bin:/bin", "FAKE_WORKER_SAMPLES=" + samples.str(),
                            "FAKE_WORKER_ENVIRONMENT=" + environment});
    std::stringstream out, err;
    ASSERT_EQ(RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out, err), 0)
        << out.str() << err.str();
  }

  void RunNights(const std::filesystem::path& db, double slowdown) {
    for (int night = 1; night <= 30; ++night) RunNight(db, night, slowdown);
  }

  // `ditbench history --db DB --format json [--fail-on-change PCT]`; its exit code in *code.
  nlohmann::json History(const std::filesystem::path& db, int* code,
                         std::optional<double> fail_pct = std::nullopt, std::size_t last = 0) {
    HistoryCommandOptions options;
    options.db = db;
    options.format = TableFormat::kJson;
    options.fail_on_change_pct = fail_pct;
    options.last = last;
    std::ostringstream out;
    err_.str("");
    *code = RunHistory(options, out, err_);
    return nlohmann::json::parse(out.str());
  }

  test::TempDir dir_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::ostringstream err_;
};

TEST_F(HistoryEndToEndTest, ThirtyNightsGiveOneChangePointAtTheSlowdownAndNoneWithout) {
  const std::filesystem::path slow = dir_ / "slow.db", steady = dir_ / "steady.db";
  RunNights(slow, 1.15);
  RunNights(steady, 1.0);

  int code = -1;
  const nlohmann::json history = History(slow, &code, 10.0);
  EXPECT_EQ(code, kExitTrialsFailed);  // --fail-on-change 10: a +15% change point
  EXPECT_THAT(err_.str(), HasSubstr("campaign 17 (build rev-017) -> campaign 18 (build rev-018)"));
  EXPECT_EQ(history["format"], "ditbench-history");
  EXPECT_EQ(history["version"], 1);
  ASSERT_EQ(history["keys"].size(), 1u);
  const nlohmann::json& key = history["keys"][0];
  ASSERT_EQ(key["points"].size(), 30u);
  ASSERT_EQ(key["changes"].size(), 1u) << key["changes"].dump();
  const nlohmann::json& change = key["changes"][0];
  EXPECT_EQ(change["last_good"], 17);
  EXPECT_EQ(change["first_bad"], 18);
  EXPECT_EQ(change["good_build"], "rev-017");
  EXPECT_EQ(change["bad_build"], "rev-018");
  EXPECT_NEAR(change["change_pct"].get<double>(), 15, 2);
  EXPECT_GT(change["ci_low_pct"].get<double>(), 0);
  EXPECT_TRUE(change["environment"].empty());  // the build changed, nothing else
  // Night 9 is left out as disturbed; night 24's new driver is recorded and changes nothing.
  EXPECT_EQ(key["points"][8]["use"], "disturbed");
  EXPECT_EQ(history["campaigns"][22]["environment"]["driver"], "550.54.15");
  EXPECT_EQ(history["campaigns"][23]["environment"]["driver"], "560.35.03");
  // The change lies 13 campaigns back: outside a --last 7 window.
  History(slow, &code, 10.0, 7);
  EXPECT_EQ(code, kExitOk);
  History(slow, &code, 20.0);  // smaller than asked: exit 0
  EXPECT_EQ(code, kExitOk);

  const nlohmann::json without = History(steady, &code, 10.0);
  EXPECT_EQ(code, kExitOk);
  ASSERT_EQ(without["keys"].size(), 1u);
  EXPECT_TRUE(without["keys"][0]["changes"].empty()) << without["keys"][0]["changes"].dump();
  EXPECT_EQ(without["keys"][0]["points"][8]["use"], "disturbed");
}

TEST_F(HistoryEndToEndTest, MarkdownIsAPipeTableOfFirstLatestAndLevelChange) {
  const std::filesystem::path db = dir_ / "three.db";
  for (int night = 1; night <= 3; ++night) RunNight(db, night, 1.0);
  HistoryCommandOptions options;
  options.db = db;
  options.format = TableFormat::kMarkdown;
  std::ostringstream out;
  ASSERT_EQ(RunHistory(options, out, err_), kExitOk) << err_.str();
  std::istringstream lines(out.str());
  std::string header, rule, row, more;
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, row);
  EXPECT_EQ(header,
            "| sweep | trial key | configuration | campaigns | first ms | latest ms | "
            "first to latest | level change | noise | change points | notes |");
  EXPECT_EQ(rule, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
  EXPECT_THAT(row, ::testing::StartsWith("| nightly | "));
  EXPECT_THAT(row, HasSubstr(" | 3 | "));  // campaigns
  EXPECT_EQ(std::count(row.begin(), row.end(), '|'), 12) << row;
  EXPECT_FALSE(std::getline(lines, more)) << more;  // one key
}

// `campaigns > /dev/full` exited 0 having written nothing.
TEST_F(HistoryEndToEndTest, ACampaignListThatCannotBeWrittenIsAnError) {
  const std::filesystem::path db = dir_ / "one.db";
  RunNight(db, 1, 1.0);
  std::ofstream full("/dev/full");
  std::ostringstream err;
  EXPECT_EQ(RunCampaigns(CampaignsOptions{db, {}, {}, {}, ""}, full, err), kExitTrialsFailed);
  EXPECT_EQ(err.str(),
            "ditbench campaigns: error: cannot write standard output: No space left on device\n");
}

TEST_F(HistoryEndToEndTest, AnExcludedCampaignLeavesHistoryAndTheLearnedNoiseFloor) {
  const std::filesystem::path db = dir_ / "few.db";
  for (int night = 1; night <= 7; ++night) RunNight(db, night, 1.0);
  const auto compare_floor = [&] {
    CompareOptions options;
    options.db = db;
    options.a = "1";
    options.b = "2";
    options.format = TableFormat::kJson;
    std::ostringstream out, err;
    EXPECT_EQ(RunCompare(options, out, err), kExitOk) << err.str();
    return nlohmann::json::parse(out.str())["noise_floor"]["cpu"]["source"].get<std::string>();
  };
  const std::string before = compare_floor();
  EXPECT_THAT(before, HasSubstr("learned from 10 A/A pairs"));  // campaigns 3-7, one key
  CampaignsOptions exclude;
  exclude.db = db;
  exclude.exclude = 4;
  std::ostringstream out, err;
  ASSERT_EQ(RunCampaigns(exclude, out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("campaign 4 excluded"));

  int code = -1;
  const nlohmann::json history = History(db, &code);
  EXPECT_EQ(history["excluded_campaigns"], 1);
  ASSERT_EQ(history["keys"][0]["points"].size(), 6u);
  for (const auto& point : history["keys"][0]["points"]) EXPECT_NE(point["campaign"], 4);
  EXPECT_NE(compare_floor(), before);  // fewer A/A pairs: campaign 4 takes no part

  CampaignsOptions label;
  label.db = db;
  label.label_campaign = 5;
  label.label = "after the driver update";
  ASSERT_EQ(RunCampaigns(label, out, err), kExitOk) << err.str();
  std::ostringstream listing;
  ASSERT_EQ(RunCampaigns(CampaignsOptions{db, {}, {}, {}, ""}, listing, err), kExitOk);
  EXPECT_THAT(listing.str(), HasSubstr("after the driver update"));
  EXPECT_THAT(listing.str(), HasSubstr("rev-005"));
  EXPECT_THAT(listing.str(), HasSubstr("yes"));  // campaign 4's excluded flag

  CampaignsOptions unknown;
  unknown.db = db;
  unknown.include = 99;
  std::ostringstream none;
  EXPECT_EQ(RunCampaigns(unknown, out, none), kExitUsage);
  EXPECT_THAT(none.str(), HasSubstr("no campaign 99"));
}

}  // namespace
}  // namespace ditbench::history_e2e_test
