#include "launch/build_command.h"

#include <sys/wait.h>

#include <stdexcept>

#include <boost/process.hpp>
#include <fmt/format.h>

namespace ditbench {
namespace bp = boost::process;

std::string BuildCommandFor(const std::string& command, const std::string& rev) {
  static constexpr std::string_view kPlaceholder = "{rev}";
  if (command.find(kPlaceholder) == std::string::npos)
    throw std::invalid_argument(fmt::format(
        "--build-command '{}': expected {{rev}} where the revision goes", command));
  std::string quoted = "'";
  for (char c : rev) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += '\'';
  std::string expanded;
  for (std::size_t at = 0;;) {
    const std::size_t next = command.find(kPlaceholder, at);
    expanded += command.substr(at, next - at);
    if (next == std::string::npos) break;
    expanded += quoted;
    at = next + kPlaceholder.size();
  }
  return expanded;
}

BuiltWorker BuildRevision(const std::string& command, const std::string& rev) {
  BuiltWorker built;
  const std::string expanded = BuildCommandFor(command, rev);
  std::string last;
  int status = -1;
  try {
    bp::ipstream out;
    bp::child child("/bin/sh", bp::args({"-c", expanded}), bp::std_in < bp::null,
                    bp::std_out > out);
    for (std::string line; std::getline(out, line);)
      if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    child.wait();
    status = child.native_exit_code();
  } catch (const std::exception& e) {
    built.problem = fmt::format("build command for revision '{}' could not start: {}", rev,
                                e.what());
    return built;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    built.problem = WIFEXITED(status)
                        ? fmt::format("build command for revision '{}' failed (exit {}): {}",
                                      rev, WEXITSTATUS(status), expanded)
                        : fmt::format("build command for revision '{}' was killed (signal {}): {}",
                                      rev, WTERMSIG(status), expanded);
    return built;
  }
  const std::size_t begin = last.find_first_not_of(" \t");
  const std::size_t end = last.find_last_not_of(" \t\r");
  if (begin == std::string::npos) {
    built.problem = fmt::format(
        "build command for revision '{}' printed no worker path (expected it on the last line "
        "of its output): {}",
        rev, expanded);
    return built;
  }
  const std::filesystem::path worker = last.substr(begin, end - begin + 1);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(worker, ec)) {
    built.problem = fmt::format(
        "build command for revision '{}' printed '{}' on its last line, which is not a file "
        "(expected the worker's path)",
        rev, worker.string());
    return built;
  }
  built.worker = std::filesystem::absolute(worker);
  return built;
}

}  // namespace ditbench
