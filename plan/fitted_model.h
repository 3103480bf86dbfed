// The cost model of one device kind fitted from a results database (plan/cost_model.h), and
// the rule for when `plan` trusts it: with at least kMinimumTrialsToFit ok trials of the
// device the fitted model predicts every trial not yet measured; with fewer, the analytic
// estimate stays (AnalyticEstimate). Either way FittedModel::Explain says which was used.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "plan/cost_model.h"
#include "storage/planner_history.h"

namespace ditbench {

struct FittedModel {
  std::string device;
  // The device's ok trials the model is fitted on, by key: the quiet measurements, or, when the
  // device has none, the busy ones (fitted_on_busy; Explain says so).
  std::vector<CostObservation> observations;
  std::optional<CostModel> model;  // unset: too few trials (or none fit)
  // Trial keys measured only on a busy machine, left out of the fit because quiet ones exist:
  // still measured (advise says "measured (busy)"), never predicted.
  std::vector<CostObservation> busy_observations;
  std::size_t busy_left_out = 0;  // busy_observations.size()
  bool fitted_on_busy = false;    // no quiet measurement of the device: fitted on busy ones
  // One line: "cost model fitted on 24 ok trials of 'cpu' (residual 6%)" or "analytic
  // estimate: 3 ok trials of 'cpu' in the database, a fit needs 8", naming busy measurements.
  std::string Explain() const;
  // The first observation of `key`, or null. Scans: ObservationIndex finds many.
  const CostObservation* Observed(const std::string& key) const;
};

// FittedModel::Observed for every trial of a sweep: the observations by key, indexed once, so
// that looking up n keys costs O(n) and not O(n x observations). The same answer as Observed.
// REQUIRES: the observations outlive the index and are not changed while it is used.
class ObservationIndex {
 public:
  explicit ObservationIndex(const std::vector<CostObservation>& observations);
  const CostObservation* Find(const std::string& key) const;

 private:
  std::unordered_map<std::string_view, const CostObservation*> by_key_;
};

// The observations the database holds for `device` (rows whose configuration cannot be read
// are left out).
std::vector<CostObservation> ToObservations(const std::vector<PlannerHistory::ObservedTrial>& rows);

// Fits `device`'s trials of `db`.
FittedModel FitFromDatabase(PlannerHistory& db, const std::string& device);
// The same from a path, best effort: a missing, unreadable or not yet migrated database gives
// no observations.
FittedModel FitFromDatabase(const std::filesystem::path& db, const std::string& device);

// What `plan --db --explain` stores (table model_fits): the fit's terms and every trial's
// leave-one-out prediction against its measurement.
PlannerHistory::ModelFitRecord FitRecord(const FittedModel& fitted, const LooReport& loo,
                                         double fitted_at);

}  // namespace ditbench
