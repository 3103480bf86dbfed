#include "cli/compare.h"

#include <fstream>
#include <random>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "base/table_printers.h"

#include "cli/command.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::compare_command_test {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::vector<double> Series(unsigned seed, double ms, int n = 20) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> series;
  for (int i = 0; i < n; ++i) series.push_back(ms * (1 + 0.01 * normal(rng)));
  return series;
}

// Campaign 1 (build abc): ulysses 1 and 2 at 100 and 60 ms on an H100. Campaign 2 (build def):
// the same, ulysses 2 now 72 ms (+20%), and a new ulysses 4 trial. A second database holds
// campaign 1 again as its campaign 1.
class CompareCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& path : {DbPath(), OtherDbPath()}) {
      auto db = ResultsDb::Open(path);
      std::int64_t a = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp", "abc"), true);
      db->writer().RecordTrial(
          a, test::MakeTrialWithSamples(test::MakeConfig(1), Series(1, 100), kGpu));
      db->writer().RecordTrial(
          a, test::MakeTrialWithSamples(test::MakeConfig(2), Series(2, 60), kGpu));
      if (path == OtherDbPath()) break;
      std::int64_t b = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp", "def"), true);
      db->writer().RecordTrial(
          b, test::MakeTrialWithSamples(test::MakeConfig(1), Series(3, 100), kGpu));
      db->writer().RecordTrial(
          b, test::MakeTrialWithSamples(test::MakeConfig(2), Series(4, 72), kGpu));
      db->writer().RecordTrial(
          b, test::MakeTrialWithSamples(test::MakeConfig(4), Series(5, 40), kGpu));
    }
  }

  std::filesystem::path DbPath() const { return dir_ / "results.db"; }
  std::filesystem::path OtherDbPath() const { return dir_ / "other.db"; }

  CompareOptions Options(std::string a = "1", std::string b = "2") const {
    CompareOptions options;
    options.db = DbPath();
    options.a = std::move(a);
    options.b = std::move(b);
    return options;
  }

  int Run(const CompareOptions& options) {
    out_.str("");
    err_.str("");
    return RunCompare(options, out_, err_);
  }

  static constexpr const char* kGpu = "NVIDIA H100 80GB HBM3";
  test::TempDir dir_;
  std::ostringstream out_, err_;
};

TEST_F(CompareCommandTest, TableShowsDifferencesFirstThenVerdictsAndUnmatched) {
  ASSERT_EQ(Run(Options()), kExitOk) << err_.str();
  const std::string text = out_.str();
  EXPECT_THAT(text, HasSubstr("Differences between A and B:\n  build"));
  EXPECT_LT(text.find("build"), text.find("Matched trials: 2 (1 slower, 1 same)"));
  EXPECT_THAT(text, HasSubstr("slower"));
  EXPECT_THAT(text, HasSubstr("pixart-alpha 1024px bf16 denoise steps=20 ulysses=2"));
  EXPECT_THAT(text, HasSubstr("Unmatched trials: 1"));
  EXPECT_THAT(text, HasSubstr("only in B"));
  EXPECT_THAT(text, HasSubstr("gpu default (noise floor 5.0%, minimum effect 2.0%)"));
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CompareCommandTest, FailOnRegressionExitsOneAndNamesTheTrial) {
  CompareOptions options = Options();
  options.fail_on_regression_pct = 10;
  EXPECT_EQ(Run(options), kExitTrialsFailed);
  EXPECT_THAT(err_.str(), StartsWith("ditbench compare: regression: "));
  EXPECT_THAT(err_.str(), HasSubstr("ulysses=2"));
  options.fail_on_regression_pct = 30;  // a 20% slowdown is below it
  EXPECT_EQ(Run(options), kExitOk) << err_.str();
  // B against A is faster, never a regression.
  options = Options("2", "1");
  options.fail_on_regression_pct = 0;
  EXPECT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("faster"));
}

