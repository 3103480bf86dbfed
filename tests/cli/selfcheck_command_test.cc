// `ditbench selfcheck` end to end on CPU (cli/selfcheck.h) with a fake worker script
// (tests/fixtures/fake_selfcheck_worker.sh): the table printed, the exit code, a broken worker
// as a failed row, the verdict stored per device and shown by `env`.
#include "cli/selfcheck.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/table_printers.h"

#include "base/exit_codes.h"
#include "storage/results_db.h"
#include "storage/selfcheck_store.h"
#include "tests/support/temp_dir.h"

namespace ditbench::selfcheck_command_test {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const std::filesystem::path kFakeWorker =
    std::filesystem::path(DITBENCH_FIXTURES) / "fake_selfcheck_worker.sh";

class SelfcheckCommandTest : public ::testing::Test {
 protected:
  SelfcheckCommandTest() {
    options_.gpus = "cpu";
    options_.db = dir_ / "results.db";
    options_.worker = kFakeWorker;
  }
  ~SelfcheckCommandTest() override { unsetenv("FAKE_SELFCHECK_MODE"); }

  int Run(const char* mode = "ok") {
    setenv("FAKE_SELFCHECK_MODE", mode, 1);
    out_.str("");
    err_.str("");
    return RunSelfcheckCommand(options_, gpus_, out_, err_);
  }

  test::TempDir dir_;
  SelfcheckOptions options_;
  AssumedGpus gpus_{0, "none"};
  std::stringstream out_, err_;
};

TEST_F(SelfcheckCommandTest, AHealthyCpuPrintsItsTableAndExitsZero) {
  ASSERT_EQ(Run(), kExitOk) << err_.str();
  const std::string table = out_.str();
  EXPECT_THAT(table, HasSubstr("check"));
  EXPECT_THAT(table, ContainsRegex("timing fidelity +pass"));
  EXPECT_THAT(table, HasSubstr("attention (math)"));
  EXPECT_THAT(table, HasSubstr("cuda graphs"));
  EXPECT_THAT(table, HasSubstr("CPU: no CUDA graphs"));
  EXPECT_THAT(table, Not(HasSubstr("fail")));
}

TEST_F(SelfcheckCommandTest, AFidelityErrorExitsOne) {
  EXPECT_EQ(Run("slow"), kExitCheckFailed);
  EXPECT_THAT(out_.str(), ContainsRegex("timing fidelity +fail"));
}

TEST_F(SelfcheckCommandTest, ABrokenWorkerIsAFailedRowAndTheHostRowsStillPrint) {
  for (const char* mode : {"bad", "failed", "missing"}) {
    SCOPED_TRACE(mode);
    EXPECT_EQ(Run(mode), kExitCheckFailed);
    EXPECT_THAT(out_.str(), HasSubstr("worker"));
    EXPECT_THAT(out_.str(), HasSubstr("fail"));
    EXPECT_THAT(out_.str(), HasSubstr("host load"));
    EXPECT_THAT(out_.str(), HasSubstr("cpu governor"));
  }
  Run("failed");
  EXPECT_THAT(out_.str(), HasSubstr("exited with code 1: selfcheck: cannot allocate the GEMM"));
}

TEST_F(SelfcheckCommandTest, AMissingWorkerProgramIsAFailedRow) {
  options_.worker = dir_ / "no-such-worker";
  EXPECT_EQ(Run(), kExitCheckFailed);
  EXPECT_THAT(out_.str(), HasSubstr("worker"));
}

TEST_F(SelfcheckCommandTest, AWorkerPastItsTimeoutIsKilledAndFails) {
  options_.timeout_s = 1;
  EXPECT_EQ(Run("timeout"), kExitCheckFailed);
  EXPECT_THAT(out_.str(), HasSubstr("timed out after 1 s"));
}

// On a CPU of two cores or more, two ranks (Gloo's collectives measured); the `--describe`
// launch after the check is stored as the planner's start-up.
TEST_F(SelfcheckCommandTest, ACpuChecksWithTwoRanksAndStoresTheDescribeLaunchTime) {
  ASSERT_EQ(Run(), kExitOk) << err_.str();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_THAT(err_.str(), HasSubstr(cores > 1 ? "(2 rank(s)" : "(1 rank(s)"));
  const auto stored = ResultsDb::Open(options_.db, true)->selfchecks().LatestPerDevice();
  ASSERT_EQ(stored.size(), 1u);
  ASSERT_TRUE(stored[0].measurements.contains("launch_wall_s")) << stored[0].measurements.dump();
  EXPECT_GT(stored[0].measurements.at("launch_wall_s").get<double>(), 0);
}

TEST_F(SelfcheckCommandTest, JsonMarkdownAndCsvFormats) {
  options_.format = TableFormat::kJson;
  ASSERT_EQ(Run(), kExitOk);
  const auto json = nlohmann::json::parse(out_.str());
  ASSERT_TRUE(json.is_array());
  EXPECT_EQ(json.at(0).at("check"), "worker");
  EXPECT_EQ(json.at(0).at("verdict"), "pass");
  options_.format = TableFormat::kMarkdown;
  ASSERT_EQ(Run(), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("| check |"));
  options_.format = TableFormat::kCsv;  // every format of the table (a bad one: format_option_test)
  ASSERT_EQ(Run(), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("check,verdict,figure,reason\r\n"));
}

TEST_F(SelfcheckCommandTest, TheVerdictIsStoredPerDeviceAndEnvShowsTheNewest) {
  EXPECT_THAT(StoredSelfchecksJson(options_.db).get<std::string>(),
              HasSubstr("no results database"));
  ASSERT_EQ(Run("slow"), kExitCheckFailed);
  ASSERT_EQ(Run(), kExitOk);
  {
    auto db = ResultsDb::Open(options_.db, /*read_only=*/true);
    const auto latest = db->selfchecks().LatestPerDevice();
    ASSERT_EQ(latest.size(), 1u);
    EXPECT_EQ(latest[0].device, "cpu");
    EXPECT_FALSE(AnyFailed(latest[0].rows));
    EXPECT_EQ(latest[0].measurements.at("format"), "ditbench-selfcheck");
  }
  const auto shown = StoredSelfchecksJson(options_.db);
  ASSERT_TRUE(shown.is_object()) << shown.dump();
  ASSERT_EQ(shown.size(), 1u);
  const auto& lines = shown.begin()->at("rows");
  // The newest check (all pass but the GPU rows, skipped on a CPU) is shown, not the failed one.
  for (const auto& line : lines) EXPECT_THAT(line.get<std::string>(), Not(HasSubstr("fail")));
  EXPECT_THAT(lines.dump(), HasSubstr("cuda graphs: skip"));
  EXPECT_THAT(shown.begin().key(), HasSubstr("cpu on "));
}

}  // namespace
}  // namespace ditbench::selfcheck_command_test
