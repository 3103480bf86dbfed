// How every output names a campaign: by its date and build rather than by its number, the same
// in the report, compare, history and advise.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "storage/result_rows.h"

namespace ditbench {

// How the page names campaigns: id -> "#3 2026-11-20 abc1234" (CampaignLabel).
using CampaignLabels = std::map<std::int64_t, std::string>;

// "#<id> <started, YYYY-MM-DD HH:MM UTC> <build>" (build cut to 12 characters).
std::string CampaignLabel(const CampaignInfo& campaign);
CampaignLabels LabelCampaigns(const std::vector<CampaignInfo>& campaigns);

// The label of campaign `id`, or "campaign <id>" when `labels` does not know it.
std::string CampaignName(const CampaignLabels& labels, std::int64_t id);

}  // namespace ditbench
