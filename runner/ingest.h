// Turning what the ranks left behind into one TrialRecord: the status (from exit codes and
// rank files) and the metrics (from every rank's samples). Pure apart from reading the run dir.
#pragma once

#include <filesystem>
#include <vector>

#include "experiments/trial.h"
#include "experiments/worker_contract.h"
#include "runner/launcher.h"
#include "storage/records.h"

namespace ditbench {

// Status, error, device and samples of a finished trial; metrics when it is ok.
TrialRecord IngestTrial(const TrialConfig& config, const std::string& trial_key,
                        const std::filesystem::path& run_dir, const LaunchOutcome& outcome);

// Metrics over every rank's results. REQUIRES: non-empty ranks, each with timed samples.
// Per timed iteration the trial's latency is the slowest rank's; rank0_ms is rank 0's median;
// skew_ms the median over iterations of (max - min over ranks).
TrialMetrics ComputeMetrics(const TrialConfig& config, const std::vector<RankResult>& ranks,
                            const std::string& device_name);

// The last non-empty line of a log file (what a crashed rank said last), or "".
std::string LastLogLine(const std::filesystem::path& log);

}  // namespace ditbench