TEST_F(CompareCommandTest, ABusyRegressionIsSkippedUnlessStrictAndTheTableSaysBusy) {
  {
    auto db = ResultsDb::Open(DbPath());
    std::int64_t c = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp", "def"), true);
    TrialRecord busy = test::MakeTrialWithSamples(test::MakeConfig(2), Series(6, 72), kGpu);
    busy.health = {{"busy", true}, {"note", "others used 1.00 cores: burn (pid 42) 1.00"}};
    db->writer().RecordTrial(c, busy);
  }
  CompareOptions options = Options("1", "3");
  options.fail_on_regression_pct = 10;
  EXPECT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("slower, busy B"));
  EXPECT_THAT(out_.str(), HasSubstr("1 trial was measured on a busy machine"));
  EXPECT_THAT(err_.str(), StartsWith("ditbench compare: skipped: "));
  EXPECT_THAT(err_.str(), HasSubstr("measured on a busy machine (B: others used 1.00 cores: burn "
                                    "(pid 42) 1.00); not counted as a regression (--strict "
                                    "counts it)"));
  options.strict = true;
  EXPECT_EQ(Run(options), kExitTrialsFailed);
  EXPECT_THAT(err_.str(), StartsWith("ditbench compare: regression: "));
  EXPECT_THAT(err_.str(), HasSubstr("; measured on a busy machine (B: "));
  options.format = TableFormat::kJson;
  options.fail_on_regression_pct.reset();
  ASSERT_EQ(Run(options), kExitOk);
  const nlohmann::json json = nlohmann::json::parse(out_.str());
  EXPECT_EQ(json["trials"][0]["b_busy"], true);
  EXPECT_EQ(json["trials"][0]["a_busy"], false);
}

TEST_F(CompareCommandTest, HeadlineNamesTheNoiseFloorAndIntervalsTheirCoverage) {
  ASSERT_EQ(Run(Options()), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("Matched trials: 2 (1 slower, 1 same); noise floor 5.0% "
                                    "(gpu default)\n"));
  EXPECT_THAT(out_.str(), HasSubstr("interval (%)"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("95% CI")));
  EXPECT_THAT(out_.str(), HasSubstr("] 95%"));  // 20 iterations a side: a 95% interval
}

TEST_F(CompareCommandTest, JsonIsVersionedAndComplete) {
  CompareOptions options = Options();
  options.format = TableFormat::kJson;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  nlohmann::json json = nlohmann::json::parse(out_.str());
  EXPECT_EQ(json["format"], "ditbench-compare");
  EXPECT_EQ(json["version"], 2);
  EXPECT_EQ(json["noise_floor"]["gpu"]["pct"], 5.0);
  EXPECT_EQ(json["noise_floor"]["gpu"]["source"], "gpu default");
  EXPECT_EQ(json["trials"][0]["ci_bounded"], true);
  EXPECT_EQ(json["trials"][0]["b_busy"], false);
  ASSERT_EQ(json["trials"].size(), 2u);
  EXPECT_EQ(json["trials"][0]["verdict"], "slower");
  EXPECT_NEAR(json["trials"][0]["change_pct"].get<double>(), 20, 2);
  EXPECT_EQ(json["trials"][0]["method"], "iterations");
  EXPECT_GE(json["trials"][0]["ci_coverage"].get<double>(), 0.95);  // many iterations a side
  EXPECT_EQ(json["unmatched"].size(), 1u);
  EXPECT_EQ(json["differences"][0]["setting"], "build");
}

TEST_F(CompareCommandTest, CsvHasAFixedHeaderAndOneLinePerTrial) {
  CompareOptions options = Options();
  options.format = TableFormat::kCsv;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  std::istringstream lines(out_.str());
  std::string header, line;
  std::getline(lines, header);
  EXPECT_THAT(header, StartsWith("trial_key,configuration,device,verdict,change_pct,"));
  EXPECT_THAT(header, EndsWith(",reason,ci_coverage,ci_bounded,a_busy,b_busy,"
                               "a_joules_per_image,b_joules_per_image,energy_ratio"));
  int rows = 0, unmatched = 0;
  while (std::getline(lines, line)) {
    ++rows;
    unmatched += line.find(",unmatched,") != std::string::npos;
  }
  EXPECT_EQ(rows, 3);
  EXPECT_EQ(unmatched, 1);
}

// Markdown says what the table says: the sides, the headline with its noise floor, the
// matched trials and the unmatched ones (issue 51: it dropped the last two).
TEST_F(CompareCommandTest, MarkdownIsTheSidesTheHeadlineThenTheMatchedAndUnmatchedTrials) {
  CompareOptions options = Options();
  options.format = TableFormat::kMarkdown;
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  const std::string text = out_.str();
  EXPECT_THAT(text, StartsWith("A: campaign 1 in "));
  const std::size_t table = text.find("\n\n| ");
  ASSERT_NE(table, std::string::npos) << text;
  std::istringstream lines(text.substr(table + 2));
  std::string header, rule, line;
  std::getline(lines, header);
  std::getline(lines, rule);
  EXPECT_EQ(header,
            "| verdict | change | interval \\(%\\) | A ms | B ms | launches | trial key | "
            "configuration |");
  EXPECT_EQ(rule, "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |");
  int rows = 0;
  while (std::getline(lines, line) && !line.empty()) {
    ++rows;
    EXPECT_EQ(std::count(line.begin(), line.end(), '|'), 9) << line;
  }
  EXPECT_EQ(rows, 2);  // the matched trials
  EXPECT_THAT(text, HasSubstr("| slower | +"));
  EXPECT_THAT(text, HasSubstr("\n\nMatched trials: 2 "));
  EXPECT_THAT(text, HasSubstr("noise floor "));
  EXPECT_THAT(text, HasSubstr("Unmatched trials: 1\n\n| trial key | why | configuration |\n"));
  EXPECT_THAT(text, HasSubstr(" | only in B | "));
}

