// Untrusted text through every output (issue 33, section 2): two campaigns run by the real
// coordinator with tests/fixtures/fake_worker.sh, then a database edited as another program or
// an older ditbench might leave it (a label that is not UTF-8, a worker's build holding escape
// sequences, a busy note with a screen clear), read back by campaigns, history (table, CSV,
// JSON, HTML), compare, query and report: no escape byte reaches a console output, every JSON
// output parses, and a label that is not UTF-8 is refused at the command line.
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "base/table_printers.h"

#include "base/exit_codes.h"
#include "cli/campaigns.h"
#include "cli/compare.h"
#include "cli/history.h"
#include "cli/query.h"
#include "launch/local_launcher.h"
#include "report/html_report.h"
#include "runner/sweep_run.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::hostile_text_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class HostileTextEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_ / "hostile.yaml")
        << "name: hostile\n"
           "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, "
           "repeats: 3, timeout: 30s}\n";
    for (int night = 1; night <= 2; ++night) {
      RunOptions o;
      o.sweep = dir_ / "hostile.yaml";
      o.db = db_;
      o.gpus = "cpu:1";
      o.worker = DITBENCH_FAKE_WORKER;
      o.fresh = true;
      LocalLauncher launcher({"PATH=/usr/bin:/bin", "FAKE_WORKER_SAMPLES=10,10.1,9.9",
                              "FAKE_WORKER_ENVIRONMENT={\"build\":\"rev-" +
                                  std::to_string(night) + "\"}"});
      std::stringstream out, err;
      ASSERT_EQ(RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out, err), 0)
          << out.str() << err.str();
    }
    // What another program may have written: bytes that are not UTF-8 and escape sequences.
    Exec("UPDATE campaigns SET label = CAST(x'6e696768748ff1c0' || x'1b5b324a' AS TEXT), "
         "environment_json = json_set(environment_json, '$.worker.build', "
         "'rev' || char(27) || ']0;owned' || char(7) || char(27) || '[2J') WHERE id = 2");
    Exec("UPDATE trials SET health_json = json_object('busy', 1, 'note', "
         "'burn' || char(27) || '[31m' || CAST(x'ff' AS TEXT))");
  }

  void Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
    char* message = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
    const std::string why = message ? message : "";
    sqlite3_free(message);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << why;
  }

  std::string History(const std::string& format) {
    HistoryCommandOptions options;
    options.db = db_;
    options.format = *ParseTableFormat(format);
    std::ostringstream out, err;
    EXPECT_EQ(RunHistory(options, out, err), kExitOk) << err.str();
    return out.str() + err.str();
  }

  test::TempDir dir_;
  std::filesystem::path db_ = dir_ / "results.db";
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
};

TEST_F(HostileTextEndToEndTest, CampaignsListEscapesTheLabelAndTheBuild) {
  std::ostringstream out, err;
  ASSERT_EQ(RunCampaigns(CampaignsOptions{db_, {}, {}, {}, ""}, out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), Not(HasSubstr("\x1b")));
  EXPECT_THAT(out.str(), HasSubstr("rev\\x1b]0;owned\\x07\\x1b[2J"));
  EXPECT_THAT(out.str(), HasSubstr("night\xef\xbf\xbd"));
}

TEST_F(HostileTextEndToEndTest, HistoryInEveryFormatIsWrittenAndEscapedForTheTerminal) {
  for (const std::string format : {"table", "csv"})
    EXPECT_THAT(History(format), Not(HasSubstr("\x1b"))) << format;
  const nlohmann::json json = nlohmann::json::parse(History("json"));
  EXPECT_EQ(json["campaigns"].size(), 2u);
  EXPECT_THAT(History("html"), Not(HasSubstr("\x1b")));
}

TEST_F(HostileTextEndToEndTest, CompareTableAndJsonSurviveHostileText) {
  CompareOptions options;
  options.db = db_;
  options.a = "1";
  options.b = "2";
  std::ostringstream table, err;
  RunCompare(options, table, err);
  EXPECT_THAT(table.str() + err.str(), Not(HasSubstr("\x1b")));
  EXPECT_THAT(table.str(), HasSubstr("rev\\x1b]0;owned"));
  options.format = TableFormat::kJson;
  std::ostringstream json;
  RunCompare(options, json, err);
  EXPECT_NO_THROW(nlohmann::json::parse(json.str())) << err.str();
}

TEST_F(HostileTextEndToEndTest, QueryBusyWarningIsEscaped) {
  QueryOptions options;
  options.db = db_;
  std::ostringstream out, err;
  ASSERT_EQ(RunQuery(options, out, err), kExitOk) << err.str();
  EXPECT_THAT(err.str(), HasSubstr("burn\\x1b[31m\xef\xbf\xbd"));
  EXPECT_THAT(out.str() + err.str(), Not(HasSubstr("\x1b")));
}

TEST_F(HostileTextEndToEndTest, ReportIsRenderedFromADatabaseWithInvalidUtf8) {
  ReportOptions options;
  options.db = db_;
  std::string html;
  ASSERT_NO_THROW(html = RenderHtmlReport(options));
  EXPECT_THAT(html, Not(HasSubstr("\x1b")));
}

TEST_F(HostileTextEndToEndTest, ALabelThatIsNotUtf8OrHoldsControlsIsRefused) {
  for (const std::string& label : {std::string("night\xff"), std::string("a\x1b[2Jb"),
                                  std::string(201, 'x')}) {
    CampaignsOptions options{db_, {}, {}, 1, label};
    std::ostringstream out, err;
    EXPECT_EQ(RunCampaigns(options, out, err), kExitUsage);
    EXPECT_THAT(err.str(), HasSubstr("--label N TEXT: "));
    EXPECT_THAT(err.str(), Not(HasSubstr("\x1b")));
  }
  CampaignsOptions fine{db_, {}, {}, 1, "nach dem Treiber-Update \xc2\xb5s"};
  std::ostringstream out, err;
  EXPECT_EQ(RunCampaigns(fine, out, err), kExitOk) << err.str();
}

}  // namespace
}  // namespace ditbench::hostile_text_e2e_test
