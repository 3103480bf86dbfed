// The comparison of two sets of campaigns, matched on trial key: what `ditbench compare`
// prints and what `report --baseline` renders. Reads through storage's typed reads only.
//
// A side is one campaign, or several campaigns of the same sweep in one database
// ("3", "1,2,3", "a.db:3", "a.db:1,2,3"). Each campaign's run of a trial is one *launch* of
// it, so `ditbench run --new` three times gives each trial three launches, and the verdict
// uses the launch-level test (stats/change.h). Within one campaign a trial has one launch per
// replicate (sweep field `replicates`), so `compare 4 7` of two campaigns with
// `replicates: 3` tests 3 launch medians against 3; each launch carries its campaign as its
// session, so that replicates of one campaign must clear the noise floor too (stats/change.h).
//
// Verdict thresholds per trial depend on its device kind (LearnedThresholds):
//  * learned: the A/A pairs in the database of side A are the same trial key measured ok in
//    two campaigns of the same build on the same device, campaigns of neither side. A trial
//    measured on a busy machine is left out, and so is an outlier: a measurement more than
//    kOutlierFactor (2x) off the median of its trial's measurements (at least 3 of them);
//    within a campaign a trial's latency is already the median of its launch medians. With
//    at least kMinAaPairs pairs left, the noise floor is the 90th percentile of their
//    |change|, never below 1% and never above kLearnedFloorCap times the device's default
//    floor (docs/measurement.md, "The noise floor"): one disturbed campaign or trial cannot
//    move it far;
//  * otherwise the defaults: GPU noise floor 5%, minimum effect 2%; CPU noise floor 35%,
//    minimum effect 5% (back-to-back CPU launches of one trial differed by up to 31%).
// --noise-floor / --min-effect override both.
//
// A matched trial measured on a busy machine on either side (ResultRow::busy) is compared
// like any other, and says so: its verdict is not to be trusted. So is a side whose output
// missed its quality gates (ResultRow::below_quality): it is faster or slower at output that
// is wrong, and its verdict says "below quality".
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric_table.h"
#include "stats/change.h"
#include "stats/order_statistics.h"
#include "storage/results_reader.h"
#include "storage/selfcheck_store.h"

