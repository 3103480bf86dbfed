#include "machine/placement.h"

#include <stdexcept>

#include <gtest/gtest.h>

#include "base/user_error.h"
#include "tests/support/runner_fakes.h"

namespace ditbench::placement_test {
namespace {

using Strings = std::vector<std::string>;

class PlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 8; ++i)
      gpus_.gpus.push_back({i == 5 ? "GPU five" : "Fake GPU", "GPU-uuid" + std::to_string(i)});
  }
  Placement Resolve(const std::string& option) { return ResolvePlacement(option, gpus_); }
  std::string ErrorOf(const std::string& option) {
    try {
      Resolve(option);
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  }
  test::FakeGpuDiscovery gpus_;
};

TEST_F(PlacementTest, AutoTakesEveryListedGpu) {
  auto p = Resolve("auto");
  EXPECT_EQ(p.devices, (Strings{"0", "1", "2", "3", "4", "5", "6", "7"}));
  EXPECT_EQ(p.capacity.slots, 8);
  EXPECT_TRUE(p.capacity.on_gpu);
  EXPECT_EQ(p.device_name, "Fake GPU");
}

TEST_F(PlacementTest, AutoRespectsTheInheritedVisibleDevices) {
  gpus_.inherited = "5,4";
  auto p = Resolve("auto");
  EXPECT_EQ(p.devices, (Strings{"5", "4"}));
  EXPECT_EQ(p.capacity.slots, 2);
  EXPECT_EQ(p.device_name, "GPU five");
}

TEST_F(PlacementTest, ListIsPositionsWithinTheInheritedSet) {
  gpus_.inherited = "4,5,GPU-uuid6";
  EXPECT_EQ(Resolve("1").devices, (Strings{"5"}));
  EXPECT_EQ(Resolve("2,0").devices, (Strings{"GPU-uuid6", "4"}));
  EXPECT_EQ(Resolve("1").device_name, "GPU five");
}

TEST_F(PlacementTest, UuidEntriesAreNamedByTheirGpu) {
  gpus_.inherited = "GPU-uuid5";
  auto p = Resolve("auto");
  EXPECT_EQ(p.devices, (Strings{"GPU-uuid5"}));
  EXPECT_EQ(p.device_name, "GPU five");
}

TEST_F(PlacementTest, ListWithoutInheritedSetIsTheDriversIndices) {
  EXPECT_EQ(Resolve("3,1").devices, (Strings{"3", "1"}));
}

TEST_F(PlacementTest, PositionOutsideTheInheritedSetIsRefused) {
  gpus_.inherited = "4,5";
  const std::string error = ErrorOf("0,2");
  EXPECT_NE(error.find("GPU 2 is not visible"), std::string::npos) << error;
  EXPECT_NE(error.find("CUDA_VISIBLE_DEVICES='4,5'"), std::string::npos) << error;
}

TEST_F(PlacementTest, GpuTheMachineDoesNotHaveIsRefused) {
  EXPECT_NE(ErrorOf("7,8").find("--gpus '7,8': GPU 8 is not on this machine: the driver lists 8 "
                                "GPU(s)"),
            std::string::npos)
      << ErrorOf("7,8");
  gpus_.gpus.clear();
  EXPECT_EQ(ErrorOf("0,1"),
            "--gpus '0,1': GPU 0 is not on this machine: the driver lists 0 GPU(s); use --gpus "
            "cpu:N to run ranks on CPU");
}

TEST_F(PlacementTest, EmptyOrHiddenInheritedSetMeansCpu) {
  gpus_.inherited = "";
  EXPECT_FALSE(Resolve("auto").capacity.on_gpu);
  gpus_.inherited = "-1";
  EXPECT_FALSE(Resolve("auto").capacity.on_gpu);
  EXPECT_TRUE(Resolve("auto").devices.empty());
}

TEST_F(PlacementTest, NoGpuMeansCpuSlots) {
  gpus_.gpus.clear();
  auto p = Resolve("auto");
  EXPECT_FALSE(p.capacity.on_gpu);
  EXPECT_GE(p.capacity.slots, 1);
  EXPECT_EQ(p.device_name, "cpu");
  EXPECT_EQ(Resolve("cpu:3").capacity.slots, 3);
  EXPECT_FALSE(Resolve("cpu:3").capacity.on_gpu);
}

TEST_F(PlacementTest, MalformedValuesAreOneLineErrors) {
  for (const char* bad : {"cpu:x", "cpu:", "cpu:0", "1,,2", "a", "", "99999999999", "-1", "0;1"}) {
    const std::string error = ErrorOf(bad);
    EXPECT_NE(error.find("--gpus"), std::string::npos) << bad << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << bad;
  }
  EXPECT_NE(ErrorOf("1,1").find("listed twice"), std::string::npos);
}

