// `bisect` through the real coordinator: eight fake builds, wrapper scripts around
// tests/fixtures/fake_worker.sh whose FAKE_WORKER_FACTOR sets their speed; the slowdown comes
// with build 5. Nightly campaigns made with builds 1 and 8 by a plain `run` are the ends.
#include "runner/bisect_run.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/exit_codes.h"
#include "launch/local_launcher.h"
#include "storage/results_db.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::bisect_run_test {
namespace {

using ::testing::HasSubstr;

class BisectRunTest : public ::testing::Test {
 protected:
  BisectRunTest()
      : launcher_({"PATH=/usr/bin:/bin", "FAKE_WORKER_SAMPLES=10,10.2,9.9,10.1,9.8",
                   "FAKE_WORKER_LAUNCH_FACTORS=1,1.04,0.97"}) {
    std::ofstream(dir_ / "sweep.yaml")
        << "name: nightly\n"
           "replicates: 3\n"
           "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, "
           "repeats: 5, timeout: 30s}\n"
           "matrix: {ulysses: [1]}\n";
  }

  // A build: a script that runs the fake worker `factor` times slower, in `mode`.
  std::string Build(int number, double factor, const std::string& mode = "ok") {
    const auto path = dir_ / ("build-" + std::to_string(number));
    std::ofstream(path) << "#!/bin/sh\nexport FAKE_WORKER_FACTOR=" << factor
                        << " FAKE_WORKER_MODE=" << mode << "\nexec " << DITBENCH_FAKE_WORKER
                        << " \"$@\"\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path.string();
  }

  // Builds 1..8, slow (2x) from build 5 on; `broken` (if any) fails to produce a result.
  std::vector<std::string> EightBuilds(int broken = 0) {
    std::vector<std::string> builds;
    for (int b = 1; b <= 8; ++b)
      builds.push_back(Build(b, b >= 5 ? 2.0 : 1.0, b == broken ? "missing" : "ok"));
    return builds;
  }

  // A plain nightly `run --new` with `worker`; returns the new campaign's id.
  std::int64_t Nightly(const std::string& worker) {
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "results.db";
    o.gpus = "cpu:1";
    o.worker = worker;
    o.fresh = true;
    std::stringstream out, err;
    EXPECT_EQ(RunSweep(o, Effects(), out, err), 0) << out.str() << err.str();
    return ResultsDb::Open(o.db, true)->reader().Campaigns().back().id;
  }

  std::string Key() {
    auto statuses = ResultsDb::Open(dir_ / "results.db", true)->reader().TrialStatuses(1);
    return statuses.empty() ? "" : statuses.begin()->first;
  }

  SweepEffects Effects() { return SweepEffects{launcher_, interrupt_, gpus_}; }

  int Bisect(const BisectOptions& options, BisectOutcome* outcome = nullptr) {
    out_.str("");
    err_.str("");
    std::ostringstream progress;
    BuildWorker worker = [](const std::string& build, std::string&) {
      return std::optional<std::filesystem::path>(build);
    };
    return RunBisect(options, BisectEffects{Effects(), worker}, out_, progress, err_, outcome);
  }

  BisectOptions Options(const std::vector<std::string>& builds, const std::string& good,
                        const std::string& bad) {
    BisectOptions o;
    o.db = dir_ / "results.db";
    o.key = Key();
    o.builds = builds;
    o.good = good;
    o.bad = bad;
    return o;
  }