namespace ditbench {

// One side of a comparison: a database and one or more of its campaigns.
struct CampaignSet {
  std::filesystem::path db;
  std::vector<std::int64_t> campaigns;
  std::string text;  // as the user wrote it
};

// Parses "ID[,ID...]" (in `default_db`) or "PATH:ID[,ID...]". Throws UserError
// (one line, naming the text) for anything else.
CampaignSet ParseCampaignSet(std::string_view text, const std::filesystem::path& default_db);

inline constexpr int kMinAaPairs = 10;
inline constexpr double kOutlierFactor = 2;
inline constexpr double kLearnedFloorQuantile = 0.90;
inline constexpr double kLearnedFloorCap = 2;  // times the device's default noise floor

struct Thresholds {
  ChangePolicy policy;
  // "gpu default", "cpu default", "learned from 22 A/A pairs (2 left out: busy or outlier)",
  // "learned from ... capped at 70.0%", "given"
  std::string source;
  // "noise floor 4.2%, minimum effect 2.0%, learned from 22 A/A pairs": for a headline.
  std::string Describe() const;
};

struct CompareSettings {
  std::optional<double> noise_floor_pct;  // overrides every device's
  std::optional<double> min_effect_pct;
};

// How a campaign ran, as far as the command that runs one of its trials again needs it.
struct CampaignRun {
  std::string sweep_path;  // the sweep file as the campaign stored it
  std::string db;          // the database holding the campaign, as its reader was given it
  std::string gpus;        // --gpus as the campaign ran (its environment's "gpus"); "" unknown
  std::string launcher;    // --launcher as the campaign ran; "" unknown
};

// A serving trial's tail quantile on both sides (a metric whose row has a compare_quantile:
// p95_ms): each side's quantile of its request latencies over its timed requests (every
// launch's, pooled) with its distribution-free 95% interval (stats/order_statistics.h), and
// the verdict: "faster" or "slower" when the two intervals do not overlap, "inconclusive" when
// they do, "not bounded" when a side has too few requests to bound it (72 for a p95).
struct TailChange {
  QuantileEstimate a, b;
  std::string verdict;
};

// A metric other than the latency, side by side (metrics/metric_table.h): the table's rows
// shown in compare, then every extra metric either side has (a command's own numbers). Each
// side's value is estimated like its latency (SideLatencyMs over the side's ok campaigns, for
// positive values; else their median); unset when an ok campaign of the side has none. The
// verdict is the one its row's statistic draws (MetricInfo::compare_quantile), none for most:
// `display.better` (the table's, or what the program declared) then says which way its ratio
// is good, and a metric without one is shown without a word.
struct ComparedMetric {
  std::string name;
  ExtraMetric display;  // unit, hint and better direction; value unused
  std::optional<double> a, b;
  std::optional<TailChange> verdict;    // a serving trial's p95_ms on both sides; else unset
  std::optional<double> ratio() const;  // b / a, when both are set and a is not 0
  // "better" or "worse" for B against A by the metric's direction; "" without a direction,
  // a value, or a difference.
  std::string_view Direction() const;
  // The verdict's word when it has one ("slower"), else Direction().
  std::string_view Judgement() const;
};

// One matched trial.
struct ComparedTrial {
  std::string trial_key, label, device;
  LatencyChange change;
  std::string thresholds;  // Thresholds::Describe()
  CampaignRun run;         // how B's campaign that measured it ran (sweep_path empty: unknown)
  // Measured on a busy machine (ResultRow::busy) on side A or B, with what was busy.
  bool a_busy = false, b_busy = false;
  std::string busy_note;
  bool busy() const { return a_busy || b_busy; }
  // Every compared metric but the latency (energy per image, a serving trial's p95, ...).
  std::vector<ComparedMetric> metrics;
  // The compared metric `name`, or nullptr when neither side has it.
  const ComparedMetric* Metric(std::string_view name) const;
  std::string BusySides() const;  // "A", "B", "A and B", or ""
  // The verdict of a side that missed its quality gates (ResultRow::quality, "below: psnr
  // 30.1 < 35"); empty when that side is not below quality.
  std::string a_below_quality, b_below_quality;
  std::string BelowQualitySides() const;  // "A", "B", "A and B", or ""
  // Fewer timed iterations on a side than the verdict needs (ChangePolicy::min_samples):
  // "too few timed iterations: 2 and 1, need 3". The change is still the sides' real medians
  // (a_ms, b_ms as `query` shows them), with no interval and the verdict inconclusive.
  std::string too_few;
};

// A trial measured on one side only, or not ok on one side.
struct UnmatchedTrial {
  std::string trial_key, label;
  std::string why;  // "only in A", "only in B", "A: failed", "B: oom (in campaign 4)", ...
};

// A setting that differs between the sides: build, host, device, sweep spec, or a leaf of the
// campaigns' environments ("worker.torch_version", "variables.NCCL_P2P_DISABLE").
struct SettingDifference {
  std::string setting, a, b;
};

struct Comparison {
  CampaignSet a, b;
  std::vector<SettingDifference> differences;
  std::vector<ComparedTrial> trials;  // sorted by change, most slowed down first
  std::vector<UnmatchedTrial> unmatched;
  // The thresholds used, by device kind ("gpu", "cpu"), for the kinds of the matched trials.
  std::map<std::string, Thresholds> thresholds;
  // Each side's campaigns as the report names them ("#3 2026-11-20 01:00 abc1234, #4 ...").
  std::string a_label, b_label;
};

// Compares the sides (matching is by trial key, so the sweeps may differ). `a_db` and `b_db`
// are the databases of a and b and may be the same object. With `a_checks` and `b_checks`
// (those databases' selfcheck stores), the differences end with how the sides' devices
// checked (analysis/selfcheck_comparison.h). Throws UserError for a campaign id that does not
// exist, naming the known ones.
Comparison CompareCampaigns(ResultsReader& a_db, const CampaignSet& a, ResultsReader& b_db,
                            const CampaignSet& b, const CompareSettings& settings = {},
                            SelfcheckStore* a_checks = nullptr, SelfcheckStore* b_checks = nullptr);

// The trials that are `slower` with a change above `pct` percent: `regressions`; those of
// them measured on a busy machine count only when `strict`, else they are `skipped_busy`.
struct RegressionCheck {
  std::vector<const ComparedTrial*> regressions, skipped_busy;
};
RegressionCheck FindRegressions(const Comparison& comparison, double pct, bool strict = false);

// The noise floor learned from A/A pairs among `rows` on one device kind (the rule above), or
// nothing when fewer than kMinAaPairs are left. Rows of `excluded` campaigns, busy rows and
// outliers are left out. Pure (tested).
std::optional<Thresholds> LearnedThresholds(const std::vector<ResultRow>& rows, bool gpu,
                                            const std::vector<std::int64_t>& excluded);

// The defaults above for a device kind.
Thresholds DefaultThresholds(bool gpu);

// How every output that lists trials of several groups names one (compare, history, the
// report's warnings and stage table): the model, shape, precision, scope, batch (above 1) and
// steps, then its ConfigurationLabel (analysis/configuration_group.h: the degrees, custom axes
// and every setting away from its default), "pixart-alpha{depth:8} 1024px bf16 denoise
// steps=20 ulysses=2 cfg=2 vae_parallel=2", a served trial's load last ("(served at
// arrivals=poisson rate=2 ...)"). Two trials of one campaign with the same label differ at most
// in seed or the command run.
std::string TrialLabel(const ResultRow& row);

// The model with its dimension overrides: "pixart-alpha-tiny{depth:8}", or "pixart-alpha".
std::string ModelIdentity(const ResultRow& row);

// The parallel degrees above 1, spelled out: "ulysses=2 cfg=2", or "1 rank"; then a command's
// custom axes, "1 rank threads=2 opt=fast" (AxesLabel), so that they tell rows apart too.
std::string DegreesLabel(const ResultRow& row);

// What `campaign` of the database `db` recorded of how it ran.
CampaignRun CampaignRunOf(const CampaignInfo& campaign, const std::string& db);

// The command that runs one trial of a campaign again: `ditbench run SWEEP --only KEY --db DB`,
// with `--gpus` as the campaign ran unless it was the default (auto) and `--launcher` unless
// local, each argument quoted for a POSIX shell where it needs to be. Without the campaign's
// --gpus, `run` plans for another machine and may not know the key at all.
std::string ReproduceCommand(const CampaignRun& run, const std::string& trial_key);

// `text` as one word of a POSIX shell: as it is when it holds only safe characters, else in
// single quotes.
std::string ShellWord(const std::string& text);

// An interval as every output prints it: "[+17.9, +181.8] 90%" (with its real coverage), or
// "data cannot bound it" when it is not ChangeEstimate::Bounded().
std::string IntervalText(const ChangeEstimate& change);

// The verdict as printed: "slower", or "slower, busy B" for a trial measured on a busy machine,
// and ", below quality B" for a side that missed its quality gates (experiments/quality_gate.h);
// "inconclusive (too few timed iterations: 2 and 1, need 3)" for a trial with too few.
std::string VerdictText(const ComparedTrial& trial);

// The noise floors used, for a headline: "noise floor 4.2% (learned from 22 A/A pairs)", or
// per device kind "noise floor gpu 5.0% (gpu default), cpu 35.0% (cpu default)"; "" if none.
std::string NoiseFloorHeadline(const Comparison& comparison);

// A command's custom axes (ResultRow::axes) as "name=value name=value" ("" when none).
std::string AxesLabel(const ResultRow& row);
// The same for custom axes as a JSON object (a trial's computation "custom").
std::string AxesLabel(const nlohmann::json& axes);

}  // namespace ditbench
