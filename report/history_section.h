// The History section of the HTML report, and `ditbench history --format html`: small
// multiples, one line chart per trial key measured in at least kHistoryMinCampaigns campaigns
// (two campaigns are a comparison: the report's --baseline), keys with a change point first. Each chart draws the campaigns' latencies with their intervals as
// whiskers, the segment levels as a stepped line, busy and disturbed campaigns hollow and
// grey (a triangle at the axis' edge when off the scale of the others), each change point as a dashed vertical line at its first bad campaign labelled with
// its size; hovering a point shows its campaign, date, build and interval. At most
// kHistoryCharts charts; the rest are counted, not drawn (the page stays small).
// The script marks each canvas it draws with data-drawn="1" (the headless browser test counts
// them). Chart.js must be loaded before the section's script (the report inlines it).
#pragma once

#include <cstddef>
#include <string>

#include "analysis/history.h"

namespace ditbench {

inline constexpr std::size_t kHistoryCharts = 48;
inline constexpr std::size_t kHistoryMinCampaigns = 3;

// The section: "" when no key of `history` has kHistoryMinCampaigns campaigns.
std::string RenderHistorySection(const History& history);

// A self-contained page of the section alone (Chart.js inlined, no network).
std::string RenderHistoryPage(const History& history);

}  // namespace ditbench
