#include "launch/local_launcher.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::local_launcher_test {
namespace {

using std::chrono::milliseconds;

class LocalLauncherTest : public ::testing::Test {
 protected:
  // A shell "worker" whose body is `script`; $RANK etc. are in its environment. Each request
  // gets its own run folder and script, dir_/<name>/.
  LaunchRequest Request(const std::string& script, int world_size, double timeout_s = 30,
                        const std::string& name = "trial") {
    std::filesystem::create_directories(dir_ / name);
    auto path = dir_ / name / "worker.sh";
    std::ofstream(path) << "#!/bin/sh\n" << script << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    LaunchRequest r;
    r.trial_key = name;
    r.run_dir = dir_ / name;
    r.worker = path;
    r.world_size = world_size;
    r.timeout_s = timeout_s;
    return r;
  }
  // Starts one trial and waits for it to end.
  LaunchOutcome Run(const LaunchRequest& request) {
    const LaunchHandle handle = launcher_.Start(request);
    auto finished = WaitForAny();
    EXPECT_EQ(finished.handle, handle);
    return finished.outcome;
  }
  FinishedTrial WaitForAny() {
    while (true)
      if (auto finished = launcher_.Wait(milliseconds(100))) return *finished;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Whether `pid` has died (a zombie waiting for init to reap it counts), allowing it a moment.
  static bool Gone(pid_t pid) {
    for (int i = 0; i < 250; ++i) {
      if (kill(pid, 0) != 0) return true;
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string line;
      std::getline(stat, line);
      const auto close = line.rfind(')');
      if (close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z')
        return true;
      usleep(20000);
    }
    return false;
  }
  test::TempDir dir_;
  // Entries shorter than "CUDA_VISIBLE_DEVICES=" are what Boost 1.74's env["NAME"] lookup read
  // past (caught by the asan.* tests); RANK=99 must be replaced, not inherited.
  LocalLauncher launcher_{{"A=1", "PATH=/usr/bin:/bin", "DITBENCH_TEST_INHERITED=yes", "RANK=99"}};
};

TEST_F(LocalLauncherTest, RanksGetTheTorchrunEnvironment) {
  auto outcome = Run(Request(
      "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT "
      "$DITBENCH_RESULT\"",
      2));
  ASSERT_EQ(outcome.ranks.size(), 2u);
  EXPECT_EQ(outcome.first_failed_rank, -1);
  EXPECT_FALSE(outcome.timed_out);
  const std::string log0 = Read("trial/rank0.log"), log1 = Read("trial/rank1.log");
  EXPECT_EQ(log0.rfind("0 0 2 2 127.0.0.1 ", 0), 0u) << log0;
  EXPECT_EQ(log1.rfind("1 1 2 2 127.0.0.1 ", 0), 0u) << log1;
  // Same port for both ranks, and it is a real port.
  EXPECT_EQ(log0.substr(18, 6), log1.substr(18, 6));
  EXPECT_NE(log0.find((dir_ / "trial").string()), std::string::npos);
}

// A worker's rank 0 gets the rendezvous port already listening, as an inherited descriptor
// (no other process can take the port before it serves its store there); no other rank holds
// that socket, and a program that is not the worker is never handed one.
TEST_F(LocalLauncherTest, RankZeroOfAWorkerInheritsItsRendezvousPortListening) {
  // ss -l would need iproute2; /proc/self/fd and the socket's inode say the same: rank 0's
  // descriptor is a socket, and /proc/net/tcp lists it listening (state 0A) on MASTER_PORT.
  const std::string script =
      "fd=$DITBENCH_RENDEZVOUS_FD\n"
      "if [ -z \"$fd\" ]; then echo \"rank $RANK: none\"; exit 0; fi\n"
      "inode=$(readlink /proc/$$/fd/$fd | sed -n 's/^socket:\\[\\(.*\\)\\]$/\\1/p')\n"
      "port=$(printf '%04X' \"$MASTER_PORT\")\n"
      "if awk -v p=\":$port\" -v i=\"$inode\" '$2 ~ p\"$\" && $4 == \"0A\" && $10 == i "
      "{ found = 1 } END { exit !found }' /proc/net/tcp; then\n"
      "  echo \"rank $RANK: listening\"; else echo \"rank $RANK: fd $fd inode $inode\"; fi";
  LaunchRequest request = Request(script, 2);
  request.rendezvous_socket = true;
  ASSERT_EQ(Run(request).first_failed_rank, -1);
  EXPECT_EQ(Read("trial/rank0.log"), "rank 0: listening\n");
  EXPECT_EQ(Read("trial/rank1.log"), "rank 1: none\n");
  // Not asked for (a `command` workload's program binds MASTER_PORT itself): none.
  request = Request(script, 2, 30, "program");
  ASSERT_EQ(Run(request).first_failed_rank, -1);
  EXPECT_EQ(Read("program/rank0.log"), "rank 0: none\n");
}

TEST_F(LocalLauncherTest, RanksInheritTheGivenEnvironmentAndTheirDevices) {
  auto request = Request("echo \"$DITBENCH_TEST_INHERITED [$CUDA_VISIBLE_DEVICES]\"", 1);
  request.devices = {"4", "GPU-5e1f"};
  ASSERT_EQ(Run(request).first_failed_rank, -1);
  EXPECT_EQ(Read("trial/rank0.log"), "yes [4,GPU-5e1f]\n");
}

TEST_F(LocalLauncherTest, OneFailingRankKillsTheOthers) {
  auto outcome = Run(Request("if [ $RANK = 1 ]; then exit 7; fi; sleep 60", 3));
  EXPECT_EQ(outcome.first_failed_rank, 1);
  EXPECT_EQ(outcome.ranks[1].exit_code, 7);
  EXPECT_FALSE(outcome.ranks[1].killed_by_us);
  EXPECT_EQ(outcome.ranks[0].signal, SIGKILL);  // the sleepers were killed, not waited for
  EXPECT_TRUE(outcome.ranks[0].killed_by_us);
  EXPECT_TRUE(outcome.ranks[2].killed_by_us);
}

TEST_F(LocalLauncherTest, TimeoutKillsEveryRankIncludingGrandchildren) {
  // The rank starts a grandchild that would outlive it; the process group takes it down too.
  auto outcome =
      Run(Request("sleep 120 & echo $! > \"$DITBENCH_RESULT/grandchild$RANK\"; wait", 2, 0.5));
  EXPECT_TRUE(outcome.timed_out);
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(outcome.ranks[r].killed_by_us);
    pid_t grandchild = std::stoi(Read("trial/grandchild" + std::to_string(r)));
    EXPECT_TRUE(Gone(grandchild)) << "grandchild " << grandchild << " survived";
  }
}

TEST_F(LocalLauncherTest, SignalDeathIsReportedAsASignal) {
  auto outcome = Run(Request("kill -SEGV $$", 1));
  EXPECT_EQ(outcome.first_failed_rank, 0);
  EXPECT_EQ(outcome.ranks[0].signal, SIGSEGV);
  EXPECT_FALSE(outcome.ranks[0].killed_by_us);
}

TEST_F(LocalLauncherTest, MissingWorkerIsALaunchErrorReturnedByWait) {
  LaunchRequest r = Request("true", 2);
  r.worker = dir_ / "does-not-exist";
  const LaunchHandle handle = launcher_.Start(r);  // does not throw
  EXPECT_EQ(launcher_.InFlight(), 1);
  auto finished = WaitForAny();
  EXPECT_EQ(finished.handle, handle);
  EXPECT_NE(finished.outcome.launch_error.find("cannot start"), std::string::npos);
  EXPECT_EQ(launcher_.InFlight(), 0);
}

TEST_F(LocalLauncherTest, TwoTrialsRunAtOnceAndEndInTheirOwnOrder) {
  // The slow trial, started first, waits for a file the test writes only after the fast one
  // has come back: the two overlap, and Wait() returns whichever ends first.
  const auto flag = dir_ / "fast-done";
  const LaunchHandle slow = launcher_.Start(Request(
      "while [ ! -f '" + flag.string() + "' ]; do sleep 0.01; done; exit 5", 1, 30, "slow"));
  const LaunchHandle fast = launcher_.Start(Request("exit 0", 1, 30, "fast"));
  EXPECT_EQ(launcher_.InFlight(), 2);
  auto first = WaitForAny();
  EXPECT_EQ(first.handle, fast);
  EXPECT_EQ(first.outcome.first_failed_rank, -1);
  EXPECT_EQ(launcher_.InFlight(), 1);
  std::ofstream(flag) << "go";
  auto second = WaitForAny();
  EXPECT_EQ(second.handle, slow);
  EXPECT_EQ(second.outcome.ranks[0].exit_code, 5);
  EXPECT_EQ(launcher_.InFlight(), 0);
  EXPECT_FALSE(launcher_.Wait(milliseconds(0)).has_value());
}

TEST_F(LocalLauncherTest, CancelKillsOnlyThatTrial) {
  const auto flag = dir_ / "cancelled";
  const LaunchHandle doomed = launcher_.Start(
      Request("echo $$ > \"$DITBENCH_RESULT/pid\"; sleep 60", 2, 30, "doomed"));
  const LaunchHandle survivor = launcher_.Start(Request(
      "while [ ! -f '" + flag.string() + "' ]; do sleep 0.01; done", 1, 30, "survivor"));
  while (!std::filesystem::exists(dir_ / "doomed/pid")) usleep(10000);
  launcher_.Cancel(doomed);
  auto finished = WaitForAny();
  EXPECT_EQ(finished.handle, doomed);
  EXPECT_TRUE(finished.outcome.cancelled);
  EXPECT_FALSE(finished.outcome.timed_out);
  for (const auto& rank : finished.outcome.ranks) {
    EXPECT_EQ(rank.signal, SIGKILL);
    EXPECT_TRUE(rank.killed_by_us);
  }
  EXPECT_EQ(launcher_.InFlight(), 1);
  std::ofstream(flag) << "go";
  auto rest = WaitForAny();
  EXPECT_EQ(rest.handle, survivor);
  EXPECT_FALSE(rest.outcome.cancelled);
  EXPECT_EQ(rest.outcome.first_failed_rank, -1);
}

TEST_F(LocalLauncherTest, RanksDieWithTheirCoordinator) {
  // A child process plays the coordinator: it starts a rank that would sleep for a minute,
  // then is killed with SIGKILL (no destructor runs). The parent-death signal kills the rank.
  auto request = Request("echo $$ > \"$DITBENCH_RESULT/pid\"; exec sleep 60", 1);
  // The shell creates the file before it writes the pid into it: wait for a whole line, not for
  // the file (the coordinator killed in between left a rank whose pid read as 0).
  const auto read_pid = [&] {
    std::ifstream in(request.run_dir / "pid");
    std::string line;
    return std::getline(in, line) && !in.eof() ? std::atoi(line.c_str()) : 0;
  };
  const pid_t coordinator = fork();
  ASSERT_GE(coordinator, 0);
  if (coordinator == 0) {
    LocalLauncher launcher({"PATH=/usr/bin:/bin"});
    launcher.Start(request);
    while (read_pid() <= 0) usleep(10000);
    raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(waitpid(coordinator, &status, 0), coordinator);
  ASSERT_TRUE(WIFSIGNALED(status));
  const pid_t rank = read_pid();
  ASSERT_GT(rank, 0);
  EXPECT_TRUE(Gone(rank)) << "rank " << rank << " outlived its coordinator";
}

TEST(LocalLauncherLifetimeTest, DestroyingTheLauncherKillsTrialsInFlight) {
  test::TempDir dir;
  auto path = dir / "worker.sh";
  std::ofstream(path) << "#!/bin/sh\necho $$ > \"$DITBENCH_RESULT/pid\"\nsleep 60\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  LaunchRequest r;
  r.run_dir = dir.path();
  r.worker = path;
  // The shell creates the file before it writes the pid into it: wait for a whole line, not
  // for the file (reading between the two read 0 on a loaded machine).
  const auto read_pid = [&] {
    std::ifstream in(dir / "pid");
    std::string line;
    return std::getline(in, line) && !in.eof() ? std::atoi(line.c_str()) : 0;
  };
  pid_t pid = 0;
  {
    LocalLauncher launcher;
    launcher.Start(r);
    while ((pid = read_pid()) <= 0) usleep(10000);
  }
  ASSERT_GT(pid, 0);
  EXPECT_NE(kill(pid, 0), 0) << "rank " << pid << " outlived its launcher";
}

// The cores this test process may use (its children inherit them unless pinned).
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

TEST_F(LocalLauncherTest, EachRankIsPinnedToItsCores) {
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  const int last = allowed.back();
  auto request = Request(
      "grep Cpus_allowed_list /proc/self/status | awk '{print $2}' > \"$DITBENCH_RESULT/cpus$RANK\"",
      2);
  request.rank_cpus = {{allowed.front()}, {last}};
  const LaunchOutcome outcome = Run(request);
  ASSERT_EQ(outcome.first_failed_rank, -1);
  EXPECT_EQ(Read("trial/cpus0"), std::to_string(allowed.front()) + "\n");
  EXPECT_EQ(Read("trial/cpus1"), std::to_string(last) + "\n");
}

TEST_F(LocalLauncherTest, RankWithoutCoresIsNotPinned) {
  auto request = Request("nproc > \"$DITBENCH_RESULT/n\"", 1);
  request.rank_cpus = {{}};
  ASSERT_EQ(Run(request).first_failed_rank, -1);
  EXPECT_EQ(Read("trial/n"), std::to_string(AllowedCpus().size()) + "\n");
}

TEST_F(LocalLauncherTest, RankThatCannotBePinnedFailsInsteadOfRunningElsewhere) {
  auto request = Request("touch \"$DITBENCH_RESULT/ran\"", 1);
  request.rank_cpus = {{CPU_SETSIZE - 1}};  // no machine here has it online
  const LaunchOutcome outcome = Run(request);
  EXPECT_EQ(outcome.first_failed_rank, 0);
  EXPECT_EQ(outcome.ranks[0].exit_code, 126);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "trial/ran"));
}

}  // namespace
}  // namespace ditbench::local_launcher_test
