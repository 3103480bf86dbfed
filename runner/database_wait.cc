#include "runner/database_wait.h"

#include <ostream>

#include <fmt/format.h>

namespace ditbench {

BusyWait ConsoleBusyWait(const InterruptSource& interrupt, std::ostream& out) {
  BusyWait wait;
  wait.waiting = [&out](const std::filesystem::path& db) {
    out << fmt::format(
               "results database '{}' is locked by another program (a write transaction, e.g. "
               "BEGIN IMMEDIATE in the SQLite shell or pandas): waiting for it to end; nothing is lost "
               "meanwhile (Ctrl-C stops the run)\n",
               db.string())
        << std::flush;
  };
  wait.give_up = [&interrupt] { return interrupt.Requested(); };
  return wait;
}

}  // namespace ditbench
