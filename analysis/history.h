// A trial's history: every campaign of its sweep that measured it, in time order, with the
// change points among them (stats/change_points.h). What `ditbench history` prints and the
// report's History section draws. Reads through storage's typed reads only (Campaigns,
// Results); campaigns set aside with `ditbench campaigns --exclude`, and the campaigns
// `ditbench bisect` measured, take no part.
//
// A point is one campaign's measurement of the trial: its latency_ms (the median of its launch
// medians, as `query` reports it) with the stored interval (between launches when the sweep
// has `replicates`, else of the median over iterations), the campaign's build and
// environment fingerprint, and whether the machine was busy. The build is the one the worker
// reported in its environment ("build": a command workload's program, a bisect build) when
// it did, else the campaign's own (the coordinator's git revision).
//
// Thresholds: a change point must reach the minimum effect of compare's thresholds for the
// trial's device kind (learned from the database's A/A pairs, else the per-device default,
// analysis/comparison.h), so that `history` and `compare` agree on what is too small to count.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comparison.h"
#include "stats/change_points.h"
#include "storage/results_reader.h"

namespace ditbench {

// What a campaign ran with, field by field ("driver", "cuda", "nccl", "libtorch",
// "diffusers", "device", "host", "ditbench"): read from what its environment records (the
// worker's report under "worker", the coordinator's host and build); a field nobody recorded
// is absent.
using Fingerprint = std::map<std::string, std::string>;
Fingerprint EnvironmentFingerprint(const CampaignInfo& campaign);

// The build a campaign's trials ran with (see above).
std::string CampaignBuild(const CampaignInfo& campaign);

struct HistoryPoint {
  std::int64_t campaign = 0;
  double started_at = 0;     // unix seconds
  std::string build, label;  // label: `ditbench campaigns --label`, or empty
  Fingerprint environment;
  double latency_ms = 0;
  std::optional<double> ci_low_ms, ci_high_ms;
  std::int64_t launches = 0;
  bool busy = false;
  std::string busy_note;
  PointUse use = PointUse::kUsed;
  double level_ms = 0;  // the level of the segment it lies in
};

// A change point between two campaigns, with what else changed between them.
struct HistoryChange {
  std::int64_t last_good = 0, first_bad = 0;  // campaign ids
  std::string good_build, bad_build;
  ChangeEstimate change;                       // pct > 0: slower from first_bad on
  std::vector<SettingDifference> environment;  // fingerprint fields that differ
  std::vector<std::int64_t> skipped;           // busy or disturbed campaigns between the two
  std::size_t campaigns_since = 0;             // campaigns of the series from first_bad on
};

// A shift at an end of the series that is not yet a change point (stats/change_points.h, rule
// 5): the latest campaign off the level before it (the next campaign tells a bad night from a
// change), or the first off the level after it.
struct HistoryEdge {
  std::int64_t campaign = 0;
  bool latest = false;  // else the first
  double pct = 0;       // against the level of the rest of its stretch; > 0: slower
};

struct KeyHistory {
  std::string sweep, trial_key, label, device;
  std::vector<HistoryPoint> points;  // time order
  std::vector<HistoryChange> changes;
  double noise_pct = 0;               // the series' night-to-night noise
  bool noise_from_intervals = false;  // too few campaigns: the noise is the points' own spread
  double min_effect_pct = 0;          // the smallest change a change point must reach
  std::vector<HistoryEdge> edges;     // shifts at the ends, not yet change points
  bool busy_used = false;             // most campaigns were busy: busy ones took part
  std::string thresholds;             // Thresholds::Describe() of its device kind
  // The fitted level's change: the latest segment's level against the first's (so one bad
  // night at either end does not make one); 0 when no change point splits the series.
  double level_change_pct = 0;
  // The latest measurement against the first (points.back() and points.front(), whatever
  // their use): what a reader comparing the first and the last number sees.
  double first_to_latest_pct = 0;
};

// What to tell a reader about `key` beyond its change points, one sentence each: every shift
// at an end of the series, and when no change point was found, why not (the series too noisy
// for one, too short to estimate its noise, or simply none). Shared by `ditbench history` and
// the report's History section so that both say the same.
std::vector<std::string> HistoryNotes(const KeyHistory& key);

struct History {
  std::vector<KeyHistory> keys;         // by sweep, then label, then key
  std::vector<CampaignInfo> campaigns;  // the included campaigns of the selected sweeps
  std::size_t excluded = 0;             // campaigns of those sweeps left out
  // Campaigns of `ditbench bisect` (environment "bisect"): they measure older builds out of
  // time order, so they are not points of the history either.
  std::size_t bisections = 0;
  std::string metric = "latency_ms";  // what HistoryPoint::latency_ms holds (HistoryOptions)
};

struct HistoryOptions {
  std::string sweep;  // empty: every sweep
  std::string only;   // empty: every trial key; else one key (UserError if unknown)
  // The metric followed: latency_ms (with its stored interval), or another of the metric
  // table's millisecond metrics (a serving trial's p95_ms, queue_ms; decode_ms), whose points
  // carry no interval of their own; rows without it take no part. UserError for another name.
  std::string metric = "latency_ms";
};

// The history of every ok trial of the selected campaigns. Pure: `campaigns` as Campaigns()
// gives them, `rows` their results. Throws UserError for an unknown sweep or key,
// naming the known ones.
History BuildHistory(const std::vector<CampaignInfo>& campaigns, const std::vector<ResultRow>& rows,
                     const HistoryOptions& options);

// Reads the campaigns and their results from `db`, then BuildHistory.
History LoadHistory(ResultsReader& db, const HistoryOptions& options);

// The change points slower by more than `pct` percent whose first bad campaign is among the
// last `last` campaigns of its series (0: any), by key.
std::vector<std::pair<const KeyHistory*, const HistoryChange*>> SlowerChanges(
    const History& history, double pct, std::size_t last);

}  // namespace ditbench
