#include "analysis/campaign_roles.h"

#include <algorithm>

namespace ditbench {

CampaignRole RoleOf(const CampaignInfo& campaign) {
  if (campaign.excluded) return CampaignRole::kExcluded;
  const nlohmann::json& environment = campaign.record.environment;
  if (environment.is_object() && environment.contains("bisect")) return CampaignRole::kBisect;
  return CampaignRole::kMeasurement;
}

std::string_view RoleName(CampaignRole role) {
  switch (role) {
    case CampaignRole::kMeasurement:
      return "";
    case CampaignRole::kExcluded:
      return "excluded";
    case CampaignRole::kBisect:
      return "bisect";
  }
  return "";
}

std::set<std::int64_t> AnsweringCampaigns(const std::vector<CampaignInfo>& campaigns) {
  std::set<std::int64_t> ids;
  for (const CampaignInfo& c : campaigns)
    if (RoleOf(c) == CampaignRole::kMeasurement) ids.insert(c.id);
  return ids;
}

std::vector<ResultRow> AnsweringRows(const std::vector<CampaignInfo>& campaigns,
                                     std::vector<ResultRow> rows,
                                     const std::vector<std::int64_t>& named) {
  std::set<std::int64_t> left_out;
  for (const CampaignInfo& c : campaigns) {
    const CampaignRole role = RoleOf(c);
    const bool asked_for = std::find(named.begin(), named.end(), c.id) != named.end();
    if (role == CampaignRole::kBisect || (role == CampaignRole::kExcluded && !asked_for))
      left_out.insert(c.id);
  }
  std::erase_if(rows, [&](const ResultRow& row) { return left_out.contains(row.campaign); });
  return rows;
}

}  // namespace ditbench
