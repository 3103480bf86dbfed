#include "machine/gpu_topology.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::gpu_topology_test {
namespace {

using Ints = std::vector<int>;

void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(GpuTopologyTest, PciAddressIsWrittenAsSysfsNamesIt) {
  EXPECT_EQ(SysfsPciAddress("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(SysfsPciAddress("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(SysfsPciAddress("00000001:3B:00.0"), "0001:3b:00.0");
}

TEST(GpuTopologyTest, NumaNodeOfAGpuComesFromSysfs) {
  test::TempDir sys;
  Write(sys.path() / "bus/pci/devices/0000:3b:00.0/numa_node", "1\n");
  Write(sys.path() / "bus/pci/devices/0000:18:00.0/numa_node", "-1\n");
  EXPECT_EQ(PciNumaNode("00000000:3B:00.0", sys.path()), 1);
  EXPECT_EQ(PciNumaNode("00000000:18:00.0", sys.path()), std::nullopt);  // -1: not known
  EXPECT_EQ(PciNumaNode("00000000:99:00.0", sys.path()), std::nullopt);  // no such device
  EXPECT_EQ(PciNumaNode("", sys.path()), std::nullopt);
}

TEST(GpuTopologyTest, DirectNvlinksMakeIslands) {
  const std::vector<std::string> own = {"0:1:0.0", "0:2:0.0", "0:3:0.0", "0:4:0.0", "0:5:0.0"};
  // 0-1 and 2-3 linked (each end lists the other); 4 has no NVLink.
  const std::vector<std::vector<std::string>> far = {
      {"0:2:0.0"}, {"0:1:0.0"}, {"0:4:0.0", "0:4:0.0"}, {"0:3:0.0"}, {}};
  EXPECT_EQ(NvlinkIslands(far, own), (Ints{0, 0, 2, 2, -1}));
}

TEST(GpuTopologyTest, GpusOnOneNvswitchShareAnIsland) {
  // GPUs 0-3 reach switches A and B, GPUs 4-7 switch C: two islands of four.
  std::vector<std::string> own;
  std::vector<std::vector<std::string>> far;
  for (int i = 0; i < 8; ++i) {
    own.push_back("0000:1" + std::to_string(i) + ":00.0");
    far.push_back(i < 4 ? std::vector<std::string>{"0000:a0:00.0", "0000:b0:00.0"}
                        : std::vector<std::string>{"0000:c0:00.0"});
  }
  EXPECT_EQ(NvlinkIslands(far, own), (Ints{0, 0, 0, 0, 4, 4, 4, 4}));
}

// `nvidia-smi topo -m` of a machine with two NVLink pairs on two NUMA nodes (its real layout:
// tab-separated, a legend after the matrix, NIC rows).
const std::vector<std::string> kTopo = {
    "\x1b[4m\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m",
    "GPU0\t X \tNV12\tSYS\tSYS\tPIX\t0-27\t0\t\tN/A",
    "GPU1\tNV12\t X \tSYS\tSYS\tPIX\t0-27\t0\t\tN/A",
    "GPU2\tSYS\tSYS\t X \tNV12\tSYS\t28-55\t1\t\tN/A",
    "GPU3\tSYS\tSYS\tNV12\t X \tSYS\t28-55\t1\t\tN/A",
    "NIC0\tPIX\tPIX\tSYS\tSYS\t X \t\t\t\t",
    "",
    "Legend:",
    "  NV#  = Connection traversing a bonded set of # NVLinks",
};

TEST(GpuTopologyTest, NvidiaSmiTopologyMatrixIsParsed) {
  const SmiTopology topology = ParseNvidiaSmiTopology(kTopo);
  EXPECT_EQ(topology.nvlink_peers.at(0), (Ints{1}));
  EXPECT_EQ(topology.nvlink_peers.at(3), (Ints{2}));
  EXPECT_EQ(topology.numa_node.at(1), 0);
  EXPECT_EQ(topology.numa_node.at(2), 1);
  EXPECT_EQ(topology.nvlink_peers.size(), 4u);
}

TEST(GpuTopologyTest, WithoutNvmlLinksTheIslandsComeFromNvidiaSmi) {
  std::vector<GpuInfo> gpus(4);
  for (int i = 0; i < 4; ++i) gpus[i].index = i;
  TopologyInputs inputs;
  inputs.sys = "/nonexistent";
  int asked = 0;
  inputs.nvidia_smi_topo = [&] {
    ++asked;
    return kTopo;
  };
  AddTopology(gpus, inputs);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(gpus[0].nvlink_island, 0);
  EXPECT_EQ(gpus[1].nvlink_island, 0);
  EXPECT_EQ(gpus[2].nvlink_island, 2);
  EXPECT_EQ(gpus[3].numa_node, 1);  // sysfs did not say: nvidia-smi's NUMA affinity
}

TEST(GpuTopologyTest, NvmlLinksWinAndSysfsGivesNumaNodes) {
  test::TempDir sys;
  Write(sys.path() / "bus/pci/devices/0000:18:00.0/numa_node", "0");
  Write(sys.path() / "bus/pci/devices/0000:2a:00.0/numa_node", "1");
  std::vector<GpuInfo> gpus(2);
  gpus[0].pci_bus_id = "00000000:18:00.0";
  gpus[1].pci_bus_id = "00000000:2A:00.0";
  gpus[0].nvlink_endpoints = {"00000000:2A:00.0"};
  gpus[1].nvlink_endpoints = {"00000000:18:00.0"};
  TopologyInputs inputs;
  inputs.sys = sys.path();
  inputs.nvidia_smi_topo = [] {
    ADD_FAILURE() << "nvidia-smi asked although NVML gave the links";
    return std::vector<std::string>{};
  };
  AddTopology(gpus, inputs);
  EXPECT_EQ(gpus[0].nvlink_island, 0);
  EXPECT_EQ(gpus[1].nvlink_island, 0);
  EXPECT_EQ(gpus[0].numa_node, 0);
  EXPECT_EQ(gpus[1].numa_node, 1);
}

TEST(GpuTopologyTest, CoresAreGroupedByTheNodesSysfsLists) {
  test::TempDir sys;
  Write(sys.path() / "devices/system/node/node0/cpulist", "0-1023\n");
  Write(sys.path() / "devices/system/node/possible", "0\n");  // not a node folder
  const CpuTopology topology = ReadCpuTopology(sys.path());
  ASSERT_FALSE(topology.cpus.empty());  // this process's affinity
  for (int cpu : topology.cpus) EXPECT_EQ(topology.numa_node_of.at(cpu), 0);
}

}  // namespace
}  // namespace ditbench::gpu_topology_test
