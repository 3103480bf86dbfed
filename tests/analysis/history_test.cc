// analysis/history.h, report/history_output.h and report/history_section.h over databases
// written through ResultsDb's writer (the CLI end to end is tests/cli/history_e2e_test.cc).
#include "analysis/history.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "base/table_printers.h"

#include "base/user_error.h"
#include "report/history_output.h"
#include "report/history_section.h"
#include "report/html_report.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::history_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++count;
  return count;
}

class HistoryTest : public ::testing::Test {
 protected:
  // `nights` campaigns of sweep "nightly" with two keys (ulysses 1 and 2) around 100 and 60
  // ms; from campaign `step_at` on, ulysses=1 is `step` times slower and the driver is new.
  void Write(int nights = 12, int step_at = 7, double step = 1.2) {
    auto db = ResultsDb::Open(path_);
    for (int night = 1; night <= nights; ++night) {
      const std::int64_t id = db->writer().ResumeOrCreateCampaign(
          test::MakeCampaign("nightly", fmt::format("b{}", night)), true);
      db->writer().UpdateCampaignEnvironment(
          id, {{"worker", {{"driver", night >= step_at ? "560" : "550"}, {"nccl", "2.21"}}}});
      const double wobble = 1 + 0.01 * ((night * 7) % 5 - 2);
      for (int ulysses : {1, 2}) {
        double ms = (ulysses == 1 ? 100 : 60) * wobble;
        if (ulysses == 1 && night >= step_at) ms *= step;
        db->writer().RecordTrial(
            id, test::MakeTrialWithSamples(test::MakeConfig(ulysses), {ms, ms * 1.01, ms * 0.99}));
      }
    }
  }

  History Load(const HistoryOptions& options = {}) {
    auto db = ResultsDb::Open(path_, /*read_only=*/true);
    return LoadHistory(db->reader(), options);
  }

  test::TempDir dir_;
  std::filesystem::path path_ = dir_ / "results.db";
};

TEST_F(HistoryTest, AChangePointNamesBuildsAndWhatElseChanged) {
  Write();
  const History history = Load();
  ASSERT_EQ(history.keys.size(), 2u);
  const KeyHistory* slowed = nullptr;
  for (const KeyHistory& key : history.keys)
    if (key.trial_key == TrialKey(test::MakeConfig(1))) slowed = &key;
  ASSERT_NE(slowed, nullptr);
  ASSERT_EQ(slowed->points.size(), 12u);
  ASSERT_EQ(slowed->changes.size(), 1u);
  const HistoryChange& change = slowed->changes[0];
  EXPECT_EQ(change.last_good, 6);
  EXPECT_EQ(change.first_bad, 7);
  EXPECT_EQ(change.good_build, "b6");
  EXPECT_EQ(change.bad_build, "b7");
  EXPECT_NEAR(change.change.pct, 20, 3);
  EXPECT_EQ(change.campaigns_since, 6u);
  // The fingerprint: the driver changed with it (and the coordinator build of MakeCampaign).
  bool driver = false;
  for (const SettingDifference& d : change.environment)
    if (d.setting == "driver") driver = d.a == "550" && d.b == "560";
  EXPECT_TRUE(driver);
  EXPECT_NEAR(slowed->level_change_pct, 20, 3);
  // The other key did not move, though the driver did.
  for (const KeyHistory& key : history.keys) {
    if (&key != slowed) {
      EXPECT_TRUE(key.changes.empty());
    }
  }

  EXPECT_EQ(SlowerChanges(history, 10, 0).size(), 1u);
  EXPECT_EQ(SlowerChanges(history, 25, 0).size(), 0u);
  EXPECT_EQ(SlowerChanges(history, 10, 5).size(), 0u);  // six campaigns back
  EXPECT_EQ(SlowerChanges(history, 10, 6).size(), 1u);
}

