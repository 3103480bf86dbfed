#include "plan/plan_output.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "base/json_append.h"
#include "base/table_printers.h"
#include "base/terminal_text.h"
#include "experiments/engine_request.h"
#include "experiments/trial_identity.h"
#include "experiments/trial_rows.h"
#include "machine/placement_policy.h"
#include "plan/device_prior.h"
#include "plan/plan_savings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
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
// it, two trials that differ only there would print identical rows. In the table's order; the
// last, "settings", names every other setting of the trial's computation (its identity) that
// is not at its default ("graph=cuda_graph vae_tile=128", as `query`'s settings column and
// the report's labels name them), so that a new computation field shows with no row here.
struct VaryingColumn {
  std::string_view heading;
  std::string (*value)(const TrialConfig&);
};
std::string OtherSettings(const TrialConfig& c);
constexpr std::array<VaryingColumn, 10> kVaryingColumns{{
    {"frames", [](const TrialConfig& c) { return std::to_string(c.frames); }},
    {"scope", [](const TrialConfig& c) { return std::string(ScopeName(c.scope)); }},
    {"batch", [](const TrialConfig& c) { return std::to_string(c.batch); }},
    {"steps", [](const TrialConfig& c) { return std::to_string(c.steps); }},
    {"seed", [](const TrialConfig& c) { return std::to_string(c.seed); }},
    {"patches",
     [](const TrialConfig& c) { return std::to_string(c.effective_pipefusion_patches()); }},
    // As the trial key has it: without PipeFusion the setting computes nothing.
    {"pf sync",
     [](const TrialConfig& c) {
       return c.pipefusion > 1 ? std::to_string(c.pipefusion_warmup_steps) : std::string("-");
     }},
    {"weights",
     [](const TrialConfig& c) { return c.weights.empty() ? std::string("-") : c.weights; }},
    {"vae weights",
     [](const TrialConfig& c) { return c.vae_weights.empty() ? std::string("-") : c.vae_weights; }},
    {"settings", OtherSettings},
}};

// Every setting away from its default that no column above shows, as the report labels it.
std::string OtherSettings(const TrialConfig& c) {
  static const std::set<std::string> shown_apart = {"pipefusion_patches", "pipefusion_warmup_steps",
                                                    "weights", "vae_weights"};
  const std::string label = SettingsLabel(c, shown_apart);
  return label.empty() ? "-" : label;
}

// The columns of kVaryingColumns whose value is not the same for every trial of `plan`.
std::vector<const VaryingColumn*> VaryingColumns(const SweepPlan& plan) {
  std::vector<const VaryingColumn*> shown;
  if (plan.trials.empty()) return shown;
  for (const VaryingColumn& column : kVaryingColumns) {
    const std::string first = column.value(plan.trials.front().config);
    const bool varies =
        std::any_of(plan.trials.begin(), plan.trials.end(),
                    [&](const PlannedTrial& t) { return column.value(t.config) != first; });
    if (varies) shown.push_back(&column);
  }
  return shown;
}

// The degrees the plan table has a column for: every one its trials list (Listed).
std::vector<const DegreeInfo*> DegreeColumns(const SweepPlan& plan) {
  std::vector<const DegreeInfo*> degrees;
  for (const DegreeInfo& d : kDegreeTable)
    if (d.shown_at_one || std::any_of(plan.trials.begin(), plan.trials.end(),
                                      [&](const PlannedTrial& t) { return Listed(d, t.config); }))
      degrees.push_back(&d);
  return degrees;
}

// The plan table's columns: the trial's settings (the varying ones of kVaryingColumns after
// the precision), then one narrow column per parallel degree (kDegreeTable, headed by its short
// label) and the world size, then the estimates and what the plan does with the trial.
std::vector<Column> PlanColumns(const std::vector<const VaryingColumn*>& varying,
                                const std::vector<const DegreeInfo*>& degrees) {
  std::vector<Column> columns = {{.name = "trial", .min_width = 16},
                                 {.name = "model", .min_width = 22},
                                 {.name = "res", .align = Align::kRight, .min_width = 5, .gap = 1},
                                 {.name = "prec", .min_width = 5, .gap = 1}};
  for (const VaryingColumn* v : varying)
    columns.push_back({.name = std::string(v->heading),
                       .align = v->value == OtherSettings ? Align::kLeft : Align::kRight,
                       .gap = 1});
  for (const DegreeInfo* d : degrees)
    columns.push_back({.name = std::string(d->short_label),
                       .hint = ColumnHint::kCount,
                       .min_width = 3,
                       .gap = 1});
  columns.push_back({.name = "ws", .hint = ColumnHint::kCount, .min_width = 3, .gap = 1});
  // An estimate carries its source as a marker: "*" measured earlier, "~" predicted.
  columns.push_back({.name = "iter (ms)", .align = Align::kRight, .min_width = 10});
  columns.push_back({.name = "trial", .align = Align::kRight, .min_width = 9, .gap = 1});
  columns.push_back({.name = "mem/rank", .align = Align::kRight, .min_width = 9, .gap = 1});
  columns.push_back({.name = "plan"});
  return columns;
}

