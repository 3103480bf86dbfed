// `search: {strategy: halving, keep: 0.25}`: successive halving over a sweep. Round 0 measures
// every trial with `repeats.min` iterations (a screening launch); each later round re-measures,
// in a launch of its own with the trial's full repeats policy, the fastest `keep` fraction of
// the previous round's trials within each report group (analysis/configuration_group.h:
// ReportGroup), until one trial is left in every group. Every round is a
// launch of its trial (launch index = round), so every round is stored and a trial's latency
// is the median of its launches' medians (metrics/launch_summary.h). Pure: rows in, keys out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/trial.h"

namespace ditbench {

// The group a trial is ranked in: its report group (ReportGroupOf, the report's tables rank
// the same trials together), as text.
std::string HalvingGroup(const TrialConfig& config);

// One trial as the ranking sees it.
struct HalvingEntry {
  std::string group;  // trials are ranked only within their group
  std::string trial_key;
  double latency_ms = 0;
};

// The trials of `entries` that go on to the next round: in each group of two or more, the
// ceil(keep x n) fastest (at least one); a group of one has found its winner and sends none.
// Ties keep the given order. REQUIRES: 0 < keep < 1.
std::vector<std::string> HalvingSurvivors(const std::vector<HalvingEntry>& entries, double keep);

// How many trials of a group of `n` each later round re-measures (round 1, 2, ...): empty for a
// group of one. REQUIRES: 0 < keep < 1.
std::vector<std::int64_t> HalvingRounds(std::int64_t n, double keep);

// Launches the plan runs at most: n trials screened, then survivors round by round, every
// group treated as one of `group_sizes`.
std::int64_t HalvingLaunches(const std::vector<std::int64_t>& group_sizes, double keep);

}  // namespace ditbench
