#include "plan/planner_view.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/configuration_group.h"
#include "experiments/sweep_spec.h"
#include "model_zoo/shapes/parallel_degrees.h"
#include "plan/advisor.h"
#include "plan/cost_model.h"
#include "plan/fitted_model.h"
#include "plan/sweep_plan.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

// "pixart-alpha-tiny · 256 px · bf16 · ulysses=2 ring=2 (key)": the tooltip of a point; a
// non-square image as "384x256 px", a clip with its frames.
std::string TrialText(const TrialConfig& config, const std::string& key) {
  const ReportGroup group = ReportGroupOf(config);
  return fmt::format("{} · {} px{} · {} · {} ({})", group.model, config.resolution_text(),
                     config.frames > 0 ? fmt::format(" · {} frames", config.frames) : "",
                     group.precision, ConfigurationLabel(config), key);
}

// Why no model was fitted, as the end of "No cost model for 'cpu': ...".
std::string Refusal(const FittedModel& fitted) {
  const std::size_t n = fitted.observations.size();
  const std::size_t busy = fitted.busy_left_out;
  if (n < kMinimumTrialsToFit)
    return fmt::format("{} ok trial{} of it in the database{}, a fit needs {}", n,
                       n == 1 ? "" : "s",
                       busy ? fmt::format(" ({} more measured only on a busy machine are left "
                                          "out: `ditbench run SWEEP --rerun busy --require-idle "
                                          "600` measures them again)",
                                          busy)
                            : "",
                       kMinimumTrialsToFit);
  return fmt::format("its {} ok trials do not determine the model's terms (a fit keeps 3 "
                     "degrees of freedom beyond its terms)", n);
}

DeviceFit FitDevice(const FittedModel& fitted) {
  DeviceFit fit;
  fit.device = fitted.device;
  fit.trials = fitted.observations.size();
  if (!fitted.model) {
    fit.refused = Refusal(fitted);
    return fit;
  }
  fit.fitted = fitted.Explain();
  const LooReport loo = LeaveOneOut(fitted.observations);
  fit.predicted = loo.predicted;
  fit.median_abs_error = loo.median_abs_error;
  fit.max_abs_error = loo.max_abs_error;
  // Seed twins (trials of one ConfigurationKey) are folded into one point.
  std::map<std::string, std::vector<std::size_t>> folds;
  std::vector<std::string> order;
  double worst = -1;
  for (std::size_t i = 0; i < loo.entries.size(); ++i) {
    const LooEntry& e = loo.entries[i];
    if (!e.predicted) continue;
    const CostObservation& o = fitted.observations[i];
    if (std::abs(e.relative_error()) > worst) {
      worst = std::abs(e.relative_error());
      fit.worst = TrialText(o.config, o.trial_key);
    }
    auto [fold, fresh] = folds.try_emplace(ConfigurationKey(o.config));
    if (fresh) order.push_back(fold->first);
    fold->second.push_back(i);
  }
  const auto median = [&](const std::vector<std::size_t>& members, auto value) {
    std::vector<double> values;
    for (std::size_t i : members) values.push_back(value(loo.entries[i]));
    std::sort(values.begin(), values.end());
    return Quantile(values, 0.5);
  };
  for (const std::string& key : order) {
    const std::vector<std::size_t>& members = folds[key];
    const CostObservation& first = fitted.observations[members.front()];
    PredictionPoint p;
    p.trial_key = first.trial_key;
    p.seeds = members.size();
    p.label = TrialText(first.config, first.trial_key);
    if (p.seeds > 1) p.label += fmt::format(" and {} more seeds", p.seeds - 1);
    p.strategy = StrategyName(first.config);
    p.measured_ms = median(members, [](const LooEntry& e) { return e.measured_ms; });
    p.predicted_ms = median(members, [](const LooEntry& e) { return e.predicted->value; });
    p.low_ms = median(members, [](const LooEntry& e) { return e.predicted->low; });
    p.high_ms = median(members, [](const LooEntry& e) { return e.predicted->high; });
    fit.points.push_back(std::move(p));
  }
  return fit;
}

// The slots a campaign ran on, as it recorded them (environment "slots", "on_gpu"); else the
// widest trial it holds.
Capacity CapacityOf(const CampaignInfo& campaign, const std::vector<ResultRow>& rows,
                    const std::string& device) {
  const nlohmann::json& env = campaign.record.environment;
  Capacity capacity{1, device != "cpu"};
  if (env.is_object() && env.contains("slots") && env["slots"].is_number_integer()) {
    capacity.slots = env["slots"].get<int>();
    if (env.contains("on_gpu") && env["on_gpu"].is_boolean())
      capacity.on_gpu = env["on_gpu"].get<bool>();
    return capacity;
  }
  for (const ResultRow& row : rows)
    if (row.campaign == campaign.id)
      capacity.slots = std::max(capacity.slots, static_cast<int>(row.world_size));
  return capacity;
}

