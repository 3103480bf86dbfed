// The report end to end: every configuration of a group is a row of its own with its own label,
// and the speedup its table prints is the one its charts draw (analysis/configuration_group.h).
#include <regex>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/html_report.h"
#include "report/chart_style.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::report_configurations_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ReportConfigurationsTest : public ::testing::Test {
 protected:
  std::filesystem::path DbPath() const { return dir_ / "results.db"; }

  std::string Render() { return RenderHtmlReport({DbPath(), {}, {}, {}, {}}); }

  // The <tr> of one trial ("" when it has none).
  static std::string RowOf(const std::string& html, std::int64_t campaign,
                           const TrialConfig& config) {
    const std::string id = fmt::format("id=\"trial-{}-{}\"", campaign, TrialKey(config));
    const std::size_t start = html.find(id);
    if (start == std::string::npos) return "";
    return html.substr(start, html.find("</tr>", start) - start);
  }

  // The configuration cell of a row: its second <td>.
  static std::string LabelOf(const std::string& row) {
    std::smatch m;
    static const std::regex cells("<td[^>]*>[^<]*</td><td class=\"wrap\">([^<]*)</td>");
    return std::regex_search(row, m, cells) ? m[1].str() : "";
  }

  // How the page names campaign `id` of this database: "#<id> <date> <build>".
  std::string Label(std::int64_t id) const {
    auto db = ResultsDb::Open(dir_ / "results.db", /*read_only=*/true);
    for (const CampaignInfo& c : db->reader().Campaigns())
      if (c.id == id) return CampaignLabel(c);
    return "";
  }

  // The charts the page draws (the JSON in <script id="ditbench-charts">).
  static nlohmann::json ChartsOf(const std::string& html) {
    const std::string open = "<script type=\"application/json\" id=\"ditbench-charts\">";
    const std::size_t start = html.find(open) + open.size();
    return nlohmann::json::parse(html.substr(start, html.find("</script>", start) - start));
  }

  static TrialConfig Pipeline(int ulysses, int vae_tile) {
    TrialConfig c = test::MakeConfig(ulysses, 1, Precision::kBf16, 256);
    c.scope = Scope::kPipeline;
    c.vae_tile = vae_tile;
    return c;
  }

  test::TempDir dir_;
};

TEST_F(ReportConfigurationsTest, VaeTileTrialsAreRowsOfTheirOwnNotFoldedAsSeeds) {
  std::int64_t campaign = 0;
  {
    auto db = ResultsDb::Open(DbPath());
    campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("tiles"), false);
    for (int tile : {0, 128})
      db->writer().RecordTrial(campaign,
                               test::MakeTrial(Pipeline(1, tile), TrialStatus::kOk, 100 + tile));
  }
  const std::string html = Render();
  const std::string plain = RowOf(html, campaign, Pipeline(1, 0));
  const std::string tiled = RowOf(html, campaign, Pipeline(1, 128));
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(tiled.empty());
  EXPECT_EQ(LabelOf(plain), "1 rank");
  EXPECT_EQ(LabelOf(tiled), "1 rank vae_tile=128");
  EXPECT_THAT(html, Not(HasSubstr("seeds)")));
  EXPECT_THAT(tiled, HasSubstr(">228.00<"));  // its own latency, not a median over both
}

TEST_F(ReportConfigurationsTest, PipeFusionPatchesAndWarmupRowsEachHaveTheirOwnLabel) {
  std::int64_t campaign = 0;
  std::vector<TrialConfig> configs;
  for (int patches : {2, 4})
    for (int warmup : {1, 2}) {
      TrialConfig c = test::MakeConfig(1);
      c.pipefusion = 2;
      c.pipefusion_patches = patches;
      c.pipefusion_warmup_steps = warmup;
      configs.push_back(c);
    }
  {
    auto db = ResultsDb::Open(DbPath());
    campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("pipefusion"), false);
    double latency = 50;
    for (const TrialConfig& c : configs)
      db->writer().RecordTrial(campaign, test::MakeTrial(c, TrialStatus::kOk, latency++));
  }
  const std::string html = Render();
  std::set<std::string> labels;
  for (const TrialConfig& c : configs) labels.insert(LabelOf(RowOf(html, campaign, c)));
  EXPECT_EQ(labels, (std::set<std::string>{
                        "pipefusion=2",
                        "pipefusion=2 pipefusion_warmup_steps=2",
                        "pipefusion=2 pipefusion_patches=4",
                        "pipefusion=2 pipefusion_patches=4 pipefusion_warmup_steps=2"}));
  // The latency chart has a bar per configuration too.
  int latency_charts = 0;
  for (const nlohmann::json& chart : ChartsOf(html)) {
    if (chart["kind"] != "latency") continue;
    ++latency_charts;
    EXPECT_EQ(chart["labels"].size(), 4u);
  }
  EXPECT_EQ(latency_charts, 1);
}

// Campaign 1 has 1-rank trials with and without vae_tile; campaign 2 has only a 2-rank one.
// Each 2-rank row is compared with the 1-rank trial of its own vae_tile, campaign 2's with
// campaign 1's (the newest that has one), and the chart draws the table's numbers.
TEST_F(ReportConfigurationsTest, TableSpeedupEqualsChartSpeedupForTheSameGroup) {
  std::int64_t first = 0, second = 0;
  {
    auto db = ResultsDb::Open(DbPath());
    first = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("speed"), false);
    db->writer().RecordTrial(first, test::MakeTrial(Pipeline(1, 0), TrialStatus::kOk, 100));
    db->writer().RecordTrial(first, test::MakeTrial(Pipeline(1, 128), TrialStatus::kOk, 120));
    db->writer().RecordTrial(first, test::MakeTrial(Pipeline(2, 128), TrialStatus::kOk, 40));
    db->writer().FinishCampaign(first);
    second = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("speed"), true);
    db->writer().RecordTrial(second, test::MakeTrial(Pipeline(2, 0), TrialStatus::kOk, 25));
  }
  const std::string html = Render();
  // The table: 120 / 40 against the tiled 1-rank trial, 100 / 25 across campaigns.
  static const std::regex speedup_cell("class=\"num speedup\"[^>]*>([^<]*)<");
  std::smatch m;
  const std::string tiled_row = RowOf(html, first, Pipeline(2, 128));
  const std::string later_row = RowOf(html, second, Pipeline(2, 0));
  ASSERT_TRUE(std::regex_search(tiled_row, m, speedup_cell));
  const std::string tiled_table = m[1].str();
  ASSERT_TRUE(std::regex_search(later_row, m, speedup_cell));
  const std::string later_table = m[1].str();
  EXPECT_EQ(tiled_table, "3.00x");
  EXPECT_EQ(later_table, "4.00x");

  // The speedup chart: one point per (series, world size) on 2 ranks, as the table prints it.
  std::map<std::string, std::string> chart;  // series -> speedup at world size 2
  for (const nlohmann::json& c : ChartsOf(html)) {
    if (c["kind"] != "speedup") continue;
    for (const nlohmann::json& dataset : c["datasets"])
      for (const nlohmann::json& point : dataset["points"])
        if (point["x"] == 2)
          chart[dataset["label"].get<std::string>()] =
              fmt::format("{:.2f}x", point["y"].get<double>());
  }
  EXPECT_EQ(chart, (std::map<std::string, std::string>{
                       {"ulysses vae_tile=128 (" + Label(1) + ")", tiled_table},
                       {"ulysses (" + Label(2) + ")", later_table}}));
}

}  // namespace
}  // namespace ditbench::report_configurations_test
