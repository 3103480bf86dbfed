// `ditbench bisect --build-command 'CMD {rev}'`: builds one revision of the worker by running
// CMD through /bin/sh with {rev} replaced by the revision (quoted for the shell), and takes
// the worker's path from the last non-empty line CMD prints on stdout. Its stderr goes to ours
// (build logs stay visible); stdout is read, only its last line kept.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ditbench {

// The command for `rev`: every {rev} of `command` replaced by `rev` quoted for a POSIX shell.
// Throws std::invalid_argument when `command` has no {rev}.
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
