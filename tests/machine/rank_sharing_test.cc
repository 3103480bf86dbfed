// The sharing factor of a trial's ranks: from the worker's thread rule when planning, and from
// what the database records (trials.placement_json, the host's cores) for a measured trial.
#include "machine/rank_sharing.h"

#include <gtest/gtest.h>

namespace ditbench::rank_sharing_test {
namespace {

TEST(RankSharingTest, UnpinnedRanksShareCoresOnlyBeyondTheCores) {
  EXPECT_EQ(UnpinnedCpuSharing(1, 2), 1.0);  // 2 threads on 2 cores
  EXPECT_EQ(UnpinnedCpuSharing(2, 2), 1.0);  // 1 thread each
  EXPECT_EQ(UnpinnedCpuSharing(4, 2), 2.0);  // 4 ranks of one thread on 2 cores
  EXPECT_EQ(UnpinnedCpuSharing(3, 4), 1.0);  // 3 threads, 4 cores: one idle, none shared
  EXPECT_EQ(UnpinnedCpuSharing(16, 4), 4.0);
  EXPECT_EQ(UnpinnedCpuSharing(4, 0), 1.0);  // cores not known
}

TEST(RankSharingTest, PinnedSlotsShareCoresRoundRobinWhenTheyOutnumberThem) {
  EXPECT_EQ(PinnedCpuSharing(2, 16, 4), 1.0);  // 4 cores per slot
  EXPECT_EQ(PinnedCpuSharing(4, 2, 4), 2.0);   // cpu:4 on 2 cores: slots 0 and 2 share core 0
  EXPECT_EQ(PinnedCpuSharing(1, 2, 4), 1.0);
}

TEST(RankSharingTest, TheRecordedPlacementGivesTheFactor) {
  // CPU ranks not pinned: the rule above with the host's cores.
  const nlohmann::json unpinned = {{"concurrent_trials", 0}, {"slots", {0, 1, 2, 3}}};
  EXPECT_EQ(RecordedSharing(unpinned, 4, 2), 2.0);
  EXPECT_EQ(RecordedSharing(unpinned, 4, 8), 1.0);
  EXPECT_EQ(RecordedSharing(unpinned, 4, std::nullopt), 1.0);  // host not known
  EXPECT_EQ(RecordedSharing(nullptr, 4, 2), 2.0);              // no placement recorded
  // Pinned ranks: one thread per listed core over the cores covered.
  const nlohmann::json pinned = {{"slots", {0, 1, 2, 3}}, {"cpus", {"0", "1", "0", "1"}}};
  EXPECT_EQ(RecordedSharing(pinned, 4, 64), 2.0);  // the lists, not the host, say it
  const nlohmann::json apart = {{"slots", {0, 1}}, {"cpus", {"0-3", "4-7"}}};
  EXPECT_EQ(RecordedSharing(apart, 2, 2), 1.0);
  // GPU: ranks over distinct devices.
  const nlohmann::json gpus = {{"slots", {0, 1}}, {"devices", {"0", "1"}}};
  EXPECT_EQ(RecordedSharing(gpus, 2, std::nullopt), 1.0);
  const nlohmann::json shared = {{"slots", {0, 1, 2, 3}}, {"devices", {"0", "0", "1", "1"}}};
  EXPECT_EQ(RecordedSharing(shared, 4, std::nullopt), 2.0);
}

}  // namespace
}  // namespace ditbench::rank_sharing_test
