#include "experiments/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace ditbench {
namespace {

std::runtime_error FileError(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error(fmt::format("{}: {}", path.string(), what));
}

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

int FileDescriptor::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

RegularFile OpenRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one for ever.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) throw FileError(path, fmt::format("cannot read: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw FileError(path, fmt::format("cannot stat: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw FileError(path, fmt::format("is {}; expected a regular file", KindOf(st.st_mode)));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    throw FileError(path, fmt::format("is {} bytes; expected at most {}", size, max_bytes));
  return RegularFile{std::move(fd), size};
}

std::uint64_t ReadRegularFileInto(const RegularFile& file, const std::filesystem::path& path,
                                  std::uint64_t offset, void* buffer, std::uint64_t count) {
  char* bytes = static_cast<char*>(buffer);
  std::uint64_t done = 0;
  while (done < count) {
    const ssize_t n = ::pread(file.fd.get(), bytes + done, count - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw FileError(path, fmt::format("read failed: {}", std::strerror(errno)));
    if (n == 0) break;  // the end of the file (it may have shrunk since it was opened)
    done += static_cast<std::uint64_t>(n);
  }
  return done;
}

std::string ReadRegularFileAt(const RegularFile& file, const std::filesystem::path& path,
                              std::uint64_t offset, std::uint64_t count) {
  std::string bytes(count, '\0');
  bytes.resize(ReadRegularFileInto(file, path, offset, bytes.data(), count));
  return bytes;
}

std::string ReadRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const RegularFile file = OpenRegularFile(path, max_bytes);
  return ReadRegularFileAt(file, path, 0, file.size);
}

}  // namespace ditbench
