#include "analysis/group_winner.h"

#include "analysis/configuration_group.h"
#include "analysis/speedup.h"

namespace ditbench {

std::optional<GroupWinner> WinnerOf(const std::vector<ResultRow>& ranked) {
  std::optional<std::int64_t> newest;
  for (const ResultRow& row : ranked)
    if (row.measured() && (!newest || row.campaign > *newest)) newest = row.campaign;
  if (!newest) return std::nullopt;
  const OneRankBaselines baselines(ranked);
  std::optional<GroupWinner> winner;
  std::size_t count = 0;
  std::vector<ResultRow> skipped;
  for (const ResultRow& row : ranked) {
    if (!row.measured() || row.campaign != *newest) continue;
    ++count;
    if (winner) continue;
    if (row.below_quality()) {  // fast at output it gets wrong: never the answer
      skipped.push_back(row);
      continue;
    }
    winner.emplace();
    winner->row = row;
    winner->trust = MeasurementTrust(row);
    if (const ResultRow* baseline = baselines.For(row)) winner->baseline = *baseline;
    if (const std::optional<Speedup> speedup = SpeedupOf(baselines, row)) {
      winner->speedup = speedup->value;
      winner->efficiency = speedup->efficiency;
      winner->reference = speedup->ReferenceText();
      winner->trust.Add(speedup->trust);
    }
  }
  if (!winner) {
    winner.emplace();
    winner->found = false;
  }
  winner->ranked = count;
  winner->skipped = std::move(skipped);
  return winner;
}

}  // namespace ditbench
