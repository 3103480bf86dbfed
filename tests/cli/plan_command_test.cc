// `ditbench plan` writing to an output that fails, and `plan` and `advise` as Markdown.
#include <cerrno>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "contract/selfcheck_measurements.h"
#include "machine/host_info.h"
#include "storage/results_db.h"
#include "storage/selfcheck_store.h"
#include "tests/support/temp_dir.h"

namespace ditbench::plan_command_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every write fails as on a full disk.
class FullDisk : public std::streambuf {
 protected:
  int_type overflow(int_type) override {
    errno = ENOSPC;
    return traits_type::eof();
  }
  std::streamsize xsputn(const char*, std::streamsize) override {
    errno = ENOSPC;
    return 0;
  }
};

// Standard output replaced by `buffer` while alive.
class StdoutTo {
 public:
  explicit StdoutTo(std::streambuf* buffer) : old_(std::cout.rdbuf(buffer)) {}
  ~StdoutTo() {
    std::cout.rdbuf(old_);
    std::cout.clear();
  }

 private:
  std::streambuf* old_;
};

// A full disk used to leave a truncated plan and exit 0.
TEST(PlanCommandTest, AnOutputThatCannotBeWrittenFailsWithItsCause) {
  test::TempDir dir;
  std::ofstream(dir / "sweep.yaml") << "name: s\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2}\n"
                                       "matrix:\n  ulysses: [1, 2]\n";
  for (const char* format : {"table", "json"}) {
    CLI::App app;
    CLI::App* sub = app.add_subcommand("plan");
    std::function<int()> run = DefinePlanCommand(*sub);
    app.parse("plan " + (dir / "sweep.yaml").string() + " --gpus cpu:2 --db " +
                  (dir / "none.db").string() + " --format " + format,
              false);
    FullDisk full;
    int code = 0;
    ::testing::internal::CaptureStderr();
    {
      StdoutTo redirect(&full);
      code = run();
    }
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(code, kExitTrialsFailed) << format;
    EXPECT_THAT(err, HasSubstr("ditbench plan: error: cannot write the plan to standard output: "
                               "No space left on device"));
  }
}

// `plan` refuses a command workload whose program cannot run, with `run`'s located line.
TEST(PlanCommandTest, ACommandWhoseProgramCannotRunIsRefusedAsRunRefusesIt) {
  test::TempDir dir;
  std::ofstream(dir / "tool.sh") << "#!/bin/sh\n";  // exists, not executable
  for (const char* program : {"./no-such-program", "./tool.sh"}) {
    std::ofstream(dir / "sweep.yaml") << "name: cmd\nworkload: command\ncommand: [" << program
                                      << ", \"{steps}\"]\nmatrix:\n  steps: [1, 2]\n";
    CLI::App app;
    CLI::App* sub = app.add_subcommand("plan");
    std::function<int()> run = DefinePlanCommand(*sub);
    app.parse("plan " + (dir / "sweep.yaml").string() + " --gpus cpu:2 --db " +
                  (dir / "none.db").string(),
              false);
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    const int code = run();
    ::testing::internal::GetCapturedStdout();
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(code, kExitUsage) << program;
    EXPECT_THAT(err, HasSubstr("sweep.yaml:3:11: 'command[0]': program '" +
                               std::string(program) + "'"));
    EXPECT_THAT(err, HasSubstr(std::string(program) == "./tool.sh"
                                   ? "is not executable: " + (dir / "tool.sh").string()
                                   : std::string("not found")));
  }
}

// A parallel trial whose sweep has no 1-rank trial of the same computation would stay unjudged
// for ever (no speedup, no output error): `plan` says so before anything runs.
TEST(PlanCommandTest, AParallelTrialWithoutAOneRankReferenceIsWarnedAbout) {
  test::TempDir dir;
  std::ofstream(dir / "sweep.yaml") << "name: s\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2}\n"
                                       "matrix:\n  precision: [fp32, bf16]\n  ulysses: [1, 2]\n"
                                       "exclude:\n  - {precision: bf16, ulysses: 1}\n";
  CLI::App app;
  CLI::App* sub = app.add_subcommand("plan");
  std::function<int()> run = DefinePlanCommand(*sub);
  app.parse(
      "plan " + (dir / "sweep.yaml").string() + " --gpus cpu:2 --db " + (dir / "none.db").string(),
      false);
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run(), 0);
  ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("warning: 1 parallel trial(s) have no 1-rank trial"));
  EXPECT_THAT(err, HasSubstr("(bf16 ulysses=2)"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("fp32 ulysses=2")));
}

