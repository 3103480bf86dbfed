#include "plan/plan_output.h"

#include <map>
#include <string>
#include <vector>

#include "plan/plan_savings.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model_zoo/shapes/model_config.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

std::string Model(const TrialConfig& c) {
  std::string name = c.model;
  for (const auto& [key, value] : c.model_overrides) name += fmt::format(" {}={}", key, value);
  // A command's custom axes tell its trials apart; its model is only a label.
  for (const auto& [key, value] : c.custom)
    name += fmt::format(" {}={}", key, value.is_string() ? value.get<std::string>() : value.dump());
  return name;
}

// One row of the plan table: the trial's settings, then one narrow column per parallel degree
// (kDegreeTable, headed by its short label) and the world size, then the estimates.
std::string PlanRow(std::string_view key, std::string_view model, const auto& resolution,
                    std::string_view precision, const std::vector<std::string>& degrees,
                    const auto& world_size, std::string_view iter, std::string_view trial,
                    std::string_view mem, std::string_view verdict) {
  std::string row = fmt::format("{:<16}  {:<22} {:>5} {:<5}", key, model, resolution, precision);
  for (const std::string& degree : degrees) row += fmt::format(" {:>3}", degree);
  row += fmt::format(" {:>3}  {:>10} {:>9} {:>9}  {}\n", world_size, iter, trial, mem, verdict);
  return row;
}

std::string Duration(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

// Under --policy pack: how the wall time above was reckoned. Exclusive plans on more than one
// slot: what packing would take, when it saves at least a tenth.
void WritePacking(const SweepPlan& plan, const PlanAssumptions& a, std::ostream& out) {
  if (plan.pack_slots > 0 && plan.estimated_wall_s > 0) {
    out << fmt::format("  --policy pack: trials side by side on {} slots{}; one after another "
                       "they would take {}; trials in flight together share the host "
                       "(results.concurrent_trials)\n",
                       plan.pack_slots,
                       a.device == "cpu"
                           ? fmt::format(", each rank pinned to {} core(s) of its own",
                                         PinnedCpuCoresUsed(a.cpu_cores, plan.pack_slots, 1))
                           : "",
                       Duration(plan.estimated_wall_s));
  } else if (plan.pack_alternative_s > 0 &&
             plan.pack_alternative_s < 0.9 * plan.estimated_wall_s) {
    out << fmt::format("  --policy pack would take about {} (several trials at once on disjoint "
                       "slots; they then share the host)\n",
                       Duration(plan.pack_alternative_s));
  }
}

}  // namespace

void WritePlanTable(const SweepSpec& spec, const SweepPlan& plan, const PlanAssumptions& a,
                    std::ostream& out, const std::vector<std::string>& notes, double budget_s) {
  std::vector<std::string> headings;
  for (const DegreeInfo& d : kDegreeTable) headings.emplace_back(d.short_label);
  out << PlanRow("trial", "model", "res", "prec", headings, "ws", "iter (ms)", "trial",
                 "mem/rank", "plan");
  std::size_t valid = 0, unsupported = 0;
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    const auto& t = plan.trials[i];
    const auto& c = t.config;
    std::string iter = "-", trial = "-", mem = "-", verdict;
    if (t.estimate) {
      iter = fmt::format("{:.3g}{}", t.estimate->iteration_ms,
                         t.estimate->source == "measured"    ? "*"
                         : t.estimate->source == "predicted" ? "~"
                                                             : "");
      trial = Duration(t.estimate->trial_s);
      mem = fmt::format("{:.0f} MB", t.estimate->memory_mb);
    }
    if (!t.invalid_reason) {
      ++valid;
      verdict = "run";
    } else if (t.unsupported) {
      ++unsupported;
      verdict = "unsupported: " + *t.invalid_reason;
    } else {
      verdict = "invalid: " + *t.invalid_reason;
    }
    if (i < notes.size() && !notes[i].empty()) verdict = notes[i];
    std::vector<std::string> degrees;
    for (const DegreeInfo& d : kDegreeTable) degrees.push_back(std::to_string(c.*d.member));
    out << PlanRow(t.key, Model(c), c.resolution, PrecisionName(c.precision), degrees,
                   c.world_size(), iter, trial, mem, verdict);
  }
  out << fmt::format("\nsweep '{}': {} trials, {} to run, {} invalid, {} not supported by this "
                     "build (both stored as skipped)",
                     spec.name, plan.trials.size(), valid, plan.trials.size() - valid - unsupported,
                     unsupported);
  if (plan.counts.excluded) out << fmt::format(", {} removed by exclude", plan.counts.excluded);
  for (std::size_t i = 0; i < plan.counts.failed_where.size(); ++i)
    if (plan.counts.failed_where[i])
      out << fmt::format(", {} removed by where \"{}\"", plan.counts.failed_where[i],
                         spec.where[i].expression);
  if (plan.duplicates) out << fmt::format(", {} duplicates merged", plan.duplicates);
  // Under --policy pack the trials overlap: the wall time is the packed schedule's.
  const double wall_s = plan.pack_slots > 0 ? plan.packed_wall_s : plan.estimated_wall_s;
  if (!TraitsOf(spec.workload).builtin_model)
    out << fmt::format("\nestimated wall time: {}{} (trials measured earlier only: a command's "
                       "cost is its program's; '-' = not measured yet)\n",
                       Duration(wall_s),
                       spec.replicates > 1
                           ? fmt::format(" for {} launches of each trial (replicates)",
                                         spec.replicates)
                           : "");
  else
  out << fmt::format("\nestimated wall time: {}{} (device '{}'; * = measured earlier, "
                     "otherwise analytic FLOPs at {:.0f}% of dense peak)\n",
                     Duration(wall_s),
                     spec.replicates > 1
                         ? fmt::format(" for {} launches of each trial (replicates)",
                                       spec.replicates)
                         : "",
                     a.device, a.efficiency * 100);
  if (!plan.estimates_from.empty())
    out << "estimates: " << plan.estimates_from << " (~ = predicted by it)\n";
  WritePacking(plan, a, out);
  WriteSavings(EstimateSavings(spec, plan, budget_s), out);
  // An adaptive stop may end a trial after repeats.min iterations, where the median's "95%"
  // interval covers much less (stats/stats.h: 75% at 3, 93.75% at 5).
  std::size_t few = 0;
  int fewest = 0;
  for (const PlannedTrial& t : plan.trials) {
    const Repeats& r = t.config.repeats;
    if (t.invalid_reason || r.target_rel_ci <= 0 || r.min >= 6) continue;
    fewest = few++ ? std::min(fewest, r.min) : r.min;
  }
  if (few) {
    out << fmt::format("warning: {} trial(s) may stop after {} iteration(s) (repeats.min below 6 "
                       "with target_rel_ci): the median's CI then covers {:.1f}%, not 95%; set "
                       "repeats.min to 6 or more\n",
                       few, fewest, MedianCiCoverage(static_cast<std::size_t>(fewest)) * 100);
  }
}

