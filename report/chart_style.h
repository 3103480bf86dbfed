// How the report's charts tell things apart, fixed for the whole page: one colour per parallel
// strategy (so "ulysses" is the same blue in the latency, speedup, memory and output-error
// charts of every group), and campaigns named by date and build rather than by their number.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "storage/results_db.h"

namespace ditbench {

// The colour of a strategy (StrategyName: "ulysses", "ulysses+ring", ...; "" for one rank):
// a fixed table for the common ones, and for any other a colour chosen from its name alone,
// so it is the same in every chart and every report.
std::string StrategyColor(const std::string& strategy);

// The colours of the stacked stage segments: greys and browns that no strategy uses.
std::string StageColor(const std::string& segment);

// How the page names campaigns: id -> "#3 2026-11-20 abc1234" (CampaignLabel).
using CampaignLabels = std::map<std::int64_t, std::string>;

// "#<id> <started, YYYY-MM-DD HH:MM UTC> <build>" (build cut to 12 characters).
std::string CampaignLabel(const CampaignInfo& campaign);
CampaignLabels LabelCampaigns(const std::vector<CampaignInfo>& campaigns);

// The label of campaign `id`, or "campaign <id>" when `labels` does not know it.
std::string CampaignName(const CampaignLabels& labels, std::int64_t id);

}  // namespace ditbench
