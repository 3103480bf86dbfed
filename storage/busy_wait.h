// How a writer of the results database waits for a lock that another program holds
// (storage/results_db.h opens with it).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>

namespace ditbench {

// How a writable ResultsDb waits for a lock that another program holds (a write transaction
// from the sqlite3 shell or pandas): it retries with backoff (1 ms doubling to 1 s) for as long
// as `give_up` says no, so a finished trial is recorded once the lock is released rather than
// lost. `waiting` is called once per wait that lasts `report_after`, with the database's path.
// Without a BusyWait a writable database waits the same way, silently and without end.
struct BusyWait {
  std::function<void(const std::filesystem::path& db)> waiting;
  std::function<bool()> give_up;  // true: stop waiting (the statement fails "database is locked")
  std::chrono::milliseconds report_after{1000};
};

}  // namespace ditbench
