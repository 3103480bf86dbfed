// What `run` does while another program holds the results database's write lock (the SQLite
// shell or pandas inside BEGIN IMMEDIATE ... COMMIT): it waits, with backoff, and says so once
// per wait on the console; a finished trial is recorded once the lock is released. Ctrl-C
// stops the wait (the run then ends as storage trouble does: exit 1, trials in flight
// cancelled).
#pragma once

#include <iosfwd>

#include "launch/interrupt.h"
#include "storage/busy_wait.h"

namespace ditbench {

// A BusyWait that writes one line to `out` when a wait passes a second and gives up once
// `interrupt` is requested. Both are borrowed and must outlive the database's use of it.
BusyWait ConsoleBusyWait(const InterruptSource& interrupt, std::ostream& out);

}  // namespace ditbench
