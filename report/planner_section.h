// The report's Planner section: how well the planner's cost model (plan/cost_model.h) predicts
// the measured trials, and per report group the advisor's recommendation (plan/advisor.h).
//
// The report may not use plan/ (tests/layering.py: plan/ is above report/, and plan/ renders
// its tables with report/'s helpers), so this file holds only plain data and its rendering.
// What fills it is a PlannerHook that the caller supplies in ReportOptions: `ditbench report`
// passes plan/planner_view.h's BuildPlannerView. Without a hook the report has no Planner
// section and no recommendations.
//
// Per device kind whose trials the report shows: when the model was fitted, a log-log scatter
// of each measured trial's leave-one-out prediction (x, with its 95% interval as a whisker)
// against its measurement (y), the identity line, points coloured by strategy with the page's
// colours (report/chart_style.h), a tooltip naming the trial, and the median and worst
// leave-one-out error under it; when the fit was refused, one sentence saying why.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/results_db.h"

namespace ditbench {

// One measured trial: its measurement and its prediction by a model fitted without it. Trials
// that differ only in seed are one point, each number the median over them (as the report's
// other charts fold seeds): `seeds` of them, `trial_key` the first.
struct PredictionPoint {
  std::string trial_key;
  std::string label;     // the trial's configuration, for the tooltip
  std::string strategy;  // StrategyName ("" on one rank): its colour
  double measured_ms = 0;
  double predicted_ms = 0, low_ms = 0, high_ms = 0;  // the prediction's 95% interval
  std::size_t seeds = 1;
};

struct DeviceFit {
  std::string device;  // "cpu" or the GPU's name
  // Set when no model was fitted: why ("3 ok trials of 'cpu' in the database; a fit needs 8").
  std::optional<std::string> refused;
  std::string fitted;  // how it was fitted (FittedModel::Explain); empty when refused
  std::vector<PredictionPoint> points;  // the fit's trials that could be predicted
  std::size_t trials = 0;               // ok trials of the device the model is fitted on
  std::size_t predicted = 0;            // of those, predicted from the others
  double median_abs_error = 0, max_abs_error = 0;  // leave-one-out, fractions
  std::string worst;                    // label of the trial with the worst error
};

// The advisor's recommendation for one report group on one device.
struct GroupRecommendation {
  std::string device;
  std::string layout, trial_key;  // the leader: "ulysses=2 ring=2" (LayoutText), its key
  bool measured = false;          // else predicted by the model
  double latency_ms = 0, low_ms = 0, high_ms = 0;  // measured: all three equal
  std::optional<double> regret;   // against the group's best measured trial, a fraction
  bool decided = false;           // the leader is measured and no interval overlaps it
  // The trials that would decide between the leaders: "ulysses=4 (key)", most informative first.
  std::vector<std::string> to_measure;
  std::size_t ranked = 0;  // layouts ranked (measured and predicted)
  // Measured layouts never recommended because they missed the sweep's quality gates:
  // "pipefusion=2 (key): psnr 24.8 < 35".
  std::vector<std::string> below_quality;
};

struct PlannerView {
  std::vector<DeviceFit> devices;
  // By report group (ReportGroup::Text()).
  std::map<std::string, std::vector<GroupRecommendation>> groups;
};

// Computes the view from the report's read-only database, the selected campaigns and their rows.
using PlannerHook = std::function<PlannerView(ResultsDb& db,
                                              const std::vector<CampaignInfo>& campaigns,
                                              const std::vector<ResultRow>& rows)>;

// The scatter of one device as data for the report's chart script (kind "prediction"); null
// when the fit was refused or no trial was predicted.
nlohmann::json PredictionChart(const DeviceFit& fit, const std::string& id);

// The section (id "planner"): "" when `view` has no device. Its charts are appended to
// `charts`, the page's chart list, with ids "chart-<n>" in page order.
std::string RenderPlannerSection(const PlannerView& view, nlohmann::json& charts);

// A group's recommendations, one line per device: "" when none.
std::string RenderRecommendations(const std::vector<GroupRecommendation>& recommendations);

}  // namespace ditbench
