#include "contract/slurm_hostlist.h"

#include <gtest/gtest.h>

namespace ditbench::slurm_hostlist_test {
namespace {

TEST(SlurmHostlistTest, FirstHostOfEachNodeListShape) {
  EXPECT_EQ(FirstSlurmHost("localhost"), "localhost");
  EXPECT_EQ(FirstSlurmHost("gpu3,gpu4"), "gpu3");
  EXPECT_EQ(FirstSlurmHost("node[07-08,10],gpu3"), "node07");
  EXPECT_EQ(FirstSlurmHost("node[3,5]"), "node3");
  EXPECT_EQ(FirstSlurmHost("rack[1-2]-gpu,x"), "rack1-gpu");
  EXPECT_EQ(FirstSlurmHost(""), "");
  EXPECT_EQ(FirstSlurmHost("broken[1-2"), "broken");
}

}  // namespace
}  // namespace ditbench::slurm_hostlist_test
