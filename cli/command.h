// The `ditbench` subcommands: a table of {name, help, define}, as in ninja's tool table.
// Each subcommand lives in its own file and only adds its options to its CLI11 sub-app; the
// returned function runs it and gives the process exit code (0 ok, 1 some trials failed,
// 2 usage or spec error, 130 interrupted).
#pragma once

#include <functional>
#include <iosfwd>
#include <span>
#include <vector>

#include "base/exit_codes.h"

namespace CLI {
class App;
}

namespace ditbench {

struct Command {
  const char* name;
  const char* help;
  std::function<int()> (*define)(CLI::App& sub);
  // Standard output is only progress (`run`: its results are in the database): a closed pipe
  // there (`ditbench run ... | head`) loses the rest of it and changes nothing else. Every
  // other command's output is its result, checked by RunGuarded.
  bool output_is_progress = false;
  // Started by ditbench itself, not by users (engine-trial): left out of --help.
  bool hidden = false;
};

// Runs a subcommand's action, then flushes `out` (its standard output) and checks every write
// to it succeeded. Anything that escapes it, and an output that could not be written (a full
// disk, /dev/full), becomes one line on `err` (line breaks in the message folded) and an exit
// code, as ReportEscapedError (cli/escaped_error.h) says with `who` "ditbench".
// `out` may be null: nothing is checked.
int RunGuarded(const std::function<int()>& action, std::ostream* out, std::ostream& err);

// The table, in the order `--help` lists them.
const std::vector<Command>& Commands();

// Checks the word that names the subcommand: `args` are the program's arguments after its
// name. Throws UserError "unknown command 'quary'; did you mean 'query'?" (or listing the
// commands when none is close) when the first argument is neither an option nor a command of
// the table; CLI11 would only say "A subcommand is required". Nothing, an option first
// (--help, --version) or a known command: returns.
void CheckCommandWord(std::span<const char* const> args);

// Before CLI11 parses `command`'s arguments (those after its name): throws UserError
// "run --dbb: unknown option; did you mean '--db'?" (or naming `ditbench run --help` when none
// is close) for a word "--name" or "--name=value" that is not one of the command's long options;
// CLI11 would say only "The following arguments were not expected". Words after "--" are left
// alone, as are short options and option values that do not start with "--".
void CheckOptionWords(const CLI::App& command, std::span<const char* const> args);

std::function<int()> DefineRunCommand(CLI::App& sub);
std::function<int()> DefineEngineTrialCommand(CLI::App& sub);
std::function<int()> DefinePlanCommand(CLI::App& sub);
std::function<int()> DefineAdviseCommand(CLI::App& sub);
std::function<int()> DefineQueryCommand(CLI::App& sub);
std::function<int()> DefineReportCommand(CLI::App& sub);
std::function<int()> DefineCompareCommand(CLI::App& sub);
std::function<int()> DefineHistoryCommand(CLI::App& sub);
std::function<int()> DefineCampaignsCommand(CLI::App& sub);
std::function<int()> DefineBisectCommand(CLI::App& sub);
std::function<int()> DefineEnvCommand(CLI::App& sub);
std::function<int()> DefineSelfcheckCommand(CLI::App& sub);
std::function<int()> DefineMigrateCommand(CLI::App& sub);
std::function<int()> DefineForwardCommand(CLI::App& sub);

}  // namespace ditbench