  test::TempDir dir_;
  LocalLauncher launcher_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::ostringstream out_, err_;
};

TEST_F(BisectRunTest, NamesTheFirstSlowBuildInAtMostFourMeasuredBuilds) {
  const std::vector<std::string> builds = EightBuilds();
  const std::int64_t good = Nightly(builds.front()), bad = Nightly(builds.back());
  BisectOutcome outcome;
  ASSERT_EQ(Bisect(Options(builds, std::to_string(good), std::to_string(bad)), &outcome), kExitOk)
      << out_.str() << err_.str();
  EXPECT_EQ(outcome.suspects, std::vector<int>{4}) << out_.str();
  EXPECT_LE(outcome.measured.size(), 4u) << out_.str();
  EXPECT_THAT(out_.str(), HasSubstr("first bad build: build 5/8 " + builds[4]));
  // Each measurement is a campaign recording the build it measured, never resumed by a run.
  const auto campaigns = ResultsDb::Open(dir_ / "results.db", true)->reader().Campaigns();
  ASSERT_EQ(campaigns.size(), 2 + outcome.measured.size());
  for (const MeasuredBuild& m : outcome.measured) {
    ASSERT_TRUE(m.campaign);
    const CampaignInfo& c = campaigns.at(*m.campaign - 1);
    EXPECT_EQ(c.record.build, builds[m.position]);
    EXPECT_EQ(c.record.environment["bisect"]["position"], m.position);
    EXPECT_TRUE(c.finished_at.has_value());
    EXPECT_EQ(m.judgement, m.position >= 4 ? BuildJudgement::kBad : BuildJudgement::kGood)
        << m.build << ": " << m.detail;
  }
}

TEST_F(BisectRunTest, BuildEndsAreMeasuredToo) {
  const std::vector<std::string> builds = EightBuilds();
  Nightly(builds.front());  // the trial's sweep and configuration come from here
  BisectOutcome outcome;
  ASSERT_EQ(Bisect(Options(builds, builds.front(), builds.back()), &outcome), kExitOk)
      << out_.str() << err_.str();
  EXPECT_EQ(outcome.suspects, std::vector<int>{4}) << out_.str();
  EXPECT_EQ(outcome.measured.size(), 5u);  // both ends, then 3 of the 6 builds between
}

TEST_F(BisectRunTest, ABuildThatFailsIsRecordedSkippedAndTheAnswerIsARange) {
  const std::vector<std::string> builds = EightBuilds(/*broken=*/4);
  const std::int64_t good = Nightly(builds.front()), bad = Nightly(builds.back());
  BisectOutcome outcome;
  ASSERT_EQ(Bisect(Options(builds, std::to_string(good), std::to_string(bad)), &outcome), kExitOk)
      << out_.str() << err_.str();
  // Build 4 (position 3) ran and failed: recorded, skipped; builds 3 and 5 were judged.
  const auto failed = std::find_if(outcome.measured.begin(), outcome.measured.end(),
                                   [](const MeasuredBuild& m) { return m.position == 3; });
  ASSERT_NE(failed, outcome.measured.end());
  EXPECT_EQ(failed->judgement, BuildJudgement::kFailed);
  ASSERT_TRUE(failed->campaign);
  auto db = ResultsDb::Open(dir_ / "results.db", true);
  EXPECT_NE(db->reader().TrialStatuses(*failed->campaign).at(Key()), TrialStatus::kOk);
  EXPECT_THAT(out_.str(), HasSubstr("cannot judge it, skipped"));
  EXPECT_EQ(outcome.suspects, (std::vector<int>{3, 4})) << out_.str();
  EXPECT_THAT(out_.str(), HasSubstr("first bad build is one of: build 4/8"));
}

TEST_F(BisectRunTest, ANoisyButSamePairHasNothingToBisect) {
  // Bad is 8% slower and each launch drifts by up to 4%: within the CPU noise floor.
  const std::vector<std::string> builds = {Build(1, 1.0), Build(2, 1.08)};
  const std::int64_t good = Nightly(builds[0]), bad = Nightly(builds[1]);
  ASSERT_EQ(Bisect(Options(builds, std::to_string(good), std::to_string(bad))), kExitTrialsFailed);
  const std::string err = err_.str();
  EXPECT_THAT(err, HasSubstr("good and bad do not differ beyond the noise floor: nothing to bisect"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(ResultsDb::Open(dir_ / "results.db", true)->reader().Campaigns().size(),
            2u);  // ran nothing
}

TEST_F(BisectRunTest, BadInputIsOneLineAndRunsNothing) {
  const std::vector<std::string> builds = {Build(1, 1.0), Build(2, 2.0)};
  Nightly(builds[0]);
  BisectOptions unknown = Options(builds, "1", builds[1]);
  unknown.key = Key() + "x";
  EXPECT_EQ(Bisect(unknown), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("no campaign of"));
  EXPECT_THAT(err_.str(), HasSubstr("did you mean " + Key()));
  EXPECT_EQ(Bisect(Options(builds, "1", "1")), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--good and --bad are both '1'"));
  EXPECT_EQ(Bisect(Options(builds, builds[1], builds[0])), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("is not before --bad"));
  EXPECT_EQ(Bisect(Options(builds, "7", builds[1])), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--good '7': neither a build of the list"));
  EXPECT_EQ(ResultsDb::Open(dir_ / "results.db", true)->reader().Campaigns().size(), 1u);
}

}  // namespace
}  // namespace ditbench::bisect_run_test