// `--metric p95_ms`: a serving trial's tail over nights. Its p95 jumps at night 7 while its
// latency (the p50) stays: the change point is the p95's; a trial without the metric takes no
// part; a name that is not a millisecond metric is refused naming those that are.
TEST_F(HistoryTest, AServingTrialsP95HasAHistoryOfItsOwn) {
  {
    auto db = ResultsDb::Open(path_);
    TrialConfig served = test::MakeConfig(1);
    served.serve = ServeLoad{};
    served.serve->rate_per_s = 4;
    served.serve->requests = 100;
    for (int night = 1; night <= 12; ++night) {
      const std::int64_t id = db->writer().ResumeOrCreateCampaign(
          test::MakeCampaign("nightly", fmt::format("b{}", night)), true);
      const double wobble = 1 + 0.01 * ((night * 7) % 5 - 2);
      TrialRecord trial = test::MakeTrialWithSamples(served, {100 * wobble, 101, 99});
      trial.metrics->extra["p95_ms"] = (night >= 7 ? 300 : 200) * wobble;
      db->writer().RecordTrial(id, trial);
      db->writer().RecordTrial(id, test::MakeTrialWithSamples(test::MakeConfig(2), {60, 61, 59}));
    }
  }
  HistoryOptions options;
  options.metric = "p95_ms";
  const History tail = Load(options);
  ASSERT_EQ(tail.keys.size(), 1u);  // the trial that does not serve has no p95
  EXPECT_EQ(tail.metric, "p95_ms");
  ASSERT_EQ(tail.keys[0].changes.size(), 1u);
  EXPECT_EQ(tail.keys[0].changes[0].first_bad, 7);
  EXPECT_NEAR(tail.keys[0].changes[0].change.pct, 50, 3);
  for (const KeyHistory& key : Load().keys) EXPECT_TRUE(key.changes.empty()) << key.label;
  std::ostringstream csv;
  WriteHistory(tail, TableFormat::kCsv, csv);
  EXPECT_THAT(csv.str(), HasSubstr(",p95_ms,"));
  options.metric = "requests_per_s";
  try {
    Load(options);
    ADD_FAILURE() << "a rate accepted";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("history --metric: 'requests_per_s' is not a millisecond "
                                    "metric (one of latency_ms,"));
  }
}

TEST_F(HistoryTest, TheWorkersBuildNamesAPointWhenItReportedOne) {
  CampaignInfo campaign;
  campaign.record.build = "coordinator-1";
  campaign.record.host = "node7";
  EXPECT_EQ(CampaignBuild(campaign), "coordinator-1");
  campaign.record.environment = {
      {"worker", {{"build", "worker-9"}, {"torch", "2.5.1"}, {"cuda_driver_api", "12.4"}}}};
  EXPECT_EQ(CampaignBuild(campaign), "worker-9");
  const Fingerprint fingerprint = EnvironmentFingerprint(campaign);
  EXPECT_EQ(fingerprint.at("libtorch"), "2.5.1");
  EXPECT_EQ(fingerprint.at("driver"), "12.4");
  EXPECT_EQ(fingerprint.at("host"), "node7");
  EXPECT_EQ(fingerprint.at("ditbench"), "coordinator-1");
  EXPECT_FALSE(fingerprint.contains("diffusers"));
}

TEST_F(HistoryTest, ExcludedCampaignsTakeNoPartAndUnknownNamesAreRefused) {
  Write();
  {
    auto db = ResultsDb::Open(path_);
    db->writer().SetCampaignExcluded(3, true);
  }
  const History history = Load({"nightly", ""});
  EXPECT_EQ(history.excluded, 1u);
  EXPECT_EQ(history.campaigns.size(), 11u);
  for (const KeyHistory& key : history.keys) {
    ASSERT_EQ(key.points.size(), 11u);
    for (const HistoryPoint& p : key.points) EXPECT_NE(p.campaign, 3);
  }
  {
    auto db = ResultsDb::Open(path_);
    db->writer().UpdateCampaignEnvironment(5, {{"bisect", {{"build", "b2"}, {"position", 2}}}});
  }
  const History without_bisect = Load();
  EXPECT_EQ(without_bisect.bisections, 1u);
  for (const HistoryPoint& p : without_bisect.keys[0].points) EXPECT_NE(p.campaign, 5);
  EXPECT_EQ(Load({"", TrialKey(test::MakeConfig(2))}).keys.size(), 1u);
  try {
    Load({"weekly", ""});
    FAIL() << "unknown sweep";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no sweep named 'weekly' (known: nightly)"));
  }
  EXPECT_THROW(Load({"", "0123456789abcdef"}), UserError);
}

TEST_F(HistoryTest, FormatsCarryTheChangePoint) {
  Write();
  const History history = Load();
  std::ostringstream table, csv, json;
  WriteHistory(history, TableFormat::kText, table);
  WriteHistory(history, TableFormat::kCsv, csv);
  WriteHistory(history, TableFormat::kJson, json);
  EXPECT_THAT(table.str(), HasSubstr("campaign 6 (build b6) -> campaign 7 (build b7): +"));
  EXPECT_THAT(table.str(), HasSubstr("also changed: ditbench b6 -> b7, driver 550 -> 560"));
  EXPECT_THAT(table.str(), HasSubstr("no change point"));
  EXPECT_THAT(csv.str(), HasSubstr("sweep,trial_key,campaign,started_at,build,latency_ms,"));
  EXPECT_EQ(Count(csv.str(), "\n"), 1 + 2 * 12);
  const nlohmann::json parsed = nlohmann::json::parse(json.str());
  EXPECT_EQ(parsed["format"], "ditbench-history");
  EXPECT_EQ(parsed["version"], kHistoryFormatVersion);
  EXPECT_EQ(parsed["campaigns"].size(), 12u);
}

