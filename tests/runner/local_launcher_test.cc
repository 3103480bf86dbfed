#include "runner/launcher.h"

#include <signal.h>

#include <chrono>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

class LocalLauncherTest : public ::testing::Test {
 protected:
  // A shell "worker" whose body is `script`; $RANK etc. are in its environment.
  LaunchRequest Request(const std::string& script, int world_size, double timeout_s = 30) {
    auto path = dir_ / "worker.sh";
    std::ofstream(path) << "#!/bin/sh\n" << script << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    LaunchRequest r;
    r.trial_key = "test";
    r.run_dir = dir_.path();
    r.worker = path;
    r.world_size = world_size;
    r.timeout_s = timeout_s;
    return r;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  test::TempDir dir_;
  LocalLauncher launcher_;
};

TEST_F(LocalLauncherTest, RanksGetTheTorchrunEnvironment) {
  auto outcome = launcher_.Run(Request(
      "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT "
      "$DITBENCH_RESULT\"",
      2));
  ASSERT_EQ(outcome.ranks.size(), 2u);
  EXPECT_EQ(outcome.first_failed_rank, -1);
  EXPECT_FALSE(outcome.timed_out);
  const std::string log0 = Read("rank0.log"), log1 = Read("rank1.log");
  EXPECT_EQ(log0.rfind("0 0 2 2 127.0.0.1 ", 0), 0u) << log0;
  EXPECT_EQ(log1.rfind("1 1 2 2 127.0.0.1 ", 0), 0u) << log1;
  // Same port for both ranks, and it is a real port.
  EXPECT_EQ(log0.substr(18, 6), log1.substr(18, 6));
  EXPECT_NE(log0.find(dir_.path().string()), std::string::npos);
}

TEST_F(LocalLauncherTest, OneFailingRankKillsTheOthers) {
  const auto start = std::chrono::steady_clock::now();
  auto outcome = launcher_.Run(Request("if [ $RANK = 1 ]; then exit 7; fi; sleep 60", 3));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30);  // nobody waited for the sleepers
  EXPECT_EQ(outcome.first_failed_rank, 1);
  EXPECT_EQ(outcome.ranks[1].exit_code, 7);
  EXPECT_EQ(outcome.ranks[0].signal, SIGKILL);
  EXPECT_TRUE(outcome.ranks[0].killed_by_us);
  EXPECT_TRUE(outcome.ranks[2].killed_by_us);
}

TEST_F(LocalLauncherTest, TimeoutKillsEveryRankIncludingGrandchildren) {
  // The rank starts a grandchild that would outlive it; the process group takes it down too.
  auto outcome =
      launcher_.Run(Request("sleep 120 & echo $! > \"$DITBENCH_RESULT/grandchild$RANK\"; wait", 2, 1.0));
  EXPECT_TRUE(outcome.timed_out);
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(outcome.ranks[r].killed_by_us);
    pid_t grandchild = std::stoi(Read("grandchild" + std::to_string(r)));
    // Reaped by init after the kill; give it a moment, then it must be gone.
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
      gone = kill(grandchild, 0) != 0;
      if (!gone) usleep(20000);
    }
    EXPECT_TRUE(gone) << "grandchild " << grandchild << " survived";
  }
}

TEST_F(LocalLauncherTest, SignalDeathIsReportedAsASignal) {
  auto outcome = launcher_.Run(Request("kill -SEGV $$", 1));
  EXPECT_EQ(outcome.first_failed_rank, 0);
  EXPECT_EQ(outcome.ranks[0].signal, SIGSEGV);
  EXPECT_FALSE(outcome.ranks[0].killed_by_us);
}

TEST_F(LocalLauncherTest, MissingWorkerIsALaunchError) {
  LaunchRequest r = Request("true", 1);
  r.worker = dir_ / "does-not-exist";
  auto outcome = launcher_.Run(r);
  EXPECT_FALSE(outcome.launch_error.empty());
}

}  // namespace
}  // namespace ditbench
