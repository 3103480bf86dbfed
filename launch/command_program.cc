#include "launch/command_program.h"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "experiments/command_line.h"

namespace ditbench {
namespace {

bool IsFile(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

bool Runnable(const std::filesystem::path& path) {
  return IsFile(path) && ::access(path.c_str(), X_OK) == 0;
}

// ResolveProgram's search, for files that `accept` takes.
std::filesystem::path Locate(const std::string& program, const std::filesystem::path& folder,
                             std::string_view path_variable,
                             bool (*accept)(const std::filesystem::path&)) {
  if (program.empty()) return {};
  if (program.find('/') != std::string::npos) {
    const std::filesystem::path path = std::filesystem::path(program).is_absolute()
                                           ? std::filesystem::path(program)
                                           : folder / program;
    return accept(path) ? path.lexically_normal() : std::filesystem::path();
  }
  std::string_view rest = path_variable;
  while (true) {
    const auto colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    const std::filesystem::path candidate =
        (dir.empty() ? std::filesystem::path(".") : std::filesystem::path(dir)) / program;
    if (accept(candidate)) return std::filesystem::absolute(candidate).lexically_normal();
    if (colon == std::string_view::npos) return {};
    rest.remove_prefix(colon + 1);
  }
}

}  // namespace

std::filesystem::path CommandFolder(const SweepSpec& spec) {
  return std::filesystem::absolute(spec.path).parent_path();
}

std::filesystem::path ResolveProgram(const std::string& program,
                                     const std::filesystem::path& folder,
                                     std::string_view path_variable) {
  return Locate(program, folder, path_variable, Runnable);
}

std::optional<std::string> ProgramProblem(const std::string& program,
                                          const std::filesystem::path& folder,
                                          std::string_view path_variable) {
  if (!ResolveProgram(program, folder, path_variable).empty()) return std::nullopt;
  if (const auto file = Locate(program, folder, path_variable, IsFile); !file.empty())
    return fmt::format("program '{}' is not executable: {} lacks the execute permission "
                       "(chmod +x it)", program, file.string());
  return fmt::format("program '{}' not found: expected an executable on PATH, or a path "
                     "relative to the sweep's folder {}", program, folder.string());
}

std::string_view ProcessPath() {
  const char* path = std::getenv("PATH");
  return path ? path : "/usr/bin:/bin";
}

std::optional<std::string> CommandProgramProblem(const SweepSpec& spec) {
  if (TraitsOf(spec.workload).launch != WorkloadLaunch::kProgram || spec.command.empty())
    return std::nullopt;
  const std::optional<std::string> problem =
      ProgramProblem(spec.defaults.command.front(), CommandFolder(spec), ProcessPath());
  if (!problem) return std::nullopt;
  const Setting& where = spec.command.front();
  return fmt::format("{}:{}:{}: 'command[0]': {}", spec.path.string(), where.line, where.column,
                     *problem);
}

std::filesystem::path HelperPythonFolder() {
  static const std::filesystem::path folder = [] {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return std::filesystem::path();
    const auto python = self.parent_path() / "python";
    return std::filesystem::is_regular_file(python / "ditbench_result.py", ec)
               ? python
               : std::filesystem::path();
  }();
  return folder;
}

std::filesystem::path EngineClientProgram() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path("ditbench") : self;
}

void SetCommand(const SweepSpec& spec, const TrialConfig& config, LaunchRequest& request) {
  std::vector<std::string> argv = ExpandCommand(config);
  request.working_dir = CommandFolder(spec);
  request.worker = ResolveProgram(argv.front(), request.working_dir, ProcessPath());
  request.args.assign(argv.begin() + 1, argv.end());
  request.python_path = HelperPythonFolder();
}

}  // namespace ditbench
