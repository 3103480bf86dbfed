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

// The command for `rev`: a revision's name never becomes shell code, whatever it holds. An
// unquoted {rev} (also one inside $(...) or `...`) becomes `rev` single-quoted for a POSIX
// shell; one inside double quotes becomes ${DITBENCH_REV}, which BuildRevision sets to `rev`.
// Throws std::invalid_argument when `command` has no {rev}, or has one inside single quotes
// (it would reach whatever reads that text, often another shell).
std::string BuildCommandFor(const std::string& command, const std::string& rev);

// A built worker, or one line saying what failed (the command's exit status, no path printed,
// or a printed path that is not a file). A relative printed path is taken from the current
// folder.
struct BuiltWorker {
  std::optional<std::filesystem::path> worker;
  std::string problem;
};
BuiltWorker BuildRevision(const std::string& command, const std::string& rev);

}  // namespace ditbench
