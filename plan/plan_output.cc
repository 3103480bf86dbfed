#include "plan/plan_output.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "plan/device_prior.h"
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

// A setting the plan table shows in a column of its own when it varies among the sweep's
// trials (the model, resolution, precision and parallel degrees always have theirs): without
// it, two trials that differ only there would print identical rows. In the table's order; a
// new computation field adds a row.
struct VaryingColumn {
  std::string_view heading;
  std::string (*value)(const TrialConfig&);
};
constexpr std::array<VaryingColumn, 11> kVaryingColumns{{
    {"frames", [](const TrialConfig& c) { return std::to_string(c.frames); }},
    {"scope", [](const TrialConfig& c) { return std::string(ScopeName(c.scope)); }},
    {"batch", [](const TrialConfig& c) { return std::to_string(c.batch); }},
    {"steps", [](const TrialConfig& c) { return std::to_string(c.steps); }},
    {"seed", [](const TrialConfig& c) { return std::to_string(c.seed); }},
    {"patches",
     [](const TrialConfig& c) { return std::to_string(c.effective_pipefusion_patches()); }},
    // As the trial key has it: without PipeFusion the setting computes nothing.
    {"pf sync", [](const TrialConfig& c) {
       return c.pipefusion > 1 ? std::to_string(c.pipefusion_warmup_steps) : std::string("-");
     }},
    {"vae tile", [](const TrialConfig& c) { return std::to_string(c.vae_tile); }},
    {"graph", [](const TrialConfig& c) { return std::string(GraphModeName(c.graph)); }},
    {"weights",
     [](const TrialConfig& c) { return c.weights.empty() ? std::string("-") : c.weights; }},
    {"vae weights",
     [](const TrialConfig& c) { return c.vae_weights.empty() ? std::string("-") : c.vae_weights; }},
}};

// The columns of kVaryingColumns whose value is not the same for every trial of `plan`, each
// with its width (the widest of its heading and values).
std::vector<std::pair<const VaryingColumn*, std::size_t>> VaryingColumns(const SweepPlan& plan) {
  std::vector<std::pair<const VaryingColumn*, std::size_t>> shown;
  if (plan.trials.empty()) return shown;
  for (const VaryingColumn& column : kVaryingColumns) {
    const std::string first = column.value(plan.trials.front().config);
    std::size_t width = std::max(column.heading.size(), first.size());
    bool varies = false;
    for (const PlannedTrial& t : plan.trials) {
      const std::string value = column.value(t.config);
      varies = varies || value != first;
      width = std::max(width, value.size());
    }
    if (varies) shown.emplace_back(&column, width);
  }
  return shown;
}

// One row of the plan table: the trial's settings (the varying ones of kVaryingColumns after
// the precision), then one narrow column per parallel degree (kDegreeTable, headed by its short
// label) and the world size, then the estimates.
void PlanRow(fmt::memory_buffer& row, std::string_view key, std::string_view model,
             const auto& resolution, std::size_t resolution_width, std::string_view precision,
             const std::vector<std::pair<std::string, std::size_t>>& varying,
             const auto& degrees, const auto& world_size, std::string_view iter,
             std::string_view trial, std::string_view mem, std::string_view verdict) {
  auto out = std::back_inserter(row);
  fmt::format_to(out, "{:<16}  {:<22} {:>{}} {:<5}", key, model, resolution, resolution_width,
                 precision);
  for (const auto& [value, width] : varying) fmt::format_to(out, " {:>{}}", value, width);
  for (const auto& degree : degrees) fmt::format_to(out, " {:>3}", degree);
  fmt::format_to(out, " {:>3}  {:>10} {:>9} {:>9}  {}\n", world_size, iter, trial, mem, verdict);
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

// One trial of the JSON plan, as an element of its "trials" array.
nlohmann::json TrialJson(const PlannedTrial& t) {
  nlohmann::json j = nlohmann::json::object();
  j["trial_key"] = t.key;
  j["config"] = CanonicalJson(t.config);
  j["world_size"] = t.config.world_size();
  j["valid"] = !t.invalid_reason.has_value();
  j["unsupported"] = t.unsupported;
  if (t.invalid_reason) j["reason"] = *t.invalid_reason;
  std::string error;
  if (auto model = ResolveModel(t.config.model, t.config.model_overrides, &error)) {
    // One forward over the rows a rank group runs together (CFG doubles them).
    const int rows = t.config.batch * (model->negative_prompt ? 2 : 1);
    j["model"] = {{"parameters", ParameterCount(*model)},
                  {"forward_flops", ForwardFlops(*model, t.config.image_shape(), rows)}};
  }
  if (t.estimate) {
    nlohmann::json& e = j["estimate"];
    e["iteration_ms"] = t.estimate->iteration_ms;
    e["trial_s"] = t.estimate->trial_s;
    e["memory_mb_per_rank"] = t.estimate->memory_mb;
    if (t.estimate->decode_mb) e["decode_mb_per_rank"] = *t.estimate->decode_mb;
    if (t.estimate->decode_ms) e["decode_ms"] = *t.estimate->decode_ms;
    e["source"] = t.estimate->source;
    if (t.estimate->comm_mb_per_step) e["comm_mb_per_step"] = *t.estimate->comm_mb_per_step;
    if (t.estimate->iteration_low_ms && t.estimate->iteration_high_ms)
      e["iteration_interval_ms"] = {*t.estimate->iteration_low_ms, *t.estimate->iteration_high_ms};
  }
  return j;
}

}  // namespace

