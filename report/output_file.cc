#include "report/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace ditbench {
namespace {

// An open file descriptor, closed once (the checked close is Close()).
class OutputFd {
 public:
  explicit OutputFd(int fd) : fd_(fd) {}
  ~OutputFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  OutputFd(const OutputFd&) = delete;
  OutputFd& operator=(const OutputFd&) = delete;
  int get() const { return fd_; }
  // 0, or the errno of a failed close (the last chance for some file systems to report).
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

[[noreturn]] void Fail(const std::filesystem::path& path, int error) {
  throw OutputWriteError(
      fmt::format("cannot write '{}': {}", path.string(), std::strerror(error)));
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

}  // namespace

void WriteOutputFile(const std::filesystem::path& path, std::string_view text) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {  // a device, a FIFO
    OutputFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) Fail(path, errno);
    if (const int error = WriteAll(fd.get(), text)) Fail(path, error);
    if (const int error = fd.Close()) Fail(path, error);
    return;
  }
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  OutputFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) Fail(path, errno);
  int error = WriteAll(fd.get(), text);
  if (!error && ::fsync(fd.get()) != 0) error = errno;
  if (const int closed = fd.Close(); !error) error = closed;
  if (!error && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error) {
    ::unlink(temporary.c_str());
    Fail(path, error);
  }
}

void CheckOutput(std::ostream& out, std::string_view what) {
  int error = errno;  // a write that failed before this call left its cause here
  if (out) {
    errno = 0;
    out.flush();
    if (out) return;
    error = errno;  // the flush's own failure
  }
  throw OutputWriteError(fmt::format("cannot write {}: {}", what,
                                     error ? std::strerror(error) : "a write failed"));
}

}  // namespace ditbench
