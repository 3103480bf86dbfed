// Renders a report in headless Chromium (Debian's `chromium`, installed by scripts/setup) and
// checks that the chart script ran without an error and drew every chart. Skipped, loudly,
// only when no chromium is installed.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/html_report.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string FindChromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::ifstream(path).good()) return path;
  }
  return "";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++count;
  return count;
}

// Two campaigns of one sweep (different builds), a model with overrides, a failed trial.
void WriteFixture(const std::filesystem::path& db_path) {
  auto db = ResultsDb::Open(db_path);
  TrialConfig tiny = test::MakeConfig(1, 1, Precision::kBf16, 256);
  tiny.model = "pixart-alpha-tiny";
  TrialConfig deep = tiny;
  deep.model_overrides = {{"depth", 8}};
  for (int c = 0; c < 2; ++c) {
    auto id = db->ResumeOrCreateCampaign(test::MakeCampaign("render", c ? "def" : "abc"), true);
    for (int ulysses : {1, 2, 4}) {
      TrialConfig config = tiny;
      config.ulysses = ulysses;
      std::vector<double> ms;
      for (int i = 0; i < 8; ++i) ms.push_back((c ? 12.0 : 10.0) / ulysses + 0.1 * i);
      db->RecordTrial(id, test::MakeTrialWithSamples(config, ms));
    }
    db->RecordTrial(id, test::MakeTrialWithSamples(deep, {40, 41, 42, 43, 44, 45}));
    db->RecordTrial(id, test::MakeTrial(test::MakeConfig(2, 2), TrialStatus::kFailed, 0,
                                        "rank 1 exited with 1"));
    db->FinishCampaign(id);
  }
}

TEST(HeadlessRenderTest, EveryChartIsDrawnWithoutAScriptError) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "*** chromium is not installed: the report was NOT rendered in a browser. "
                    "Install Debian's `chromium` (scripts/setup does) to run this test. ***";
  }
  test::TempDir dir;
  WriteFixture(dir / "results.db");
  const std::filesystem::path report = dir / "report.html";
  WriteHtmlReport({dir / "results.db", {}, {}, report, "1"});
  const std::string html = ReadFile(report);
  const int canvases = Count(html, "<canvas ");
  // tiny: latency + speedup; tiny{depth:8}: latency (1 rank only); the failed group: none.
  ASSERT_EQ(canvases, 3);

  const std::string command =
      chromium + " --headless --no-sandbox --disable-gpu --disable-background-networking "
      "--disable-component-update --disable-sync --enable-logging=stderr --v=0 "
      "--user-data-dir=" + (dir / "profile").string() +
      " --virtual-time-budget=5000 --dump-dom file://" + report.string() + " > " +
      (dir / "dom.html").string() + " 2> " + (dir / "chromium.log").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << ReadFile(dir / "chromium.log");
  const std::string dom = ReadFile(dir / "dom.html");
  const std::string log = ReadFile(dir / "chromium.log");
  EXPECT_THAT(dom, HasSubstr("data-charts-drawn=\"" + std::to_string(canvases) + "\""))
      << "the chart script did not finish";
  EXPECT_EQ(Count(dom, "data-drawn=\"1\""), canvases);
  EXPECT_THAT(log, Not(HasSubstr("Uncaught"))) << log;
  EXPECT_THAT(dom, HasSubstr("Comparison: campaign 1 (baseline) vs 2"));
}

}  // namespace
}  // namespace ditbench
