#include "runner/coordinator_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "experiments/host_info.h"

namespace ditbench {
namespace {

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// The lock file's one line: "pid host started".
LockHolder ReadHolder(int fd) {
  std::string text(256, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  LockHolder holder;
  std::istringstream in(text);
  in >> holder.pid >> holder.host >> holder.started;
  return holder;
}

void WriteHolder(int fd) {
  const std::string line = fmt::format("{} {} {}\n", ::getpid(), Hostname(), UtcNow());
  if (::ftruncate(fd, 0) != 0) return;  // the lock holds without its text; the text is a courtesy
  [[maybe_unused]] ssize_t ignored = ::pwrite(fd, line.data(), line.size(), 0);
}

}  // namespace

std::string LockHolder::Describe() const {
  if (pid <= 0) return "a process that has not yet said who it is";
  return fmt::format("pid {} on {}, started {}", pid, host.empty() ? "?" : host,
                     started.empty() ? "?" : started);
}

std::filesystem::path LockPathFor(const std::filesystem::path& db) {
  return std::filesystem::path(db.string() + ".lock");
}

std::optional<CoordinatorLock> CoordinatorLock::TryAcquire(const std::filesystem::path& db,
                                                           LockHolder* holder) {
  const auto path = LockPathFor(db);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot open the lock file '{}': {}", path.string(), std::strerror(errno)));
  }
  CoordinatorLock lock(fd);  // closes the file on every path out
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      throw std::runtime_error(
          fmt::format("cannot lock '{}': {}", path.string(), std::strerror(errno)));
    }
    if (holder) *holder = ReadHolder(fd);
    return std::nullopt;
  }
  WriteHolder(fd);
  return lock;
}

CoordinatorLock::CoordinatorLock(CoordinatorLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

CoordinatorLock& CoordinatorLock::operator=(CoordinatorLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

CoordinatorLock::~CoordinatorLock() { Release(); }

void CoordinatorLock::Release() noexcept {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor drops the flock
  fd_ = -1;
}

bool CoordinatorGone(const std::string& host, long pid) {
  if (host != Hostname() || pid <= 0 || pid == ::getpid()) return true;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return true;
  // A zombie (dead, not yet reaped) is gone too: its state is the field after "(comm)".
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

}  // namespace ditbench
