// The process exit codes of every `ditbench` subcommand (README.md, "Exit codes" under "The
// CLI"). Here, below the CLI, because `run` decides its own code from what its trials did.
#pragma once

namespace ditbench {

inline constexpr int kExitOk = 0;
inline constexpr int kExitTrialsFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

}  // namespace ditbench
