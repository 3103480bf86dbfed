// The answers a user reads first, end to end without LibTorch (issue 34, "Done when"): a
// database made by the real coordinator with tests/fixtures/fake_worker.sh: two quiet nightly
// campaigns, a third measured on a busy machine, then two `ditbench bisect` campaigns of a
// much faster build that measured only the 2-rank trial. The report, `query` and `advise` read
// it as a user would and must give one speedup per row, keep the bisect campaigns out of every
// answer, and never present a busy winner as a plain answer.
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "base/table_printers.h"

#include "cli/query.h"
#include "experiments/sweep_expand.h"
#include "experiments/sweep_spec.h"
#include "experiments/trial.h"
#include "launch/local_launcher.h"
#include "machine/placement.h"
#include "plan/advice_output.h"
#include "plan/advisor.h"
#include "plan/fitted_model.h"
#include "plan/sweep_plan.h"
#include "report/html_report.h"
#include "runner/sweep_run.h"
#include "storage/results_db.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::answers_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class AnswersEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_ / "nightly.yaml")
        << "name: nightly\n"
           "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, "
           "repeats: 5, timeout: 30s}\n"
           "matrix: {ulysses: [1, 2]}\n";
  }

  // One campaign of the sweep: `busy` machine health, `factor` times every latency (a build of
  // another speed), `bisect_position` set: a `ditbench bisect` campaign of the 2-rank trial.
  void Run(const std::filesystem::path& db, bool busy, double factor = 1,
           std::optional<int> bisect_position = std::nullopt) {
    RunOptions o;
    o.sweep = dir_ / "nightly.yaml";
    o.db = db;
    o.gpus = "cpu:2";
    o.worker = DITBENCH_FAKE_WORKER;
    o.fresh = true;
    if (bisect_position) {
      o.build_under_test = RunOptions::BuildUnderTest{"rev-fast", "session-1", *bisect_position};
      o.only = {TwoRankKey()};
    }
    test::FakeHealthProbe health;
    health.disturbed = busy;
    LocalLauncher launcher({"PATH=/usr/bin:/bin", "FAKE_WORKER_SAMPLES=10,10.1,9.9,10.2,9.8",
                            "FAKE_WORKER_SPEED_LAW=layout",
                            "FAKE_WORKER_FACTOR=" + std::to_string(factor)});
    SweepEffects effects{launcher, interrupt_, gpus_};
    effects.health = &health;
    std::stringstream out, err;
    ASSERT_EQ(RunSweep(o, effects, out, err), 0) << out.str() << err.str();
  }

  std::string TwoRankKey() {
    ParseResult parsed = ParseSweepFile(dir_ / "nightly.yaml");
    EXPECT_TRUE(parsed.ok());
    for (const TrialConfig& trial : ExpandSweep(parsed.spec, 2).trials)
      if (trial.world_size() == 2) return TrialKey(trial);
    return "";
  }

  // The nightly database: campaigns 1, 2 quiet, 3 busy, 4 and 5 bisect (10x faster build).
  std::filesystem::path Nightly() {
    const std::filesystem::path db = dir_ / "nightly.db";
    Run(db, /*busy=*/false);
    Run(db, /*busy=*/false);
    Run(db, /*busy=*/true);
    Run(db, /*busy=*/false, 0.1, 0);
    Run(db, /*busy=*/false, 0.1, 1);
    return db;
  }

  // `ditbench query --db DB --format json [--columns ...]` as rows.
  nlohmann::json Query(const std::filesystem::path& db, std::vector<std::string> columns = {}) {
    QueryOptions options;
    options.db = db;
    options.format = TableFormat::kJson;
    options.columns = std::move(columns);
    std::ostringstream out, err;
    EXPECT_EQ(RunQuery(options, out, err), 0) << err.str();
    return nlohmann::json::parse(out.str());
  }

  // `ditbench advise nightly.yaml --db DB`, as the command computes it.
  Advice AdviseFrom(const std::filesystem::path& db) {
    ParseResult parsed = ParseSweepFile(dir_ / "nightly.yaml");
    const Placement placement = ResolvePlacement("cpu:2", gpus_);
    PlanAssumptions assumptions;
    assumptions.device = "cpu";
    const SweepPlan plan = PlanSweep(parsed.spec, placement.capacity, assumptions, db);
    plans_.push_back(std::make_unique<SweepPlan>(plan));  // AdvisedTrial borrows its trials
    Advice advice = Advise(*plans_.back(), FitFromDatabase(db, "cpu"), {});
    AttachSpeedups(advice, ResultsDb::Open(db, /*read_only=*/true)->reader());
    return advice;
  }

  static std::string Section(const std::string& html, const std::string& id) {
    const std::size_t start = html.find("<h2 id=\"" + id + "\"");
    EXPECT_NE(start, std::string::npos) << id;
    const std::size_t end = html.find("<h2", start + 1);
    return html.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }

  test::TempDir dir_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::vector<std::unique_ptr<SweepPlan>> plans_;
};