TEST_F(CompareCommandTest, HtmlGoesToTheOutputFile) {
  CompareOptions options = Options();
  options.format = TableFormat::kHtml;
  options.output = dir_ / "compare.html";
  ASSERT_EQ(Run(options), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("wrote "));
  std::ifstream in(options.output);
  const std::string html{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_THAT(html, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"verdict verdict-slower\">slower</td>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  options.output = dir_ / "no such folder" / "compare.html";
  EXPECT_EQ(Run(options), kExitTrialsFailed);
  EXPECT_THAT(err_.str(), HasSubstr("cannot write"));
}

// A full disk is an error with its cause and exit 1, never "wrote" (issue 19).
TEST_F(CompareCommandTest, AnOutputThatCannotBeWrittenFailsWithItsCause) {
  CompareOptions options = Options();
  options.output = "/dev/full";
  out_.str("");
  EXPECT_EQ(Run(options), kExitTrialsFailed);
  EXPECT_THAT(err_.str(), HasSubstr("cannot write '/dev/full': No space left on device"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("wrote")));
}

TEST_F(CompareCommandTest, SidesInTwoDatabases) {
  ASSERT_EQ(Run(Options(OtherDbPath().string() + ":1", "2")), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("Matched trials: 2 (1 slower, 1 same)"));
}

// Trials that differ only in a knob away from its default (vae_parallel, attention) or in
// steps are named apart in every format: compare's rows of three knob settings all read
// "ulysses=2" before the label named the configuration (issue 51).
TEST_F(CompareCommandTest, EveryFormatNamesTheKnobsAndStepsThatTellTrialsApart) {
  const std::filesystem::path db_path = dir_ / "knobs.db";
  {
    auto db = ResultsDb::Open(db_path);
    TrialConfig plain = test::MakeConfig(2), split = plain, math = plain, short_run = plain;
    split.scope = plain.scope = math.scope = short_run.scope = Scope::kPipeline;
    split.vae_parallel = 2;
    math.attention = AttentionBackend::kMath;
    short_run.steps = 8;
    for (const char* build : {"abc", "def"}) {
      const std::int64_t c =
          db->writer().ResumeOrCreateCampaign(test::MakeCampaign("sp", build), true);
      unsigned seed = 10;
      for (const TrialConfig& config : {plain, split, math, short_run})
        db->writer().RecordTrial(c, test::MakeTrialWithSamples(config, Series(seed++, 60), kGpu));
    }
  }
  for (const char* format : {"table", "markdown", "csv", "json", "html"}) {
    CompareOptions options = Options();
    options.db = db_path;
    options.format = *ParseTableFormat(format);
    if (std::string(format) == "html") options.output = dir_ / "knobs.html";
    ASSERT_EQ(Run(options), kExitOk) << format << ": " << err_.str();
    std::string text = out_.str();
    if (!options.output.empty()) {
      std::ifstream in(options.output);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (std::string(format) == "markdown") std::erase(text, '\\');  // "vae\_parallel"
    EXPECT_THAT(text, HasSubstr("steps=20 ulysses=2 vae_parallel=2")) << format;
    EXPECT_THAT(text, HasSubstr("steps=20 ulysses=2 attention=math")) << format;
    EXPECT_THAT(text, HasSubstr("steps=8 ulysses=2")) << format;
  }
}

TEST_F(CompareCommandTest, MistakesAreOneLineUsageErrors) {
  EXPECT_EQ(Run(Options("1", "9")), kExitUsage);
  EXPECT_THAT(err_.str(), StartsWith("ditbench compare: error: no campaign 9 in "));
  EXPECT_THAT(err_.str(), HasSubstr("known: 1 (sp), 2 (sp)"));
  EXPECT_EQ(Run(Options("1", "two")), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("campaign 'two': expected"));
  EXPECT_EQ(Run(Options((dir_ / "missing.db").string() + ":1", "2")), kExitUsage);
  for (const std::string& message : {err_.str()})
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
}

}  // namespace
}  // namespace ditbench::compare_command_test
