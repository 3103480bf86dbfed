// What each campaign is for, decided once for every output. A nightly campaign answers
// questions; a campaign set aside (`ditbench campaigns --exclude`) or one that `ditbench bisect`
// ran (it measures older builds, out of order, one trial at a time) does not: neither feeds a
// summary, a chart, a 1-rank baseline, a learned noise floor nor a history.
#pragma once

#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "storage/result_rows.h"

namespace ditbench {

enum class CampaignRole {
  kMeasurement,  // a sweep's campaign: nightly or by hand
  kExcluded,     // set aside by `ditbench campaigns --exclude` (its rows kept)
  kBisect,       // run by `ditbench bisect` (environment "bisect")
};

CampaignRole RoleOf(const CampaignInfo& campaign);

// "excluded", "bisect": how a listing names a role that is left out; "" for kMeasurement.
std::string_view RoleName(CampaignRole role);

// The ids of `campaigns` whose rows answer questions (RoleOf == kMeasurement).
std::set<std::int64_t> AnsweringCampaigns(const std::vector<CampaignInfo>& campaigns);

// `rows` less those of campaigns that do not answer (kExcluded, kBisect). An excluded campaign
// in `named` (asked for by id: `report --campaign 3`) answers; a bisect one never does. Rows
// of a campaign not in `campaigns` are kept (a caller that read them chose them).
std::vector<ResultRow> AnsweringRows(const std::vector<CampaignInfo>& campaigns,
                                     std::vector<ResultRow> rows,
                                     const std::vector<std::int64_t>& named = {});

}  // namespace ditbench
