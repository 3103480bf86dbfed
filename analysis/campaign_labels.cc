#include "analysis/campaign_labels.h"

#include <ctime>

#include <fmt/format.h>

namespace ditbench {

std::string CampaignLabel(const CampaignInfo& campaign) {
  const std::time_t t = static_cast<std::time_t>(campaign.started_at);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char started[32];
  std::strftime(started, sizeof started, "%Y-%m-%d %H:%M", &tm);
  const std::string& build = campaign.record.build;
  return fmt::format("#{} {} {}", campaign.id, started,
                     build.empty() ? "(no build)" : build.substr(0, 12));
}

CampaignLabels LabelCampaigns(const std::vector<CampaignInfo>& campaigns) {
  CampaignLabels labels;
  for (const CampaignInfo& c : campaigns) labels[c.id] = CampaignLabel(c);
  return labels;
}

std::string CampaignName(const CampaignLabels& labels, std::int64_t id) {
  auto found = labels.find(id);
  return found == labels.end() ? fmt::format("campaign {}", id) : found->second;
}

}  // namespace ditbench
