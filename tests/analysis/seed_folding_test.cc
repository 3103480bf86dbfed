#include "analysis/seed_folding.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace ditbench::seed_folding_test {
namespace {

ResultRow Row(std::int64_t campaign, std::int64_t ulysses, std::int64_t seed, double latency,
              const char* status = "ok") {
  ResultRow row;
  row.campaign = campaign;
  row.trial_key = fmt::format("k{}-{}-{}", campaign, ulysses, seed);
  row.status = status;
  row.model = "pixart-alpha";
  row.resolution = 1024;
  row.ulysses = ulysses;
  row.ring = row.pipefusion = row.cfg = row.dp = 1;
  row.world_size = ulysses;
  row.seed = seed;
  if (row.status == "ok") {
    row.latency_ms = latency;
    row.ci_low_ms = latency - 1;
    row.ci_high_ms = latency + 1;
    row.iterations = 10;
  }
  return row;
}

TEST(SeedFoldingTest, TrialsThatDifferOnlyInSeedAreOneRowWithTheirSpread) {
  const std::vector<ResultRow> rows = {Row(1, 1, 0, 10), Row(1, 2, 0, 6),  Row(1, 1, 1, 14),
                                       Row(1, 1, 2, 11), Row(2, 1, 0, 20), Row(1, 2, 1, 0, "oom")};
  const std::vector<ResultRow> folded = FoldSeeds(rows);
  ASSERT_EQ(folded.size(), 4u);
  // ulysses 1 of campaign 1: seeds 0, 1, 2 -> median 11, range 10 - 14, 30 iterations.
  EXPECT_EQ(folded[0].folded, 3);
  EXPECT_DOUBLE_EQ(*folded[0].latency_ms, 11);
  EXPECT_DOUBLE_EQ(*folded[0].folded_min_ms, 10);
  EXPECT_DOUBLE_EQ(*folded[0].folded_max_ms, 14);
  EXPECT_EQ(*folded[0].iterations, 30);
  // One seed of a configuration, another campaign, a failure: kept as they are.
  EXPECT_EQ(folded[1].folded, 1);
  EXPECT_DOUBLE_EQ(*folded[1].latency_ms, 6);
  EXPECT_EQ(folded[2].campaign, 2);
  EXPECT_EQ(folded[2].folded, 1);
  EXPECT_EQ(folded[3].status, "oom");
}

TEST(SeedFoldingTest, DifferentPipeFusionPatchesAreNeverFolded) {
  ResultRow a = Row(1, 1, 0, 10), b = Row(1, 1, 1, 12);
  b.pipefusion_patches = 4;
  EXPECT_EQ(FoldSeeds({a, b}).size(), 2u);
}

}  // namespace
}  // namespace ditbench::seed_folding_test