// Issue 34: a key that went 40.66 -> 23.26 ms was printed as "trend +0.0% since campaign 1",
// the fitted level's change under a name that read as the first-to-latest change.
TEST_F(HistoryTest, TheTableNamesFirstToLatestAndTheLevelChangeApart) {
  {
    auto db = ResultsDb::Open(path_);
    for (double ms : {40.66, 31.0, 23.26}) {
      const std::int64_t id =
          db->writer().ResumeOrCreateCampaign(test::MakeCampaign("nightly"), true);
      db->writer().RecordTrial(
          id, test::MakeTrialWithSamples(test::MakeConfig(1), {ms, ms * 1.01, ms * 0.99}));
    }
  }
  const History history = Load();
  ASSERT_EQ(history.keys.size(), 1u);
  EXPECT_NEAR(history.keys[0].first_to_latest_pct, -42.8, 0.05);
  std::ostringstream table, json;
  WriteHistory(history, TableFormat::kText, table);
  EXPECT_THAT(table.str(),
              HasSubstr("first -> latest: 40.660 -> 23.260 ms (-42.8%), campaign 1 -> 3"));
  EXPECT_THAT(table.str(), HasSubstr(fmt::format("level change {:+.1f}% (the fitted level",
                                                 history.keys[0].level_change_pct)));
  EXPECT_THAT(table.str(), Not(HasSubstr("trend")));
  WriteHistory(history, TableFormat::kJson, json);
  const nlohmann::json parsed = nlohmann::json::parse(json.str());
  EXPECT_NEAR(parsed["keys"][0]["first_to_latest_pct"].get<double>(), -42.8, 0.05);
  EXPECT_EQ(parsed["keys"][0]["first_ms"], 40.66);
}

TEST_F(HistoryTest, ALatestCampaignSixtyTimesSlowerIsNamedNotCalledNoChange) {
  Write(/*nights=*/3, /*step_at=*/3, /*step=*/60);  // 100 -> 100 -> 6000 ms
  const History history = Load();
  // The 1-rank key took the step; the 2-rank one did not.
  const auto stepped =
      std::find_if(history.keys.begin(), history.keys.end(),
                   [](const KeyHistory& k) { return k.first_to_latest_pct > 1000; });
  ASSERT_NE(stepped, history.keys.end());
  const KeyHistory& key = *stepped;
  EXPECT_TRUE(key.changes.empty());
  EXPECT_TRUE(key.noise_from_intervals);
  EXPECT_LT(key.noise_pct, 10);  // not the step itself (over 700%)
  ASSERT_EQ(key.edges.size(), 1u);
  EXPECT_TRUE(key.edges[0].latest);
  std::ostringstream text;
  WriteHistory(history, TableFormat::kText, text);
  EXPECT_THAT(text.str(), HasSubstr("not a change point yet: campaign 3, the latest, is +"));
  EXPECT_THAT(text.str(), Not(HasSubstr("  no change point\n  not a change point")));
}

TEST_F(HistoryTest, ASeriesNoisierThanTheSmallestChangeSaysWhyItHasNone) {
  auto db = ResultsDb::Open(path_);
  for (int night = 1; night <= 6; ++night) {  // 23, 1400, 23, 1400, ... ms
    const std::int64_t id = db->writer().ResumeOrCreateCampaign(
        test::MakeCampaign("nightly", fmt::format("b{}", night)), true);
    const double ms = night % 2 ? 23 : 1400;
    db->writer().RecordTrial(
        id, test::MakeTrialWithSamples(test::MakeConfig(1), {ms, ms * 1.01, ms * 0.99}));
  }
  db.reset();
  const History history = Load();
  ASSERT_EQ(history.keys.size(), 1u);
  EXPECT_TRUE(history.keys[0].changes.empty());
  const std::vector<std::string> notes = HistoryNotes(history.keys[0]);
  ASSERT_FALSE(notes.empty());
  EXPECT_THAT(notes.back(), HasSubstr("cannot be told from noise"));
}

