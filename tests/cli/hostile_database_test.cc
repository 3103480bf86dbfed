// A results database as a hostile or careless program may leave it (issue 49), read by every
// command that reads one: failed trials with error texts of megabytes, read within an
// address-space cap and shown cut; a `results` view edited into a query that never ends,
// refused before it runs. Each read runs in a forked child, under setrlimit(RLIMIT_AS) or
// alarm(), so that a regression fails the test (the child dies) instead of the machine or the
// test run (tests/support/bounded_child.h).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sqlite3.h>
#include "base/table_printers.h"

#include "base/exit_codes.h"
#include "cli/compare.h"
#include "cli/history.h"
#include "cli/query.h"
#include "plan/fitted_model.h"
#include "plan/stored_calibration.h"
#include "report/html_report.h"
#include "storage/results_db.h"
#include "storage/statement.h"
#include "storage/stored_text.h"
#include "tests/support/bounded_child.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::hostile_database_test {
namespace {

using ::testing::HasSubstr;

// This process's address space now (bytes): the child starts with the same.
std::uint64_t AddressSpaceNow() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The longest run of `c` in `text`.
std::size_t LongestRun(const std::string& text, char c) {
  std::size_t longest = 0, run = 0;
  for (char x : text) {
    run = x == c ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

class HostileDatabaseTest : public ::testing::Test {
 protected:
  // Two campaigns of one sweep, each with `trials` failed trials whose error is `error_bytes`
  // of 'Q' (the trial's own error and its launch's).
  void StoreFailedTrials(int trials, std::size_t error_bytes) {
    auto db = ResultsDb::Open(db_);
    const std::string error(error_bytes, 'Q');
    for (int campaign = 0; campaign < 2; ++campaign) {
      const std::int64_t id =
          db->writer().ResumeOrCreateCampaign(test::MakeCampaign("hostile"), true);
      for (int i = 0; i < trials; ++i) {
        const TrialConfig config = test::MakeConfig(1, 1, Precision::kBf16, 256 + 16 * i);
        db->writer().RecordTrial(id, test::MakeTrial(config, TrialStatus::kFailed, 0, error));
      }
    }
  }

  void Exec(const std::string& sql) {
    SqliteConnection raw = OpenSqlite(db_.string(), SQLITE_OPEN_READWRITE);
    ::ditbench::Exec(raw.get(), sql.c_str());
  }

  // Each read command, writing what it shows to `out_` (a file: the child's output must
  // outlive it); its exit code.
  int Query(const std::string& format) {
    QueryOptions options;
    options.db = db_;
    options.format = *ParseTableFormat(format);
    std::ofstream out(out_);
    std::ostringstream err;
    const int code = RunQuery(options, out, err);
    std::ofstream(err_) << err.str();
    return code;
  }
  int History() {
    HistoryCommandOptions options;
    options.db = db_;
    options.format = TableFormat::kMarkdown;
    options.output = out_;
    std::ostringstream out, err;
    const int code = RunHistory(options, out, err);
    std::ofstream(err_) << err.str();
    return code;
  }
  int Compare() {
    CompareOptions options;
    options.db = db_;
    options.a = "1";
    options.b = "2";
    options.format = TableFormat::kMarkdown;
    options.output = out_;
    std::ostringstream out, err;
    const int code = RunCompare(options, out, err);
    std::ofstream(err_) << err.str();
    return code;
  }
  int Report() {
    ReportOptions options;
    options.db = db_;
    options.output = out_;
    try {
      WriteHtmlReport(options);
    } catch (const EditedSchemaError& e) {
      std::ofstream(err_) << e.what();
      return kExitStorageFailed;
    }
    return kExitOk;
  }

  // Every read command by name, as the CLI runs it.
  std::vector<std::pair<std::string, std::function<int()>>> Readers() {
    return {{"query", [this] { return Query("table"); }},
            {"query --format markdown", [this] { return Query("markdown"); }},
            {"query --format csv", [this] { return Query("csv"); }},
            {"report", [this] { return Report(); }},
            {"history", [this] { return History(); }},
            {"compare", [this] { return Compare(); }}};
  }

  test::TempDir dir_;
  std::filesystem::path db_ = dir_ / "results.db";
  std::filesystem::path out_ = dir_ / "out.txt";
  std::filesystem::path err_ = dir_ / "err.txt";
};

// 50 failed trials with 4 MB error texts each (200 MB, each error stored with its trial and
// its launch): every read command once held every text whole, several times over (`report`
// died with std::bad_alloc under a 2.5 GB cap on a 500 MB database). Now each text is read
// cut in SQL, so the commands fit in 128 MB beyond what the test process holds (each once
// needed 200 MB or more beyond it), and what they show holds at most the cut's characters of it.
TEST_F(HostileDatabaseTest, MegabyteErrorTextsAreReadCutWithinAnAddressSpaceCap) {
  StoreFailedTrials(25, 4u << 20);
  const std::uint64_t cap = AddressSpaceNow() + (128u << 20);
  for (const auto& [name, read] : Readers()) {
    std::filesystem::remove(out_);
    std::fflush(nullptr);
    const test::ChildOutcome outcome =
        test::RunInBoundedChild([&read = read] { return read() == kExitOk; }, 120, cap);
    EXPECT_TRUE(outcome.passed()) << name << ": " << outcome.ToString() << ": " << ReadFile(err_);
    const std::string shown = ReadFile(out_);
    EXPECT_LE(LongestRun(shown, 'Q'), kShownTextChars) << name;
    // Those that show an error whole show it cut, and say so (the console table cuts every
    // cell to its column; history and compare show no error).
    if (name == "query --format markdown" || name == "query --format csv" || name == "report") {
      EXPECT_EQ(LongestRun(shown, 'Q'), kShownTextChars) << name;
      EXPECT_THAT(shown, HasSubstr("cut: 4194304 bytes")) << name;
    }
  }
}

// A `results` view edited into a query that never returns a row (a recursive CTE without end):
// `query`, `report`, `history`, `compare` and `plan --db` ran for ever. Each now refuses the
// database at open, naming the view, with exit 3; the planner's reads go without it.
TEST_F(HostileDatabaseTest, AnEndlessResultsViewIsRefusedByEveryReader) {
  StoreFailedTrials(2, 10);
  {
    SqliteConnection raw = OpenSqlite(db_.string(), SQLITE_OPEN_READWRITE);
    Statement view(raw.get(), "SELECT sql FROM sqlite_master WHERE name = 'results'");
    ASSERT_TRUE(view.Step());
    std::string kept = view.Text(0);
    kept.replace(kept.find("VIEW results"), 12, "VIEW results_kept");
    ::ditbench::Exec(raw.get(), kept.c_str());
    ::ditbench::Exec(raw.get(),
                     "DROP VIEW results; CREATE VIEW results AS "
                     "WITH RECURSIVE forever(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM forever) "
                     "SELECT r.* FROM results_kept r WHERE (SELECT max(n) FROM forever) > 0");
  }
  for (const auto& [name, read] : Readers()) {
    std::filesystem::remove(err_);
    std::fflush(nullptr);
    const test::ChildOutcome outcome =
        test::RunInBoundedChild([&read = read] { return read() == kExitStorageFailed; }, 20);
    EXPECT_TRUE(outcome.passed()) << name << ": " << outcome.ToString()
                                  << " (signal 14: its time limit passed: it hung)";
    EXPECT_THAT(ReadFile(err_), HasSubstr("view 'results' is not the one ditbench creates"))
        << name;
  }
  std::fflush(nullptr);
  const test::ChildOutcome plan = test::RunInBoundedChild(
      [this] {
        const StoredCalibration calibration = LoadCalibration(db_, "cpu", "testhost");
        const FittedModel fitted = FitFromDatabase(db_, "cpu");
        return calibration.why_not.find("view 'results'") != std::string::npos && !fitted.model;
      },
      20);
  EXPECT_TRUE(plan.passed()) << "plan --db: " << plan.ToString();
}

}  // namespace
}  // namespace ditbench::hostile_database_test
