// The answer a report group gives first: its winning configuration, the fastest of the group's
// newest campaign, with its speedup and scaling efficiency against its 1-rank trial
// (analysis/speedup.h, the baseline of the group's table and charts) and the doubts they carry.
// A configuration below quality (it missed its sweep's quality gates,
// experiments/quality_gate.h) is never the winner: the faster ones skipped are named. Rows of
// bisect or excluded campaigns must not be passed in (analysis/campaign_roles.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/trust.h"
#include "storage/result_rows.h"

namespace ditbench {

struct GroupWinner {
  ResultRow row;                      // the winning configuration (folded over seeds)
  std::optional<ResultRow> baseline;  // its 1-rank trial
  std::optional<double> speedup;      // baseline latency / its latency
  std::optional<double> efficiency;   // speedup / world size
  // How the speedup's reference is named (Speedup::ReferenceText): "1 rank", "1 rank without
  // cache" for a cached winner, whose speedup is what the cache and its ranks bought together.
  std::string reference;
  // Its doubts and its speedup's (analysis/trust.h); not plain: the row is no plain answer.
  Trust trust;
  std::size_t ranked = 0;  // measured configurations of its campaign in the group
  // Faster configurations of the campaign left out because they are below quality, fastest
  // first. With no `row` (every measured configuration is below quality) there is no winner.
  std::vector<ResultRow> skipped;
  bool found = true;  // false: every measured configuration was skipped
};

// REQUIRES: `ranked` is one group's rows folded over seeds and sorted as its table (measured
// rows first, fastest first). nullopt when no row is measured; found false when every measured
// row of the newest campaign is below quality.
std::optional<GroupWinner> WinnerOf(const std::vector<ResultRow>& ranked);

}  // namespace ditbench
