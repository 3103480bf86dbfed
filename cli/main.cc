// ditbench: the coordinator CLI. Thin: each subcommand defines its options and its action.
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "machine/build_info.h"

int main(int argc, char** argv) {
  CLI::App app{"ditbench: benchmark sweeps of parallel Diffusion-Transformer inference"};
  app.set_version_flag("--version", "ditbench " + ditbench::BuildId());
  app.require_subcommand(1);
  std::map<CLI::App*, std::pair<std::function<int()>, const ditbench::Command*>> actions;
  for (const auto& command : ditbench::Commands()) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    if (command.hidden) sub->group("");  // not listed by --help
    actions[sub] = {command.define(*sub), &command};
  }
  // A mistyped command or option is named, with the closest one, before CLI11 sees it.
  const int checked = ditbench::RunGuarded(
      [&] {
        ditbench::CheckCommandWord({argv + 1, argv + argc});
        for (const auto& [sub, action] : actions)
          if (argc > 1 && sub->get_name() == argv[1])
            ditbench::CheckOptionWords(*sub, {argv + 2, argv + argc});
        return ditbench::kExitOk;
      },
      nullptr, std::cerr);
  if (checked != ditbench::kExitOk) return checked;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : ditbench::kExitUsage;
  }
  for (auto& [sub, action] : actions)
    if (sub->parsed())
      return ditbench::RunGuarded(action.first,
                                  action.second->output_is_progress ? nullptr : &std::cout,
                                  std::cerr);
  return ditbench::kExitUsage;
}
