// Reading a file inside a run folder. A run folder is written by worker processes and by
// anything they leave behind, so a file there may be a symbolic link to a file the user can read
// but should not publish, a FIFO that no one will ever write, or gigabytes of noise. Every read
// of a run-folder file, by any command at any time after the trial, goes through here:
//  - the folder itself is trusted (ditbench made it; the path to it may hold links the user
//    chose), but no component of the name inside it may be a symbolic link, "." or "..": each
//    is opened with O_NOFOLLOW beneath the one before, so nothing resolves out of the folder;
//  - the file must be a regular file (a FIFO, a device or a socket is refused before any read:
//    a reader never blocks) of at most the size the caller gives, as base/untrusted_input.h.
//
// Errors: std::runtime_error, one line naming the file: "<folder>/<name>: is a symbolic link;
// expected a regular file in the run folder", "<folder>/<name>: is a FIFO; expected a regular
// file", "<folder>/<name>: is 3221225472 bytes; expected at most 16777216".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "base/untrusted_input.h"

namespace ditbench {

// The most of a note (ReadRunFolderNote) that is read: its first line is all that is shown.
inline constexpr std::uint64_t kMaxRunFolderNoteBytes = 4096;

// Opens `name` (relative: one or more components, none a link) beneath `folder` read-only and
// non-blocking, and checks it is a regular file of at most `max_bytes`.
RegularFile OpenRunFolderFile(const std::filesystem::path& folder,
                              const std::filesystem::path& name, std::uint64_t max_bytes);

// OpenRunFolderFile for `file`, a file directly inside its parent folder (the run folder).
RegularFile OpenRunFolderFile(const std::filesystem::path& file, std::uint64_t max_bytes);

// The whole of a run-folder file of at most `max_bytes`.
std::string ReadRunFolderFile(const std::filesystem::path& folder,
                              const std::filesystem::path& name, std::uint64_t max_bytes);

// ReadRunFolderFile for `file`, a file directly inside its parent folder (the run folder).
std::string ReadRunFolderFile(const std::filesystem::path& file, std::uint64_t max_bytes);

// The first line of a note the coordinator keeps in a run folder (why a picture is missing),
// without its end of line and cut to kMaxRunFolderNoteBytes; "" when the note is missing, empty,
// or not a regular file inside the folder. Never throws, never blocks. The text is as the file
// holds it: escape it for where it is shown.
std::string ReadRunFolderNote(const std::filesystem::path& folder,
                              const std::filesystem::path& name) noexcept;

}  // namespace ditbench
