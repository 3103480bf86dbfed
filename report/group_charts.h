// The charts of one report group, as data for the report's chart script (kChartScript):
//  * latency: median per parallel configuration on a logarithmic axis (a 50 ms bar stays
//    visible beside a 2700 ms one), one dataset and colour per campaign with a legend when
//    the group spans several, and the 95% CI drawn as whiskers on the chart itself (a printed
//    or screenshotted report shows them, not only a tooltip);
//  * speedup: speedup against the group's 1-rank trial versus world size, one line per
//    strategy (the degrees above 1: "ulysses", "ulysses+cfg", ...), with the ideal line.
// The script marks each canvas it draws with data-drawn="1" so a headless browser test can
// count drawn charts from the DOM.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/results_db.h"

namespace ditbench {

// REQUIRES: `rows` sorted as the group's table (best first). Only measured rows are drawn.
// Empty (null) when the group has no measured trial.
nlohmann::json LatencyChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows);

// Null when no row has a 1-rank baseline of the same campaign or no row runs on > 1 rank.
nlohmann::json SpeedupChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows);

// The chart script: reads the JSON array in <script id="ditbench-charts"> and draws each.
extern const char* const kChartScript;

}  // namespace ditbench
