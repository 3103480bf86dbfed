#include "runner/slurm_cluster.h"

#include <gtest/gtest.h>

namespace ditbench {
namespace {

TEST(SlurmClusterTest, GpuNodesAreCountedAndTheSmallestGroupSetsGpusPerNode) {
  const auto p = ParseSinfo("4 gpu:8\n2 gpu:a100:4(S:0-1)\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->nodes, 6);
  EXPECT_EQ(p->gpus_per_node, 4);
}

TEST(SlurmClusterTest, CpuNodesHaveNoGpus) {
  const auto p = ParseSinfo("1 (null)\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->nodes, 1);
  EXPECT_EQ(p->gpus_per_node, 0);
  EXPECT_EQ(ParseSinfo("3 gpu:2,shard:8\n")->gpus_per_node, 2);
}

TEST(SlurmClusterTest, NothingUsableIsNoPartition) {
  EXPECT_FALSE(ParseSinfo(""));
  EXPECT_FALSE(ParseSinfo("sinfo: error: invalid partition\n"));
}

}  // namespace
}  // namespace ditbench
