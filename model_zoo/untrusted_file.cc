#include "model_zoo/untrusted_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ditbench {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a folder";
  return "not a regular file";
}

std::string Bytes(std::uint64_t n) {
  if (n >= (1ull << 30)) return fmt::format("{:.1f} GB", n / double(1ull << 30));
  if (n >= (1ull << 20)) return fmt::format("{:.1f} MB", n / double(1ull << 20));
  return fmt::format("{} bytes", n);
}

[[noreturn]] void Fail(const std::filesystem::path& path, const std::string& what) {
  throw std::invalid_argument(path.string() + ": " + what);
}

// Thrown by the parse callback to stop at the first level too deep.
struct TooDeep {};

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

int UniqueFd::Release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

UniqueFd OpenRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes,
                         std::uint64_t* size) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, for ever.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) Fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) Fail(path, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) Fail(path, std::string("is ") + KindOf(st.st_mode) + ", expected a regular file");
  const auto bytes = static_cast<std::uint64_t>(st.st_size);
  if (bytes > max_bytes)
    Fail(path, Bytes(bytes) + ", more than the " + Bytes(max_bytes) + " expected");
  // Reads of a regular file never block; clear the flag so that they never return EAGAIN.
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  if (size) *size = bytes;
  return fd;
}

std::string ReadRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes) {
  std::uint64_t size = 0;
  UniqueFd fd = OpenRegularFile(path, max_bytes, &size);
  std::string text;
  text.resize(static_cast<std::size_t>(size));
  std::size_t done = 0;
  // Up to the size fstat saw, and no further: a file that grows while it is read is cut there.
  while (done < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Fail(path, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;  // shrank while being read
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

nlohmann::json ParseBoundedJson(std::string_view text, int max_depth, const std::string& where) {
  // nlohmann's parser keeps its own stack (no recursion); the callback sees each level as it
  // opens and stops the parse before anything deeper is built.
  const nlohmann::json::parser_callback_t guard =
      [max_depth](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
        if ((event == nlohmann::json::parse_event_t::object_start ||
             event == nlohmann::json::parse_event_t::array_start) &&
            depth >= max_depth)
          throw TooDeep{};
        return true;
      };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), guard);
  } catch (const TooDeep&) {
    throw std::invalid_argument(fmt::format("{}: nested deeper than {} levels", where, max_depth));
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(where + ": not JSON: " + e.what());
  }
}

}  // namespace ditbench
