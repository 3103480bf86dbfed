// How the coordinator starts a `command` workload's program (README, "Sweeping your own
// program"): where it is found, which folder it starts in, and the launch request of a trial.
// The parser has already checked the argument templates (experiments/command_line.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "experiments/sweep_spec.h"
#include "launch/launcher.h"

namespace ditbench {

// The folder a command's ranks start in, and relative program paths are taken from: the
// sweep file's (absolute).
std::filesystem::path CommandFolder(const SweepSpec& spec);

// The program to execute, as an absolute path: a name without '/' is looked up in
// `path_variable` (PATH's syntax: folders separated by ':', an empty one meaning the current
// folder), a relative path is taken from `folder`. Empty when there is no such executable file.
std::filesystem::path ResolveProgram(const std::string& program,
                                     const std::filesystem::path& folder,
                                     std::string_view path_variable);

// Why `program` cannot be run, as ResolveProgram looks for it: "program 'x' not found: ...",
// or "program 'x' is not executable: ..." for a file found without the execute permission.
// nullopt when ResolveProgram finds it.
std::optional<std::string> ProgramProblem(const std::string& program,
                                          const std::filesystem::path& folder,
                                          std::string_view path_variable);

// PATH of this process ("/usr/bin:/bin" when unset).
std::string_view ProcessPath();

// When the sweep's program cannot be run: one line, "file:line:column: 'command[0]': " and
// ProgramProblem's reason. nullopt when it is found (or the workload is not launched as a
// program). `run` and `plan` both refuse such a sweep with this line.
std::optional<std::string> CommandProgramProblem(const SweepSpec& spec);

// The folder holding ditbench_result.py, the helper a command's Python program imports: the
// `python` folder beside the running ditbench program (the build copies it there). Empty when
// there is none (a test binary, a moved program).
std::filesystem::path HelperPythonFolder();

// The program an `engine` trial's client runs: this ditbench program (`ditbench engine-trial`).
std::filesystem::path EngineClientProgram();

// Sets the program, arguments (placeholders replaced by the trial's values), working folder
// and the ranks' PYTHONPATH (HelperPythonFolder) of `request` for trial `config` of `spec`.
// REQUIRES: config's workload is launched as a program (WorkloadLaunch::kProgram), from a
// sweep that parsed without errors. Throws std::invalid_argument if a placeholder has no value.
void SetCommand(const SweepSpec& spec, const TrialConfig& config, LaunchRequest& request);

}  // namespace ditbench
