// The report's opening, which leads with the answer: per report group, the configuration that
// wins (analysis/group_winner.h) with its speedup, scaling efficiency, peak memory and output
// error against its 1-rank trial, and the faster ones skipped as below quality. A winner with
// doubts (busy, a borrowed or busy baseline, superlinear, few launches) is never shown as a
// plain answer: its row is marked suspect and its cell names the doubts.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/group_winner.h"
#include "report/chart_style.h"
#include "storage/result_rows.h"

namespace ditbench {

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
