#include "base/untrusted_input.h"

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

// Thrown by ParseBoundedJson's callback when the nesting is too deep.
struct TooDeep {
  std::string field;  // the top-level key it happened under, or "" at the top
};

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

int UniqueFd::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

RegularFile OpenRegularFile(const std::filesystem::path& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one for ever. It has no
  // effect on the reads of a regular file.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) throw FileError(path, fmt::format("cannot read: {}", std::strerror(errno)));
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

nlohmann::json ParseBoundedJson(std::string_view text, int max_depth, const std::string& where) {
  // nlohmann's parser keeps its own stack (it does not recurse); the callback sees each level
  // as it opens and stops the parse before anything deeper is built.
  std::string top_key;
  auto bounded = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::key && depth == 1) top_key = parsed.get<std::string>();
    if ((event == Event::object_start || event == Event::array_start) && depth >= max_depth)
      throw TooDeep{depth > 1 ? top_key : ""};
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), bounded);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", where, e.what()));
  } catch (const TooDeep& deep) {
    throw std::runtime_error(fmt::format("{}: {} nested more than {} levels deep", where,
                                         deep.field.empty() ? "JSON" : "'" + deep.field + "' is",
                                         max_depth));
  }
}

}  // namespace ditbench
