// A launch that finished but was never recorded: its coordinator died, was interrupted while
// it waited for the database (another program held its lock), or storage failed, between the
// end of the ranks and the commit. Its rank files are on disk; so is `ditbench-outcome.json`,
// how the ranks ended (LaunchOutcome), written by the coordinator before it records the
// launch (named so that a `command` program's own files in the folder cannot clash). The next
// `run` of the campaign records such a launch from its run folder instead of running it again.
//
// ditbench-outcome.json: {"version": 1, "ranks": [{"exited", "exit_code", "signal",
// "killed_by_us"}], "timed_out", "first_failed_rank", "wall_s", "launch_error",
// "scheduler_status", "scheduler_reason"}. Another version, or a file that does not parse, is
// no outcome (the launch runs again). Cancelled launches write none: they did not finish.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>

#include "launch/launcher.h"
#include "plan/sweep_plan.h"
#include "storage/campaign_writer.h"
#include "storage/output_error_store.h"

namespace ditbench {

inline constexpr const char* kOutcomeFile = "ditbench-outcome.json";

// Writes `outcome` to `run_dir`/ditbench-outcome.json (not fsynced: a launch whose outcome is
// lost in a power cut simply runs again). Best effort: a failed write is ignored, the launch is then
// recorded as usual and only the later recovery is lost.
void WriteLaunchOutcome(const std::filesystem::path& run_dir,
                        const LaunchOutcome& outcome) noexcept;

// The outcome in `run_dir`, or nothing (none, unreadable, another version).
std::optional<LaunchOutcome> ReadLaunchOutcome(const std::filesystem::path& run_dir);

// Records, as the sweep loop would have, every launch of `campaign` left `running` by a
// coordinator that `gone` says is gone (and not in `taken_over`) whose run folder holds an
// outcome, for trials of `plan`, through `writer` (and `output_errors`, as the sweep loop
// would). One line per launch to `out`. Returns how many were recorded;
// the others stay `running` for CampaignWriter::MarkRunningAsInterrupted. Throws StorageError.
int RecordUnrecordedLaunches(CampaignWriter& writer, OutputErrorStore& output_errors,
                             std::int64_t campaign, const SweepPlan& plan, int replicates,
                             const CampaignWriter::CoordinatorIsGone& gone,
                             const std::set<std::string>& taken_over, std::ostream& out);

}  // namespace ditbench
