// A rate sweep (`serve: {rate: sweep, points: N}`): how the sweep reads it, the trials it
// becomes, and how the sweep loop runs each share of capacity at the rate its capacity trial
// measured, over the fake launcher (whose ranks serve every request in 100 ms).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "contract/worker_contract.h"
#include "experiments/arrivals.h"
#include "experiments/serve_load.h"
#include "experiments/sweep_expand.h"
#include "experiments/sweep_spec.h"
#include "experiments/trial.h"
#include "tests/support/sweep_run_fixture.h"

namespace ditbench::rate_sweep_test {
namespace {

using test::SweepRunTest;

std::optional<ServeLoad> Parse(const std::string& json, std::string* expected) {
  std::optional<ServeLoad> load;
  if (!ParseServeLoad(nlohmann::json::parse(json), &load, expected)) return std::nullopt;
  return load;
}

TEST(RateSweepTest, ASweepOfRatesNeedsItsPointsAndACountOfRequests) {
  std::string expected;
  const auto sweep = Parse(R"({"rate": "sweep", "points": 4, "requests": 20})", &expected);
  ASSERT_TRUE(sweep) << expected;
  EXPECT_EQ(sweep->rate_points, 4);
  EXPECT_EQ(sweep->rate_per_s, 0);
  EXPECT_EQ(ServeLoadJson(*sweep)["rate"], "sweep");

  EXPECT_FALSE(Parse(R"({"rate": "sweep", "requests": 20})", &expected));
  EXPECT_NE(expected.find("serve.points with rate: sweep"), std::string::npos) << expected;
  EXPECT_FALSE(Parse(R"({"rate": 2, "points": 3, "requests": 20})", &expected));
  EXPECT_NE(expected.find("serve.points only with rate: sweep"), std::string::npos) << expected;
  EXPECT_FALSE(Parse(R"({"rate": "sweep", "points": 17, "requests": 20})", &expected));
  EXPECT_NE(expected.find("'points' is 17; expected 2 to 16"), std::string::npos) << expected;
  EXPECT_FALSE(Parse(R"({"rate": "sweep", "points": 3, "duration_s": 10})", &expected));
  EXPECT_NE(expected.find("'requests' is 0 with a rate of capacity"), std::string::npos)
      << expected;
  EXPECT_FALSE(Parse(R"({"rate": "fast", "requests": 20})", &expected));
  EXPECT_EQ(expected, kRateExpected);
}

TEST(RateSweepTest, AShareOfCapacityIsKnownByItsShareAndReadsBackAsWritten) {
  std::string expected;
  const auto share = Parse(
      R"({"rate": {"of_capacity": 0.3, "capacity_concurrency": 4}, "requests": 10})", &expected);
  ASSERT_TRUE(share) << expected;
  EXPECT_EQ(share->of_capacity, 0.3);
  EXPECT_EQ(share->capacity_concurrency, 4);
  std::optional<ServeLoad> again;
  ASSERT_TRUE(ParseServeLoad(ServeLoadJson(*share), &again, &expected)) << expected;
  EXPECT_EQ(*again, *share);

  EXPECT_FALSE(Parse(R"({"rate": {"of_capacity": 1.5, "capacity_concurrency": 4},
                         "requests": 10})",
                     &expected));
  EXPECT_NE(expected.find("'rate.of_capacity' is 1.5; expected a share of capacity from 0.01 to 1"),
            std::string::npos)
      << expected;
  EXPECT_FALSE(Parse(R"({"rate": {"of_capacity": 0.3, "capacity_concurrency": 4, "x": 1},
                         "requests": 10})",
                     &expected));
  EXPECT_NE(expected.find("not 'x': 1"), std::string::npos) << expected;
  EXPECT_FALSE(Parse(R"({"rate": {"of_capacity": 0.3, "capacity_concurrency": 4},
                         "concurrency": 2, "requests": 10})",
                     &expected));
  EXPECT_NE(expected.find("'concurrency' is 2 with a rate of capacity"), std::string::npos)
      << expected;
}

TEST(RateSweepTest, SharesRunEvenlyFromATenthToNineTenths) {
  EXPECT_EQ(RateSweepShares(2), (std::vector<double>{0.1, 0.9}));
  const std::vector<double> five = RateSweepShares(5);
  ASSERT_EQ(five.size(), 5u);
  for (std::size_t i = 0; i < five.size(); ++i) EXPECT_NEAR(five[i], 0.1 + 0.2 * i, 1e-12);
}