// Under --policy pack: how the wall time above was reckoned. Exclusive plans on more than one
// slot: what packing would take, when it saves at least a tenth.
// What the analytic estimate assumes for compute, as the plan's footer says it.
std::string ComputeAssumption(const PlanAssumptions& a) {
  if (a.device == "cpu")
    return a.calibration && !a.calibration->rates.empty()
               ? std::string(
                     "this machine's measured forward rates per precision, size and "
                     "threads")
               : fmt::format("{:g} TFLOPS per core", a.cpu_tflops_per_core);
  return a.efficiency > 0 ? fmt::format("{:.0f}% of dense peak", a.efficiency * 100)
                          : std::string("a share of dense peak that falls at small per-rank sizes");
}

nlohmann::json CalibrationJson(const PlanAssumptions& a) {
  if (!a.calibration) return {{"calibrated", false}, {"why_not", a.uncalibrated_why}};
  return {{"calibrated", true},
          {"source", a.calibration->source},
          {"startup_s", a.calibration->startup_s},
          {"cpu_rates", !a.calibration->rates.empty()},
          {"link_ranks",
           a.calibration->link ? nlohmann::json(a.calibration->comm_ranks) : nlohmann::json()}};
}

void WritePacking(const SweepPlan& plan, const PlanAssumptions& a, std::ostream& out) {
  if (plan.pack_slots > 0 && plan.estimated_wall_s > 0) {
    out << fmt::format(
        "  --policy pack: trials side by side on {} slots{}; one after another "
        "they would take {}; trials in flight together share the host "
        "(results.concurrent_trials)\n",
        plan.pack_slots,
        a.device == "cpu" ? fmt::format(", each rank pinned to {} core(s) of its own",
                                        PinnedCpuCoresUsed(a.cpu_cores, plan.pack_slots, 1))
                          : "",
        DurationText(plan.estimated_wall_s));
  } else if (plan.pack_alternative_s > 0 &&
             plan.pack_alternative_s < 0.9 * plan.estimated_wall_s) {
    out << fmt::format(
        "  --policy pack would take about {} (several trials at once on disjoint "
        "slots; they then share the host)\n",
        DurationText(plan.pack_alternative_s));
  }
}

// One trial of the JSON plan, as an element of its "trials" array, but its "config"
// (AppendCanonicalJson writes that, before these members: it sorts first).
nlohmann::json TrialJson(const PlannedTrial& t) {
  nlohmann::json j = nlohmann::json::object();
  j["trial_key"] = t.key;
  j["world_size"] = t.config.world_size();
  j["valid"] = !t.invalid_reason.has_value();
  j["unsupported"] = t.unsupported;
  if (t.invalid_reason) j["reason"] = *t.invalid_reason;
  std::string error;
  if (auto model = ResolveModel(t.config.model, t.config.model_overrides, &error)) {
    // One forward over the rows a rank group runs together (CFG doubles them).
    const int rows = RowsPerReplica(t.config, *model);
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
    if (t.estimate->cache_computed_fraction)
      e["cache"] = {{"computed_fraction", *t.estimate->cache_computed_fraction},
                    {"from", t.estimate->cache_fraction_source}};
    if (const auto& s = t.estimate->serve)
      e["serve"] = {{"offered_per_s", s->offered_per_s},
                    {"capacity_per_s", s->capacity_per_s},
                    {"utilisation", s->utilisation},
                    {"window_s", s->window_s},
                    {"p50_ms", s->p50_ms},
                    {"p95_ms", s->p95_ms},
                    {"p99_ms", s->p99_ms},
                    {"note", s->note}};
  }
  return j;
}