// Before any trial: the prior, said to be uncalibrated and why; after `ditbench selfcheck` stored
// this host's figures, those, named, with their start-up in place of the prior's 3 s.
TEST(PlanCommandTest, TheFooterSaysWhetherAStoredSelfcheckCalibratedTheEstimates) {
  test::TempDir dir;
  std::ofstream(dir / "sweep.yaml") << "name: s\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2}\n"
                                       "matrix:\n  ulysses: [1, 2]\n";
  const auto plan = [&] {
    CLI::App app;
    CLI::App* sub = app.add_subcommand("plan");
    std::function<int()> run = DefinePlanCommand(*sub);
    app.parse("plan " + (dir / "sweep.yaml").string() + " --gpus cpu:2 --db " +
                  (dir / "results.db").string(),
              false);
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(run(), 0);
    return ::testing::internal::GetCapturedStdout();
  };
  EXPECT_THAT(plan(), HasSubstr("uncalibrated prior: no database at"));

  SelfcheckMeasurements m;
  m.device = "cpu";
  SelfcheckCalibration c;
  c.model = "pixart-alpha-tiny";
  c.build_ms = 3;
  for (const int threads : {1, 2})
    for (const auto& [pixels, elements, gflop, ms] :
         {std::tuple{192, 18432.0, 0.093, 2.0}, std::tuple{384, 73728.0, 0.622, 8.0}})
      c.forward.push_back(
          {"bf16", pixels, threads, 3 - threads, 1, elements, gflop, ms * 2 / threads});
  m.calibration = c;
  m.launch_wall_s = 0.6;
  m.comm = SelfcheckComm{2, 1.0, 0.5, 300};
  SelfcheckRecord record;
  record.device = "cpu";
  record.build = "b7";
  record.host = Hostname();
  record.started_at = "2026-11-27T19:00:00.000Z";
  record.rows = {{"worker", SelfcheckVerdict::kPass, "", ""},
                 {"host load", SelfcheckVerdict::kPass, "", ""}};
  record.measurements = SelfcheckJson(m);
  ResultsDb::Open(dir / "results.db")->selfchecks().Record(record);
  const std::string out = plan();
  EXPECT_THAT(out, HasSubstr("calibrated by selfcheck #1 of cpu on " + Hostname() +
                             ", build b7, 2026-11-27T19:00"));
  EXPECT_THAT(out, HasSubstr("this machine's measured forward rates"));
  EXPECT_THAT(out, HasSubstr("the link measured by ditbench selfcheck (2 ranks)"));
  EXPECT_THAT(out, HasSubstr("start-up 0.60 s measured by ditbench selfcheck"));
  EXPECT_THAT(out, Not(HasSubstr("uncalibrated")));
}

TEST(PlanCommandTest, MarkdownIsAPipeTableOfTheTrials) {
  test::TempDir dir;
  std::ofstream(dir / "sweep.yaml") << "name: s\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2}\n"
                                       "matrix:\n  ulysses: [1, 2]\n";
  CLI::App app;
  CLI::App* sub = app.add_subcommand("plan");
  std::function<int()> run = DefinePlanCommand(*sub);
  app.parse("plan " + (dir / "sweep.yaml").string() + " --gpus cpu:2 --db " +
                (dir / "none.db").string() + " --format markdown",
            false);
  std::ostringstream out;
  int code = 0;
  {
    StdoutTo redirect(out.rdbuf());
    code = run();
  }
  EXPECT_EQ(code, 0);
  std::istringstream lines(out.str());
  std::string header, rule, line;
  std::getline(lines, header);
  std::getline(lines, rule);
  EXPECT_THAT(header, ::testing::StartsWith("| trial | model | res | prec | "));
  EXPECT_THAT(header, ::testing::EndsWith(" | ws | iter \\(ms\\) | trial | mem/rank | plan |"));
  EXPECT_THAT(rule, ::testing::StartsWith("| --- | --- | ---: | --- | ---: |"));
  const auto bars = [](const std::string& text) {
    return std::count(text.begin(), text.end(), '|');
  };
  EXPECT_EQ(bars(rule), bars(header));
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    EXPECT_EQ(bars(line), bars(header)) << line;
    EXPECT_THAT(line, ::testing::EndsWith(" | run |"));
  }
  EXPECT_EQ(rows, 2);
}

