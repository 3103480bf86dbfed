#include "cli/command.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "base/user_error.h"
#include "cli/escaped_error.h"
#include "experiments/trial.h"
#include "storage/storage_error.h"
#include "tests/support/temp_dir.h"

namespace ditbench::command_test {
namespace {

TEST(RunGuardedTest, ReturnsTheActionsExitCode) {
  std::stringstream out, err;
  EXPECT_EQ(RunGuarded([] { return 130; }, &out, err), 130);
  EXPECT_EQ(err.str(), "");
}

TEST(RunGuardedTest, AUserMistakeIsItsOneLineAndExitTwo) {
  std::stringstream out, err;
  EXPECT_EQ(RunGuarded(
                []() -> int {
                  throw UserError("--budget 'soon': expected a duration such as 90s, 30m or 8h",
                                  InputLocation{"", 0, "--budget"});
                },
                &out, err),
            kExitUsage);
  EXPECT_EQ(err.str(),
            "ditbench: error: --budget 'soon': expected a duration such as 90s, 30m "
            "or 8h\n");
}

// A std::out_of_range or std::invalid_argument from a bug (a .at(), a std::stoi) is not the
// user's mistake: it used to exit 2 as if it were.
TEST(RunGuardedTest, AnEscapedStandardExceptionIsAnInternalErrorAndExitOne) {
  std::stringstream out, err;
  EXPECT_EQ(RunGuarded([]() -> int { throw std::out_of_range("map::at"); }, &out, err),
            kExitTrialsFailed);
  EXPECT_EQ(err.str(), "ditbench: internal error: map::at\n");
  err.str("");
  EXPECT_EQ(RunGuarded([]() -> int { throw std::invalid_argument("stoi"); }, &out, err),
            kExitTrialsFailed);
  EXPECT_EQ(err.str(), "ditbench: internal error: stoi\n");
}

TEST(RunGuardedTest, AStorageFailureIsAnErrorAndExitThree) {
  std::stringstream out, err;
  EXPECT_EQ(RunGuarded([]() -> int { throw StorageError("disk I/O error"); }, &out, err),
            kExitStorageFailed);
  EXPECT_EQ(err.str(), "ditbench: error: disk I/O error\n");
}

TEST(RunGuardedTest, OtherFailuresAreOneInternalErrorLineAndExitOne) {
  std::stringstream out, err;
  EXPECT_EQ(RunGuarded([]() -> int { throw std::runtime_error("broken\nat x"); }, &out, err),
            kExitTrialsFailed);
  // The one OneLine rule (base/terminal_text.h): control characters, ESC included,
  // never reach the terminal.
  EXPECT_EQ(err.str(), "ditbench: internal error: broken\\nat x\n");
  err.str("");
  EXPECT_EQ(RunGuarded([]() -> int { throw UserError("\x1b[2Jcleared"); }, &out, err), kExitUsage);
  EXPECT_EQ(err.str(), "ditbench: error: \\x1b[2Jcleared\n");
  err.str("");
  EXPECT_EQ(RunGuarded([]() -> int { throw 42; }, &out, err), kExitTrialsFailed);
  EXPECT_EQ(err.str(), "ditbench: internal error: unknown exception\n");
}

// campaigns, advise and env wrote to standard output and exited 0 when nothing could be
// written: every command's output is flushed and checked after it runs.
TEST(RunGuardedTest, AnOutputThatCannotBeWrittenIsAnErrorAndExitOne) {
  std::ofstream full("/dev/full");
  ASSERT_TRUE(full.is_open());
  std::stringstream err;
  EXPECT_EQ(RunGuarded([&] { full << "campaign 1\n"; return kExitOk; }, &full, err),
            kExitTrialsFailed);
  EXPECT_EQ(err.str(), "ditbench: error: cannot write standard output: No space left on device\n");
}

// `run`'s standard output is progress: nothing to check (a closed pipe loses the rest only).
TEST(RunGuardedTest, AProgressOnlyOutputIsNotChecked) {
  std::ofstream full("/dev/full");
  std::stringstream err;
  EXPECT_EQ(RunGuarded([&] { full << "progress\n" << std::flush; return kExitOk; }, nullptr, err),
            kExitOk);
  EXPECT_EQ(err.str(), "");
  const auto run = std::find_if(Commands().begin(), Commands().end(),
                                [](const Command& c) { return std::string(c.name) == "run"; });
  ASSERT_NE(run, Commands().end());
  EXPECT_TRUE(run->output_is_progress);
  for (const Command& command : Commands())
    EXPECT_EQ(command.output_is_progress, &command == &*run) << command.name;
}

// `ditbench quary` said only CLI11's "A subcommand is required" (issue 34).
TEST(CommandWordTest, AMistypedCommandIsNamedWithTheClosestOneAndExitsTwo) {
  std::stringstream err;
  const std::vector<const char*> args = {"quary", "--db", "r.db"};
  EXPECT_EQ(RunGuarded(
                [&] {
                  CheckCommandWord(args);
                  return kExitOk;
                },
                nullptr, err),
            kExitUsage);
  EXPECT_EQ(err.str(), "ditbench: error: unknown command 'quary'; did you mean 'query'?\n");
}

TEST(CommandWordTest, AWordCloseToNoCommandListsThem) {
  try {
    CheckCommandWord(std::vector<const char*>{"frobnicate"});
    ADD_FAILURE() << "accepted";
  } catch (const UserError& e) {
    // Every command, in the order `ditbench --help` lists them.
    std::string names;
    for (const Command& command : Commands())
      names += std::string(names.empty() ? "" : ", ") + command.name;
    EXPECT_EQ(std::string(e.what()), "unknown command 'frobnicate' (commands: " + names + ")");
    EXPECT_EQ(names.rfind("run, plan, advise, query, report", 0), 0u) << names;
    EXPECT_EQ(e.where().key, "command");
  }
}

TEST(CommandWordTest, KnownCommandsOptionsAndNothingPass) {
  for (const Command& command : Commands())
    EXPECT_NO_THROW(CheckCommandWord(std::vector<const char*>{command.name, "--help"}));
  EXPECT_NO_THROW(CheckCommandWord(std::vector<const char*>{"--version"}));
  EXPECT_NO_THROW(CheckCommandWord(std::vector<const char*>{"--help", "quary"}));
  EXPECT_NO_THROW(CheckCommandWord(std::vector<const char*>{}));
}

// `ditbench run --dbb x` said only CLI11's "The following arguments were not expected".
TEST(CommandWordTest, AMistypedOptionIsNamedWithTheClosestOne) {
  CLI::App app;
  CLI::App* run = app.add_subcommand("run", "");
  std::string db, format;
  run->add_option("--db", db);
  run->add_option("-f,--format", format);
  const auto message = [&](std::vector<const char*> args) -> std::string {
    try {
      CheckOptionWords(*run, args);
      return "";
    } catch (const UserError& e) {
      EXPECT_EQ(e.where().key, "option");
      return e.what();
    }
  };
  EXPECT_EQ(message({"sweep.yaml", "--dbb", "x"}),
            "run --dbb: unknown option; did you mean '--db'?");
  EXPECT_EQ(message({"--formt=csv"}), "run --formt: unknown option; did you mean '--format'?");
  EXPECT_EQ(message({"--frobnicate"}),
            "run --frobnicate: unknown option (`ditbench run --help` lists them)");
  for (std::vector<const char*> fine :
       {std::vector<const char*>{"--db", "r.db", "--format=csv", "-f", "csv", "--help"},
        std::vector<const char*>{"--", "--not-an-option"}, std::vector<const char*>{"-x", "--"}})
    EXPECT_EQ(message(fine), "");
}

// The program itself: one line on stderr, nothing on stdout, exit 2.
TEST(CommandWordTest, TheProgramSaysUnknownCommandForAMistypedOne) {
  test::TempDir dir;
  const std::string command = std::string(DITBENCH_BIN) + " quary > " + (dir / "out").string() +
                              " 2> " + (dir / "err").string();
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitUsage);
  const auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(dir / "err"), "ditbench: error: unknown command 'quary'; did you mean 'query'?\n");
  EXPECT_EQ(read(dir / "out"), "");
  // A mistyped option of a real command, through the program: one line, exit 2.
  const std::string option = std::string(DITBENCH_BIN) + " query --formt csv > " +
                             (dir / "out").string() + " 2> " + (dir / "err").string();
  const int option_status = std::system(option.c_str());
  ASSERT_TRUE(WIFEXITED(option_status));
  EXPECT_EQ(WEXITSTATUS(option_status), kExitUsage);
  EXPECT_EQ(read(dir / "err"),
            "ditbench: error: query --formt: unknown option; did you mean '--format'?\n");
  EXPECT_EQ(read(dir / "out"), "");
}

