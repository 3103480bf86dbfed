// The CLI's one error convention (README "Exit codes"): what an exception that escaped a
// subcommand prints and which exit code it gives. A user's mistake is a UserError
// (base/user_error.h); anything the CLI does not know is a bug, never the user's fault.
#pragma once

#include <iosfwd>

namespace ditbench {

// REQUIRES: called inside a catch block. Classifies the exception being handled, writes one line on
// `err` and returns the exit code:
//   UserError (base/user_error.h), a user's mistake: "<who>: error: <what>", kExitUsage;
//   StorageError (the database failed or cannot be read: damaged, foreign, newer, edited by
//     hand, a full disk): "<who>: error: <what>", kExitStorageFailed; but QueryError (the
//     user's query is not valid) and MissingDatabaseError (no file at the path the user
//     named) kExitUsage;
//   OutputWriteError (an output file failed, not the user and not a bug): "<who>: error:
//     <what>", kExitTrialsFailed;
//   anything else, a bug (an escaped std::out_of_range...): "<who>: internal error: <what>",
//     kExitTrialsFailed.
int ReportEscapedError(const char* who, std::ostream& err);

}  // namespace ditbench
