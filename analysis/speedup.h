// A row's speedup and scaling efficiency against its 1-rank reference trial
// (OneRankBaselines::For: the exact computation on one rank, the trial its output error is
// measured against), defined once. The report's table, charts (the Pareto chart included),
// Summary and warnings, `query`'s speedup column and `advise` all ask here, so one row has one
// speedup everywhere, with the doubts (analysis/trust.h) that come with it and its reference
// named (Speedup::ReferenceText).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/configuration_group.h"
#include "analysis/trust.h"
#include "storage/result_rows.h"
#include "storage/results_reader.h"

namespace ditbench {

// A speedup above world size x this is flagged superlinear (5% for noise).
inline constexpr double kSuperlinearSlack = 1.05;

struct Speedup {
  double value = 0;       // the baseline's latency / the row's
  double efficiency = 0;  // value / world size
  // The baseline it is measured against (OneRankBaselines).
  std::int64_t baseline_campaign = 0;
  std::string baseline_key;
  double baseline_ms = 0;
  // The settings the reference leaves at their defaults besides the ranks (SettingsApartFrom):
  // {"cache"} for a cached row; empty when the reference computes what the row does.
  std::vector<std::string> settings_apart;
  // The row's own doubts and the baseline's: busy, busy baseline, borrowed baseline,
  // superlinear, few launches, below quality. Superlinear only where the row does the work
  // its reference does (no setting apart, or a step cache that skipped no step): a faster
  // kernel, FP8 or a cache that skipped steps may well beat the world size.
  Trust trust;

  // How outputs name the reference: "1 rank", "1 rank without cache", "1 rank without
  // attention, quant".
  std::string ReferenceText() const;
};

// `row`'s speedup against its baseline in `baselines`; nullopt when the row is not measured or
// has no baseline.
std::optional<Speedup> SpeedupOf(const OneRankBaselines& baselines, const ResultRow& row);

// `row`'s VAE decode against its 1-rank baseline's (the extra metric decode_ms; scope
// pipeline): what `vae_parallel` bought, or what a decode every rank repeats costs. The value is
// the baseline's decode_ms / the row's; efficiency is over the ranks that split the decode
// (vae_parallel), not the world size. nullopt when either has no decode_ms.
std::optional<Speedup> DecodeSpeedupOf(const OneRankBaselines& baselines, const ResultRow& row);

// A trial: (campaign, trial key).
using TrialId = std::pair<std::int64_t, std::string>;

// Every measured trial's speedup as the report shows it: `rows` grouped by report group, the
// seeds of each configuration folded (analysis/seed_folding.h), each configuration against its
// 1-rank baseline; every trial of a configuration gets its configuration's speedup. `rows`
// should be the answering rows (analysis/campaign_roles.h), as the report's are.
std::map<TrialId, Speedup> TrialSpeedups(const std::vector<ResultRow>& rows);

// TrialSpeedups of the rows of every campaign in `db` that answers (campaign_roles.h): what
// `query`'s speedup column and `advise` show.
std::map<TrialId, Speedup> AnsweringSpeedups(ResultsReader& db);

}  // namespace ditbench