TEST(RateSweepTest, AShareHasNoArrivalsUntilItsCapacityIsKnown) {
  TrialConfig config;
  config.resolution = 256;
  config.serve = ServeLoad{};
  config.serve->of_capacity = 0.5;
  config.serve->capacity_concurrency = 2;
  config.serve->requests = 400;
  EXPECT_THROW(GenerateArrivals(TrialServeLoad(config)), std::invalid_argument);
  const TrialConfig resolved = ResolveCapacityShare(config, 8.0);
  EXPECT_EQ(resolved.serve->rate_per_s, 4.0);
  const std::vector<Request> requests = GenerateArrivals(TrialServeLoad(resolved));
  ASSERT_EQ(requests.size(), 400u);
  EXPECT_NEAR(requests.back().arrival_s / 399, 0.25, 0.05);  // mean gap 1 / 4 s
  // The key is the share's, whatever rate it came to.
  EXPECT_EQ(TrialKey(resolved), TrialKey(config));
  const TrialConfig capacity = CapacityTrial(config);
  EXPECT_EQ(capacity.serve->concurrency, 2);
  EXPECT_EQ(capacity.serve->of_capacity, 0);
  EXPECT_FALSE(ServeLoadProblem(TrialServeLoad(capacity)));
}

// Each trial of a rate sweep becomes its capacity trial, a closed loop of 2 requests a replica
// unless the sweep names its concurrency, then its shares; the count the sweep is held to
// counts them.
TEST(RateSweepTest, ATrialOfARateSweepBecomesItsCapacityTrialThenItsShares) {
  const ParseResult parsed = ParseSweep(R"(name: r
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2,
           serve: {rate: sweep, points: 3, requests: 8}}
matrix:
  dp: [1, 2]
include:
  - {dp: 1, serve: {rate: sweep, points: 2, concurrency: 5, requests: 8}}
)",
                                        "r.yaml");
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front().message;
  EXPECT_EQ(UnfilteredTrialCount(parsed.spec), (2 + 1) * 4u);
  const std::vector<TrialConfig> trials = ExpandSweep(parsed.spec, 8).trials;
  ASSERT_EQ(trials.size(), 4u + 4u + 3u);
  const auto expect_group = [&](std::size_t first, int dp, int concurrency,
                                const std::vector<double>& shares) {
    const TrialConfig& capacity = trials[first];
    EXPECT_EQ(capacity.dp, dp);
    EXPECT_EQ(capacity.serve->concurrency, concurrency);
    EXPECT_EQ(capacity.serve->of_capacity, 0);
    for (std::size_t i = 0; i < shares.size(); ++i) {
      const TrialConfig& share = trials[first + 1 + i];
      EXPECT_EQ(share.serve->of_capacity, shares[i]) << first << " " << i;
      EXPECT_EQ(share.serve->rate_points, 0);
      EXPECT_EQ(TrialKey(CapacityTrial(share)), TrialKey(capacity)) << first << " " << i;
    }
  };
  expect_group(0, 1, 2, {0.1, 0.5, 0.9});
  expect_group(4, 2, 4, {0.1, 0.5, 0.9});
  expect_group(8, 1, 5, {0.1, 0.9});
}

constexpr const char* kRateSweep = R"(name: rates
defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, repeats: 3}
matrix:
  serve: [{rate: sweep, points: 3, requests: 12, warmup_requests: 1}]
)";

constexpr const char* kFigures =
    "SELECT json_extract(t.config_json, '$.serve.rate.of_capacity'), v.name, v.value "
    "FROM metric_values v JOIN trials t ON t.id = v.trial_id "
    "WHERE v.name IN ('capacity_per_s', 'offered_per_s', 'requests_per_s') "
    "ORDER BY t.id, v.name";

