#include <set>
#include <string>

#include <gtest/gtest.h>

#include "model_zoo/shapes/parallel_layout.h"

namespace ditbench::parallel_layout_test {
namespace {

TEST(ParallelLayoutTest, UlyssesIsInnermostThenRingPipeFusionCfgDp) {
  const ParallelDegrees d{/*dp=*/2, /*cfg=*/2, /*pipefusion=*/2, /*ring=*/2, /*ulysses=*/2};
  EXPECT_EQ(d.world_size(), 32);
  EXPECT_EQ(CoordinatesOf(d, 1).ulysses, 1);
  EXPECT_EQ(CoordinatesOf(d, 2).ring, 1);
  EXPECT_EQ(CoordinatesOf(d, 4).pipefusion, 1);
  EXPECT_EQ(CoordinatesOf(d, 8).cfg, 1);
  EXPECT_EQ(CoordinatesOf(d, 16).dp, 1);
  const RankCoordinates at = CoordinatesOf(d, 3);
  EXPECT_EQ(at.sequence_rank, 3);  // ring 1, ulysses 1 of a 2 x 2 sequence group
  for (int rank = 0; rank < d.world_size(); ++rank)
    EXPECT_EQ(RankOf(d, CoordinatesOf(d, rank)), rank);
  EXPECT_THROW(CoordinatesOf(d, 32), std::out_of_range);
}

TEST(ParallelLayoutTest, TensorParallelismIsInnermostAndKeepsTheOtherDegreesRankForRank) {
  const ParallelDegrees d{/*dp=*/1, /*cfg=*/2, /*pipefusion=*/1, /*ring=*/2, /*ulysses=*/2,
                          /*tp=*/2};
  EXPECT_EQ(d.world_size(), 16);
  EXPECT_EQ(CoordinatesOf(d, 1).tp, 1);
  EXPECT_EQ(CoordinatesOf(d, 2).ulysses, 1);
  EXPECT_EQ(CoordinatesOf(d, 4).ring, 1);
  EXPECT_EQ(CoordinatesOf(d, 8).cfg, 1);
  // The tp ranks of one sequence position hold the same tokens: the same sequence rank.
  EXPECT_EQ(CoordinatesOf(d, 6).sequence_rank, CoordinatesOf(d, 7).sequence_rank);
  for (int rank = 0; rank < d.world_size(); ++rank)
    EXPECT_EQ(RankOf(d, CoordinatesOf(d, rank)), rank);
  // Without tensor parallelism every group's name is the one it had before tp existed.
  const ParallelDegrees five{1, 2, 1, 2, 2};
  EXPECT_EQ(SubgroupName(Subgroup::kUlysses, CoordinatesOf(five, 5)),
            "ulysses/dp0-cfg1-pf0-ring0/");
  EXPECT_EQ(SubgroupName(Subgroup::kUlysses, CoordinatesOf(d, 11)),
            "ulysses/dp0-cfg1-pf0-ring0-tp1/");
  EXPECT_EQ(SubgroupName(Subgroup::kTensor, CoordinatesOf(d, 11)), "tp/dp0-cfg1-pf0-ring0-u1/");
}

TEST(ParallelLayoutTest, EachSubgroupHasItsDegreeOfMembersWithDistinctIndices) {
  for (const ParallelDegrees& d :
       {ParallelDegrees{1, 2, 2, 2, 4}, ParallelDegrees{1, 2, 1, 2, 2, 2}})
    for (Subgroup g : {Subgroup::kUlysses, Subgroup::kRing, Subgroup::kSequence, Subgroup::kCfg,
                       Subgroup::kPipeFusion, Subgroup::kWorld, Subgroup::kTensor}) {
      std::map<std::string, std::set<int>> members;
      for (int rank = 0; rank < d.world_size(); ++rank) {
        const RankCoordinates at = CoordinatesOf(d, rank);
        EXPECT_TRUE(members[SubgroupName(g, at)].insert(IndexIn(g, d, at)).second);
      }
      EXPECT_EQ(members.size() * SizeOf(g, d), static_cast<std::size_t>(d.world_size()));
      for (const auto& [name, indices] : members)
        EXPECT_EQ(indices.size(), static_cast<std::size_t>(SizeOf(g, d))) << name;
    }
}

TEST(ParallelLayoutTest, TheLayoutOfEarlierReleasesIsKept) {
  // dp x cfg x ulysses trials laid out as before ring and PipeFusion existed.
  const ParallelDegrees d{2, 2, 1, 1, 2};
  const RankCoordinates at = CoordinatesOf(d, 5);  // ((1 * 2 + 0) * 2) + 1
  EXPECT_EQ(at.dp, 1);
  EXPECT_EQ(at.cfg, 0);
  EXPECT_EQ(at.ulysses, 1);
}

}  // namespace
}  // namespace ditbench::parallel_layout_test
