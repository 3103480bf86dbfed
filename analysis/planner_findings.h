// What the planner found about the measured trials, as plain data: how well the cost model
// (plan/cost_model.h) predicts each device's measurements, and per report group the advisor's
// recommendation (plan/advisor.h). plan/planner_view.h fills it; the report renders it
// (report/planner_section.h), so neither needs the other.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "storage/planner_history.h"
#include "storage/result_rows.h"

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
  std::vector<PredictionPoint> points;             // the fit's trials that could be predicted
  std::size_t trials = 0;                          // ok trials of the device the model is fitted on
  std::size_t predicted = 0;                       // of those, predicted from the others
  double median_abs_error = 0, max_abs_error = 0;  // leave-one-out, fractions
  std::string worst;                               // label of the trial with the worst error
};

// The advisor's recommendation for one report group on one device.
struct GroupRecommendation {
  std::string device;
  std::string layout, trial_key;  // the leader: "ulysses=2 ring=2" (ConfigurationLabel), its key
  bool measured = false;          // else predicted by the model
  bool busy = false;              // measured, but only on a busy machine
  double latency_ms = 0, low_ms = 0, high_ms = 0;  // measured: all three equal
  std::optional<double> regret;  // against the group's best measured trial, a fraction
  bool decided = false;          // the leader is measured and no interval overlaps it
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
using PlannerHook =
    std::function<PlannerView(PlannerHistory& db, const std::vector<CampaignInfo>& campaigns,
                              const std::vector<ResultRow>& rows)>;

}  // namespace ditbench
