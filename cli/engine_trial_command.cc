// `ditbench engine-trial --trial RUN_DIR/trial.json`: the client of one `engine` trial, which
// `ditbench run` starts as the trial's only rank (runner/engine_trial.h). Hidden from --help.
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "runner/engine_trial.h"

namespace ditbench {

std::function<int()> DefineEngineTrialCommand(CLI::App& sub) {
  auto trial = std::make_shared<std::filesystem::path>();
  sub.add_option("--trial", *trial, "the trial's trial.json (its run folder is the file's)")
      ->required();
  return [trial] { return RunEngineTrial(*trial, std::cerr); };
}

}  // namespace ditbench
