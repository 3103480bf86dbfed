// `profile: trace` end to end without LibTorch: the real coordinator runs
// tests/fixtures/fake_worker.sh, whose ranks each leave a synthetic Chrome trace (rank r's
// times r + 1 times rank 0's); the coordinator analyses every rank's trace, stores the
// profiles and the slowest rank's shares, and the report draws and links them.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "launch/local_launcher.h"
#include "report/html_report.h"
#include "runner/sweep_run.h"
#include "storage/results_db.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::profile_trace_test {
namespace {

class ProfileTraceTest : public ::testing::Test {
 protected:
  // Runs a one-trial, two-rank sweep (`profile` line as given) into `db`; returns its rows.
  std::vector<ResultRow> Run(const std::string& db, const std::string& profile_line,
                             std::vector<std::string> environment = {}) {
    std::ofstream(dir_ / "sweep.yaml")
        << "name: profiled\n" << profile_line
        << "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 2, warmup: 1, "
           "repeats: 3, ulysses: 2, timeout: 30s}\n";
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / db;
    o.gpus = "cpu:2";
    o.worker = DITBENCH_FAKE_WORKER;
    environment.push_back("PATH=/usr/bin:/bin");
    environment.push_back("FAKE_WORKER_MODE=ok");
    environment.push_back("FAKE_WORKER_STEPS=0.75,0.25");
    LocalLauncher launcher(environment);
    EXPECT_EQ(RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out_, err_), 0)
        << out_.str() << err_.str();
    auto results = ResultsDb::Open(dir_ / db, /*read_only=*/true);
    return results->reader().Results({1});
  }

  test::TempDir dir_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::stringstream out_, err_;
};

TEST_F(ProfileTraceTest, EveryRanksTraceIsAnalysedAndTheSlowestRanksSharesAreStored) {
  const std::vector<ResultRow> rows = Run("profiled.db", "profile: trace\n");
  ASSERT_EQ(rows.size(), 1u);
  const ResultRow& row = rows[0];
  EXPECT_EQ(row.status, "ok") << row.error;
  // The fake's trace: 4 ms of steps per unit, 1.6 compute, 0.7 all-to-all, 1.7 idle.
  ASSERT_TRUE(row.compute_share && row.comm_share && row.idle_share);
  EXPECT_NEAR(*row.compute_share, 0.4, 1e-12);
  EXPECT_NEAR(*row.comm_share, 0.175, 1e-12);
  EXPECT_NEAR(*row.idle_share, 0.425, 1e-12);
  ASSERT_TRUE(row.profile);
  ASSERT_EQ(row.profile->ranks.size(), 2u);
  const RankTrace* slowest = row.profile->Slowest();
  ASSERT_NE(slowest, nullptr);
  EXPECT_EQ(slowest->rank, 1);
  EXPECT_DOUBLE_EQ(slowest->profile->total.step_ms, 8.0);
  EXPECT_EQ(slowest->profile->timeline, "host");
  for (const RankTrace& rank : row.profile->ranks) {
    EXPECT_EQ(rank.error, "");
    EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(row.run_dir) /
                                                 rank.trace_file))
        << rank.trace_file;
  }

  // The profile is measurement policy: the same trial without it has the same key.
  const std::vector<ResultRow> plain = Run("plain.db", "");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].trial_key, row.trial_key);
  EXPECT_FALSE(plain[0].profile);
  EXPECT_FALSE(plain[0].compute_share);
  EXPECT_EQ(plain[0].latency_ms, row.latency_ms);

  // The report: the stacked profile chart, the step chart, and a link to each rank's trace.
  ReportOptions options;
  options.db = dir_ / "profiled.db";
  const std::string html = RenderHtmlReport(options);
  EXPECT_NE(html.find("exposed communication"), std::string::npos);
  EXPECT_NE(html.find("\"kind\":\"steps\""), std::string::npos);
  EXPECT_NE(html.find("step 0 = 3.0x steady"), std::string::npos);
  for (const RankTrace& rank : row.profile->ranks)
    EXPECT_NE(html.find("href=\"" + (std::filesystem::path(row.run_dir) / rank.trace_file).string()),
              std::string::npos)
        << "no link to rank " << rank.rank << "'s trace";
}

TEST_F(ProfileTraceTest, AnUnreadableTraceIsRecordedWithWhyAndTheTrialStaysOk) {
  const std::vector<ResultRow> rows =
      Run("broken.db", "profile: trace\n", {"FAKE_WORKER_TRACE=broken"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, "ok");
  EXPECT_FALSE(rows[0].compute_share);
  ASSERT_TRUE(rows[0].profile);
  ASSERT_EQ(rows[0].profile->ranks.size(), 2u);
  EXPECT_EQ(rows[0].profile->Slowest(), nullptr);
  const std::string& error = rows[0].profile->ranks[1].error;
  EXPECT_NE(error.find("rank1.trace.json: not valid JSON"), std::string::npos) << error;
}

}  // namespace
}  // namespace ditbench::profile_trace_test
