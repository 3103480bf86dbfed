// One coordinator per results database: an advisory lock (flock) on `<db>.lock` beside it,
// held for the whole of a `ditbench run`. The lock file also names its holder (pid, host,
// start time), so that a second `run` can say who is in the way. Readers (query, report,
// plan) never take it: SQLite's own locking serves them, even on read-only media.
//
// The kernel drops the lock when its holder dies, however it dies (kill -9 included), so a
// stale lock file never blocks a later run; its text is then only a leftover.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ditbench {

// Who holds (or last held) a database's lock, as its lock file says.
struct LockHolder {
  long pid = 0;
  std::string host;
  std::string started;  // UTC, ISO 8601

  std::string Describe() const;  // "pid 123 on host, started 2026-11-22T01:02:03Z"
};

// The lock file of a database: `<db>.lock` in the same folder.
std::filesystem::path LockPathFor(const std::filesystem::path& db);

// A held lock. Move-only; releasing (destruction) closes the file, which drops the lock.
class CoordinatorLock {
 public:
  // Takes the lock of `db` without waiting. On success returns the held lock; when another
  // process holds it, returns nothing and fills `holder` with what its lock file says (best
  // effort: a holder that has not yet written its line reads as pid 0). Throws
  // std::runtime_error when the lock file cannot be created or locked for another reason.
  static std::optional<CoordinatorLock> TryAcquire(const std::filesystem::path& db,
                                                   LockHolder* holder);

  CoordinatorLock(CoordinatorLock&& other) noexcept;
  CoordinatorLock& operator=(CoordinatorLock&& other) noexcept;
  CoordinatorLock(const CoordinatorLock&) = delete;
  CoordinatorLock& operator=(const CoordinatorLock&) = delete;
  ~CoordinatorLock();

 private:
  explicit CoordinatorLock(int fd) : fd_(fd) {}
  void Release() noexcept;
  int fd_ = -1;
};

// Whether the coordinator `pid` on `host` that left a trial `running` is gone. On this host: no
// such process (or a zombie), or it is this very process (a pid reused after a reboot). On
// another host it cannot be asked, and counts as gone: the caller holds the database's lock,
// which a live coordinator on a shared file system would hold.
bool CoordinatorGone(const std::string& host, long pid);

}  // namespace ditbench
