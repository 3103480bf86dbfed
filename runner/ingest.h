// Turning what the ranks left behind into one TrialRecord: the status (from exit codes and
// rank files) and the metrics (from every rank's samples). Pure apart from reading the run dir.
#pragma once

#include <filesystem>
#include <functional>
#include <vector>

#include "contract/worker_contract.h"
#include "experiments/trial.h"
#include "launch/launcher.h"
#include "metrics/time_intervals.h"
#include "storage/records.h"

namespace ditbench {

// Status, error, device and samples of a finished trial; metrics when it is ok (computed by
// metrics/trial_metrics.h). A trial whose ranks all exited 0 is `failed` unless
// ReadRankFiles finds no problem and every rank reported ok with timed samples. The error and
// device, which come from the worker, carry no terminal control sequences
// (base/terminal_text.h).
// `cancelled` (the user's interrupt), when given, is asked while the files are read: a read it
// ends leaves the trial not ok, so that the caller records it as interrupted.
// `busy_s` (borrowed; may be null): the stretches of the host's monotonic clock, in seconds,
// the machine was judged busy while the trial ran, when its ranks share this host: a serving
// trial's requests are marked by them (ComputeTrialMetrics, metrics/busy_requests.h).
TrialRecord IngestTrial(const TrialConfig& config, const std::string& trial_key,
                        const std::filesystem::path& run_dir, const LaunchOutcome& outcome,
                        const std::function<bool()>& cancelled = {},
                        const IntervalSet* busy_s = nullptr);

// The rank files of a trial of `world_size` ranks, read by name (rank0.json ...). `error` is
// the first problem, empty when there is none: a file missing or unreadable, a file whose
// `rank` differs from its name or whose `world_size` differs from the trial's, or a file for
// a rank at or beyond the world size. So an empty error means every rank 0..world_size-1
// reported exactly once. `ranks` holds every file that could be read, in rank order.
struct RankFiles {
  std::vector<RankResult> ranks;
  std::string error;
};
RankFiles ReadRankFiles(const std::filesystem::path& run_dir, int world_size,
                        const std::function<bool()>& cancelled = {});

// The last non-empty line of a log file (what a crashed rank said last), or "".
std::string LastLogLine(const std::filesystem::path& log);

// The last `lines` non-empty lines of a log file joined with " | " (at most about 1,000
// characters, cut at the front), or "(empty log)" / "(no log)". How a failed `command`
// trial's error shows what the program printed.
std::string LogTail(const std::filesystem::path& log, int lines = 8);

}  // namespace ditbench
