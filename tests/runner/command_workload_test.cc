// The `command` workload end to end with real processes and no LibTorch: the real coordinator
// (RunSweep with the real LocalLauncher) sweeps tests/fixtures/command_bench.py, a Python
// script (standard library only) that times itself through python/ditbench_result.py. Each
// case checks what the database, `query` and the report say.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <sqlite3.h>
#include "base/table_printers.h"

#include "cli/query.h"
#include "launch/local_launcher.h"
#include "plan/plan_output.h"
#include "plan/sweep_plan.h"
#include "report/html_report.h"
#include "runner/sweep_run.h"
#include "stats/stats.h"
#include "storage/statement.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::command_workload_test {
namespace {

class CommandWorkloadTest : public ::testing::Test {
 protected:
  // A sweep of command_bench.py in `mode`, with a custom axis `size` swept over `sizes`.
  std::string Sweep(const std::string& mode, const std::string& sizes = "[1, 2]",
                    const std::string& extra = "") {
    return "name: cmd\n"
           "workload: command\n"
           "command: [python3, " DITBENCH_COMMAND_BENCH ", --steps, \"{steps}\", --size, "
           "\"{size}\", --mode, " + mode + "]\n"
           "defaults: {model: pixart-alpha-tiny, steps: 2, warmup: 1, repeats: 3, timeout: 60s}\n"
           "matrix:\n"
           "  size: " + sizes + "\n" + extra;
  }
  int Run(const std::string& yaml) {
    std::ofstream(dir_ / "sweep.yaml") << yaml;
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "results.db";
    o.gpus = "cpu:2";
    out_.str("");
    err_.str("");
    LocalLauncher launcher(CurrentEnvironment());
    return RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out_, err_);
  }
  std::vector<std::string> Column(const std::string& sql) {
    SqliteConnection db = OpenSqlite((dir_ / "results.db").string(), SQLITE_OPEN_READONLY);
    Statement statement(db.get(), sql);
    std::vector<std::string> values;
    while (statement.Step()) values.push_back(statement.IsNull(0) ? "NULL" : statement.Text(0));
    return values;
  }
  std::string Query(std::vector<std::string> where, std::vector<std::string> columns,
                    std::string sort = "") {
    QueryOptions q;
    q.sort = std::move(sort);
    q.db = dir_ / "results.db";
    q.where = std::move(where);
    q.columns = std::move(columns);
    q.format = TableFormat::kCsv;
    std::stringstream out, err;
    EXPECT_EQ(RunQuery(q, out, err), 0) << err.str();
    return out.str();
  }
  std::string ReadFile(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  test::TempDir dir_;
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::stringstream out_, err_;
};

TEST_F(CommandWorkloadTest, PythonScriptWithCustomAxisRunsEndToEnd) {
  ASSERT_EQ(Run(Sweep("ok")), 0) << out_.str() << err_.str();
  EXPECT_EQ(Column("SELECT status FROM results ORDER BY json_extract(axes, '$.size')"),
            (std::vector<std::string>{"ok", "ok"}));
  EXPECT_EQ(Column("SELECT axes FROM results ORDER BY json_extract(axes, '$.size')"),
            (std::vector<std::string>{"{\"size\":1}", "{\"size\":2}"}));
  EXPECT_EQ(Column("SELECT workload FROM results")[0], "command");
  EXPECT_NE(Column("SELECT command FROM results")[0].find("\"--size\",\"{size}\""),
            std::string::npos);
  // warm-up 1 + 3 timed iterations, each with its stage mark, kept per rank
  EXPECT_EQ(Column("SELECT iterations || '/' || warmup FROM results")[0], "3/1");
  EXPECT_EQ(Column("SELECT COUNT(*) FROM samples WHERE stage = 'compute'")[0], "8");
  // extra numbers from ditbench_result.metric
  EXPECT_EQ(Column("SELECT json_extract(metrics, '$.items') FROM results "
                   "ORDER BY json_extract(axes, '$.size')"),
            (std::vector<std::string>{"4000.0", "8000.0"}));
  // the placeholders were replaced by the trial's values before the program started
  const auto run_dirs = Column("SELECT run_dir FROM results ORDER BY json_extract(axes, '$.size')");
  EXPECT_NE(ReadFile(std::filesystem::path(run_dirs[1]) / "rank0.log")
                .find("argv: --steps 2 --size 2 --mode ok rank 0"),
            std::string::npos);
}

// A program's own numbers flow through the metric table into metric_values, with what it
// declared, and out to `query` as columns by name.
TEST_F(CommandWorkloadTest, ProgramMetricsAreStoredByNameWithTheirDeclarationAndQueried) {
  ASSERT_EQ(Run(Sweep("ok")), 0) << out_.str() << err_.str();
  EXPECT_EQ(Column("SELECT name || ':' || COALESCE(unit, '') || ':' || COALESCE(better, '') "
                   "FROM metric_values v JOIN trials t ON t.id = v.trial_id "
                   "WHERE json_extract(t.config_json, '$.custom.size') = 1 ORDER BY name"),
            (std::vector<std::string>{"items::", "items_per_pass:count:higher"}));
  EXPECT_EQ(Query({"items>5000"}, {"size", "items", "items_per_pass"}),
            "size,items,items_per_pass\r\n2,8000,4000\r\n");
}

TEST_F(CommandWorkloadTest, QueryWhereFiltersOnACustomAxis) {
  ASSERT_EQ(Run(Sweep("ok", "[1, 2, 3]")), 0) << out_.str() << err_.str();
  EXPECT_EQ(Query({"size=3"}, {"size", "status"}), "size,status\r\n3,ok\r\n");
  EXPECT_EQ(Query({"size>=2"}, {"size"}, "size"), "size\r\n2\r\n3\r\n");
  EXPECT_EQ(Query({"size!=2"}, {"size"}, "size:desc"), "size\r\n3\r\n1\r\n");
}

TEST_F(CommandWorkloadTest, ReportGroupsAndShowsCustomAxes) {
  ASSERT_EQ(Run(Sweep("ok")), 0) << out_.str() << err_.str();
  ReportOptions options;
  options.db = dir_ / "results.db";
  const std::string html = RenderHtmlReport(options);
  // One group (same model, resolution, precision, scope, batch, steps); the custom axis tells
  // its rows apart, in the table and on the chart.
  const std::string title = "\">command · pixart-alpha-tiny · 1024 px · bf16 · denoise · "
                            "batch 1 · 2 steps</h2>";
  const auto at = html.find(title);
  ASSERT_NE(at, std::string::npos) << html;
  EXPECT_EQ(html.find(title, at + 1), std::string::npos);
  EXPECT_NE(html.find("<td class=\"wrap\">1 rank size=1</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"wrap\">1 rank size=2</td>"), std::string::npos);
  EXPECT_NE(html.find("\"1 rank size=2\""), std::string::npos);  // a chart label
}

// Non-square resolutions and frames end to end (a program of the user's own may make any):
// stored as written, split into the view's width, height and frames, filtered by `query`, and
// named in the report's groups.
TEST_F(CommandWorkloadTest, NonSquareResolutionsAndFramesReachTheViewQueryAndReport) {
  ASSERT_EQ(Run(Sweep("ok", "[1]", "  resolution: [320x192, 256]\n  frames: [5]\n")), 0)
      << out_.str() << err_.str();
  EXPECT_EQ(Column("SELECT resolution || ' ' || width || 'x' || height || ' ' || frames "
                   "FROM results ORDER BY width"),
            (std::vector<std::string>{"256 256x256 5", "320x192 320x192 5"}));
  EXPECT_EQ(Query({"height=192"}, {"resolution", "width", "height", "frames"}),
            "resolution,width,height,frames\r\n320x192,320,192,5\r\n");
  ReportOptions options;
  options.db = dir_ / "results.db";
  const std::string html = RenderHtmlReport(options);
  EXPECT_NE(html.find("command · pixart-alpha-tiny · 320x192 px · 5 frames · bf16"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("command · pixart-alpha-tiny · 256 px · 5 frames · bf16"),
            std::string::npos);
}

TEST_F(CommandWorkloadTest, TwoRanksEachWriteTheirResult) {
  ASSERT_EQ(Run(Sweep("ok", "[1]", "  ulysses: [2]\n")), 0) << out_.str() << err_.str();
  EXPECT_EQ(Column("SELECT status || ' ' || world_size FROM results")[0], "ok 2");
  EXPECT_EQ(Column("SELECT COUNT(DISTINCT rank) FROM samples")[0], "2");
}

TEST_F(CommandWorkloadTest, GarbageResultIsFailedWithTheLogTail) {
  EXPECT_EQ(Run(Sweep("garbage", "[1]")), 1);
  EXPECT_EQ(Column("SELECT status FROM results")[0], "failed");
  const std::string error = Column("SELECT error FROM results")[0];
  EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
  EXPECT_NE(error.find("log tail (rank0.log): argv: --steps 2 --size 1 --mode garbage rank 0 | "
                       "command_bench: about to write garbage"),
            std::string::npos)
      << error;
}

TEST_F(CommandWorkloadTest, NoResultIsFailedWithTheLogTailAndTheSweepGoesOn) {
  // Two trials: both fail, both are recorded (a failing trial never stops the sweep).
  EXPECT_EQ(Run(Sweep("silent")), 1);
  EXPECT_EQ(Column("SELECT status FROM results"), (std::vector<std::string>{"failed", "failed"}));
  const std::string error = Column("SELECT error FROM results")[0];
  EXPECT_NE(error.find("no readable result file"), std::string::npos) << error;
  EXPECT_NE(error.find("command_bench: forgot to write the result"), std::string::npos) << error;
}

TEST_F(CommandWorkloadTest, NonZeroExitIsFailedWithTheLogTail) {
  EXPECT_EQ(Run(Sweep("exit", "[1]")), 1);
  EXPECT_EQ(Column("SELECT status FROM results")[0], "failed");
  const std::string error = Column("SELECT error FROM results")[0];
  EXPECT_NE(error.find("rank 0 exited with code 4"), std::string::npos) << error;
  EXPECT_NE(error.find("giving up with code 4"), std::string::npos) << error;
}

TEST_F(CommandWorkloadTest, ExceptionInTheTimedFunctionIsRecordedByTheModule) {
  EXPECT_EQ(Run(Sweep("raise", "[1]")), 1);
  EXPECT_EQ(Column("SELECT status FROM results")[0], "failed");
  EXPECT_NE(Column("SELECT error FROM results")[0].find("RuntimeError: the benchmark diverged"),
            std::string::npos);
}

// ditbench_result.py stops adaptive repeats on the same rule as the built-in worker: its
// confidence interval of the median must be stats/stats.cc's, to the last digit.
TEST_F(CommandWorkloadTest, PythonModuleComputesTheMediansIntervalAsStatsDoes) {
  const std::vector<std::vector<double>> series = {
      {10, 11, 12}, {5, 1, 4, 2, 3, 9}, {7.5, 7.25, 7.75, 8, 7, 7.1, 30, 7.2, 7.3, 7.4, 6.9}};
  for (const auto& values : series) {
    std::string list;
    for (double v : values) list += fmt::format("{}{}", list.empty() ? "" : ", ", v);
    const std::string command = fmt::format(
        "python3 -c 'import sys; sys.path.insert(0, \"{}\"); import ditbench_result as d; "
        "print(repr(d._median_ci_relative_half_width([{}])))'",
        DITBENCH_PYTHON_DIR, list);
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char buffer[128] = {};
    const bool read = std::fgets(buffer, sizeof buffer, pipe) != nullptr;
    ASSERT_EQ(::pclose(pipe), 0) << command;
    ASSERT_TRUE(read);
    EXPECT_DOUBLE_EQ(std::stod(buffer), RelativeCiHalfWidth(Summarize(values))) << list;
  }
}

TEST_F(CommandWorkloadTest, PythonModuleReportsTheDiffusersVersionTheScriptImported) {
  const auto environment = [](const std::string& imports) {
    const std::string command = fmt::format(
        "python3 -c 'import sys, types; sys.path.insert(0, \"{}\"); {} import ditbench_result "
        "as d; print(d._result(0, 1, \"ok\", \"\", [], \"max\", None)[\"environment\"]"
        ".get(\"diffusers\"))'",
        DITBENCH_PYTHON_DIR, imports);
    FILE* pipe = ::popen(command.c_str(), "r");
    char buffer[128] = {};
    const bool read = pipe && std::fgets(buffer, sizeof buffer, pipe) != nullptr;
    EXPECT_EQ(pipe ? ::pclose(pipe) : -1, 0) << command;
    return read ? std::string(buffer) : std::string("<nothing>");
  };
  EXPECT_EQ(environment("sys.modules[\"diffusers\"] = types.SimpleNamespace("
                        "__version__=\"0.31.0\");"),
            "0.31.0\n");
  EXPECT_EQ(environment(""), "None\n");  // not imported: not reported
}

TEST_F(CommandWorkloadTest, PlanShowsCustomAxesAndEstimatesOnlyMeasuredCommands) {
  std::ofstream(dir_ / "sweep.yaml") << Sweep("ok");
  ParseResult parsed = ParseSweepFile(dir_ / "sweep.yaml");
  ASSERT_TRUE(parsed.ok());
  SweepPlan plan = PlanSweep(parsed.spec, Capacity{2, false});
  ASSERT_EQ(plan.trials.size(), 2u);
  EXPECT_FALSE(plan.trials[0].estimate);  // no FLOP model of someone else's program
  std::stringstream table;
  WritePlanTable(parsed.spec, plan, PlanAssumptions{}, table);
  EXPECT_NE(table.str().find("pixart-alpha-tiny size=2"), std::string::npos) << table.str();
  // Once measured, the plan uses the measurement.
  ASSERT_EQ(Run(Sweep("ok")), 0) << err_.str();
  plan = PlanSweep(parsed.spec, Capacity{2, false}, PlanAssumptions{}, dir_ / "results.db");
  ASSERT_TRUE(plan.trials[0].estimate);
  EXPECT_EQ(plan.trials[0].estimate->source, "measured");
}

TEST_F(CommandWorkloadTest, UnknownPlaceholderIsASpecErrorBeforeAnythingRuns) {
  const std::string yaml =
      "name: cmd\nworkload: command\ncommand: [python3, bench.py, --steps, \"{stepz}\"]\n";
  EXPECT_EQ(Run(yaml), 2);
  const std::string sweep = (dir_ / "sweep.yaml").string();
  EXPECT_EQ(err_.str().substr(0, err_.str().find('\n')).find(sweep + ":3:39: 'command[3]': "
                                                             "unknown placeholder '{stepz}'"),
            0u)
      << err_.str();
  EXPECT_NE(err_.str().find("did you mean 'steps'?"), std::string::npos) << err_.str();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "results.db"));
}

TEST_F(CommandWorkloadTest, MissingProgramIsASpecErrorNamingTheFile) {
  const std::string yaml =
      "name: cmd\nworkload: command\ncommand: [./no-such-program, \"{steps}\"]\n";
  EXPECT_EQ(Run(yaml), 2);
  EXPECT_NE(err_.str().find(":3:11: 'command[0]': program './no-such-program' not found"),
            std::string::npos)
      << err_.str();
}

}  // namespace
}  // namespace ditbench::command_workload_test
