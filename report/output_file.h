// Writing what a command outputs, every write checked: a full disk or a closed pipe is an
// error naming the real cause (strerror), never a truncated file and exit 0, never "Success".
#pragma once

#include <filesystem>
#include <iosfwd>
#include <stdexcept>
#include <string_view>

namespace ditbench {

// An output that could not be written (what() names it and the cause).
class OutputWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `text` to `path`, replacing it. A regular file (or a new one) is written through a
// temporary file in its folder, fsynced and renamed over it, so a reader sees the old file or
// the whole new one; anything else that exists (a device such as /dev/stdout or /dev/full, a
// FIFO) is written in place. Every write, fsync, close and rename is checked. Throws
// OutputWriteError "cannot write '<path>': <cause>".
void WriteOutputFile(const std::filesystem::path& path, std::string_view text);

// Flushes `out`; throws OutputWriteError "cannot write <what>: <cause>" when any write to
// it failed. Call it after the last write to a stream that a command's exit code vouches for.
void CheckOutput(std::ostream& out, std::string_view what);

}  // namespace ditbench
