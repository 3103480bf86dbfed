// Writing what a command outputs, every write checked: a full disk or a closed pipe is an
// error naming the real cause (strerror), never a truncated file and exit 0, never "Success".
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string_view>

#include "base/atomic_file.h"

namespace ditbench {

// An output that could not be written (what() names it and the cause): the one error of a file
// write (base/atomic_file.h).
using OutputWriteError = FileWriteError;

// Writes `text` to `path`, replacing it. A regular file (or a new one) is written atomically
// (WriteFileAtomically, durable); anything else that exists (a device such as /dev/stdout or
// /dev/full, a FIFO) is written in place (WriteIntoExistingFile). Throws OutputWriteError
// "cannot write '<path>': <cause>".
void WriteOutputFile(const std::filesystem::path& path, std::string_view text);

// Flushes `out`; throws OutputWriteError "cannot write <what>: <cause>" when any write to
// it failed. Call it after the last write to a stream that a command's exit code vouches for.
void CheckOutput(std::ostream& out, std::string_view what);

}  // namespace ditbench
