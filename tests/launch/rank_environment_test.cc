#include "launch/rank_environment.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace ditbench::rank_environment_test {
namespace {

std::vector<std::string> Named(const std::vector<std::string>& env, const std::string& name) {
  std::vector<std::string> found;
  for (const auto& entry : env)
    if (entry.rfind(name + "=", 0) == 0) found.push_back(entry);
  return found;
}

LaunchRequest TwoRanks() {
  LaunchRequest request;
  request.run_dir = "/runs/7/abc";
  request.world_size = 2;
  request.devices = {"4", "GPU-5e1f"};
  return request;
}

TEST(RankEnvironmentTest, ThePythonHelperFolderGoesFirstOnPythonPath) {
  LaunchRequest request = TwoRanks();
  EXPECT_TRUE(Named(BuildRankEnvironment({}, request, 0, 29500), "PYTHONPATH").empty());
  EXPECT_EQ(Named(BuildRankEnvironment({"PYTHONPATH=/mine"}, request, 0, 29500), "PYTHONPATH"),
            (std::vector<std::string>{"PYTHONPATH=/mine"}));  // left alone without a helper
  request.python_path = "/opt/ditbench/python";
  EXPECT_EQ(Named(BuildRankEnvironment({}, request, 0, 29500), "PYTHONPATH"),
            (std::vector<std::string>{"PYTHONPATH=/opt/ditbench/python"}));
  EXPECT_EQ(Named(BuildRankEnvironment({"PYTHONPATH=/mine:/more"}, request, 0, 29500),
                  "PYTHONPATH"),
            (std::vector<std::string>{"PYTHONPATH=/opt/ditbench/python:/mine:/more"}));
}

TEST(RankEnvironmentTest, AddsTheTorchrunVariables) {
  auto env = BuildRankEnvironment({"HOME=/home/u"}, TwoRanks(), 1, 29500);
  EXPECT_EQ(Named(env, "RANK"), (std::vector<std::string>{"RANK=1"}));
  EXPECT_EQ(Named(env, "LOCAL_RANK"), (std::vector<std::string>{"LOCAL_RANK=1"}));
  EXPECT_EQ(Named(env, "WORLD_SIZE"), (std::vector<std::string>{"WORLD_SIZE=2"}));
  EXPECT_EQ(Named(env, "LOCAL_WORLD_SIZE"), (std::vector<std::string>{"LOCAL_WORLD_SIZE=2"}));
  EXPECT_EQ(Named(env, "MASTER_ADDR"), (std::vector<std::string>{"MASTER_ADDR=127.0.0.1"}));
  EXPECT_EQ(Named(env, "MASTER_PORT"), (std::vector<std::string>{"MASTER_PORT=29500"}));
  EXPECT_EQ(Named(env, "CUDA_VISIBLE_DEVICES"),
            (std::vector<std::string>{"CUDA_VISIBLE_DEVICES=4,GPU-5e1f"}));
  EXPECT_EQ(Named(env, "DITBENCH_TRIAL"),
            (std::vector<std::string>{"DITBENCH_TRIAL=/runs/7/abc/trial.json"}));
  EXPECT_EQ(Named(env, "DITBENCH_RESULT"), (std::vector<std::string>{"DITBENCH_RESULT=/runs/7/abc"}));
  EXPECT_EQ(Named(env, "HOME"), (std::vector<std::string>{"HOME=/home/u"}));
}

TEST(RankEnvironmentTest, InheritedValuesOfOurVariablesAreReplacedNotDuplicated) {
  auto env = BuildRankEnvironment(
      {"CUDA_VISIBLE_DEVICES=4,5,6,7", "RANK=3", "MASTER_PORT=1", "CUDA_HOME=/usr/local/cuda"},
      TwoRanks(), 0, 29500);
  EXPECT_EQ(Named(env, "CUDA_VISIBLE_DEVICES"),
            (std::vector<std::string>{"CUDA_VISIBLE_DEVICES=4,GPU-5e1f"}));
  EXPECT_EQ(Named(env, "RANK"), (std::vector<std::string>{"RANK=0"}));
  EXPECT_EQ(Named(env, "MASTER_PORT"), (std::vector<std::string>{"MASTER_PORT=29500"}));
  EXPECT_EQ(Named(env, "CUDA_HOME"), (std::vector<std::string>{"CUDA_HOME=/usr/local/cuda"}));
}

TEST(RankEnvironmentTest, OnlyTheLaunchThatMadeARendezvousSocketNamesIt) {
  const std::vector<std::string> inherited = {"DITBENCH_RENDEZVOUS_FD=9"};
  EXPECT_TRUE(Named(BuildRankEnvironment(inherited, TwoRanks(), 1, 29500), "DITBENCH_RENDEZVOUS_FD")
                  .empty());
  EXPECT_EQ(
      Named(BuildRankEnvironment(inherited, TwoRanks(), 0, 29500, 5), "DITBENCH_RENDEZVOUS_FD"),
      (std::vector<std::string>{"DITBENCH_RENDEZVOUS_FD=5"}));
}

TEST(RankEnvironmentTest, CpuTrialsSeeNoGpu) {
  LaunchRequest request = TwoRanks();
  request.devices.clear();
  auto env = BuildRankEnvironment({"CUDA_VISIBLE_DEVICES=0"}, request, 0, 1);
  EXPECT_EQ(Named(env, "CUDA_VISIBLE_DEVICES"), (std::vector<std::string>{"CUDA_VISIBLE_DEVICES="}));
}

TEST(RankEnvironmentTest, MalformedAndRepeatedEntriesAreDropped) {
  // Short entries are what made Boost 1.74's lookup read past their end.
  auto env = BuildRankEnvironment({"A=1", "noequals", "=x", "B=2", "B=3", ""}, TwoRanks(), 0, 1);
  EXPECT_EQ(Named(env, "A"), (std::vector<std::string>{"A=1"}));
  EXPECT_EQ(Named(env, "B"), (std::vector<std::string>{"B=2"}));
  EXPECT_EQ(std::count(env.begin(), env.end(), "noequals"), 0);
  EXPECT_EQ(std::count(env.begin(), env.end(), "=x"), 0);
  EXPECT_EQ(env.size(), 2u + 10u);  // A, B and ours (the torchrun set, DITBENCH_*)
}

TEST(RankEnvironmentTest, CurrentEnvironmentIsThisProcesses) {
  ASSERT_EQ(setenv("DITBENCH_RANK_ENV_TEST", "here", 1), 0);
  auto env = CurrentEnvironment();
  EXPECT_EQ(Named(env, "DITBENCH_RANK_ENV_TEST"),
            (std::vector<std::string>{"DITBENCH_RANK_ENV_TEST=here"}));
  unsetenv("DITBENCH_RANK_ENV_TEST");
}

TEST(RankEnvironmentTest, PinnedRanksAreToldTheirCoresAndOthersNothing) {
  LaunchRequest request = TwoRanks();
  request.rank_cpus = {{0, 1}, {2, 3}};
  EXPECT_EQ(Named(BuildRankEnvironment({}, request, 1, 29500), "DITBENCH_RANK_CPUS"),
            (std::vector<std::string>{"DITBENCH_RANK_CPUS=2-3"}));
  // Not pinned: empty, whatever the coordinator itself inherited.
  EXPECT_EQ(Named(BuildRankEnvironment({"DITBENCH_RANK_CPUS=5"}, TwoRanks(), 0, 29500),
                  "DITBENCH_RANK_CPUS"),
            (std::vector<std::string>{"DITBENCH_RANK_CPUS="}));
}

}  // namespace
}  // namespace ditbench::rank_environment_test
