// What the report's Planner section shows (analysis/planner_findings.h), computed with the
// planner: the report may not use plan/ (tests/layering.py), so `ditbench report` passes
// BuildPlannerView as ReportOptions::planner and the report renders the plain data it returns.
//
// For every device kind with a measured trial among the report's rows, the cost model is fitted
// on the database's ok trials of that kind (FitFromDatabase, the same observations `plan --db`
// and `advise` use) and each trial is predicted by a model fitted on the others (LeaveOneOut).
// Per report group and device, the advisor (Advise, latency) ranks the layouts of the selected
// campaigns' sweeps (re-expanded from the sweep text each campaign stored, at the slots it
// recorded) and of the trials the report shows; trials that ran and failed on the device are
// not ranked. No advice where the fit was refused (the analytic estimate is too rough to
// recommend from).
#pragma once

#include <vector>

#include "analysis/planner_findings.h"
#include "storage/planner_history.h"
#include "storage/result_rows.h"

namespace ditbench {

PlannerView BuildPlannerView(PlannerHistory& db, const std::vector<CampaignInfo>& campaigns,
                             const std::vector<ResultRow>& rows);

}  // namespace ditbench
