// `ditbench bisect --build-command 'CMD {rev}'`: builds one revision of the worker by running
// CMD through /bin/sh with the revision in the environment variable DITBENCH_REV and each
// {rev} replaced (BuildCommandFor), and takes the worker's path from the last non-empty line
// CMD prints on stdout. Its stderr goes to ours (build logs stay visible); stdout is read, only
// its last line kept.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ditbench {

// The command with each {rev} replaced by the environment variable DITBENCH_REV, which
// BuildRevision sets to the revision: its name is expanded once by /bin/sh and never read as
// code, whatever it holds and wherever {rev} stands (a heredoc's body, after a comment). An
// unquoted {rev} (also one inside $(...) or `...`) becomes "${DITBENCH_REV}", one word; one
// inside double quotes ${DITBENCH_REV}. A template that evaluates its text a second time
// (`eval`, `sh -c "... {rev}"`) re-reads the name as code: no substitution can prevent that.
// Throws std::invalid_argument when `command` has no {rev}, or has one inside single quotes
// (it would reach whatever reads that text, often another shell).
std::string BuildCommandFor(const std::string& command);

// A built worker, or one line saying what failed (the command's exit status, no path printed,
// or a printed path that is not a file). A relative printed path is taken from the current
// folder.
struct BuiltWorker {
  std::optional<std::filesystem::path> worker;
  std::string problem;
};
BuiltWorker BuildRevision(const std::string& command, const std::string& rev);

}  // namespace ditbench
