// Energy per image end to end, without a GPU: the real coordinator runs
// tests/fixtures/fake_worker.sh, whose ranks report the energy of their timed window
// (FAKE_WORKER_ENERGY) as ditbench-worker does on a GPU with NVML; then `query`, the report and
// `compare` read the database as a user would. Hostile energy values fail the trial naming the
// rank file and the field.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "base/table_printers.h"

#include "cli/compare.h"
#include "cli/query.h"
#include "launch/local_launcher.h"
#include "report/html_report.h"
#include "runner/sweep_run.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::energy_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class EnergyEndToEndTest : public ::testing::Test {
 protected:
  // A new campaign of one two-rank trial (ulysses 2, batch 2: 2 images per iteration) whose
  // three timed iterations take 1.5, 1.25 and 1.75 ms (4.5 ms), every rank reporting `energy`
  // (rank 1 `rank1_energy` when given). Returns RunSweep's exit code.
  int RunCampaign(const std::string& energy, const std::string& rank1_energy = "") {
    std::ofstream(dir_ / "sweep.yaml")
        << "name: energy\n"
           "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, "
           "repeats: 3, ulysses: 2, batch: 2, timeout: 30s}\n";
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "results.db";
    o.gpus = "cpu:2";
    o.worker = DITBENCH_FAKE_WORKER;
    o.fresh = true;
    std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
    if (!energy.empty()) env.push_back("FAKE_WORKER_ENERGY=" + energy);
    if (!rank1_energy.empty()) env.push_back("FAKE_WORKER_ENERGY_RANK1=" + rank1_energy);
    LocalLauncher launcher(env);
    std::stringstream out, err;
    return RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out, err);
  }

  nlohmann::json Query(std::vector<std::string> columns) {
    QueryOptions options;
    options.db = dir_ / "results.db";
    options.columns = std::move(columns);
    options.format = TableFormat::kJson;
    std::ostringstream out, err;
    EXPECT_EQ(RunQuery(options, out, err), 0) << err.str();
    return nlohmann::json::parse(out.str());
  }

  std::string QueryTable() {
    QueryOptions options;
    options.db = dir_ / "results.db";
    std::ostringstream out, err;
    EXPECT_EQ(RunQuery(options, out, err), 0) << err.str();
    return out.str();
  }

  std::string Report() {
    ReportOptions options;
    options.db = dir_ / "results.db";
    return RenderHtmlReport(options);
  }

  test::TempDir dir_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
};

TEST_F(EnergyEndToEndTest, RanksEnergyIsSummedPerIterationAndPerImageInQueryAndReport) {
  // Each rank: 0.6 J over a 5 ms window (120 W) covering its 4.5 ms of timed iterations.
  ASSERT_EQ(RunCampaign(R"({"joules": 0.6, "window_ms": 5})"), 0);
  const nlohmann::json rows =
      Query({"status", "energy_j", "joules_per_image", "energy_note", "images_per_s"});
  ASSERT_EQ(rows.size(), 1u) << rows;
  EXPECT_EQ(rows[0]["status"], "ok") << rows;
  // (0.6 + 0.6) J over 3 timed iterations; 2 images per iteration.
  EXPECT_DOUBLE_EQ(rows[0]["energy_j"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(rows[0]["joules_per_image"].get<double>(), 0.2);
  EXPECT_TRUE(rows[0]["energy_note"].is_null()) << rows;
  EXPECT_THAT(QueryTable(), HasSubstr("joules_per_image"));

  const std::string html = Report();
  EXPECT_NE(html.find(">J/image</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num joules-per-image\" title=\"0.4 J per iteration\">0.2"
                      "</td>"),
            std::string::npos);
}

TEST_F(EnergyEndToEndTest, WithoutEnergyThereIsNoColumnAndAnUnreadableCounterIsSaidOnce) {
  ASSERT_EQ(RunCampaign(""), 0);  // a CPU trial: no energy, nothing to say
  nlohmann::json rows = Query({"energy_j", "joules_per_image", "energy_note"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0]["energy_j"].is_null() && rows[0]["joules_per_image"].is_null()) << rows;
  EXPECT_TRUE(rows[0]["energy_note"].is_null()) << rows;
  EXPECT_THAT(QueryTable(), Not(HasSubstr("joules_per_image")));
  EXPECT_EQ(Report().find("J/image"), std::string::npos);

  // A GPU whose rank 1 could not read its counter: no energy for the trial, and why.
  ASSERT_EQ(RunCampaign(R"({"joules": 0.6, "window_ms": 5})",
                        R"({"unavailable": "this GPU has no total energy counter"})"),
            0);
  rows = Query({"campaign", "status", "energy_j", "energy_note"});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["status"], "ok");
  EXPECT_TRUE(rows[1]["energy_j"].is_null()) << rows;
  EXPECT_EQ(rows[1]["energy_note"], "rank 1: this GPU has no total energy counter");
  const std::string html = Report();
  EXPECT_NE(html.find("1 GPU trial(s) have no energy per image"), std::string::npos);
  EXPECT_NE(html.find("rank 1: this GPU has no total energy counter"), std::string::npos);
}

TEST_F(EnergyEndToEndTest, NegativeOrAbsurdEnergyFailsTheTrialNamingTheRankFileAndField) {
  ASSERT_NE(RunCampaign(R"({"joules": -3, "window_ms": 5})"), 0);
  nlohmann::json rows = Query({"status", "error", "energy_j"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["status"], "failed") << rows;
  EXPECT_THAT(rows[0]["error"].get<std::string>(),
              HasSubstr("rank0.json: 'energy.joules' is -3; expected a finite number of joules"));
  // 1 MJ in 5 ms (200 MW) on rank 1 only.
  ASSERT_NE(RunCampaign(R"({"joules": 0.6, "window_ms": 5})",
                        R"({"joules": 1000000, "window_ms": 5})"),
            0);
  rows = Query({"campaign", "status", "error"});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["status"], "failed") << rows;
  EXPECT_THAT(rows[1]["error"].get<std::string>(),
              HasSubstr("rank1.json: 'energy.joules' is 1000000; expected at most 5000 W"));
}

TEST_F(EnergyEndToEndTest, CompareShowsEachSidesEnergyPerImageAndTheirRatio) {
  ASSERT_EQ(RunCampaign(R"({"joules": 0.6, "window_ms": 5})"), 0);  // 0.2 J/image
  ASSERT_EQ(RunCampaign(R"({"joules": 0.45, "window_ms": 5})"), 0);  // 0.15 J/image
  CompareOptions options;
  options.db = dir_ / "results.db";
  options.a = "1";
  options.b = "2";
  options.format = TableFormat::kJson;
  std::ostringstream out, err;
  ASSERT_EQ(RunCompare(options, out, err), 0) << err.str();
  const nlohmann::json json = nlohmann::json::parse(out.str());
  ASSERT_EQ(json["trials"].size(), 1u) << json;
  EXPECT_DOUBLE_EQ(json["trials"][0]["a_joules_per_image"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(json["trials"][0]["b_joules_per_image"].get<double>(), 0.15);
  EXPECT_DOUBLE_EQ(json["trials"][0]["energy_ratio"].get<double>(), 0.75);

  options.format = TableFormat::kText;
  std::ostringstream table;
  ASSERT_EQ(RunCompare(options, table, err), 0) << err.str();
  EXPECT_THAT(table.str(), HasSubstr("Other metrics:"));
  EXPECT_THAT(table.str(),
              HasSubstr("joules_per_image (J/image)          0.2         0.15    0.750 "
                        "better"));
}

}  // namespace
}  // namespace ditbench::energy_e2e_test