// The statuses of a trial that ran and did not give a measurement (interrupted and skipped
// trials may still be measured: they stay ranked).
const std::set<std::string> kFailedStatuses = {"oom", "timeout", "crashed", "failed"};

// The layouts the advisor ranks on `device`: the selected campaigns' sweeps and the report's
// measured trials, each key once; trials that ran and failed there are not ranked.
SweepPlan PlanOf(const FittedModel& fitted, const std::vector<CampaignInfo>& campaigns,
                 const std::vector<ResultRow>& rows) {
  const std::string& device = fitted.device;
  std::set<std::int64_t> on_device;
  std::set<std::string> ok, failed;
  for (const ResultRow& row : rows) {
    if (row.device != device) continue;
    on_device.insert(row.campaign);
    if (row.measured()) ok.insert(row.trial_key);
    if (kFailedStatuses.count(row.status)) failed.insert(row.trial_key);
  }
  SweepPlan plan;
  std::set<std::string> keys;
  for (const CampaignInfo& campaign : campaigns) {
    if (!on_device.count(campaign.id)) continue;
    const ParseResult parsed = ParseSweep(campaign.record.spec_text, campaign.record.sweep_path);
    if (!parsed.ok()) continue;  // a sweep file of another build: its measured trials remain
    PlanAssumptions assumptions;
    assumptions.device = device;
    SweepPlan planned;
    try {
      planned = PlanSweep(parsed.spec, CapacityOf(campaign, rows, device), assumptions);
    } catch (const std::exception&) {
      continue;  // the report never fails for its advice: the measured trials remain
    }
    for (PlannedTrial& t : planned.trials)
      if (keys.insert(t.key).second) plan.trials.push_back(std::move(t));
  }
  // Measured trials the sweeps do not name (a sweep file edited since, or of another build):
  // their configurations as the fit read them.
  const ObservationIndex observations(fitted.observations);
  for (const ResultRow& row : rows) {
    if (row.device != device || !row.measured() || keys.count(row.trial_key)) continue;
    const CostObservation* observed = observations.Find(row.trial_key);
    if (!observed) continue;  // a busy machine, or a configuration of another build
    PlannedTrial t;
    t.config = observed->config;
    t.key = row.trial_key;
    keys.insert(t.key);
    plan.trials.push_back(std::move(t));
  }
  for (PlannedTrial& t : plan.trials)
    if (failed.count(t.key) && !ok.count(t.key) && !t.invalid_reason)
      t.invalid_reason = fmt::format("ran and failed on {}", device);
  return plan;
}

GroupRecommendation Recommend(const GroupAdvice& g, const std::string& device) {
  const AdvisedTrial& lead = g.ranked.front();
  GroupRecommendation r;
  r.device = device;
  r.layout = ConfigurationLabel(lead.trial->config);
  r.trial_key = lead.trial->key;
  r.measured = lead.measured;
  r.busy = lead.busy;
  r.latency_ms = lead.latency_ms.value;
  r.low_ms = lead.latency_ms.low;
  r.high_ms = lead.latency_ms.high;
  r.regret = g.regret;
  r.decided = g.decided;
  r.ranked = g.ranked.size();
  for (const AdvisedTrial& t : g.excluded)
    if (IsBelowQuality(t.quality))
      r.below_quality.push_back(fmt::format("{} ({}): {}", ConfigurationLabel(t.trial->config),
                                            t.trial->key, MissedGates(t.quality)));
  if (!g.decided)
    for (std::size_t i : g.to_measure)
      r.to_measure.push_back(fmt::format("{} ({}{})", ConfigurationLabel(g.ranked[i].trial->config),
                                         g.ranked[i].trial->key,
                                         g.ranked[i].busy ? ", again on a quiet machine" : ""));
  return r;
}

}  // namespace

PlannerView BuildPlannerView(PlannerHistory& db, const std::vector<CampaignInfo>& campaigns,
                             const std::vector<ResultRow>& rows) {
  std::set<std::string> devices;
  for (const ResultRow& row : rows)
    if (row.measured() && !row.device.empty() && TraitsOf(row.workload).builtin_model)
      devices.insert(row.device);
  PlannerView view;
  for (const std::string& device : devices) {
    const FittedModel fitted = FitFromDatabase(db, device);
    view.devices.push_back(FitDevice(fitted));
    if (!fitted.model) continue;
    const SweepPlan plan = PlanOf(fitted, campaigns, rows);
    for (const GroupAdvice& g : Advise(plan, fitted, {}).groups)
      if (!g.ranked.empty()) view.groups[g.group].push_back(Recommend(g, device));
  }
  return view;
}

}  // namespace ditbench
