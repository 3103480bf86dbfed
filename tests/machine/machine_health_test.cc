#include "machine/machine_health.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <thread>

#include <gtest/gtest.h>

namespace ditbench::machine_health_test {
namespace {

ProcSnapshot Snapshot(double at_s, std::map<long, ProcessTimes> processes) {
  ProcSnapshot s;
  s.at_s = at_s;
  s.processes = std::move(processes);
  return s;
}

TEST(MachineHealthTest, OtherProcessesCpuTimeOverTheWindowMakesTheMachineBusy) {
  auto before = Snapshot(10.0, {{1, {0, "init", 5.0}}, {50, {1, "burn", 100.0}}});
  auto after = Snapshot(10.5, {{1, {0, "init", 5.0}}, {50, {1, "burn", 100.45}}});
  MachineHealth h = JudgeHealth(before, after, {}, 1.5, 2, 0.5, 5);
  EXPECT_TRUE(h.busy);
  EXPECT_NEAR(h.other_cores, 0.9, 1e-9);
  ASSERT_EQ(h.busiest.size(), 1u);  // init used nothing
  EXPECT_EQ(h.busiest[0].pid, 50);
  EXPECT_EQ(h.busiest[0].name, "burn");
  EXPECT_EQ(h.Describe(), "load 1.50 on 2 cores; others used 0.90 cores: burn (pid 50) 0.90");
  EXPECT_EQ(h.judged, (HostWindow{10.0, 10.5}));  // the stretch between the two snapshots
}

// Another user's process name is another user's choice: bytes that are not UTF-8 (which made
// the health record unstorable, ending the run) and escape sequences (which reached the
// progress line raw).
TEST(MachineHealthTest, AHostileProcessNameIsMadeValidAndEscapedWhenRead) {
  const std::string stat =
      "4242 (x\xff\x1b]0;t\a\x1b[2J) R 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1";
  ProcessTimes times;
  ASSERT_TRUE(ParseProcStat(stat, 100.0, &times));
  EXPECT_EQ(times.name, "x\xef\xbf\xbd\\x1b]0;t\\x07\\x1b[2J");
  EXPECT_EQ(times.ppid, 1);
  EXPECT_NEAR(times.cpu_s, 3.0, 1e-9);

  auto before = Snapshot(10.0, {{4242, {1, times.name, 0.0}}});
  auto after = Snapshot(10.5, {{4242, {1, times.name, 0.45}}});
  TrialHealth trial({}, JudgeHealth(before, after, {}, 1.0, 2, 0.5, 5));
  trial.Finish(JudgeHealth(before, after, {}, 1.0, 2, 0.5, 5));
  EXPECT_NO_THROW(trial.ToJson().dump());
  EXPECT_EQ(trial.Note().find('\x1b'), std::string::npos);
}

TEST(MachineHealthTest, AHostileGpuProcessNameIsEscapedWhenRead) {
  const auto p = ParseComputeAppLine("GPU-8e3c, 77, py\x1b[31m\xfe, 20480");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "py\\x1b[31m\xef\xbf\xbd");
}

TEST(MachineHealthTest, OurOwnProcessTreeDoesNotCount) {
  // 100 is the coordinator, 101 a rank it started, 102 a thread-pool child of the rank.
  std::map<long, ProcessTimes> start = {
      {1, {0, "init", 0}}, {100, {1, "ditbench", 1}}, {101, {100, "worker", 10}},
      {102, {101, "worker", 10}}, {200, {1, "editor", 1}}};
  auto end = start;
  end[101].cpu_s += 1.0;
  end[102].cpu_s += 1.0;
  end[200].cpu_s += 0.1;
  const auto before = Snapshot(0, start), after = Snapshot(1, end);
  const auto ours = ProcessTree(after, 100);
  EXPECT_EQ(ours, (std::vector<long>{100, 101, 102}));
  MachineHealth h = JudgeHealth(before, after, ours, 2.0, 2, 0.5, 5);
  EXPECT_FALSE(h.busy);
  EXPECT_NEAR(h.other_cores, 0.1, 1e-9);
  ASSERT_EQ(h.busiest.size(), 1u);
  EXPECT_EQ(h.busiest[0].name, "editor");
}

TEST(MachineHealthTest, ANewProcessCountsFromZeroAndTheListIsCut) {
  auto before = Snapshot(0, {});
  auto after = Snapshot(1, {{7, {1, "a", 0.2}}, {8, {1, "b", 0.3}}, {9, {1, "c", 0.1}}});
  MachineHealth h = JudgeHealth(before, after, {}, 0, 4, 0.5, 2);
  EXPECT_TRUE(h.busy);  // 0.6 cores in all
  ASSERT_EQ(h.busiest.size(), 2u);
  EXPECT_EQ(h.busiest[0].name, "b");
  EXPECT_EQ(h.busiest[1].name, "a");
  EXPECT_EQ(h.ToJson()["busiest"][0]["pid"], 8);
}

TEST(MachineHealthTest, ComputeAppLinesOfNvidiaSmiAreParsed) {
  auto p = ParseComputeAppLine("GPU-8e3c1a2b-0000-1111, 4242, /usr/bin/python3, 20480");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->gpu_uuid, "GPU-8e3c1a2b-0000-1111");
  EXPECT_EQ(p->pid, 4242);
  EXPECT_EQ(p->name, "/usr/bin/python3");
  EXPECT_EQ(p->used_mb, 20480);
  // Another container's process: the driver does not say how much memory it holds.
  auto hidden = ParseComputeAppLine("GPU-8e3c, 17, [Insufficient Permissions], [N/A]");
  ASSERT_TRUE(hidden.has_value());
  EXPECT_EQ(hidden->used_mb, -1);
  EXPECT_FALSE(ParseComputeAppLine("No running processes found"));
  EXPECT_FALSE(ParseComputeAppLine("GPU-8e3c, x, python3, 10"));
  EXPECT_FALSE(ParseComputeAppLine(""));
}

