#include "plan/fitted_model.h"

#include <set>

#include <fmt/format.h>

#include "analysis/campaign_roles.h"
#include "machine/rank_sharing.h"
#include "storage/results_db.h"

namespace ditbench {

std::string FittedModel::Explain() const {
  const std::string busy =
      busy_left_out > 0 ? fmt::format("; {} more measured only on a busy machine, left out "
                                      "(`ditbench run SWEEP --rerun busy --require-idle 600` "
                                      "measures them again)",
                                      busy_left_out)
                        : "";
  // No quiet measurement of the device: the numbers carry the busy machine's slowdown.
  const std::string on_busy = fitted_on_busy ? " measured on a busy machine (no quiet "
                                               "measurement of this device: predictions carry "
                                               "its slowdown)"
                                             : "";
  if (model)
    return fmt::format("cost model fitted on {} ok trials of '{}'{}{} (residual {:.1f}%){}",
                       model->trials(), device, on_busy,
                       model->reduced() ? ", one latency and bandwidth for every collective" : "",
                       model->relative_sigma() * 100, busy);
  return fmt::format(
      "analytic estimate: {} ok trial(s) of '{}'{} in the database, a fit needs {}{}",
      observations.size(), device, on_busy, kMinimumTrialsToFit, busy);
}

const CostObservation* FittedModel::Observed(const std::string& key) const {
  for (const CostObservation& o : observations)
    if (o.trial_key == key) return &o;
  return nullptr;
}

ObservationIndex::ObservationIndex(const std::vector<CostObservation>& observations) {
  by_key_.reserve(observations.size());
  for (const CostObservation& o : observations) by_key_.try_emplace(o.trial_key, &o);  // first
}

const CostObservation* ObservationIndex::Find(const std::string& key) const {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

std::vector<CostObservation> ToObservations(
    const std::vector<PlannerHistory::ObservedTrial>& rows) {
  std::vector<CostObservation> observations;
  for (const PlannerHistory::ObservedTrial& row : rows) {
    CostObservation o;
    try {
      o.config = TrialConfigFromJson(row.config);
    } catch (const std::exception&) {
      continue;  // a configuration of another build: nothing to learn from here
    }
    o.trial_key = row.trial_key;
    o.latency_ms = row.latency_ms;
    o.comm_mb_per_step = row.comm_mb_per_step;
    o.startup_s = row.startup_s;
    o.output_error = row.output_error;
    o.sharing = RecordedSharing(row.placement, o.config.world_size(), row.cpu_cores);
    o.psnr = row.psnr;
    o.ssim = row.ssim;
    o.busy = row.busy;
    o.campaign = row.campaign;
    observations.push_back(std::move(o));
  }
  return observations;
}

FittedModel FitFromDatabase(PlannerHistory& db, const std::string& device) {
  FittedModel fitted;
  fitted.device = device;
  // Campaigns that answer nothing (a `bisect` campaign measures another build) teach nothing.
  std::vector<std::int64_t> left_out;
  const std::vector<CampaignInfo> campaigns = db.Campaigns();
  const std::set<std::int64_t> answering = AnsweringCampaigns(campaigns);
  for (const CampaignInfo& c : campaigns)
    if (!answering.contains(c.id)) left_out.push_back(c.id);
  for (CostObservation& o : ToObservations(db.ObservedTrials(device, nullptr, left_out)))
    (o.busy ? fitted.busy_observations : fitted.observations).push_back(std::move(o));
  // When busy is the machine's normal state there is no quiet measurement: fit on the busy
  // ones rather than not at all, and say so (Explain).
  if (fitted.observations.empty() && !fitted.busy_observations.empty()) {
    fitted.observations = std::move(fitted.busy_observations);
    fitted.busy_observations.clear();
    fitted.fitted_on_busy = true;
  }
  fitted.busy_left_out = fitted.busy_observations.size();
  fitted.model = CostModel::Fit(fitted.observations);
  return fitted;
}

FittedModel FitFromDatabase(const std::filesystem::path& path, const std::string& device) {
  std::error_code ec;
  if (!path.empty() && std::filesystem::exists(path, ec)) {
    try {
      auto db = ResultsDb::Open(path, /*read_only=*/true);
      return FitFromDatabase(db->planner_history(), device);
    } catch (const StorageError&) {
    }
  }
  FittedModel none;
  none.device = device;
  return none;
}

PlannerHistory::ModelFitRecord FitRecord(const FittedModel& fitted, const LooReport& loo,
                                         double fitted_at) {
  PlannerHistory::ModelFitRecord record;
  record.device = fitted.device;
  record.fitted_at = fitted_at;
  record.trials = static_cast<std::int64_t>(fitted.observations.size());
  if (loo.predicted > 0) {
    record.median_abs_error = loo.median_abs_error;
    record.max_abs_error = loo.max_abs_error;
  }
  if (fitted.model)
    for (const CostModel::Term& t : fitted.model->Terms())
      record.terms.push_back({{"name", t.name},
                              {"value", t.coefficient.value},
                              {"low", t.coefficient.low},
                              {"high", t.coefficient.high},
                              {"active", t.active}});
  for (const LooEntry& e : loo.entries) {
    nlohmann::json j = {{"trial_key", e.trial_key}, {"measured_ms", e.measured_ms}};
    if (e.predicted) {
      j["predicted_ms"] = e.predicted->value;
      j["low_ms"] = e.predicted->low;
      j["high_ms"] = e.predicted->high;
    }
    record.predictions.push_back(std::move(j));
  }
  return record;
}

}  // namespace ditbench
