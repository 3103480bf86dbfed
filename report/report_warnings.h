// The report's warnings: what makes its numbers suspect, found from the campaigns and rows alone
// (pure), then rendered as HTML. Unfinished campaigns, several builds, packed trials, trials on a
// busy machine, throttled GPUs, GPU trials without energy per image, several devices, noisy
// trials (CoV above 5% on a GPU, 20% on a CPU) and speedups above the world size against the 1-rank
// baseline (OneRankBaselines, analysis/configuration_group.h).
#pragma once

#include <string>
#include <vector>

#include "storage/result_rows.h"

namespace ditbench {

// A warning: one sentence, and the trials it concerns (every one, in a collapsible list).
struct ReportWarning {
  std::string text;
  std::vector<std::string> trials;
};

// Whether the row's trial ran on a GPU (its device is neither empty nor "cpu").
bool RunsOnGpu(const ResultRow& row);

// The warnings for `rows` (every selected trial, unfolded) of `campaigns`, in page order.
std::vector<ReportWarning> ReportWarnings(const std::vector<CampaignInfo>& campaigns,
                                          const std::vector<ResultRow>& rows);

// A "Warnings" section with one box per warning; empty when there is none.
std::string RenderWarnings(const std::vector<ReportWarning>& warnings);

}  // namespace ditbench
