// Topology-aware packing through the sweep loop: GPU trials kept inside NVLink islands (fake
// launcher, fake GPUs), and CPU ranks pinned to their slot's cores (real processes that
// report the cores they may run on).
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launch/local_launcher.h"
#include "machine/gpu_topology.h"
#include "tests/support/sweep_run_fixture.h"

namespace ditbench::packing_test {
namespace {

using test::SweepRunTest;

constexpr const char* kTwoAndFourRanks = R"(name: islands
defaults: {model: pixart-alpha-tiny, steps: 2, warmup: 1, repeats: 3}
matrix:
  resolution: [256, 512]
  ulysses: [2, 4]
)";

TEST_F(SweepRunTest, PackedGpuTrialsStayInsideOneNvlinkIsland) {
  // 8 GPUs: two NVLink islands of four, each on its own NUMA node.
  for (int i = 0; i < 8; ++i) {
    GpuInfo gpu{"Fake GPU", "GPU-" + std::to_string(i)};
    gpu.index = i;
    gpu.nvlink_island = i < 4 ? 0 : 4;
    gpu.numa_node = i < 4 ? 0 : 1;
    gpus_.gpus.push_back(gpu);
  }
  auto o = Options(kTwoAndFourRanks);
  o.gpus = "auto";
  o.policy = PlacementPolicy::kPack;
  ASSERT_EQ(Run(o), 0) << err_.str();
  ASSERT_EQ(launcher_.started.size(), 4u);
  EXPECT_FALSE(launcher_.overlapping_devices);
  // Lowest free GPUs would put the first 4-rank trial on 2,3,4,5, across both islands.
  EXPECT_EQ(launcher_.started[1].devices, (std::vector<std::string>{"4", "5", "6", "7"}));
  for (const std::string& text : Column("SELECT placement FROM results")) {
    const nlohmann::json placement = nlohmann::json::parse(text);
    const nlohmann::json islands = placement["nvlink_islands"];
    ASSERT_FALSE(islands.empty()) << text;
    for (const auto& island : islands) EXPECT_EQ(island, islands[0]) << text;
    EXPECT_EQ(placement["numa_nodes"][0], islands[0] == 0 ? 0 : 1) << text;
    EXPECT_NE(placement["reason"].get<std::string>().find("one NVLink island"),
              std::string::npos)
        << text;
  }
  // The two 2-rank trials shared island 0 rather than splitting island 4.
  EXPECT_EQ(Column("SELECT DISTINCT json_extract(placement, '$.nvlink_islands[0]') FROM "
                   "results WHERE world_size = 2"),
            (std::vector<std::string>{"0"}));
}

// Real processes: each rank of a packed CPU trial prints the Cpus_allowed_list it started
// with (tests/fixtures/command_bench.py); it must be the cores its placement records.
TEST(PackedCpuAffinityTest, EachRankRunsOnTheCoresItsPlacementRecords) {
  test::TempDir dir;
  std::ofstream(dir.path() / "sweep.yaml")
      << "name: pinned\n"
         "workload: command\n"
         "command: [python3, " DITBENCH_COMMAND_BENCH ", --steps, \"{steps}\", --size, "
         "\"{size}\", --mode, ok]\n"
         "defaults: {model: pixart-alpha-tiny, steps: 2, warmup: 1, repeats: 3, timeout: 60s}\n"
         "matrix:\n"
         "  ulysses: [1, 2]\n"  // both 1-rank trials first: they start side by side
         "  size: [1, 2]\n";
  RunOptions o;
  o.sweep = dir.path() / "sweep.yaml";
  o.db = dir.path() / "results.db";
  o.gpus = "cpu:2";
  o.policy = PlacementPolicy::kPack;
  const CpuTopology cpus = ReadCpuTopology();
  ASSERT_FALSE(cpus.cpus.empty());
  LocalLauncher launcher(CurrentEnvironment());
  test::FakeInterrupt interrupt;
  test::FakeGpuDiscovery gpus;
  std::stringstream out, err;
  ASSERT_EQ(RunSweep(o, SweepEffects{launcher, interrupt, gpus, nullptr, nullptr, &cpus}, out,
                     err),
            0)
      << out.str() << err.str();

  SqliteConnection db = OpenSqlite(o.db.string(), SQLITE_OPEN_READONLY);
  Statement rows(db.get(), "SELECT placement, run_dir, world_size FROM results");
  int trials = 0;
  std::set<std::string> one_rank_cpus;
  while (rows.Step()) {
    ++trials;
    const nlohmann::json placement = nlohmann::json::parse(rows.Text(0));
    const std::filesystem::path run_dir = rows.Text(1);
    const int world_size = static_cast<int>(rows.Int(2));
    ASSERT_EQ(placement["cpus"].size(), static_cast<std::size_t>(world_size)) << placement;
    for (int rank = 0; rank < world_size; ++rank) {
      std::ifstream log(run_dir / ("rank" + std::to_string(rank) + ".log"));
      std::stringstream text;
      text << log.rdbuf();
      std::smatch allowed;
      const std::string logged = text.str();
      ASSERT_TRUE(std::regex_search(logged, allowed, std::regex("Cpus_allowed_list:\\s*(\\S+)")))
          << logged;
      EXPECT_EQ(allowed[1].str(), placement["cpus"][rank].get<std::string>())
          << "rank " << rank << " of " << run_dir;
      if (world_size == 1) one_rank_cpus.insert(allowed[1].str());
    }
    if (world_size == 2 && cpus.cpus.size() >= 2) {
      EXPECT_NE(placement["cpus"][0], placement["cpus"][1]) << placement;
    }
  }
  EXPECT_EQ(trials, 4);
  // Each slot's cores are its own: with two or more cores, the 1-rank trials (packed side by
  // side on the two slots) ran on different cores.
  if (cpus.cpus.size() >= 2) {
    EXPECT_EQ(one_rank_cpus.size(), 2u);
  }
}

}  // namespace
}  // namespace ditbench::packing_test