TEST_F(AnswersEndToEndTest, OneSpeedupPerRowNoBisectAnswerAndABusyWinnerMarked) {
  const std::filesystem::path db = Nightly();
  ReportOptions report;
  report.db = db;
  const std::string html = RenderHtmlReport(report);

  // The Summary's winner is the newest answering campaign's (3, busy), marked in its cell;
  // neither bisect campaign (4, 5: a 10x faster build, one trial each) is named.
  const std::string summary = Section(html, "summary");
  EXPECT_THAT(summary, HasSubstr("winner suspect"));
  EXPECT_THAT(summary, HasSubstr("suspect: busy"));
  EXPECT_THAT(summary, HasSubstr("#3 "));
  EXPECT_THAT(summary, Not(HasSubstr("#4 ")));
  EXPECT_THAT(summary, Not(HasSubstr("#5 ")));
  // Nor any group table, chart or baseline: no row of campaigns 4 or 5 anywhere.
  EXPECT_THAT(html, Not(HasSubstr("<tr id=\"trial-4-")));
  EXPECT_THAT(html, Not(HasSubstr("<tr id=\"trial-5-")));
  // The campaigns table lists them and says why they are left out.
  EXPECT_THAT(Section(html, "campaigns"), HasSubstr("bisect: left out"));

  // Every speedup the report's tables show, by (campaign, trial key).
  std::map<std::pair<std::int64_t, std::string>, std::string> report_speedups;
  const std::regex row(
      "<tr id=\"trial-(\\d+)-([0-9a-f]+)\">.*?<td class=\"num speedup\"[^>]*>([0-9.]+x)");
  for (std::sregex_iterator it(html.begin(), html.end(), row), end; it != end; ++it)
    report_speedups[{std::stoll((*it)[1]), (*it)[2]}] = (*it)[3];
  ASSERT_EQ(report_speedups.size(), 6u);  // 3 answering campaigns x 2 trials

  // query's speedup is the report's, row by row; its trust column names the doubts.
  const nlohmann::json rows = Query(db);
  std::size_t compared = 0;
  for (const nlohmann::json& r : rows) {
    const auto found = report_speedups.find({r["campaign"], r["trial_key"]});
    if (r["campaign"].get<std::int64_t>() >= 4) {
      EXPECT_TRUE(r["speedup"].is_null()) << r.dump();  // bisect: no answer
      continue;
    }
    ASSERT_NE(found, report_speedups.end()) << r.dump();
    ASSERT_TRUE(r["speedup"].is_number()) << r.dump();
    EXPECT_EQ(fmt::format("{:.2f}x", r["speedup"].get<double>()), found->second) << r.dump();
    if (r["campaign"] == 3) {
      EXPECT_THAT(r["speedup_trust"].get<std::string>(), HasSubstr("busy"));
    }
    ++compared;
  }
  EXPECT_EQ(compared, 6u);

  // advise's speedup of each measured trial is the same number for the same measurement.
  const Advice advice = AdviseFrom(db);
  std::size_t advised = 0;
  for (const GroupAdvice& g : advice.groups)
    for (const AdvisedTrial& t : g.ranked) {
      if (!t.measured) continue;
      ASSERT_TRUE(t.speedup) << t.trial->key;
      const auto found = report_speedups.find({t.campaign, t.trial->key});
      ASSERT_NE(found, report_speedups.end()) << t.campaign << " " << t.trial->key;
      EXPECT_EQ(fmt::format("{:.2f}x", *t.speedup), found->second);
      ++advised;
    }
  EXPECT_EQ(advised, 2u);
}

TEST_F(AnswersEndToEndTest, BaselineComparesWithTheNewestAnsweringCampaign) {
  const std::filesystem::path db = Nightly();
  ReportOptions report;
  report.db = db;
  report.baseline = "1";
  const std::string comparison = Section(RenderHtmlReport(report), "comparison");
  EXPECT_THAT(comparison, HasSubstr("campaign 1 (baseline) vs 3"));
  EXPECT_THAT(comparison, HasSubstr("Candidate: the newest campaign, #3"));
}

TEST_F(AnswersEndToEndTest, AdviseOnABusyMachineSaysMeasuredBusyAndNeverPredicted) {
  const std::filesystem::path db = dir_ / "busy.db";
  Run(db, /*busy=*/true);
  const Advice advice = AdviseFrom(db);
  std::ostringstream table;
  WriteAdviceTable(advice, table);
  EXPECT_THAT(table.str(), HasSubstr("measured (busy)"));
  EXPECT_THAT(table.str(), Not(HasSubstr("nothing measured yet")));
  EXPECT_THAT(table.str(), Not(HasSubstr(" predicted ")));
  // The group is named as the report names it, not by its internal key.
  EXPECT_THAT(table.str(), HasSubstr("pixart-alpha-tiny · 256 px · bf16"));
  EXPECT_THAT(table.str(), Not(HasSubstr("pixart-alpha-tiny|256|")));
  for (const GroupAdvice& g : advice.groups)
    for (std::size_t i : g.to_measure) EXPECT_EQ(i, 0u);  // only the busy leader, again
}

}  // namespace
}  // namespace ditbench::answers_e2e_test