// `forward --vae-tile` takes what the sweep field vae_tile takes: no tile the sweep refuses.
TEST(ForwardCommandTest, VaeTileTakesWhatTheSweepFieldTakes) {
  for (const auto& [tile, valid] :
       std::vector<std::pair<int, bool>>{{0, true}, {64, true}, {512, true}, {32, false},
                                         {96, false}, {16448, false}}) {
    EXPECT_EQ(IsValidVaeTile(tile), valid) << tile;
    CLI::App app;
    CLI::App* sub = app.add_subcommand("forward");
    std::function<int()> run = DefineForwardCommand(*sub);
    app.parse("forward /nonexistent-model --inputs in.safetensors --output out.safetensors "
              "--vae-tile " + std::to_string(tile),
              false);
    try {
      run();
      ADD_FAILURE() << tile;
    } catch (const UserError& e) {
      // A tile the sweep refuses is named first; a valid one gets as far as the folder.
      EXPECT_EQ(std::string(e.what()).find("--vae-tile") == 0, !valid) << e.what();
    }
  }
}

// CLI11's own range check named its bound as a 309-digit number; the message says what is
// expected instead, for every numeric option that has a lower bound.
TEST(NumberChecksTest, ANegativeCountIsRefusedWithAReadableMessage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"history --last -1", "--last: expected a number of 0 or more, got -1"},
      {"advise --max-output-error -0.5", "expected a number of 0 or more, got -0.5"},
      {"run s.yaml --stop-after-failures 0", "expected a number above 0, got 0"},
      {"query --sql x --timeout 0", "expected a number above 0, got 0"},
  };
  for (const auto& [line, said] : cases) {
    CLI::App app;
    // The actions own the options their subcommands write into: kept for the parse.
    std::vector<std::function<int()>> actions;
    for (const Command& command : Commands())
      actions.push_back(command.define(*app.add_subcommand(command.name)));
    try {
      app.parse(line, false);
      ADD_FAILURE() << line << " was accepted";
    } catch (const CLI::ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
      EXPECT_LT(std::string(e.what()).size(), 120u) << e.what();
    }
  }
}

}  // namespace
}  // namespace ditbench::command_test
