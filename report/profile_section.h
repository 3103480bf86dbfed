// Where the time goes inside a step, for each report group: what `profile: trace` recorded
// (results.profile, metrics/trial_trace.h) and the per-step stage timings every trial stores.
//  * the profile chart: per configuration, the slowest rank's step time split into compute,
//    exposed communication and idle (percent; the three add up to 100), stacked;
//  * the step chart: each denoising step's median time per configuration (the stage samples
//    "step:i"), so step 0 (cuDNN/cuBLAS heuristics, NCCL set-up, allocator growth) stands
//    against the steady steps, and PipeFusion's synchronous steps against its patch steps;
//  * the profile table: per profiled configuration, the slowest rank's shares and overlap, its
//    top kernels, and a link to every rank's trace file (open it in Perfetto or
//    chrome://tracing).
// Reads rows only; renders nothing else.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/chart_style.h"
#include "report/group_charts.h"
#include "storage/result_rows.h"

namespace ditbench {

// REQUIRES: `rows` sorted as the group's table. Null when no row has a profile.
nlohmann::json ProfileChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows);

// REQUIRES: as StageChart (report/group_charts.h). Null when no trial timed two steps or more.
nlohmann::json StepChart(const std::string& id, const std::string& title,
                         const std::vector<ResultRow>& rows,
                         const std::vector<ResultRow>& unfolded, const StagesByTrial& stages);

// The group's profile table as HTML; empty when no row has a profile.
std::string RenderProfileTable(const std::vector<ResultRow>& rows);

}  // namespace ditbench
