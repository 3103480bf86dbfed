#include "runner/command.h"

namespace ditbench {

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"run", "run a sweep: launch every trial and store the results", DefineRunCommand},
      {"plan", "show a sweep's trials, which are invalid and why, and estimates; runs nothing",
       DefinePlanCommand},
      {"query", "print results from the database as a table, CSV or JSON", DefineQueryCommand},
      {"report", "write a self-contained HTML report", DefineReportCommand},
      {"env", "print what a campaign would record about this machine (JSON)", DefineEnvCommand},
  };
  return commands;
}

}  // namespace ditbench
