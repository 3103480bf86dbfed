#include "cli/command.h"

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/did_you_mean.h"
#include "base/user_error.h"
#include "cli/escaped_error.h"
#include "report/output_file.h"

namespace ditbench {

int RunGuarded(const std::function<int()>& action, std::ostream* out, std::ostream& err) {
  try {
    const int code = action();
    // A command that failed has said why; one that succeeded vouches for what it wrote.
    if (out != nullptr && code == kExitOk) CheckOutput(*out, "standard output");
    return code;
  } catch (...) {
    return ReportEscapedError("ditbench", err);
  }
}

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"run", "run a sweep: launch every trial and store the results", DefineRunCommand,
       /*output_is_progress=*/true},
      {"plan", "show a sweep's trials, which are invalid and why, and estimates; runs nothing",
       DefinePlanCommand},
      {"advise",
       "rank a sweep's layouts by measured or predicted time, and say what to measure next",
       DefineAdviseCommand},
      {"query", "print results from the database as a table, CSV or JSON", DefineQueryCommand},
      {"report", "write a self-contained HTML report", DefineReportCommand},
      {"compare", "compare two campaigns trial by trial: faster, slower, same or inconclusive",
       DefineCompareCommand},
      {"history", "per trial key, its campaigns over time and the change points among them",
       DefineHistoryCommand},
      {"campaigns", "list campaigns; exclude, include or label one (data is kept)",
       DefineCampaignsCommand},
      {"bisect", "find the first build of a list that made one trial slower", DefineBisectCommand},
      {"migrate", "bring a results database to this build's schema; runs nothing else",
       DefineMigrateCommand},
      {"env", "print what a campaign would record about this machine (JSON)", DefineEnvCommand},
      {"selfcheck",
       "can this machine's numbers be trusted? timing, clocks, energy, throughput: "
       "pass, warn or fail per row",
       DefineSelfcheckCommand},
      {"forward", "one transformer forward or VAE decode on diffusers-format weights",
       DefineForwardCommand},
      {"engine-trial", "the client of one `engine` trial (started by `run`)",
       DefineEngineTrialCommand, /*output_is_progress=*/false, /*hidden=*/true},
  };
  return commands;
}

void CheckCommandWord(std::span<const char* const> args) {
  if (args.empty() || args.front()[0] == '-') return;
  const std::string word = args.front();
  std::vector<std::string> names;
  for (const Command& command : Commands()) {
    if (word == command.name) return;
    names.emplace_back(command.name);
  }
  const std::string closest = DidYouMean(word, names);
  throw UserError(
      closest.empty()
          ? fmt::format("unknown command '{}' (commands: {})", word, fmt::join(names, ", "))
          : fmt::format("unknown command '{}'; did you mean '{}'?", word, closest),
      InputLocation{"", 0, "command"});
}

void CheckOptionWords(const CLI::App& command, std::span<const char* const> args) {
  std::vector<std::string> names = {"--help"};
  for (const CLI::Option* option : command.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  for (const char* arg : args) {
    const std::string_view word(arg);
    if (word == "--") return;  // what follows is positional
    if (!word.starts_with("--") || word.size() == 2) continue;
    const std::string name(word.substr(0, word.find('=')));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string closest = DidYouMean(name, names);
    throw UserError(closest.empty()
                        ? fmt::format("{} {}: unknown option (`ditbench {} --help` lists them)",
                                      command.get_name(), name, command.get_name())
                        : fmt::format("{} {}: unknown option; did you mean '{}'?",
                                      command.get_name(), name, closest),
                    InputLocation{"", 0, "option"});
  }
}

}  // namespace ditbench