TEST(MachineHealthTest, AProgramOnAnotherGpuDoesNotMakeATrialBusy) {
  MachineHealth h;
  h.gpu_others = {GpuProcess{"GPU-b", 7, "train.py", 100}};
  EXPECT_FALSE(h.BusyOn({"GPU-a"}));
  EXPECT_TRUE(h.BusyOn({"GPU-a", "GPU-b"}));
  EXPECT_EQ(h.Describe({"GPU-a"}).find("train.py"), std::string::npos);
  EXPECT_NE(h.Describe({"GPU-b"}).find("on GPU-b: train.py (pid 7) 100 MiB"), std::string::npos);
  h.busy = true;  // a busy CPU makes every trial busy
  EXPECT_TRUE(h.BusyOn({}));
}

// A ten-second trial; another program burns one core from 5.0 s to 5.5 s only (a trial of
// iterations 85, 608, 85 ms: the disturbance in the middle).
ProcSnapshot BurstAt(double at_s) {
  const double burnt = std::clamp(at_s - 5.0, 0.0, 0.5);
  return Snapshot(at_s, {{1, {0, "init", 1.0}}, {50, {1, "burn", 100.0 + burnt}}});
}

TEST(TrialHealthTest, ABurstInTheMiddleOfATrialIsSeenInTheIntervalItFellIn) {
  const auto judge = [](double from, double to) {
    return JudgeHealth(BurstAt(from), BurstAt(to), {}, 0.5, 2, 0.5, 5);
  };
  // Judged from the trial's start to its end in one go, the burst averages out (0.05 cores).
  EXPECT_FALSE(judge(0.0, 10.0).busy);
  // Sampled every quarter second through the trial, one interval holds it.
  TrialHealth health({}, judge(-0.25, 0.0));
  for (double t = 0.0; t + 0.25 < 10.0 - 1e-9; t += 0.25) health.Add(judge(t, t + 0.25));
  health.Finish(judge(9.75, 10.0));
  EXPECT_TRUE(health.Busy());
  EXPECT_EQ(health.Note(), "load 0.50 on 2 cores; others used 1.00 cores: burn (pid 50) 1.00");
  const nlohmann::json json = health.ToJson();
  EXPECT_EQ(json["busy"], true);
  EXPECT_EQ(json["start"]["busy"], false);
  EXPECT_EQ(json["end"]["busy"], false);
  EXPECT_EQ(json["during"]["busy"], true);
  EXPECT_EQ(json["samples_during"], 39);
  EXPECT_EQ(json["note"], health.Note());
  // The two quarters that held the burst, one window: where a served request was disturbed.
  EXPECT_EQ(health.BusyWindows(), (std::vector<HostWindow>{{5.0, 5.5}}));
  EXPECT_EQ(json["busy_windows"], nlohmann::json::parse("[[5.0, 5.5]]"));
  EXPECT_FALSE(json.contains("busy_windows_left_out"));
}

