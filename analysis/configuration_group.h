// What the report compares with what, defined once. Used by the report's tables and charts
// (report/html_report.h, report/group_charts.h), seed folding (analysis/seed_folding.h), the
// stage breakdown and the halving search (plan/halving.h).
//
// Three levels:
//  * the report group (ReportGroupOf): trials ranked against each other in one table. Same
//    model identity (overrides and weights included), resolution, precision, scope, batch,
//    steps, profile_blocks (timing every block slows a trial down), workload and offered load
//    (`serve`). Never across precisions or scopes, nor between the built-in worker and a
//    command, nor between a served trial and a timed one or served trials at other loads (a
//    served trial's latency is a request's under that load, not one image's).
//  * the configuration (ConfigurationOf): every field of the trial's computation
//    (experiments/trial_identity.h: ComputationJson) but the seed, within one campaign, device
//    and profile_blocks. Trials of one configuration are replicates: the table shows them as
//    one row (FoldSeeds) with one label (ConfigurationLabel). Trials that differ in anything
//    else the trial computes (vae_tile, pipefusion_patches, pipefusion_warmup_steps, custom
//    axes, a field added later) are different configurations with different labels.
//  * the 1-rank baseline (OneRankBaselines): what a row's speedup, efficiency and output-error
//    point are measured against, in the table and in every chart.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/trial.h"
#include "storage/result_rows.h"

namespace ditbench {

struct ReportGroup {
  std::string model;  // "pixart-alpha", or with overrides "pixart-alpha-tiny{depth:8}"
  std::int64_t resolution = 0;
  std::string precision, scope;
  std::int64_t batch = 0, steps = 0;
  bool profile_blocks = false;
  Workload workload = Workload::kDit;
  // The image's height (equal to `resolution`, its width, for a square) and a video's frames
  // (0: an image). Last, so that image groups keep their order.
  std::int64_t height = 0, frames = 0;
  // A served trial's offered load, "arrivals=poisson rate=2 requests=24 slo_scale=2" (its
  // `serve` identity: a trace by its digest); "" for a timed trial. Last, so that timed groups
  // keep their order and come first.
  std::string load;

  auto operator<=>(const ReportGroup&) const = default;
  // "1024 px", "1280x720 px", "832x480 px · 81 frames".
  std::string ResolutionLabel() const;
  // Every field, as one line (a map key for callers that group by text).
  std::string Text() const;
  // How every output names the group to a user: "flux-dev-tiny · 384x256 px · fp32 · denoise ·
  // batch 1 · 4 steps" (the report's headings, advise's and plan's group lines), a served
  // group's load after it ("· served at arrivals=poisson rate=2 ...").
  std::string Label() const;
};

ReportGroup ReportGroupOf(const ResultRow& row);

// Image (or video) tokens each rank of the sequence-parallel group attends over: the sample's
// tokens / (ring x ulysses). nullopt for a workload whose model is only a label, or a model
// this build does not know.
std::optional<std::int64_t> TokensPerRank(const ResultRow& row);
ReportGroup ReportGroupOf(const TrialConfig& config);

// The row's computation with identity defaults left out (IdentityJson): row.computation when
// storage read it, else built from the row's columns (a row made by hand in a test).
nlohmann::json RowIdentity(const ResultRow& row);

// The configuration as text: rows with the same text differ at most in seed and trial key.
std::string ConfigurationOf(const ResultRow& row);

// The settings of the row's computation that neither its report group, its parallel degrees
// nor its custom axes name, each "field=value" ("pipefusion_patches=4 vae_tile=128"); empty
// when all are at their identity defaults.
std::string SettingsLabel(const ResultRow& row);

// SettingsLabel, then a served trial's load ("served at arrivals=poisson rate=2 ..."), for a
// list of trials that no report group heads (query's settings column), where the load is what
// tells served trials apart.
std::string SettingsAndLoadLabel(const ResultRow& row);

// The same label, load included, for a trial not yet run (`plan`'s settings column, run's
// status line), leaving out also the fields in `shown_apart` (those the caller shows in columns
// of their own; "serve": the load).
std::string SettingsLabel(const TrialConfig& config, const std::set<std::string>& shown_apart);

// How a table row and a chart bar name a configuration within its group: DegreesLabel
// ("ulysses=2", "1 rank", then custom axes) and SettingsLabel. Two configurations of one
// group and campaign have different labels unless they differ only in the command run.
std::string ConfigurationLabel(const ResultRow& row);

// The same label for a trial not yet run or as a sweep plans it ("ulysses=2 vae_parallel=2"):
// what `advise` and `plan` name a layout by, equal to ConfigurationLabel of its result row.
std::string ConfigurationLabel(const TrialConfig& config);

// The 1-rank trial a row's speedup, efficiency and output-error point are measured against:
// its *reference*, one ok trial of `group` with world size 1 and the same profile_blocks whose
// computation equals the row's but for the seed, the fields that split the work over ranks
// (the degrees, the PipeFusion settings, vae_parallel) and the settings that approximate the
// computation or skip work (attention, quant, quant_exclude, schedule, cache), all of those at
// their defaults: the exact computation on one rank, the trial the row's output error is
// measured against (runner/output_error.h ReferenceConfig). So every row of a group that
// shares its plain settings (vae_tile, graph, custom axes) has one reference, and a cached or
// FP8 trial's speedup is what its knobs and its ranks bought together. When the group has no
// such trial (a sweep that sets `attention: math` everywhere), the reference is the 1-rank
// trial of the row's own computation. From the row's campaign when it has one, else from the
// newest campaign that has one; among several in one campaign, the first in `group`. The
// table, every chart, the summary, `query` and the warnings build one from the same rows, so
// they agree (docs/report.md, "The ranking table").
class OneRankBaselines {
 public:
  // Indexes the 1-rank trials of `group` (one parse of each row's computation).
  // REQUIRES: `group` outlives this object and is not changed while it is used.
  explicit OneRankBaselines(const std::vector<ResultRow>& group);

  // `row`'s reference; nullptr: none.
  const ResultRow* For(const ResultRow& row) const;

 private:
  const ResultRow* Pick(const std::map<std::string, std::vector<const ResultRow*>>& candidates,
                        const std::string& key, const ResultRow& row) const;
  // The exact computation's key (ReferenceKey) -> the 1-rank trials that are it, in group order.
  std::map<std::string, std::vector<const ResultRow*>> exact_;
  // The row's own computation but its parallel fields -> its 1-rank trials (the fallback).
  std::map<std::string, std::vector<const ResultRow*>> same_;
};

// The settings of `row` that its reference `baseline` (OneRankBaselines::For) leaves at their
// defaults, besides those that split work over ranks: ["attention", "cache"]; empty when the
// baseline computes what the row computes. What the speedup measures besides the ranks.
std::vector<std::string> SettingsApartFrom(const ResultRow& row, const ResultRow& baseline);

// Whether the row's computation has a step cache (`cache` other than none).
bool HasStepCache(const ResultRow& row);
// The ranks the row's VAE decode is split over (`vae_parallel`; 1: each rank decodes alone).
int VaeParallelOf(const ResultRow& row);

}  // namespace ditbench