// Trials that differ only in a setting with no column of its own (here the graph mode and the
// VAE tile) read apart: the settings column names what is not at its default, as `query`'s
// settings column and the report's labels do; a sweep that varies none has no such column.
TEST(PlanCommandTest, ASettingWithoutItsOwnColumnIsNamedInTheSettingsColumn) {
  test::TempDir dir;
  std::ofstream(dir / "sweep.yaml") << "name: s\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2, "
                                       "scope: pipeline}\n"
                                       "matrix:\n  graph: [eager, cuda_graph]\n"
                                       "  vae_tile: [0, 128]\n";
  std::ofstream(dir / "plain.yaml") << "name: p\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2}\n"
                                       "matrix:\n  ulysses: [1, 2]\n";
  const auto plan = [&](const std::string& sweep) {
    CLI::App app;
    CLI::App* sub = app.add_subcommand("plan");
    std::function<int()> run = DefinePlanCommand(*sub);
    app.parse("plan " + (dir / sweep).string() + " --gpus cpu:2 --db " + (dir / "none.db").string(),
              false);
    std::ostringstream out;
    ::testing::internal::CaptureStderr();
    {
      StdoutTo redirect(out.rdbuf());
      EXPECT_EQ(run(), 0);
    }
    ::testing::internal::GetCapturedStderr();
    return out.str();
  };
  const std::string varied = plan("sweep.yaml");
  EXPECT_THAT(varied, HasSubstr(" settings "));
  EXPECT_THAT(varied, HasSubstr("graph=cuda_graph vae_tile=128"));
  EXPECT_THAT(varied, HasSubstr(" vae_tile=128 "));
  EXPECT_THAT(varied, HasSubstr(" graph=cuda_graph "));
  EXPECT_THAT(plan("plain.yaml"), Not(HasSubstr("settings")));
}

// `advise` on a database without trials: every layout predicted, one pipe table with the
// group first.
TEST(AdviseCommandTest, MarkdownIsAPipeTableWithTheGroupFirst) {
  test::TempDir dir;
  std::ofstream(dir / "sweep.yaml") << "name: s\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2}\n"
                                       "matrix:\n  ulysses: [1, 2]\n";
  ResultsDb::Open(dir / "results.db");  // created, empty
  CLI::App app;
  CLI::App* sub = app.add_subcommand("advise");
  std::function<int()> run = DefineAdviseCommand(*sub);
  app.parse("advise " + (dir / "sweep.yaml").string() + " --gpus cpu:2 --db " +
                (dir / "results.db").string() + " --format markdown",
            false);
  std::ostringstream out;
  int code = 0;
  {
    StdoutTo redirect(out.rdbuf());
    code = run();
  }
  EXPECT_EQ(code, 0);
  std::istringstream lines(out.str());
  std::string header, rule, line;
  std::getline(lines, header);
  std::getline(lines, rule);
  EXPECT_EQ(header,
            "| group | rank | trial | layout | latency \\[95% interval\\] | source | "
            "P\\(beats leader\\) | speedup |");
  EXPECT_EQ(rule, "| --- | ---: | --- | --- | --- | ---: | --- | --- |");
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    // The group is named by its label, as the report names it (no internal key).
    int bars = 0;
    for (std::size_t i = 0; i < line.size(); ++i)
      bars += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    EXPECT_EQ(bars, 9) << line;
    EXPECT_THAT(line, HasSubstr("| pixart-alpha-tiny · "));
  }
  EXPECT_EQ(rows, 2) << out.str();
}

// `advise` names each layout with every knob away from its default (ConfigurationLabel), in
// every format and in its recommendation: it recommended "ulysses=2" when the leader was
// `ulysses=2 vae_parallel=2` (issue 51).
TEST(AdviseCommandTest, EveryFormatAndTheRecommendationNameTheKnobs) {
  test::TempDir dir;
  std::ofstream(dir / "sweep.yaml") << "name: s\n"
                                       "defaults: {model: pixart-alpha-tiny, steps: 2, "
                                       "scope: pipeline, ulysses: 2}\n"
                                       "matrix:\n  vae_parallel: [1, 2]\n";
  ResultsDb::Open(dir / "results.db");  // created, empty
  const auto advise = [&](const std::string& format) {
    CLI::App app;
    CLI::App* sub = app.add_subcommand("advise");
    std::function<int()> run = DefineAdviseCommand(*sub);
    app.parse("advise " + (dir / "sweep.yaml").string() + " --gpus cpu:2 --db " +
                  (dir / "results.db").string() + " --format " + format,
              false);
    std::ostringstream out;
    StdoutTo redirect(out.rdbuf());
    EXPECT_EQ(run(), 0) << format;
    return out.str();
  };
  const nlohmann::json json = nlohmann::json::parse(advise("json"));
  ASSERT_EQ(json["groups"].size(), 1u) << json.dump(2);
  std::set<std::string> layouts;
  for (const nlohmann::json& t : json["groups"][0]["ranked"]) layouts.insert(t["layout"]);
  EXPECT_EQ(layouts, (std::set<std::string>{"ulysses=2", "ulysses=2 vae_parallel=2"}));
  const std::string leader = json["groups"][0]["ranked"][0]["layout"];
  const std::string table = advise("table");
  EXPECT_THAT(table, HasSubstr("ulysses=2 vae_parallel=2"));
  EXPECT_THAT(table, HasSubstr("recommendation: " + leader + " ("));
  EXPECT_THAT(advise("markdown"), HasSubstr("| ulysses=2 vae\\_parallel=2 |"));  // escaped
}

}  // namespace
}  // namespace ditbench::plan_command_test
