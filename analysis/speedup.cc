#include "analysis/speedup.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/campaign_roles.h"
#include "analysis/row_metrics.h"
#include "analysis/seed_folding.h"

namespace ditbench {

namespace {

// Whether `row` does the work of the reference it is measured against, split over its ranks:
// no setting apart, or only a step cache that skipped no step (it computed every one).
bool SameWork(const ResultRow& row, const std::vector<std::string>& apart) {
  if (apart.empty()) return true;
  if (apart != std::vector<std::string>{"cache"}) return false;
  const std::optional<double> skipped = MetricValue(row, "skipped_steps");
  return skipped && *skipped == 0;
}

}  // namespace

std::string Speedup::ReferenceText() const {
  return settings_apart.empty() ? "1 rank"
                                : fmt::format("1 rank without {}", fmt::join(settings_apart, ", "));
}

std::optional<Speedup> SpeedupOf(const OneRankBaselines& baselines, const ResultRow& row) {
  if (!row.measured() || *row.latency_ms <= 0) return std::nullopt;
  const ResultRow* baseline = baselines.For(row);
  if (!baseline) return std::nullopt;
  Speedup speedup;
  speedup.value = *baseline->latency_ms / *row.latency_ms;
  speedup.efficiency = speedup.value / static_cast<double>(row.world_size);
  speedup.baseline_campaign = baseline->campaign;
  speedup.baseline_key = baseline->trial_key;
  speedup.baseline_ms = *baseline->latency_ms;
  speedup.settings_apart = SettingsApartFrom(row, *baseline);
  speedup.trust = MeasurementTrust(row);
  // A 1-rank trial is its own baseline: its doubts are its own, said once.
  const bool itself = baseline->campaign == row.campaign && baseline->trial_key == row.trial_key;
  if (baseline->busy && !itself) speedup.trust.Add(Doubt::kBaselineBusy);
  if (baseline->campaign != row.campaign) speedup.trust.Add(Doubt::kBorrowedBaseline);
  if (SameWork(row, speedup.settings_apart) &&
      speedup.value > kSuperlinearSlack * static_cast<double>(row.world_size))
    speedup.trust.Add(Doubt::kSuperlinear);
  return speedup;
}

std::optional<Speedup> DecodeSpeedupOf(const OneRankBaselines& baselines, const ResultRow& row) {
  const ResultRow* baseline = baselines.For(row);
  if (!baseline || !row.measured()) return std::nullopt;
  const std::optional<double> decode = MetricValue(row, "decode_ms");
  const std::optional<double> baseline_decode = MetricValue(*baseline, "decode_ms");
  if (!decode || *decode <= 0 || !baseline_decode) return std::nullopt;
  const int split = VaeParallelOf(row);
  Speedup speedup;
  speedup.value = baseline_decode.value() / decode.value();
  speedup.efficiency = speedup.value / std::max(1, split);
  speedup.baseline_campaign = baseline->campaign;
  speedup.baseline_key = baseline->trial_key;
  speedup.baseline_ms = baseline_decode.value();
  speedup.trust = MeasurementTrust(row);
  const bool itself = baseline->campaign == row.campaign && baseline->trial_key == row.trial_key;
  if (baseline->busy && !itself) speedup.trust.Add(Doubt::kBaselineBusy);
  if (baseline->campaign != row.campaign) speedup.trust.Add(Doubt::kBorrowedBaseline);
  if (speedup.value > kSuperlinearSlack * std::max(1, split))
    speedup.trust.Add(Doubt::kSuperlinear);
  return speedup;
}

std::map<TrialId, Speedup> TrialSpeedups(const std::vector<ResultRow>& rows) {
  std::map<ReportGroup, std::vector<ResultRow>> groups;
  for (const ResultRow& row : rows) groups[ReportGroupOf(row)].push_back(row);
  std::map<TrialId, Speedup> speedups;
  for (const auto& [group, members] : groups) {
    const std::vector<ResultRow> folded = FoldSeeds(members);
    const OneRankBaselines baselines(folded);
    std::map<std::string, Speedup> by_configuration;
    for (const ResultRow& row : folded)
      if (auto speedup = SpeedupOf(baselines, row))
        by_configuration.emplace(ConfigurationOf(row), *speedup);
    for (const ResultRow& row : members) {
      if (!row.measured()) continue;
      auto found = by_configuration.find(ConfigurationOf(row));
      if (found != by_configuration.end())
        speedups.emplace(TrialId{row.campaign, row.trial_key}, found->second);
    }
  }
  return speedups;
}

std::map<TrialId, Speedup> AnsweringSpeedups(ResultsReader& db) {
  const std::set<std::int64_t> answering = AnsweringCampaigns(db.Campaigns());
  return TrialSpeedups(db.Results(std::vector<std::int64_t>(answering.begin(), answering.end())));
}

}  // namespace ditbench
