// One coordinator per results database, held for the whole of a `ditbench run` (and of
// `ditbench migrate`). The lock follows the file, not the spelling of its path: it is an
// open-file-description lock (F_OFD_SETLK) on one byte of the database file itself, so a
// symlink, a hard link, a bind mount or a relative spelling of the same file meets the same
// lock. The byte (kLockByte) lies beyond the bytes SQLite locks, so the lock never meets
// SQLite's own locking, in this process or another. Readers (query, report, plan) never take
// it: SQLite's own locking serves them, even on read-only media.
//
// Beside the database, `<canonical db path>.lock` names the holder (pid, host, start time), so
// that a second `run` can say who is in the way; it is also flock()ed, so that an older
// ditbench (which locked only that file) and this one exclude each other.
//
// The kernel drops both locks when their holder dies, however it dies (kill -9 included), so
// a stale lock file never blocks a later run; its text is then only a leftover.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "base/untrusted_input.h"

namespace ditbench {

// Who holds (or last held) a database's lock, as its lock file says.
struct LockHolder {
  long pid = 0;
  std::string host;
  std::string started;  // UTC, ISO 8601

  std::string Describe() const;  // "pid 123 on host, started 2026-11-22T01:02:03Z"
};

// The holder's note of a database: `<db>.lock` beside the file `db` names once symlinks
// are resolved (so every symlink to one database finds one note).
std::filesystem::path LockPathFor(const std::filesystem::path& db);

// The byte of the database file that the lock covers: past SQLite's lock bytes (which start
// at 0x40000000 and span 512 bytes), on a page SQLite never uses for data.
inline constexpr long long kLockByte = 0x40000000LL + 0x1000;

// A held lock. Move-only; releasing (destruction) clears the note, removes the database file
// again if the lock created it and it is still empty, and closes both files, which drops the
// locks.
// REQUIRES: no SQLite connection to the database is open in this process when the lock is
// released (closing a descriptor of a file drops the process's POSIX locks on it, SQLite's
// included): declare the lock before the ResultsDb, so that the database closes first.
class CoordinatorLock {
 public:
  // Takes the lock of `db` without waiting, creating an empty database file when there is
  // none (SQLite reads an empty file as a new database). On success returns the held lock;
  // when another process holds it, returns nothing and fills `holder` with what its note says
  // (best effort: a holder that has not yet written its line, or that reached the file
  // through a hard link or another mount, reads as pid 0). Throws std::runtime_error when the
  // database or its note cannot be opened or locked for another reason.
  static std::optional<CoordinatorLock> TryAcquire(const std::filesystem::path& db,
                                                   LockHolder* holder);

  CoordinatorLock(CoordinatorLock&& other) noexcept;
  CoordinatorLock& operator=(CoordinatorLock&& other) noexcept;
  CoordinatorLock(const CoordinatorLock&) = delete;
  CoordinatorLock& operator=(const CoordinatorLock&) = delete;
  ~CoordinatorLock();

 private:
  explicit CoordinatorLock(UniqueFd db_fd) : db_fd_(std::move(db_fd)) {}
  void Release() noexcept;
  UniqueFd db_fd_;    // the database file, with the OFD lock on kLockByte
  UniqueFd note_fd_;  // `<canonical db>.lock`, flock()ed, naming the holder
  bool held_ = false;  // both locks taken (a refused attempt only has the files open)
  std::filesystem::path created_;  // the database file, when TryAcquire created it
};

// TryAcquire for the subcommand `command` ("run", "migrate"): the held lock, or nothing after
// one line on `err` saying who holds it ("ditbench run: error: 'results.db' is in use by
// another `ditbench run` (pid ...)") or why the lock could not be taken.
std::optional<CoordinatorLock> LockForCommand(const std::filesystem::path& db,
                                              std::string_view command, std::ostream& err);

// Whether the coordinator `pid` on `host` that left a trial `running` is gone. On this host: no
// such process (or a zombie), or it is this very process (a pid reused after a reboot). On
// another host it cannot be asked, and counts as gone: the caller holds the database's lock,
// which a live coordinator on a shared file system would hold.
bool CoordinatorGone(const std::string& host, long pid);

}  // namespace ditbench
