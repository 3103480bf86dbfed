// A row's speedup and scaling efficiency against its 1-rank baseline, defined once. The
// report's table, charts, Summary and warnings, `query`'s speedup column and `advise` all ask
// here, so one row has one speedup everywhere, with the doubts (analysis/trust.h) that come
// with it.
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
  // The row's own doubts and the baseline's: busy, busy baseline, borrowed baseline,
  // superlinear, few launches, below quality.
  Trust trust;
};

// `row`'s speedup against its baseline in `baselines`; nullopt when the row is not measured or
// has no baseline.
std::optional<Speedup> SpeedupOf(const OneRankBaselines& baselines, const ResultRow& row);

// `row`'s speedup over the trial its output quality is measured against: SpeedupOf, but a row
// with a step cache against the 1-rank trial without it (OneRankBaselines::UncachedFor), so
// that a quality-against-speed chart puts the cache's gain and its loss on one reference.
// A cache's gain beyond the world size is expected there, not doubted as superlinear.
std::optional<Speedup> SpeedupOverReference(const OneRankBaselines& baselines,
                                            const ResultRow& row);

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
