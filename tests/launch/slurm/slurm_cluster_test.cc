#include "launch/slurm/slurm_cluster.h"

#include <gtest/gtest.h>

namespace ditbench::slurm_cluster_test {
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

// The one rule `run` and `plan` read: the user's numbers win, sinfo is asked only for what is
// missing, and GPUs per node that neither knows are an error with sinfo's reason.
TEST(SlurmCapacityTest, OptionsWinAndSinfoFillsWhatIsMissing) {
  int asked = 0;
  const SinfoQuery sinfo = [&](const std::string& partition, std::string*) {
    ++asked;
    EXPECT_EQ(partition, "gpu");
    return std::optional<SlurmPartition>(SlurmPartition{4, 8});
  };
  std::string reason;
  auto c = SlurmCapacity("gpu", 2, 3, &reason, sinfo);
  ASSERT_TRUE(c);
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(c->gpus_per_node, 2);
  EXPECT_EQ(c->nodes, 3);
  c = SlurmCapacity("gpu", 2, 0, &reason, sinfo);
  ASSERT_TRUE(c);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(c->gpus_per_node, 2);
  EXPECT_EQ(c->nodes, 4);
  c = SlurmCapacity("gpu", 0, 0, &reason, sinfo);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->gpus_per_node, 8);
  EXPECT_EQ(c->nodes, 4);
}

TEST(SlurmCapacityTest, UnknownGpusPerNodeIsAnErrorWithSinfosReason) {
  const SinfoQuery failing = [](const std::string&, std::string* error) {
    *error = "sinfo said nothing usable (exit 1): no partition";
    return std::optional<SlurmPartition>();
  };
  std::string reason;
  EXPECT_FALSE(SlurmCapacity("", 0, 2, &reason, failing));
  EXPECT_EQ(reason, "sinfo said nothing usable (exit 1): no partition");
  const SinfoQuery cpu_nodes = [](const std::string&, std::string*) {
    return std::optional<SlurmPartition>(SlurmPartition{5, 0});
  };
  EXPECT_FALSE(SlurmCapacity("", 0, 0, &reason, cpu_nodes));
  EXPECT_EQ(reason, "sinfo lists none");
  auto c = SlurmCapacity("", 4, 0, &reason, failing);  // sinfo cannot tell the nodes: one
  ASSERT_TRUE(c);
  EXPECT_EQ(c->nodes, 1);
}

}  // namespace
}  // namespace ditbench::slurm_cluster_test
