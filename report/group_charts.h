// The charts of one report group, as data for the report's chart script (kChartScript,
// report/report_assets.h):
//  * latency: median per parallel configuration on a logarithmic axis (a 50 ms bar stays
//    visible beside a 2700 ms one), each bar in its strategy's colour, one dataset per
//    campaign (older ones paler) with a legend when the group spans several, and the 95% CI
//    drawn as whiskers on the chart itself (a printed or screenshotted report shows them);
//  * speedup: speedup against the row's 1-rank baseline (the table's) versus world size, one
//    line per strategy (the degrees above 1: "ulysses", "ulysses+cfg", ...) and other settings
//    (SettingsLabel), with the ideal line;
//  * stages: where an iteration goes, per parallel configuration, the stages stacked
//    (transformer blocks and the rest of the steps when blocks were profiled, else the
//    denoising steps; the VAE decode; the rest of the iteration);
//  * memory: peak memory per rank versus world size, one line per strategy from the 1-rank
//    baseline;
//  * error: output error (rel. L2 against the 1-rank trial, log axis) versus speedup, one
//    series per strategy, a point per world size; an error of exactly 0 (an exact strategy)
//    sits on the axis floor, a decade below the smallest error above 0, labelled "0 (exact)".
// Colours are the page's (report/chart_style.h): one per strategy in every chart, the stage
// segments in greys no strategy uses; campaigns are named by date and build (CampaignLabels).
// Every chart summarises: one bar or point per configuration (or strategy and world size) and
// campaign, the median over the trials that share it (seeds), never one per trial, so the page
// stays small at thousands of trials.
// The script marks each canvas it draws with data-drawn="1" so a headless browser test can
// count drawn charts from the DOM.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/chart_style.h"
#include "report/stage_breakdown.h"
#include "storage/result_rows.h"

namespace ditbench {

// REQUIRES: `rows` sorted as the group's table (best first). Only measured rows are drawn.
// Empty (null) when the group has no measured trial.
nlohmann::json LatencyChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows,
                            const CampaignLabels& campaigns = {});

// Each point is the row's speedup against its OneRankBaselines (analysis/configuration_group.h),
// the number the group's table prints. Null when no row on > 1 rank has a baseline.
nlohmann::json SpeedupChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows,
                            const CampaignLabels& campaigns = {});

// REQUIRES: `rows` sorted as the group's table (bars in that order); `unfolded` the group's
// trials, whose stage breakdowns `stages` holds by (campaign, trial key). Null when no trial
// of the group has one.
using StagesByTrial = std::map<std::pair<std::int64_t, std::string>, StageSummary>;
nlohmann::json StageChart(const std::string& id, const std::string& title,
                          const std::vector<ResultRow>& rows,
                          const std::vector<ResultRow>& unfolded, const StagesByTrial& stages,
                          const CampaignLabels& campaigns = {});

// Null when no measured row on more than one rank has a peak memory.
nlohmann::json MemoryChart(const std::string& id, const std::string& title,
                           const std::vector<ResultRow>& rows,
                           const CampaignLabels& campaigns = {});

// Null when no row on more than one rank has both an output error (0 included) and a 1-rank
// baseline (OneRankBaselines).
nlohmann::json OutputErrorChart(const std::string& id, const std::string& title,
                                const std::vector<ResultRow>& rows,
                                const CampaignLabels& campaigns = {});

}  // namespace ditbench