// One row of the plan table (PlanColumns); `note` (may be empty) replaces the plan column.
std::vector<Cell> PlanRow(const PlannedTrial& t, const std::vector<const VaryingColumn*>& varying,
                          const std::vector<const DegreeInfo*>& degrees, const std::string& note) {
  const TrialConfig& c = t.config;
  std::vector<Cell> row = {t.key, Model(c), c.resolution_text(),
                           std::string(PrecisionName(c.precision))};
  for (const VaryingColumn* v : varying) row.emplace_back(v->value(c));
  for (const DegreeInfo* d : degrees) row.emplace_back(c.*d->member);
  row.emplace_back(c.world_size());
  if (t.estimate) {
    row.emplace_back(fmt::format("{:.3g}{}", t.estimate->iteration_ms,
                                 t.estimate->source == "measured"    ? "*"
                                 : t.estimate->source == "predicted" ? "~"
                                                                     : ""));
    row.emplace_back(DurationText(t.estimate->trial_s));
    row.emplace_back(fmt::format("{:.0f} MB", t.estimate->memory_mb));
  } else {
    for (int i = 0; i < 3; ++i) row.emplace_back("-");
  }
  std::string verdict = "run";
  if (!note.empty()) {
    verdict = note;
  } else if (t.invalid_reason) {
    verdict = (t.unsupported ? "unsupported: " : "invalid: ") + *t.invalid_reason;
  }
  row.emplace_back(std::move(verdict));
  return row;
}

// The plan's trials as a console table. Each row is rendered once, as the terminal shows it
// (its cells apart by '\n', which a rendered cell never holds), and laid out when the widths
// of the whole table are known: a 100,000-trial plan holds its table as text (some 25 MB),
// never as cells.
void WritePlanText(const SweepPlan& plan, const std::vector<std::string>& notes,
                   std::ostream& out) {
  const auto varying = VaryingColumns(plan);
  const auto degrees = DegreeColumns(plan);
  const std::vector<Column> columns = PlanColumns(varying, degrees);
  std::vector<std::size_t> widths(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c)
    widths[c] = std::max(columns[c].min_width, TextCharacters(ForTerminal(columns[c].name)));
  std::vector<std::string> rows(plan.trials.size());
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    const std::vector<Cell> row =
        PlanRow(plan.trials[i], varying, degrees, i < notes.size() ? notes[i] : std::string());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::string text = TextCell(columns[c], row[c]);
      widths[c] = std::max(widths[c], TextCharacters(text));
      if (c > 0) rows[i] += '\n';
      rows[i] += text;
    }
  }
  constexpr std::size_t kFlushBytes = 1 << 20;
  std::string lines;
  std::vector<std::string> header;
  for (const Column& column : columns) header.push_back(ForTerminal(column.name));
  std::vector<std::string_view> cells(header.begin(), header.end());
  AppendTextLine(columns, widths, cells, "", lines);
  for (std::string& row : rows) {
    cells.clear();
    for (std::size_t from = 0; from <= row.size();) {
      const std::size_t end = std::min(row.find('\n', from), row.size());
      cells.emplace_back(row.data() + from, end - from);
      from = end + 1;
    }
    AppendTextLine(columns, widths, cells, "", lines);
    std::string().swap(row);  // printed: its memory goes back
    if (lines.size() >= kFlushBytes) {
      out << lines;
      lines.clear();
    }
  }
  out << lines;
}

// The plan's trials as a Markdown table, printed kPiece rows at a time, so that a large
// sweep's table is never held whole.
void WritePlanMarkdownRows(const SweepPlan& plan, const std::vector<std::string>& notes,
                           std::ostream& out) {
  constexpr std::size_t kPiece = 4096;
  const auto varying = VaryingColumns(plan);
  const auto degrees = DegreeColumns(plan);
  const std::vector<Column> columns = PlanColumns(varying, degrees);
  auto note = [&](std::size_t i) { return i < notes.size() ? notes[i] : std::string(); };
  for (std::size_t from = 0; from == 0 || from < plan.trials.size(); from += kPiece) {
    Table piece(columns);
    for (std::size_t i = from; i < std::min(from + kPiece, plan.trials.size()); ++i)
      piece.AddRow(PlanRow(plan.trials[i], varying, degrees, note(i)));
    if (from == 0) {
      PrintMarkdown(piece, out);
    } else {
      std::ostringstream rows;  // without the header and its rule
      PrintMarkdown(piece, rows);
      const std::string text = rows.str();
      out << text.substr(text.find('\n', text.find('\n') + 1) + 1);
    }
  }
}

// A step cache's estimate assumes a share of its steps computed: each setting's, once, and
// where it came from.
void WriteCacheLines(const SweepPlan& plan, std::ostream& out) {
  std::map<std::string, std::string> cache_lines;
  for (const PlannedTrial& t : plan.trials) {
    // Only trials that will run: an invalid or unsupported one has no steps to cache.
    if (!t.estimate || !t.estimate->cache_computed_fraction || t.invalid_reason) continue;
    const std::string what =
        fmt::format("{} {} {}", Model(t.config), t.config.resolution_text(),
                    SettingsLabel(t.config, {"model", "resolution", "frames"}));
    cache_lines.emplace(what, fmt::format("{:.0f}% of the steps computed: {}",
                                          100 * *t.estimate->cache_computed_fraction,
                                          t.estimate->cache_fraction_source));
  }
  for (const auto& [what, line] : cache_lines) out << "cache: " << what << ": " << line << "\n";
}

