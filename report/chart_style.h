// How the report's charts tell things apart, fixed for the whole page: one colour per parallel
// strategy (so "ulysses" is the same blue in the latency, speedup, memory and output-error
// charts of every group). Campaigns are named by analysis/campaign_labels.h.
#pragma once

#include <string>

#include "analysis/campaign_labels.h"

namespace ditbench {

// The colour of a strategy (StrategyName: "ulysses", "ulysses+ring", ...; "" for one rank):
// a fixed table for the common ones, and for any other a colour chosen from its name alone,
// so it is the same in every chart and every report.
std::string StrategyColor(const std::string& strategy);

// The colours of the stacked stage segments: greys and browns that no strategy uses.
std::string StageColor(const std::string& segment);

}  // namespace ditbench
