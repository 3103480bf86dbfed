// Reading files that another program (a worker, a `command` benchmark) left in a run folder,
// where the program may be broken or hostile: such a file is opened without blocking, must be
// a regular file (a FIFO, a device or a socket is refused before any read, so a reader never
// waits for a writer), and is read only up to a size the caller gives. Torch-free.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ditbench {

// An open file descriptor, closed on destruction. Move-only.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  int get() const noexcept { return fd_; }
  int release() noexcept;

 private:
  int fd_ = -1;
};

// A regular file opened for reading, with its size when it was opened.
struct RegularFile {
  FileDescriptor fd;
  std::uint64_t size = 0;
};

// Opens `path` read-only and non-blocking, and checks it is a regular file of at most
// `max_bytes`. Throws std::runtime_error "<path>: <what is wrong>" otherwise (missing, a FIFO,
// a directory, too large, ...).
RegularFile OpenRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes);

// Reads up to `count` bytes of `file` from `offset` into `buffer` and returns how many it read
// (fewer only at the end of the file). Throws std::runtime_error naming `path` on a read error.
std::uint64_t ReadRegularFileInto(const RegularFile& file, const std::filesystem::path& path,
                                  std::uint64_t offset, void* buffer, std::uint64_t count);

// Up to `count` bytes of `file` from `offset`, as ReadRegularFileInto.
std::string ReadRegularFileAt(const RegularFile& file, const std::filesystem::path& path,
                              std::uint64_t offset, std::uint64_t count);

// The whole of a regular file of at most `max_bytes` (OpenRegularFile, then every byte).
std::string ReadRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes);

}  // namespace ditbench
