// The report's Planner section: how well the planner's cost model (plan/cost_model.h) predicts
// the measured trials, and per report group the advisor's recommendation (plan/advisor.h).
//
// The report renders only: the data (analysis/planner_findings.h) is filled by a PlannerHook
// that the caller supplies in ReportOptions: `ditbench report` passes plan/planner_view.h's
// BuildPlannerView. Without a hook the report has no Planner section and no recommendations.
//
// Per device kind whose trials the report shows: when the model was fitted, a log-log scatter
// of each measured trial's leave-one-out prediction (x, with its 95% interval as a whisker)
// against its measurement (y), the identity line, points coloured by strategy with the page's
// colours (report/chart_style.h), a tooltip naming the trial, and the median and worst
// leave-one-out error under it; when the fit was refused, one sentence saying why.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/planner_findings.h"

namespace ditbench {

// The scatter of one device as data for the report's chart script (kind "prediction"); null
// when the fit was refused or no trial was predicted.
nlohmann::json PredictionChart(const DeviceFit& fit, const std::string& id);

// The section (id "planner"): "" when `view` has no device. Its charts are appended to
// `charts`, the page's chart list, with ids "chart-<n>" in page order.
std::string RenderPlannerSection(const PlannerView& view, nlohmann::json& charts);

// A group's recommendations, one line per device: "" when none.
std::string RenderRecommendations(const std::vector<GroupRecommendation>& recommendations);

}  // namespace ditbench
