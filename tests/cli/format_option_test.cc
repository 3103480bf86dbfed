// One `--format` for every command that prints an answer (cli/format_option.h), held through
// the real `ditbench` program: a format a command does not write is refused before anything
// runs, in one wording that names the command, the value, the formats it accepts and the
// closest of them, and exits 2. Before issue 51 the six commands said it three ways
// ("unknown --format 'x'; valid formats: ...", "--format 'x': expected ...", CLI11's own).
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/choices.h"
#include "base/exit_codes.h"
#include "base/table_printers.h"
#include "tests/support/ditbench_program.h"
#include "tests/support/temp_dir.h"

namespace ditbench::format_option_test {
namespace {

using ::testing::HasSubstr;

class FormatOptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.path() / "sweep.yaml") << "name: formats\n"
                                                 "workload: dit\n"
                                                 "defaults:\n"
                                                 "  model: pixart-alpha-tiny\n"
                                                 "  steps: 1\n"
                                                 "matrix:\n"
                                                 "  ulysses: [1, 2]\n";
  }

  // `ditbench ARGS` in the test's folder; its exit code, its standard error in `err_`.
  int Ditbench(const std::string& args) {
    test::ProgramResult result = test::RunDitbench(dir_.path(), args);
    err_ = std::move(result.err);
    return result.exit_code;
  }

  test::TempDir dir_;
  std::string err_;
};

struct CommandCase {
  std::string name;
  std::string args;      // what the command needs besides --format
  std::string accepted;  // the formats it names
};

// Every format of the table, as the error names them: "table, csv, json, markdown or html".
std::string EveryFormat() {
  std::vector<std::string_view> names;
  for (const TableFormatInfo& format : kTableFormats) names.push_back(format.name);
  return NameList(names);
}

const std::vector<CommandCase> kCommands = {
    {"advise", "advise sweep.yaml --gpus cpu:2", EveryFormat()},
    {"compare", "compare 1 2", EveryFormat()},
    {"history", "history", EveryFormat()},
    {"plan", "plan sweep.yaml --gpus cpu:2", "table, json or markdown"},
    {"query", "query", EveryFormat()},
    {"selfcheck", "selfcheck --gpus cpu:1", EveryFormat()},
};

TEST(FormatNamesTest, TheTableNamesTheFiveFormats) {
  EXPECT_EQ(NameList({kTableFormats[0].name, kTableFormats[1].name, kTableFormats[2].name,
                      kTableFormats[3].name, kTableFormats[4].name}),
            "table, csv, json, markdown or html");
}

TEST_F(FormatOptionTest, AMisspelledFormatIsOneWordingAndExitsTwoFromEveryCommand) {
  for (const CommandCase& c : kCommands) {
    EXPECT_EQ(Ditbench(c.args + " --format mardown"), kExitUsage) << c.name;
    EXPECT_EQ(err_, std::string("ditbench: error: ") + c.name + " --format 'mardown': expected " +
                        c.accepted + "; did you mean 'markdown'?\n")
        << c.name;
  }
}

TEST_F(FormatOptionTest, AFormatFarFromAnyIsRefusedWithoutAGuess) {
  for (const CommandCase& c : kCommands) {
    EXPECT_EQ(Ditbench(c.args + " --format xml-stylesheet"), kExitUsage) << c.name;
    EXPECT_EQ(err_, std::string("ditbench: error: ") + c.name +
                        " --format 'xml-stylesheet': expected " + c.accepted + "\n")
        << c.name;
  }
}

TEST_F(FormatOptionTest, AFormatOfTheTableThatACommandDoesNotWriteIsRefused) {
  EXPECT_EQ(Ditbench("plan sweep.yaml --gpus cpu:2 --format csv"), kExitUsage);
  EXPECT_THAT(err_, HasSubstr("plan --format 'csv': expected table, json or markdown"));
  EXPECT_EQ(Ditbench("plan sweep.yaml --gpus cpu:2 --format markdown"), kExitOk) << err_;
}

}  // namespace
}  // namespace ditbench::format_option_test
