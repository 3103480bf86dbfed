#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/untrusted_input.h"

namespace ditbench {
namespace {

[[noreturn]] void Fail(const std::filesystem::path& path, int error) {
  throw FileWriteError(fmt::format("cannot write '{}': {}", path.string(), std::strerror(error)));
}

// Writes all of `text` to `fd`; 0 or the errno of the failing write.
int WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// Closes `fd`: 0, or the errno of a failed close (the last chance for some file systems to
// report a write that failed).
int CheckedClose(UniqueFd& fd) { return ::close(fd.release()) == 0 ? 0 : errno; }

}  // namespace

void WriteFileAtomically(const std::filesystem::path& path, std::string_view text,
                         bool durable) {
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  // The temporary name is predictable and may sit in a folder other programs write (a run
  // folder): whatever is there (a stale file, or a link planted to make us overwrite its
  // target) is removed, and the file is created new, never through a link.
  ::unlink(temporary.c_str());
  UniqueFd fd(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) Fail(path, errno);
  int error = WriteAll(fd.get(), text);
  if (!error && durable && ::fsync(fd.get()) != 0) error = errno;
  if (const int closed = CheckedClose(fd); !error) error = closed;
  if (!error && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error) {
    ::unlink(temporary.c_str());
    Fail(path, error);
  }
}

void WriteIntoExistingFile(const std::filesystem::path& path, std::string_view text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) Fail(path, errno);
  if (const int error = WriteAll(fd.get(), text)) Fail(path, error);
  if (const int error = CheckedClose(fd)) Fail(path, error);
}

}  // namespace ditbench