// Busy spells apart are windows apart; a stretch busy only on another trial's GPU, or a
// sample that judged no stretch, is none; and the stored list is capped, with the rest counted.
TEST(TrialHealthTest, EachBusySpellIsAWindowAndTheStoredListIsCapped) {
  const auto sample = [](double from, double to, bool busy) {
    MachineHealth h;
    h.cores = 2;
    h.busy = busy;
    h.judged = {from, to};
    return h;
  };
  TrialHealth health({"GPU-a"}, sample(0, 1, false));
  health.Add(sample(1, 2, true));
  health.Add(sample(2, 3, true));
  health.Add(sample(2, 3, true));  // a judgment returned again: the same stretch
  health.Add(sample(3, 4, false));
  MachineHealth elsewhere = sample(4, 5, false);
  elsewhere.gpu_others = {GpuProcess{"GPU-b", 7, "train.py", 100}};
  health.Add(elsewhere);
  MachineHealth unknown = sample(0, 0, true);  // busy, but over no known stretch
  health.Add(unknown);
  health.Finish(sample(5, 6, true));
  EXPECT_TRUE(health.Busy());
  EXPECT_EQ(health.BusyWindows(), (std::vector<HostWindow>{{1, 3}, {5, 6}}));
  EXPECT_EQ(health.ToJson()["busy_windows"], nlohmann::json::parse("[[1.0, 3.0], [5.0, 6.0]]"));

  const std::size_t cap = TrialHealth::kMaxStoredBusyWindows;
  TrialHealth flickering({}, sample(0, 1, false));
  for (std::size_t i = 0; i < cap + 3; ++i) {
    flickering.Add(sample(2.0 * i + 1, 2.0 * i + 2, true));
    flickering.Add(sample(2.0 * i + 2, 2.0 * i + 3, false));
  }
  EXPECT_EQ(flickering.BusyWindows().size(), cap + 3);
  const nlohmann::json json = flickering.ToJson();
  EXPECT_EQ(json["busy_windows"].size(), cap);
  EXPECT_EQ(json["busy_windows"][0], nlohmann::json::parse("[1.0, 2.0]"));
  EXPECT_EQ(json["busy_windows_left_out"], 3);
  // A quiet trial writes no windows.
  EXPECT_FALSE(TrialHealth({}, sample(0, 1, false)).ToJson().contains("busy_windows"));
}

