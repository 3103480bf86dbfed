#include "experiments/trial_rows.h"

#include <gtest/gtest.h>

namespace ditbench::trial_rows_test {
namespace {

TrialConfig Trial(int batch, int cfg, int dp) {
  TrialConfig c;
  c.batch = batch;
  c.cfg = cfg;
  c.dp = dp;
  return c;
}

ModelConfig Model(bool negative_prompt) {
  ModelConfig m;
  m.negative_prompt = negative_prompt;
  return m;
}

TEST(TrialRowsTest, ANegativePromptDoublesTheRowsAndDpReplicatesThem) {
  const TrialConfig c = Trial(/*batch=*/3, /*cfg=*/1, /*dp=*/2);
  EXPECT_EQ(RowsPerReplica(c, Model(true)), 6);
  EXPECT_EQ(RowsPerForward(c, Model(true)), 12);
  EXPECT_EQ(RowsPerRank(c, Model(true)), 6);
  EXPECT_TRUE(SharesCfgBatch(c, Model(true)));
  // Guidance distilled into an embedding (Flux, HunyuanVideo): one row per sample.
  EXPECT_EQ(RowsPerReplica(c, Model(false)), 3);
  EXPECT_EQ(RowsPerForward(c, Model(false)), 6);
  EXPECT_EQ(RowsPerRank(c, Model(false)), 3);
  EXPECT_FALSE(SharesCfgBatch(c, Model(false)));
}

TEST(TrialRowsTest, CfgTwoGivesEachRankOneHalfOfTheGuidanceBatch) {
  const TrialConfig c = Trial(/*batch=*/3, /*cfg=*/2, /*dp=*/2);
  EXPECT_FALSE(SharesCfgBatch(c, Model(true)));
  EXPECT_EQ(RowsPerRank(c, Model(true)), 3);
  EXPECT_EQ(RowsPerReplica(c, Model(true)), 6);  // the two halves together
  EXPECT_EQ(RowsPerForward(c, Model(true)), 12);
}

TEST(TrialRowsTest, ARanksRowsAreItsReplicasSplitOverCfgForEveryValidTrial) {
  for (bool negative : {true, false})
    for (int cfg : {1, 2}) {
      if (cfg == 2 && !negative) continue;  // invalid: nothing to split (experiments/validity.h)
      for (int batch : {1, 2, 5}) {
        const TrialConfig c = Trial(batch, cfg, /*dp=*/1);
        EXPECT_EQ(RowsPerRank(c, Model(negative)) * cfg, RowsPerReplica(c, Model(negative)))
            << "negative_prompt " << negative << " cfg " << cfg << " batch " << batch;
      }
    }
}

}  // namespace
}  // namespace ditbench::trial_rows_test
