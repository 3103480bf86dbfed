#include "runner/placement.h"

#include <stdexcept>

#include <gtest/gtest.h>

#include "tests/support/runner_fakes.h"

namespace ditbench {
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
    } catch (const std::invalid_argument& e) {
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
  EXPECT_NE(ErrorOf("7,8").find("--gpus '7,8': GPU 8 is not on this machine: nvidia-smi lists 8 "
                                "GPU(s)"),
            std::string::npos)
      << ErrorOf("7,8");
  gpus_.gpus.clear();
  EXPECT_EQ(ErrorOf("0,1"),
            "--gpus '0,1': GPU 0 is not on this machine: nvidia-smi lists 0 GPU(s); use --gpus "
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

TEST(NvidiaSmiLineTest, NameAndUuid) {
  auto gpu = ParseNvidiaSmiLine("GPU 3: NVIDIA H100 80GB HBM3 (UUID: GPU-8e3c1f2a-0000)");
  ASSERT_TRUE(gpu.has_value());
  EXPECT_EQ(gpu->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu->uuid, "GPU-8e3c1f2a-0000");
  // MIG devices are listed under their GPU, indented; they are not GPUs of their own here.
  EXPECT_FALSE(ParseNvidiaSmiLine("  MIG 1g.10gb Device 0: (UUID: MIG-1a2b)").has_value());
  EXPECT_FALSE(ParseNvidiaSmiLine("No devices were found").has_value());
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

TEST(PlacementPolicyTest, Names) {
  EXPECT_EQ(ParsePlacementPolicy("exclusive"), PlacementPolicy::kExclusive);
  EXPECT_EQ(ParsePlacementPolicy("pack"), PlacementPolicy::kPack);
  EXPECT_FALSE(ParsePlacementPolicy("Pack").has_value());
}

}  // namespace
}  // namespace ditbench