void WritePlanJson(const SweepSpec& spec, const SweepPlan& plan, const PlanAssumptions& a,
                   std::ostream& out, double budget_s) {
  nlohmann::json trials = nlohmann::json::array();
  std::size_t valid = 0, unsupported = 0;
  for (const auto& t : plan.trials) {
    if (t.unsupported) ++unsupported;
    nlohmann::json j = {{"trial_key", t.key},
                        {"config", CanonicalJson(t.config)},
                        {"world_size", t.config.world_size()},
                        {"valid", !t.invalid_reason.has_value()},
                        {"unsupported", t.unsupported}};
    if (t.invalid_reason) j["reason"] = *t.invalid_reason;
    if (!t.invalid_reason) ++valid;
    std::string error;
    if (auto model = ResolveModel(t.config.model, t.config.model_overrides, &error)) {
      // One forward over the rows a rank group runs together (CFG doubles them).
      const int rows = t.config.batch * (model->negative_prompt ? 2 : 1);
      j["model"] = {{"parameters", ParameterCount(*model)},
                    {"forward_flops", ForwardFlops(*model, t.config.resolution, rows)}};
    }
    if (t.estimate) {
      j["estimate"] = {{"iteration_ms", t.estimate->iteration_ms},
                       {"trial_s", t.estimate->trial_s},
                       {"memory_mb_per_rank", t.estimate->memory_mb},
                       {"source", t.estimate->source}};
      if (t.estimate->comm_mb_per_step)
        j["estimate"]["comm_mb_per_step"] = *t.estimate->comm_mb_per_step;
      if (t.estimate->iteration_low_ms && t.estimate->iteration_high_ms)
        j["estimate"]["iteration_interval_ms"] = {*t.estimate->iteration_low_ms,
                                                  *t.estimate->iteration_high_ms};
    }
    trials.push_back(std::move(j));
  }
  nlohmann::json where = nlohmann::json::array();
  for (std::size_t i = 0; i < spec.where.size(); ++i)
    where.push_back({{"expression", spec.where[i].expression},
                     {"removed", plan.counts.failed_where[i]}});
  out << nlohmann::json{{"format", "ditbench-plan"},
                        {"version", 1},
                        {"sweep", spec.name},
                        {"device", a.device},
                        {"counts",
                         {{"trials", plan.trials.size()},
                          {"valid", valid},
                          {"invalid", plan.trials.size() - valid - unsupported},
                          {"unsupported", unsupported},
                          {"excluded", plan.counts.excluded},
                          {"duplicates", plan.duplicates},
                          {"where", where}}},
                        {"estimated_wall_s", plan.estimated_wall_s},
                        {"estimates_from", plan.estimates_from},
                        {"policy", plan.pack_slots > 0 ? "pack" : "exclusive"},
                        {"packed_wall_s", plan.pack_slots > 0 ? nlohmann::json(plan.packed_wall_s)
                                                              : nlohmann::json()},
                        {"pack_alternative_s", plan.pack_alternative_s > 0
                                                   ? nlohmann::json(plan.pack_alternative_s)
                                                   : nlohmann::json()},
                        {"savings", ToJson(EstimateSavings(spec, plan, budget_s))},
                        {"trials", trials}}
             .dump(2)
      << "\n";
}

std::string DeviceFor(const Placement& placement) {
  return placement.capacity.on_gpu ? placement.device_name : "cpu";
}

}  // namespace ditbench