TEST_F(SweepRunTest, EachShareRunsAtItsShareOfTheThroughputItsCapacityTrialMeasured) {
  std::vector<TrialFile> files;
  launcher_.on_start = [&](const LaunchRequest& r) {
    files.push_back(ReadTrialFile(r.run_dir / "trial.json"));
  };
  ASSERT_EQ(Run(Options(kRateSweep)), 0) << err_.str();
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].config.serve->concurrency, 2);  // the capacity trial first
  EXPECT_EQ(Column("SELECT status FROM trials"), std::vector<std::string>(4, "ok"));
  const std::vector<std::string> capacity = Column(
      "SELECT v.value FROM metric_values v JOIN trials t ON t.id = v.trial_id "
      "WHERE v.name = 'requests_per_s' AND json_extract(t.config_json, '$.serve.concurrency') = 2");
  ASSERT_EQ(capacity.size(), 1u);
  const double measured = std::stod(capacity[0]);
  ASSERT_GT(measured, 0);
  for (std::size_t i = 1; i < files.size(); ++i) {
    const double share = files[i].config.serve->of_capacity;
    const std::string key = files[i].trial_key;
    EXPECT_NEAR(share, 0.1 + 0.4 * (i - 1), 1e-9);
    // Its requests arrive at the share's rate: the same arrivals as a load at that rate.
    TrialConfig at_rate = files[i].config;
    at_rate.serve->of_capacity = 0;
    at_rate.serve->capacity_concurrency = 0;
    at_rate.serve->rate_per_s = share * measured;
    EXPECT_EQ(files[i].requests.requests, MaterializeRequests(at_rate).requests) << i;
    const auto figure = [&](const std::string& name) {
      const std::vector<std::string> value = Column(
          "SELECT v.value FROM metric_values v JOIN trials t ON t.id = v.trial_id WHERE "
          "t.trial_key = '" +
          key + "' AND v.name = '" + name + "'");
      return value.size() == 1 ? std::stod(value[0]) : -1.0;
    };
    // (read back as SQLite's text of a REAL: 15 significant digits)
    EXPECT_NEAR(figure("capacity_per_s"), measured, 1e-12 * measured) << i;
    EXPECT_NEAR(figure("offered_per_s"), share * measured, 1e-12 * measured) << i;
  }
}

// A share's rate is only as sure as the capacity it came from: a capacity trial measured while
// the machine was busy says so in each share's note; an idle one says nothing.
TEST_F(SweepRunTest, AShareOfABusyCapacityTrialSaysItsRateIsInDoubt) {
  const char* kNotes =
      "SELECT m.extra_note FROM trial_metrics m JOIN trials t ON t.id = m.trial_id WHERE "
      "json_extract(t.config_json, '$.serve.rate') IS NOT NULL ORDER BY t.id";
  test::FakeHealthProbe probe;
  health_ = &probe;
  ASSERT_EQ(Run(Options(kRateSweep)), 0) << err_.str();
  for (const std::string& note : Column(kNotes))
    EXPECT_EQ(note.find("measured while the machine was busy"), std::string::npos) << note;
  probe.disturbed = true;
  RunOptions again = Options(kRateSweep);
  again.fresh = true;
  ASSERT_EQ(Run(again), 0) << err_.str();
  const std::vector<std::string> key = Column(
      "SELECT trial_key FROM trials WHERE json_extract(config_json, '$.serve.concurrency') = 2 "
      "ORDER BY id DESC LIMIT 1");
  ASSERT_EQ(key.size(), 1u);
  const std::vector<std::string> notes = Column(
      "SELECT m.extra_note FROM trial_metrics m JOIN trials t ON t.id = m.trial_id WHERE "
      "json_extract(t.config_json, '$.serve.rate') IS NOT NULL AND t.campaign_id = "
      "(SELECT max(id) FROM campaigns) ORDER BY t.id");
  ASSERT_EQ(notes.size(), 3u);
  for (const std::string& note : notes)
    EXPECT_NE(note.find("serve: its rate comes from capacity trial " + key[0] +
                        ", measured while the machine was busy"),
              std::string::npos)
        << note;
}

TEST_F(SweepRunTest, ASharesCapacityTrialThatFailedFailsItNamingThatTrial) {
  launcher_.on_start = [&](const LaunchRequest& r) {
    launcher_.fail_all = ReadTrialFile(r.run_dir / "trial.json").config.serve->concurrency > 0;
  };
  EXPECT_NE(Run(Options(kRateSweep)), 0);
  EXPECT_EQ(launcher_.started.size(), 1u);  // the shares never start
  const std::vector<std::string> key = Column(
      "SELECT trial_key FROM trials WHERE json_extract(config_json, '$.serve.concurrency') = 2");
  ASSERT_EQ(key.size(), 1u);
  const std::vector<std::string> errors = Column(
      "SELECT error FROM trials WHERE json_extract(config_json, '$.serve.rate') IS NOT "
      "NULL ORDER BY id");
  ASSERT_EQ(errors.size(), 3u);
  for (const std::string& error : errors)
    EXPECT_NE(error.find("its rate is a share of capacity trial " + key[0] + ", which is "),
              std::string::npos)
        << error;
  // Run again with the capacity trial healthy: it and its shares run.
  launcher_.on_start = [&](const LaunchRequest&) { launcher_.fail_all = false; };
  RunOptions again = Options(kRateSweep);
  again.rerun = Rerun::kFailed;
  EXPECT_EQ(Run(again), 0) << err_.str();
  EXPECT_EQ(Column("SELECT status FROM trials"), std::vector<std::string>(4, "ok"));
}

}  // namespace
}  // namespace ditbench::rate_sweep_test
