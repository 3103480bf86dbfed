// The report's opening, which leads with the answer: per report group, the configuration that
// wins (the fastest of the group's newest campaign) with its speedup, scaling efficiency,
// peak memory and output error against its 1-rank trial (OneRankBaselines, the baseline of
// the group's table and charts, analysis/configuration_group.h). A configuration below quality
// (it missed its sweep's quality gates, experiments/quality_gate.h) is never the winner: the
// summary names the faster ones it skipped and why. Pure, then rendered as HTML.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "report/chart_style.h"
#include "storage/result_rows.h"

namespace ditbench {

struct GroupWinner {
  ResultRow row;                      // the winning configuration (folded over seeds)
  std::optional<ResultRow> baseline;  // its 1-rank trial
  std::optional<double> speedup;      // baseline latency / its latency
  std::optional<double> efficiency;   // speedup / world size
  std::size_t ranked = 0;             // measured configurations of its campaign in the group
  // Faster configurations of the campaign left out because they are below quality, fastest
  // first. With no `row` (every measured configuration is below quality) there is no winner.
  std::vector<ResultRow> skipped;
  bool found = true;  // false: every measured configuration was skipped
};

// REQUIRES: `ranked` is one group's rows folded over seeds and sorted as its table (measured
// rows first, fastest first). nullopt when no row is measured; found false when every measured
// row of the newest campaign is below quality.
std::optional<GroupWinner> WinnerOf(const std::vector<ResultRow>& ranked);

// One summary line per group: its title and the anchor of its section ("group-3").
struct SummaryGroup {
  std::string title, anchor;
  std::optional<GroupWinner> winner;
};

// The "Summary" section (id "summary"): one table row per group, linked to its section.
std::string RenderSummary(const std::vector<SummaryGroup>& groups,
                          const CampaignLabels& campaigns);

// A table of contents: links (anchor, text) in page order.
std::string RenderContents(const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace ditbench