TEST_F(HistoryTest, MarkdownIsOnePipeTableRowPerKey) {
  Write();
  std::ostringstream markdown;
  WriteHistory(Load(), TableFormat::kMarkdown, markdown);
  const std::string text = markdown.str();
  EXPECT_THAT(text,
              ::testing::StartsWith(
                  "| sweep | trial key | configuration | campaigns | first ms | latest ms "
                  "| first to latest | level change | noise | change points | notes |\n"
                  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n"));
  EXPECT_EQ(Count(text, "\n"), 2 + 2);
  EXPECT_EQ(Count(text, "| nightly | "), 2);
}

TEST_F(HistoryTest, TheReportGainsAHistorySectionFromThreeCampaigns) {
  Write(2, 2, 1);
  ReportOptions options{path_, {}, {}, dir_ / "r.html", ""};
  EXPECT_THAT(RenderHtmlReport(options), Not(HasSubstr("id=\"history\"")));
  std::filesystem::remove(path_);
  Write();
  {
    auto db = ResultsDb::Open(path_);
    db->writer().SetCampaignExcluded(3, true);
  }
  const std::string html = RenderHtmlReport(options);
  ASSERT_THAT(html, HasSubstr("<section id=\"history\">"));
  EXPECT_EQ(Count(html, "<canvas id=\"history-"), 2);
  EXPECT_THAT(html, HasSubstr("from campaign 7 (build b7, was b6)"));
  EXPECT_THAT(html, HasSubstr("\"#6\""));
  EXPECT_THAT(html, Not(HasSubstr("\"#3\"")));  // excluded: not in the report's history
  EXPECT_THAT(html, HasSubstr(" b4: 1 rank"));
  EXPECT_THAT(html, Not(HasSubstr(" b3: 1 rank")));  // nor in its tables
  // Named by id, an excluded campaign is reported (its history still leaves it out).
  const std::string named = RenderHtmlReport({path_, {}, {3, 4}, dir_ / "r.html", ""});
  EXPECT_THAT(named, HasSubstr(" b3: 1 rank"));
}

// Twelve nights: the campaigns' table is folded under one line; two campaigns keep it open.
TEST_F(HistoryTest, ManyCampaignsFoldTheirTable) {
  Write();
  const std::string many = RenderHtmlReport({path_, {}, {}, dir_ / "r.html", ""});
  EXPECT_THAT(many, HasSubstr("<details class=\"campaigns\"><summary>12 campaigns, #1 ("));
  const std::string two = RenderHtmlReport({path_, {}, {3, 4}, dir_ / "r.html", ""});
  EXPECT_THAT(two, Not(HasSubstr("<details class=\"campaigns\">")));
  EXPECT_THAT(two, HasSubstr("<h2 id=\"campaigns\">Campaigns</h2>"));
}

// The History section drawn in headless Chromium: every chart inked, no script error.
TEST_F(HistoryTest, TheSectionDrawsInABrowser) {
  const char* chromium = "/usr/bin/chromium";
  if (!std::ifstream(chromium).good()) {
    GTEST_SKIP() << "*** chromium is not installed: the history charts were NOT rendered. ***";
  }
  Write();
  const std::filesystem::path page = dir_ / "history.html";
  std::ostringstream html;
  WriteHistory(Load(), TableFormat::kHtml, html);
  std::string checked = html.str();
  ASSERT_EQ(Count(checked, "<canvas "), 2);
  checked.replace(checked.rfind("</body>"), 7, R"(<script>
setTimeout(function () {
  var inked = 0;
  document.querySelectorAll('canvas').forEach(function (canvas) {
    var data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (var i = 3; i < data.length; i += 4) if (data[i] !== 0) { inked++; return; }
  });
  document.body.setAttribute('data-inked-canvases', String(inked));
}, 100);
</script>
</body>)");
  std::ofstream(page) << checked;
  const std::string command =
      std::string(chromium) +
      " --headless --no-sandbox --disable-gpu "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--enable-logging=stderr --v=0 --user-data-dir=" +
      (dir_ / "profile").string() + " --virtual-time-budget=5000 --dump-dom file://" +
      page.string() + " > " + (dir_ / "dom.html").string() + " 2> " +
      (dir_ / "chromium.log").string();
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream dom_file(dir_ / "dom.html"), log_file(dir_ / "chromium.log");
  const std::string dom{std::istreambuf_iterator<char>(dom_file), {}};
  const std::string log{std::istreambuf_iterator<char>(log_file), {}};
  EXPECT_EQ(Count(dom, "data-drawn=\"1\""), 2);
  EXPECT_THAT(dom, HasSubstr("data-inked-canvases=\"2\""));
  EXPECT_THAT(log, Not(HasSubstr("Uncaught"))) << log;
}

}  // namespace
}  // namespace ditbench::history_test
