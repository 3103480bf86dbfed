// One exit-code convention for every command (README "Exit codes"), held through the real
// `ditbench` program: a database that is there and cannot be read exits 3 from every command
// that reads or writes one; a path with no database, like any other mistake of the user's,
// exits 2. Before issue 51 the same damaged file gave 1 (advise), 2 (query, report, compare,
// history, campaigns, migrate, run) or 0 (plan, which ignored it).
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/exit_codes.h"
#include "storage/results_db.h"
#include "tests/support/ditbench_program.h"
#include "tests/support/temp_dir.h"

namespace ditbench::exit_convention_test {
namespace {

class ExitConventionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.path() / "sweep.yaml") << "name: exit-codes\n"
                                                 "workload: dit\n"
                                                 "defaults:\n"
                                                 "  model: pixart-alpha-tiny\n"
                                                 "  steps: 1\n"
                                                 "  warmup: 0\n"
                                                 "  repeats: 1\n"
                                                 "matrix:\n"
                                                 "  ulysses: [1, 2]\n";
    // Not a database: bytes where SQLite expects its header.
    std::ofstream(dir_.path() / "damaged.db", std::ios::binary)
        << std::string(4096, '\x5a') << "not sqlite";
  }

  // `ditbench ARGS` in the test's folder; its exit code, its standard error in `err_`.
  int Ditbench(const std::string& args) {
    test::ProgramResult result = test::RunDitbench(dir_.path(), args);
    err_ = std::move(result.err);
    return result.exit_code;
  }

  // Every command that opens a results database, with the arguments it needs besides --db.
  static std::vector<std::pair<std::string, std::string>> DatabaseCommands() {
    return {{"run", "run sweep.yaml --worker /bin/true --gpus cpu:2"},
            {"plan", "plan sweep.yaml --gpus cpu:2"},
            {"advise", "advise sweep.yaml --gpus cpu:2"},
            {"query", "query"},
            {"report", "report -o report.html"},
            {"compare", "compare 1 2"},
            {"history", "history"},
            {"campaigns", "campaigns"},
            {"migrate", "migrate"},
            {"bisect", "bisect --only 0123456789abcdef --good 1 --bad 2 --builds /bin/true"}};
  }

  test::TempDir dir_;
  std::string err_;
};

TEST_F(ExitConventionTest, ADamagedDatabaseExitsThreeFromEveryCommand) {
  for (const auto& [name, args] : DatabaseCommands()) {
    EXPECT_EQ(Ditbench(args + " --db damaged.db"), kExitStorageFailed) << name << ": " << err_;
    EXPECT_NE(err_.find("damaged.db"), std::string::npos) << name << " names no file: " << err_;
    EXPECT_EQ(err_.find("internal error"), std::string::npos) << name << ": " << err_;
  }
}

TEST_F(ExitConventionTest, APathWithNoDatabaseIsTheUsersMistakeForEveryReader) {
  // `run` creates its database, and `plan` reads one only when it is there.
  for (const auto& [name, args] : DatabaseCommands()) {
    if (name == "run" || name == "plan") continue;
    EXPECT_EQ(Ditbench(args + " --db missing.db"), kExitUsage) << name << ": " << err_;
    EXPECT_NE(err_.find("missing.db"), std::string::npos) << name << " names no file: " << err_;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "missing.db"));
}

TEST_F(ExitConventionTest, AnUnknownOptionExitsTwoFromEveryCommand) {
  for (const auto& [name, args] : DatabaseCommands())
    EXPECT_EQ(Ditbench(args + " --no-such-option"), kExitUsage) << name << ": " << err_;
}

TEST_F(ExitConventionTest, AQueryNamingNoColumnIsTheUsersMistake) {
  ResultsDb::Open(dir_.path() / "fresh.db");  // an empty database of this build's schema
  EXPECT_EQ(Ditbench("query --db fresh.db"), kExitOk) << err_;
  EXPECT_EQ(Ditbench("query --db fresh.db --where 'no_such_column=1'"), kExitUsage) << err_;
  EXPECT_NE(err_.find("no_such_column"), std::string::npos) << err_;
}

}  // namespace
}  // namespace ditbench::exit_convention_test