TEST(VisibleDevicesTest, ParsedAsCudaDoes) {
  EXPECT_EQ(ParseVisibleDevices("4,5"), (Strings{"4", "5"}));
  EXPECT_EQ(ParseVisibleDevices(" 4 , GPU-ab12 "), (Strings{"4", "GPU-ab12"}));
  EXPECT_EQ(ParseVisibleDevices("MIG-1a2b"), (Strings{"MIG-1a2b"}));
  EXPECT_EQ(ParseVisibleDevices("2,-1,3"), (Strings{"2"}));  // the list ends at -1
  EXPECT_EQ(ParseVisibleDevices("2,,3"), (Strings{"2"}));
  EXPECT_TRUE(ParseVisibleDevices("").empty());
}

TEST(SlotPoolTest, ExclusiveGivesTheMachineToOneTrialAtATime) {
  SlotPool pool(4, PlacementPolicy::kExclusive);
  auto first = pool.Acquire(1);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, (std::vector<int>{0}));
  EXPECT_FALSE(pool.Acquire(1).has_value());  // three slots free, but not shared
  pool.Release(*first);
  EXPECT_EQ(pool.Acquire(4), (std::vector<int>{0, 1, 2, 3}));
}

TEST(SlotPoolTest, PackGivesDisjointSlots) {
  SlotPool pool(4, PlacementPolicy::kPack);
  auto a = pool.Acquire(2), b = pool.Acquire(1);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, (std::vector<int>{0, 1}));
  EXPECT_EQ(*b, (std::vector<int>{2}));
  EXPECT_FALSE(pool.Acquire(2).has_value());
  pool.Release(*a);
  EXPECT_EQ(pool.Acquire(2), (std::vector<int>{0, 1}));
  EXPECT_EQ(pool.held(), 3);
}

TEST(SlotPoolTest, TooBigOrEmptyRequestsAreRefused) {
  SlotPool pool(2, PlacementPolicy::kPack);
  EXPECT_FALSE(pool.Acquire(3).has_value());
  EXPECT_FALSE(pool.Acquire(0).has_value());
  EXPECT_EQ(pool.held(), 0);
}

// 8 GPUs in two NVLink islands of four, each island on its own NUMA node.
std::vector<SlotTopology> TwoIslands() {
  std::vector<SlotTopology> slots(8);
  for (int i = 0; i < 8; ++i) {
    slots[i].nvlink_island = i < 4 ? 0 : 4;
    slots[i].numa_node = i < 4 ? 0 : 1;
  }
  return slots;
}

// Cores 0-3 on NUMA node 0, 4-7 on node 1.
CpuTopology EightCoresOnTwoNodes() {
  CpuTopology cpus;
  for (int cpu = 0; cpu < 8; ++cpu) {
    cpus.cpus.push_back(cpu);
    cpus.numa_node_of[cpu] = cpu < 4 ? 0 : 1;
  }
  return cpus;
}

