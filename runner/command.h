// The `ditbench` subcommands: a table of {name, help, define}, as in ninja's tool table.
// Each subcommand lives in its own file and only adds its options to its CLI11 sub-app; the
// returned function runs it and gives the process exit code (0 ok, 1 some trials failed,
// 2 usage or spec error, 130 interrupted).
#pragma once

#include <functional>
#include <iosfwd>
#include <vector>

namespace CLI {
class App;
}

namespace ditbench {

// Exit codes shared by all subcommands (README.md, "Exit codes" under "The CLI").
inline constexpr int kExitOk = 0;
inline constexpr int kExitTrialsFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

struct Command {
  const char* name;
  const char* help;
  std::function<int()> (*define)(CLI::App& sub);
};

// Runs a subcommand's action. Anything that escapes it becomes one line on `err`,
// "ditbench: error: <what>" (line breaks in the message folded), and an exit code: kExitUsage
// for bad input (std::invalid_argument, std::out_of_range), else kExitTrialsFailed.
int RunGuarded(const std::function<int()>& action, std::ostream& err);

// The table, in the order `--help` lists them.
const std::vector<Command>& Commands();

std::function<int()> DefineRunCommand(CLI::App& sub);
std::function<int()> DefinePlanCommand(CLI::App& sub);
std::function<int()> DefineQueryCommand(CLI::App& sub);
std::function<int()> DefineReportCommand(CLI::App& sub);
std::function<int()> DefineCompareCommand(CLI::App& sub);
std::function<int()> DefineEnvCommand(CLI::App& sub);
std::function<int()> DefineMigrateCommand(CLI::App& sub);
std::function<int()> DefineForwardCommand(CLI::App& sub);

}  // namespace ditbench
