// The process exit codes of every `ditbench` subcommand (README.md, "Exit codes" under "The
// CLI"). Here, below the CLI, because `run` decides its own code from what its trials did.
#pragma once

namespace ditbench {

inline constexpr int kExitOk = 0;
inline constexpr int kExitTrialsFailed = 1;
// `selfcheck`: a row of its verdict failed (docs/selfcheck.md).
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitUsage = 2;
// `run` (and `bisect`) stopped because the results database or the disk failed (a full disk,
// an I/O error): the launches it could not record stay `running` until the next run.
inline constexpr int kExitStorageFailed = 3;
inline constexpr int kExitInterrupted = 130;

}  // namespace ditbench