void WritePlanTable(const SweepSpec& spec, const SweepPlan& plan, const PlanAssumptions& a,
                    std::ostream& out, const std::vector<std::string>& notes, double budget_s) {
  const auto varying = VaryingColumns(plan);
  std::vector<std::pair<std::string, std::size_t>> cells;
  for (const auto& [column, width] : varying) cells.emplace_back(column->heading, width);
  std::vector<std::string_view> headings;
  for (const DegreeInfo& d : kDegreeTable) headings.push_back(d.short_label);
  fmt::memory_buffer rows;
  // "1280x720" where a trial's image is not square.
  std::size_t resolution_width = 5;
  for (const PlannedTrial& t : plan.trials)
    resolution_width = std::max(resolution_width, t.config.resolution_text().size());
  PlanRow(rows, "trial", "model", "res", resolution_width, "prec", cells, headings, "ws", "iter (ms)", "trial",
          "mem/rank", "plan");
  std::size_t valid = 0, unsupported = 0;
  std::array<int, kDegreeTable.size()> degrees{};
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
    for (std::size_t d = 0; d < kDegreeTable.size(); ++d) degrees[d] = c.*kDegreeTable[d].member;
    for (std::size_t v = 0; v < varying.size(); ++v) cells[v].first = varying[v].first->value(c);
    PlanRow(rows, t.key, Model(c), c.resolution_text(), resolution_width,
            PrecisionName(c.precision), cells, degrees,
            c.world_size(), iter, trial, mem, verdict);
    // Written in pieces of about a megabyte: a large sweep's table is never held whole.
    if (rows.size() > (1 << 20)) {
      out.write(rows.data(), static_cast<std::streamsize>(rows.size()));
      rows.clear();
    }
  }
  out.write(rows.data(), static_cast<std::streamsize>(rows.size()));
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
                     "otherwise analytic FLOPs at {}; collectives at latency + bytes / "
                     "bandwidth of {})\n",
                     Duration(wall_s),
                     spec.replicates > 1
                         ? fmt::format(" for {} launches of each trial (replicates)",
                                       spec.replicates)
                         : "",
                     a.device,
                     a.device == "cpu" ? fmt::format("{:g} TFLOPS per core", a.cpu_tflops_per_core)
                     : a.efficiency > 0
                         ? fmt::format("{:.0f}% of dense peak", a.efficiency * 100)
                         : std::string("a share of dense peak that falls at small per-rank sizes"),
                     LinkFor(a.device, 1, 0).name);
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
  std::size_t valid = 0, unsupported = 0;
  for (const auto& t : plan.trials) {
    if (t.unsupported) ++unsupported;
    if (!t.invalid_reason) ++valid;
  }
  nlohmann::json where = nlohmann::json::array();
  for (std::size_t i = 0; i < spec.where.size(); ++i)
    where.push_back({{"expression", spec.where[i].expression},
                     {"removed", plan.counts.failed_where[i]}});
  // The document without its trials; they are streamed into its "trials" array one by one
  // (indented as dump(2) indents them there), so that a large plan is never held as one
  // JSON value: the same bytes as dumping the whole document.
  const std::string document =
      nlohmann::json{{"format", "ditbench-plan"},
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
                     {"trials", nlohmann::json::array()}}
          .dump(2);
  constexpr std::string_view kTrials = "\n  \"trials\": []";
  const std::size_t at = document.rfind(kTrials);
  if (plan.trials.empty() || at == std::string::npos) {
    out << document << "\n";
    return;
  }
  const std::size_t open = at + kTrials.size() - 1;  // the "]" of "[]"
  out.write(document.data(), static_cast<std::streamsize>(open));
  out << "\n";
  // Each trial at depth 2 of the document: every line of its own dump(2) four spaces in.
  std::string piece;
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    const std::string trial = TrialJson(plan.trials[i]).dump(2);
    piece.assign("    ");
    for (std::size_t from = 0; from < trial.size();) {
      const std::size_t line_end = std::min(trial.find('\n', from), trial.size() - 1) + 1;
      piece.append(trial, from, line_end - from);
      if (trial[line_end - 1] == '\n') piece += "    ";
      from = line_end;
    }
    piece += i + 1 < plan.trials.size() ? ",\n" : "\n  ";
    out << piece;
  }
  out.write(document.data() + open, static_cast<std::streamsize>(document.size() - open));
  out << "\n";
}

std::string DeviceFor(const Placement& placement) {
  return placement.capacity.on_gpu ? placement.device_name : "cpu";
}

}  // namespace ditbench
