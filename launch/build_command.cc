#include "launch/build_command.h"

#include <sys/wait.h>

#include <stdexcept>
#include <string_view>
#include <vector>

#include <boost/process.hpp>
#include <fmt/format.h>

namespace ditbench {
namespace bp = boost::process;

namespace {

constexpr std::string_view kPlaceholder = "{rev}";

}  // namespace

std::string BuildCommandFor(const std::string& command) {
  if (command.find(kPlaceholder) == std::string::npos)
    throw std::invalid_argument(fmt::format(
        "--build-command '{}': expected {{rev}} where the revision goes", command));
  // The revision's text is never spliced into the command, where the shell would run its
  // $(...) and `...` in any context but single quotes. Where each {rev} stands decides only
  // how the variable is written: a stack of contexts, unquoted (also inside $(...) and `...`),
  // "double" and 'single' quotes.
  enum class Context { kUnquoted, kDouble, kSingle, kSubstitution, kBackquote };
  std::vector<Context> stack = {Context::kUnquoted};
  std::string expanded;
  for (std::size_t at = 0; at < command.size();) {
    const Context now = stack.back();
    if (command.compare(at, kPlaceholder.size(), kPlaceholder) == 0) {
      if (now == Context::kSingle)
        throw std::invalid_argument(fmt::format(
            "--build-command '{}': {{rev}} is inside single quotes, where it cannot be "
            "replaced safely; leave it unquoted, or use \"$DITBENCH_REV\"",
            command));
      // Never the revision's text: the environment variable, whose value the shell expands
      // once and never reads as code, whatever context the parse below misjudges (a heredoc's
      // body, a comment). Double-quoted where it stands unquoted, so that it stays one word.
      expanded += now == Context::kDouble ? "${DITBENCH_REV}" : "\"${DITBENCH_REV}\"";
      at += kPlaceholder.size();
      continue;
    }
    const char c = command[at];
    const bool escapable = now != Context::kSingle && c == '\\' && at + 1 < command.size();
    if (escapable) {
      expanded += command.substr(at, 2);
      at += 2;
      continue;
    }
    if (now == Context::kSingle) {
      if (c == '\'') stack.pop_back();
    } else if (c == '$' && at + 1 < command.size() && command[at + 1] == '(') {
      stack.push_back(Context::kSubstitution);
      expanded += "$(";
      at += 2;
      continue;
    } else if (c == '`') {
      if (now == Context::kBackquote) stack.pop_back();
      else stack.push_back(Context::kBackquote);
    } else if (now == Context::kDouble) {
      if (c == '"') stack.pop_back();
    } else if (c == '\'') {
      stack.push_back(Context::kSingle);
    } else if (c == '"') {
      stack.push_back(Context::kDouble);
    } else if (c == ')' && now == Context::kSubstitution) {
      stack.pop_back();
    }
    expanded += c;
    ++at;
  }
  return expanded;
}

BuiltWorker BuildRevision(const std::string& command, const std::string& rev) {
  BuiltWorker built;
  const std::string expanded = BuildCommandFor(command);
  std::string last;
  int status = -1;
  try {
    bp::ipstream out;
    bp::environment environment = boost::this_process::environment();
    environment["DITBENCH_REV"] = rev;  // what "$DITBENCH_REV" and a quoted {rev} read
    bp::child child("/bin/sh", bp::args({"-c", expanded}), environment,
                    bp::std_in < bp::null, bp::std_out > out);
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
