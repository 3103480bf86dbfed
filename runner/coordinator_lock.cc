#include "runner/coordinator_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <ostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "machine/host_info.h"

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
  if (pid <= 0) {
    return "a process that has not said who it is: it may be starting, or hold the database "
           "under another name (a hard link, another mount)";
  }
  return fmt::format("pid {} on {}, started {}", pid, host.empty() ? "?" : host,
                     started.empty() ? "?" : started);
}

std::filesystem::path LockPathFor(const std::filesystem::path& db) {
  std::error_code ec;
  auto path = std::filesystem::weakly_canonical(std::filesystem::absolute(db), ec);
  if (ec) path = db;
  return std::filesystem::path(path.string() + ".lock");
}

std::optional<CoordinatorLock> CoordinatorLock::TryAcquire(const std::filesystem::path& db,
                                                           LockHolder* holder) {
  // O_EXCL first, to know whether the file is ours to remove again (see Release).
  UniqueFd db_file(::open(db.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  const bool created = static_cast<bool>(db_file);
  if (!created && errno == EEXIST) db_file = UniqueFd(::open(db.c_str(), O_RDWR | O_CLOEXEC));
  if (!db_file) {
    throw std::runtime_error(fmt::format("cannot open the results database '{}' to lock it: {}",
                                         db.string(), std::strerror(errno)));
  }
  const int db_fd = db_file.get();
  CoordinatorLock lock(std::move(db_file));  // closes what it holds on every path out
  struct stat info {};
  if (::fstat(db_fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    throw std::runtime_error(
        fmt::format("results database '{}' is not a regular file", db.string()));
  }
  const auto path = LockPathFor(db);  // after the open: the file now exists to be resolved
  lock.note_fd_ = UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock.note_fd_) {
    throw std::runtime_error(
        fmt::format("cannot open the lock file '{}': {}", path.string(), std::strerror(errno)));
  }
  const int note_fd = lock.note_fd_.get();
  if (created) {  // the file itself, not a symlink that led to it
    std::error_code ec;
    lock.created_ = std::filesystem::canonical(db, ec);
  }
  struct flock byte {};
  byte.l_type = F_WRLCK;
  byte.l_whence = SEEK_SET;
  byte.l_start = kLockByte;
  byte.l_len = 1;
  const bool file_locked = ::fcntl(db_fd, F_OFD_SETLK, &byte) == 0;
  if (!file_locked && errno != EAGAIN && errno != EACCES) {
    throw std::runtime_error(
        fmt::format("cannot lock '{}': {}", db.string(), std::strerror(errno)));
  }
  const bool note_locked = file_locked && ::flock(note_fd, LOCK_EX | LOCK_NB) == 0;
  if (file_locked && !note_locked && errno != EWOULDBLOCK) {
    throw std::runtime_error(
        fmt::format("cannot lock '{}': {}", path.string(), std::strerror(errno)));
  }
  if (!note_locked) {
    if (holder) *holder = ReadHolder(note_fd);
    return std::nullopt;
  }
  WriteHolder(note_fd);
  lock.held_ = true;
  return lock;
}

CoordinatorLock::CoordinatorLock(CoordinatorLock&& other) noexcept
    : db_fd_(std::move(other.db_fd_)),
      note_fd_(std::move(other.note_fd_)),
      held_(std::exchange(other.held_, false)),
      created_(std::move(other.created_)) {
  other.created_.clear();
}

CoordinatorLock& CoordinatorLock::operator=(CoordinatorLock&& other) noexcept {
  if (this != &other) {
    Release();
    db_fd_ = std::move(other.db_fd_);
    note_fd_ = std::move(other.note_fd_);
    held_ = std::exchange(other.held_, false);
    created_ = std::move(other.created_);
    other.created_.clear();
  }
  return *this;
}

CoordinatorLock::~CoordinatorLock() { Release(); }

void CoordinatorLock::Release() noexcept {
  // Only a holder clears its note (a refused TryAcquire has the files open but not the locks).
  if (held_ && ::ftruncate(note_fd_.get(), 0) != 0) {
    // the note is a courtesy: a stale one names a process that is gone
  }
  // A database file this lock created and nothing wrote (a run refused after the lock was
  // taken) is removed again, so a refused run leaves no empty database behind.
  struct stat info {};
  if (held_ && !created_.empty() && ::fstat(db_fd_.get(), &info) == 0 && info.st_size == 0) {
    std::error_code ignored;
    std::filesystem::remove(created_, ignored);
  }
  note_fd_ = UniqueFd();  // closing the last descriptor drops the flock
  db_fd_ = UniqueFd();    // and the OFD lock
  held_ = false;
}

std::optional<CoordinatorLock> LockForCommand(const std::filesystem::path& db,
                                              std::string_view command, std::ostream& err) {
  try {
    LockHolder holder;
    std::optional<CoordinatorLock> lock = CoordinatorLock::TryAcquire(db, &holder);
    if (!lock) {
      err << "ditbench " << command << ": error: '" << db.string()
          << "' is in use by another `ditbench run` (" << holder.Describe()
          << "); wait for it to end, or pass another --db\n";
    }
    return lock;
  } catch (const std::exception& e) {
    err << "ditbench " << command << ": error: " << e.what() << "\n";
    return std::nullopt;
  }
}

bool CoordinatorGone(const std::string& host, long pid) {
  if (host != Hostname() || pid <= 0 || pid == ::getpid()) return true;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return true;
  // A zombie (dead, not yet reaped) is gone too: its state is the field after "(comm)".
  const std::string text = ReadProcText(fmt::format("/proc/{}/stat", pid));
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

}  // namespace ditbench