TEST(SlotPoolTopologyTest, FourRankTrialLandsInsideOneIsland) {
  SlotPool pool(8, PlacementPolicy::kPack, TwoIslands());
  EXPECT_EQ(pool.Acquire(2), (std::vector<int>{0, 1}));
  std::string reason;
  EXPECT_EQ(pool.Acquire(4, &reason), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(reason, "one NVLink island (4) and NUMA node (1)");
}

TEST(SlotPoolTopologyTest, WithoutTopologyTheSameTrialsStraddle) {
  SlotPool pool(8, PlacementPolicy::kPack);
  EXPECT_EQ(pool.Acquire(2), (std::vector<int>{0, 1}));
  std::string reason = "unset";
  EXPECT_EQ(pool.Acquire(4, &reason), (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(reason, "");
}

TEST(SlotPoolTopologyTest, TwoRankTrialsDoNotStraddleIslands) {
  SlotPool pool(8, PlacementPolicy::kPack, TwoIslands());
  auto a = pool.Acquire(2), b = pool.Acquire(2);
  EXPECT_EQ(a, (std::vector<int>{0, 1}));
  EXPECT_EQ(b, (std::vector<int>{2, 3}));  // best fit: island 0 keeps filling, island 4 stays whole
  pool.Release(*a);
  EXPECT_EQ(pool.Acquire(3), (std::vector<int>{4, 5, 6}));
  // Island 0 has two free, island 4 one: a 2-rank trial goes where it fits whole.
  EXPECT_EQ(pool.Acquire(2), (std::vector<int>{0, 1}));
}

TEST(SlotPoolTopologyTest, InsideOneIslandTheNumaNodeDecides) {
  std::vector<SlotTopology> slots(8);  // one NVSwitch island over two NUMA nodes
  for (int i = 0; i < 8; ++i) {
    slots[i].nvlink_island = 0;
    slots[i].numa_node = i < 4 ? 0 : 1;
  }
  SlotPool pool(8, PlacementPolicy::kPack, slots);
  EXPECT_EQ(pool.Acquire(2), (std::vector<int>{0, 1}));
  std::string reason;
  EXPECT_EQ(pool.Acquire(4, &reason), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(reason, "one NVLink island (0) and NUMA node (1)");
  EXPECT_EQ(pool.Acquire(4, &reason), std::nullopt);  // two free
  EXPECT_EQ(pool.Acquire(2, &reason), (std::vector<int>{2, 3}));
}

TEST(SlotPoolTopologyTest, TrialNoGroupCanHoldSpansThemAndSaysSo) {
  SlotPool pool(8, PlacementPolicy::kPack, TwoIslands());
  auto a = pool.Acquire(2), b = pool.Acquire(3);  // {0,1} and {4,5,6}
  EXPECT_EQ(b, (std::vector<int>{4, 5, 6}));
  std::string reason;
  EXPECT_EQ(pool.Acquire(3, &reason), (std::vector<int>{2, 3, 7}));
  EXPECT_EQ(reason, "no NVLink island or NUMA node had 3 free slots");
}

TEST(SlotPoolTopologyTest, NumaNodeAloneGroupsCpuSlots) {
  const CpuTopology cpus = EightCoresOnTwoNodes();
  SlotPool pool(4, PlacementPolicy::kPack, CpuSlots(4, cpus));  // two cores per slot
  EXPECT_EQ(pool.Acquire(1), (std::vector<int>{0}));
  std::string reason;
  EXPECT_EQ(pool.Acquire(2, &reason), (std::vector<int>{2, 3}));
  EXPECT_EQ(reason, "one NUMA node (1)");
}

TEST(CpuSlotsTest, SlotsAreCarvedInsideNumaNodes) {
  const CpuTopology cpus = EightCoresOnTwoNodes();
  const auto four = CpuSlots(4, cpus);
  ASSERT_EQ(four.size(), 4u);
  EXPECT_EQ(four[0].cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(four[3].cpus, (std::vector<int>{6, 7}));
  EXPECT_EQ(four[1].numa_node, 0);
  EXPECT_EQ(four[2].numa_node, 1);
  // Three slots of two cores: two fit node 0, the third node 1; none straddles.
  const auto three = CpuSlots(3, cpus);
  EXPECT_EQ(three[1].cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(three[2].cpus, (std::vector<int>{4, 5}));
  EXPECT_EQ(three[2].numa_node, 1);
}

TEST(CpuSlotsTest, MoreSlotsThanCoresShareThemRoundRobin) {
  CpuTopology cpus;
  cpus.cpus = {3, 5};
  const auto slots = CpuSlots(4, cpus);
  ASSERT_EQ(slots.size(), 4u);
  EXPECT_EQ(slots[0].cpus, (std::vector<int>{3}));
  EXPECT_EQ(slots[1].cpus, (std::vector<int>{5}));
  EXPECT_EQ(slots[2].cpus, (std::vector<int>{3}));
  EXPECT_FALSE(slots[0].numa_node.has_value());  // no node listed
  EXPECT_EQ(CpuSlots(2, CpuTopology{}).size(), 2u);  // nothing known: not pinned
  EXPECT_TRUE(CpuSlots(2, CpuTopology{})[0].cpus.empty());
}

TEST_F(PlacementTest, GpuSlotsCarryTheirGpusTopologyIntoThePlacementRecord) {
  gpus_.gpus[6].nvlink_island = 4;
  gpus_.gpus[6].numa_node = 1;
  gpus_.inherited = "5,6";
  const Placement p = Resolve("auto");
  ASSERT_EQ(p.topology.size(), 2u);
  EXPECT_EQ(p.topology[1].nvlink_island, 4);
  const nlohmann::json record = PlacementJson(p, {1}, "one NVLink island (4)");
  EXPECT_EQ(record["devices"], nlohmann::json({"6"}));
  EXPECT_EQ(record["nvlink_islands"], nlohmann::json({4}));
  EXPECT_EQ(record["numa_nodes"], nlohmann::json({1}));
  EXPECT_EQ(record["reason"], "one NVLink island (4)");
  EXPECT_TRUE(PlacementJson(p, {0}, "")["nvlink_islands"][0].is_null());
}

TEST_F(PlacementTest, CpuSlotsArePinnedOnlyWhenCoresAreGiven) {
  CpuTopology cpus;
  cpus.cpus = {0, 1, 2, 3};
  const Placement pinned = ResolvePlacement("cpu:2", gpus_, &cpus);
  EXPECT_EQ(PlacementJson(pinned, {1, 0}, "")["cpus"], nlohmann::json({"2-3", "0-1"}));
  const Placement shared = Resolve("cpu:2");
  EXPECT_FALSE(PlacementJson(shared, {1, 0}, "").contains("cpus"));
}

TEST(PlacementPolicyTest, NamesAreTheOnesUsersTypeAndCampaignsRecord) {
  EXPECT_EQ(ParseChoice(kPlacementPolicies, "exclusive", "--policy"), PlacementPolicy::kExclusive);
  EXPECT_EQ(ParseChoice(kPlacementPolicies, "pack", "--policy"), PlacementPolicy::kPack);
  EXPECT_EQ(ChoiceName(kPlacementPolicies, PlacementPolicy::kPack), "pack");
  EXPECT_THROW(ParseChoice(kPlacementPolicies, "Pack", "--policy"), UserError);
}

}  // namespace
}  // namespace ditbench::placement_test