TEST(TrialHealthTest, AQuietTrialIsNotBusyAndAnotherGpusProgramDoesNotCount) {
  MachineHealth idle;
  idle.cores = 2;
  MachineHealth other_gpu = idle;
  other_gpu.gpu_others = {GpuProcess{"GPU-b", 7, "train.py", 100}};
  TrialHealth health({"GPU-a"}, idle);
  health.Add(other_gpu);
  health.Finish(idle);
  EXPECT_FALSE(health.Busy());
  EXPECT_EQ(health.Note(), "");
  EXPECT_EQ(health.ToJson()["busy"], false);
  EXPECT_EQ(health.ToJson()["gpus"], nlohmann::json::array({"GPU-a"}));
  // The same program on the trial's own GPU, seen only while it ran, makes it busy.
  TrialHealth shared({"GPU-b"}, idle);
  shared.Add(idle);
  shared.Add(other_gpu);
  shared.Finish(idle);
  EXPECT_TRUE(shared.Busy());
  EXPECT_NE(shared.Note().find("on GPU-b: train.py (pid 7)"), std::string::npos);
}

TEST(ProcHealthProbeTest, ACpuBurningProcessIsSeenWithItsPid) {
  // The burner is a grandchild re-parented away from us (not part of our own tree), as another
  // user's job would be. It tells us its pid through a pipe.
  int pid_pipe[2];
  ASSERT_EQ(pipe(pid_pipe), 0);
  const pid_t middle = fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    setsid();
    const pid_t burner = fork();
    if (burner == 0) {
      volatile unsigned long spin = 0;
      while (true) spin = spin + 1;
    }
    [[maybe_unused]] auto n = write(pid_pipe[1], &burner, sizeof(burner));
    _exit(0);
  }
  close(pid_pipe[1]);
  pid_t burner = 0;
  ASSERT_EQ(read(pid_pipe[0], &burner, sizeof(burner)), static_cast<ssize_t>(sizeof(burner)));
  close(pid_pipe[0]);
  waitpid(middle, nullptr, 0);
  ASSERT_GT(burner, 0);

  // The machine is shared: the burner's share of a core is not known, only that it runs. A
  // threshold of a hundredth of a core and a long list make the check independent of load.
  ProcHealthProbe probe(std::chrono::milliseconds(500), /*busy_cores=*/0.01, /*top=*/1000);
  MachineHealth h = probe.Sample();
  kill(burner, SIGKILL);
  EXPECT_TRUE(h.busy);
  EXPECT_TRUE(std::any_of(h.busiest.begin(), h.busiest.end(),
                          [&](const BusyProcess& p) { return p.pid == burner; }))
      << h.Describe();
  EXPECT_GE(h.cores, 1);
  EXPECT_EQ(h.ToJson()["busy"], true);
}

TEST(ProcHealthProbeTest, BackToBackSamplesDoNotWaitAWindowEach) {
  // The first sample waits its window; later ones judge the newest stretch of at least that
  // long from kept snapshots, so a trial's end and the next trial's start cost no sleep. The
  // window is long enough (2 s) that the bound cannot be met by waiting.
  const auto window = std::chrono::milliseconds(2000);
  ProcHealthProbe probe(window);
  const auto first = std::chrono::steady_clock::now();
  probe.Sample();
  EXPECT_GE(std::chrono::steady_clock::now() - first, window);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) probe.Sample();
  EXPECT_LT(std::chrono::steady_clock::now() - start, window / 2);
}

TEST(ProcHealthProbeTest, APrimedProbeJudgesTheStretchSincePrimingWithoutASecondWindow) {
  // `run` primes the probe when it starts; its own start-up then fills the window, and the
  // first trial's sample does not sleep a whole window more. The window is long (2 s) so that
  // the bound cannot be met by a sample that sleeps it.
  const auto window = std::chrono::milliseconds(2000);
  ProcHealthProbe probe(window);
  probe.Prime();
  std::this_thread::sleep_for(window);
  const auto start = std::chrono::steady_clock::now();
  MachineHealth h = probe.Sample();
  EXPECT_LT(std::chrono::steady_clock::now() - start, window / 2);
  EXPECT_GE(h.cores, 1);
}

}  // namespace
}  // namespace ditbench::machine_health_test