// A serving trial: its load against its replicas' capacity, and the latency that predicts.
void WriteServeLines(const SweepPlan& plan, std::ostream& out) {
  for (const PlannedTrial& t : plan.trials) {
    if (!t.estimate || !t.estimate->serve || t.invalid_reason) continue;
    const ServeEstimate& s = *t.estimate->serve;
    const std::string layout = DegreesAboveOne(t.config);
    const std::string what = fmt::format("{} {} {} {}", Model(t.config), t.config.resolution_text(),
                                         layout.empty() ? "1 rank" : layout,
                                         SettingsLabel(t.config, {"model", "resolution"}));
    if (!s.note.empty()) {
      out << "serve: " << what << ": no estimate: " << s.note << "\n";
      continue;
    }
    out << fmt::format(
        "serve: {}: {:.3g} requests/s offered to {} replica{} of {:.3g}/s at {:.0f} ms a request "
        "({} estimate{}): utilisation {:.2f}; predicted p50 {:.0f} ms, p95 {:.0f} ms, p99 {:.0f} "
        "ms{}\n",
        what, s.offered_per_s, t.config.dp, t.config.dp == 1 ? "" : "s", s.capacity_per_s,
        s.service_ms, t.estimate->source,
        std::abs(s.service_ms - t.estimate->iteration_ms) > 1e-9 * s.service_ms
            ? fmt::format(" of {:.0f} ms for {}, scaled per shape by the cost model: the "
                          "mix's mean",
                          t.estimate->iteration_ms, t.config.resolution_text())
            : std::string(),
        s.utilisation, s.p50_ms, s.p95_ms, s.p99_ms,
        s.utilisation > 1 ? ": beyond capacity, the queue grows for as long as the load lasts"
                          : "");
  }
}

// What an `engine` sweep's trials would start and send: the server's command line (the port
// and the GPUs are chosen at launch) and the request body, once per trial that would run.
void WriteEngineLines(const SweepPlan& plan, std::ostream& out) {
  bool first = true;
  for (const PlannedTrial& t : plan.trials) {
    const EngineSpec& engine = t.config.engine;
    if (engine.empty() || t.invalid_reason) continue;
    if (first) {
      out << (engine.url.empty()
                  ? "engine: each trial starts its server in the sweep's folder ({port}, {gpus} "
                    "and {files} are chosen at launch), waits for " +
                        fmt::format("{}", fmt::join(engine.ready, ", ")) +
                        ", and sends the body shown:\n"
                  : "engine: each trial attaches to " + engine.url +
                        " (a server you run: nothing is started or stopped) and sends the body "
                        "shown:\n");
      first = false;
    }
    std::vector<std::string> words;
    if (engine.url.empty())
      for (const std::string& arg : ExpandEngineStart(t.config, {"{port}", "{gpus}"}))
        words.push_back(ShellWord(arg));
    out << fmt::format("  {}  {}\n", t.key, fmt::join(words, " "))
        << fmt::format("  {:{}}  {}\n", "", t.key.size(), EngineRequestBody(t.config).dump());
    // Each file written into the run folder first, one line of its text a line here.
    for (const auto& [name, text] : ExpandEngineFiles(t.config)) {
      out << fmt::format("  {:{}}  {{files}}/{}:\n", "", t.key.size(), name);
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        out << fmt::format("  {:{}}    {}\n", "", t.key.size(), text.substr(at, end - at));
        at = end + 1;
      }
    }
  }
}

}  // namespace

