// The CLI's one error convention (README "Exit codes"): what an exception that escaped a
// subcommand prints and which exit code it gives. A user's mistake is a UserError
// (base/user_error.h); anything the CLI does not know is a bug, never the user's fault.
#pragma once

#include <iosfwd>

namespace ditbench {

class StorageError;

// REQUIRES: called inside a catch block. Classifies the exception being handled, writes one line on
// `err` and returns the exit code:
//   UserError (base/user_error.h), a user's mistake: "<who>: error: <what>", kExitUsage;
//   StorageError, OutputWriteError (the database or an output file failed, not the user and
//     not a bug): "<who>: error: <what>", kExitTrialsFailed; EditedSchemaError (a database
//     whose schema was edited by hand) kExitStorageFailed;
//   anything else, a bug (an escaped std::out_of_range...): "<who>: internal error: <what>",
//     kExitTrialsFailed.
int ReportEscapedError(const char* who, std::ostream& err);

// The exit code of a StorageError that a command reading a database caught: kExitStorageFailed
// for EditedSchemaError (the database failed: its schema was edited by hand), else kExitUsage
// (the database named is missing, damaged or foreign: the user named the wrong file).
int StorageErrorExit(const StorageError& e);

}  // namespace ditbench
