// Writing a whole file so that a reader sees the old file or the whole new one, never a part:
// the one definition every writer of a file that others read uses (trial.json, rank results,
// job scripts, reports, npy outputs).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string_view>

namespace ditbench {

// A file that could not be written; what() is "cannot write '<path>': <cause>" (strerror).
class FileWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `text` to `path`, replacing it: a temporary file "<path>.tmp" in the same folder,
// fsync (when `durable`), close, rename over `path`. Every write, fsync, close and rename is
// checked (a full disk can surface only at close, on NFS); on failure the temporary file is
// removed and FileWriteError is thrown. `durable` false leaves out the fsync: readers still see
// the old file or the whole new one, but a power loss may leave neither (for files that are
// rewritten when lost).
void WriteFileAtomically(const std::filesystem::path& path, std::string_view text,
                         bool durable = true);

// Writes `text` into `path`, which exists and is not a regular file (a device such as
// /dev/stdout or /dev/full, a FIFO), every write and the close checked. Throws FileWriteError.
void WriteIntoExistingFile(const std::filesystem::path& path, std::string_view text);

}  // namespace ditbench