void WritePlanTable(const SweepSpec& spec, const SweepPlan& plan, const PlanAssumptions& a,
                    std::ostream& out, const std::vector<std::string>& notes, double budget_s) {
  WritePlanText(plan, notes, out);
  std::size_t valid = 0, unsupported = 0;
  for (const PlannedTrial& t : plan.trials) {
    if (!t.invalid_reason) {
      ++valid;
    } else if (t.unsupported) {
      ++unsupported;
    }
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
    out << fmt::format(
        "\nestimated wall time: {}{} (trials measured earlier only: a command's "
        "cost is its program's; '-' = not measured yet)\n",
        DurationText(wall_s),
        spec.replicates > 1
            ? fmt::format(" for {} launches of each trial (replicates)", spec.replicates)
            : "");
  else
    out << fmt::format(
        "\nestimated wall time: {}{} (device '{}'; * = measured earlier, "
        "otherwise analytic FLOPs at {}; collectives at latency + bytes / "
        "bandwidth of {}; start-up {})\n",
        DurationText(wall_s),
        spec.replicates > 1
            ? fmt::format(" for {} launches of each trial (replicates)", spec.replicates)
            : "",
        a.device, ComputeAssumption(a),
        a.calibration && a.calibration->link
            ? fmt::format(
                  "the link {} ({} ranks{})", kCalibratedLinkName, a.calibration->comm_ranks,
                  a.calibration->in_place_latency ? ", each collective's cost measured in place"
                                                  : "")
            : std::string(LinkFor(a.device, 1, 0).name),
        a.calibration
            ? fmt::format("{:.2f} s measured by ditbench selfcheck", a.calibration->startup_s)
            : fmt::format("{:g} s per trial", a.startup_s));
  if (TraitsOf(spec.workload).builtin_model)
    out << (a.calibration ? "calibrated by " + a.calibration->source
                          : "uncalibrated prior: " + a.uncalibrated_why)
        << "\n";
  if (!plan.estimates_from.empty())
    out << "estimates: " << plan.estimates_from << " (~ = predicted by it)\n";
  if (TraitsOf(spec.workload).builtin_model)
    out << fmt::format(
        "mem/rank counts the model's weights and the larger working set (activations or the "
        "VAE decode) of one rank, not the process around it: {}\n",
        a.device == "cpu" ? "on CPU the measured peak_mem_mb is the process's resident peak, "
                            "which adds LibTorch's own few hundred MB"
                          : "the measured peak_mem_mb is the CUDA allocator's peak; the CUDA "
                            "context and NCCL buffers come on top");
  WriteCacheLines(plan, out);
  WriteServeLines(plan, out);
  WriteEngineLines(plan, out);
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

void WritePlanMarkdown(const SweepPlan& plan, std::ostream& out,
                       const std::vector<std::string>& notes) {
  WritePlanMarkdownRows(plan, notes, out);
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
  const PlacementPolicy policy =
      plan.pack_slots > 0 ? PlacementPolicy::kPack : PlacementPolicy::kExclusive;
  // The document without its trials; they are streamed into its "trials" array one by one
  // (indented as dump(2) indents them there), so that a large plan is never held as one
  // JSON value: the same bytes as dumping the whole document.
  const std::string document = nlohmann::json{
      {"format", "ditbench-plan"},
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
      {"calibration", CalibrationJson(a)},
      {"policy", std::string(ChoiceName(kPlacementPolicies, policy))},
      {"packed_wall_s",
       plan.pack_slots > 0 ? nlohmann::json(plan.packed_wall_s) : nlohmann::json()},
      {"pack_alternative_s",
       plan.pack_alternative_s > 0 ? nlohmann::json(plan.pack_alternative_s) : nlohmann::json()},
      {"savings", ToJson(EstimateSavings(spec, plan, budget_s))},
      {"trials",
       nlohmann::json::array()}}.dump(2);
  constexpr std::string_view kTrials = "\n  \"trials\": []";
  const std::size_t at = document.rfind(kTrials);
  if (plan.trials.empty() || at == std::string::npos) {
    out << document << "\n";
    return;
  }
  const std::size_t open = at + kTrials.size() - 1;  // the "]" of "[]"
  out.write(document.data(), static_cast<std::streamsize>(open));
  out << "\n";
  // Each trial at depth 2 of the document: its dump(2) with every line four spaces in, written
  // so by one serializer rather than dumped and indented again.
  std::string piece;
  JsonAppender json(piece);
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    piece.assign("    {\n      \"config\": ");
    AppendCanonicalJson(plan.trials[i].config, json, piece, 2, 6);
    const nlohmann::json rest = TrialJson(plan.trials[i]);
    for (const auto& [key, value] : rest.items()) json.Member(key, value, 2, 4, false);
    json.CloseObject(4, true);
    piece += i + 1 < plan.trials.size() ? ",\n" : "\n  ";
    out << piece;
  }
  out.write(document.data() + open, static_cast<std::streamsize>(document.size() - open));
  out << "\n";
}

std::string DeviceFor(const Placement& placement) {
  return placement.capacity.on_gpu ? placement.device_name : "cpu";
}

std::string DurationText(double seconds) {
  const double s = std::abs(seconds);
  if (std::isnan(s)) return "unknown";
  if (s >= kLongestDurationH * 3600) return "> 10^6 h";
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

}  // namespace ditbench
