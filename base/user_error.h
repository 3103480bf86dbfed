// The one error type for a user's mistake: a bad option value, an unknown campaign or sweep, a
// sweep file that does not parse, a model folder that is not one. Every layer throws it for
// those; the CLI prints its message as one line and exits kExitUsage (2) (cli/command.h,
// RunGuarded). Anything else that escapes a subcommand is an internal error (exit 1), so a
// std::out_of_range from a bug never reads as the user's fault.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace ditbench {

// Where the mistake is, as far as the thrower knows: the input file and its 1-based line, or
// the option or key that holds the bad value. Empty fields: not known.
struct InputLocation {
  std::string file;
  int line = 0;
  std::string key;
};

class UserError : public std::runtime_error {
 public:
  // `what` is the whole line the user sees (it names the location itself, as the sweep
  // parser's diagnostics do); `where` lets a caller or a test tell where without parsing it.
  explicit UserError(const std::string& what, InputLocation where = {})
      : std::runtime_error(what), where_(std::move(where)) {}

  const InputLocation& where() const noexcept { return where_; }

 private:
  InputLocation where_;
};

}  // namespace ditbench
