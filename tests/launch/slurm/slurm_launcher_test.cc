// The Slurm launcher against a real single-node Slurm (tests/support/local_slurm.h), with
// tests/fixtures/fake_worker.sh as the worker and the real RunSweep: a 2-rank trial through
// srun, Slurm's time limit recorded as `timeout`, scancel when the coordinator is told to stop,
// and a coordinator killed outright whose job the next coordinator finds again.
//
// The cluster is started once for the suite. Coordinators that must be signalled or killed run
// in a forked child, as in coordinator_death_test.cc.
#include "launch/slurm/slurm_launcher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "launch/interrupt.h"
#include "launch/slurm/slurm_cluster.h"
#include "launch/slurm/slurm_step_launcher.h"
#include "runner/sweep_run.h"
#include "storage/statement.h"
#include "tests/support/local_slurm.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::slurm_launcher_test {
namespace {

using test::LocalSlurm;

// One trial of `ranks` ranks, with a 1-minute Slurm time limit.
std::string Sweep(int ranks) {
  return "name: slurm\n"
         "defaults: {model: pixart-alpha-tiny, resolution: 256, steps: 1, warmup: 1, "
         "repeats: 3, ulysses: " + std::to_string(ranks) + ", timeout: 1m}\n";
}

class SlurmLauncherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    bool installed = false;
    slurm_ = LocalSlurm::Start(&why_not_, &installed).release();
    if (!slurm_ && installed) failed_to_boot_ = true;
  }
  static void TearDownTestSuite() {
    delete slurm_;
    slurm_ = nullptr;
  }

  void TearDown() override {
    for (pid_t child : children_) {
      if (kill(child, 0) == 0) kill(child, SIGKILL);
      waitpid(child, nullptr, WNOHANG);
    }
  }

  void SetUp() override {
    if (failed_to_boot_) FAIL() << "Slurm is installed but did not come up:\n" << why_not_;
    if (!slurm_) {
      GTEST_SKIP() << "\n*** SLURM TESTS SKIPPED: " << why_not_ << " ***\n";
    }
    options_.db = dir_ / "results.db";
    options_.gpus = "cpu:2";
    options_.worker = DITBENCH_FAKE_WORKER;
    options_.launcher = LauncherKind::kSlurm;
    options_.sweep = dir_ / "sweep.yaml";
    std::ofstream(options_.sweep) << Sweep(2);
  }

  static SlurmOptions Options(const std::string& mode) {
    SlurmOptions options;
    options.environment = {"FAKE_WORKER_MODE=" + mode};
    return options;
  }

  // Runs the sweep in this process with ranks in `mode`; returns its exit code.
  int RunHere(const std::string& mode) {
    test::FakeInterrupt interrupt;
    test::FakeGpuDiscovery gpus;
    SlurmCommands client;
    SlurmLauncher launcher(client, Options(mode),
                           std::chrono::milliseconds(100));
    std::ofstream log(dir_ / "coordinator-here.log", std::ios::app);
    return RunSweep(options_, SweepEffects{launcher, interrupt, gpus}, log, log);
  }

  // As RunHere, with every trial one srun job step (--slurm-mode step).
  int RunHereAsSteps(const std::string& mode) {
    test::FakeInterrupt interrupt;
    test::FakeGpuDiscovery gpus;
    SlurmCommands client;
    SlurmStepLauncher launcher(client, Options(mode));
    std::ofstream log(dir_ / "coordinator-here.log", std::ios::app);
    return RunSweep(options_, SweepEffects{launcher, interrupt, gpus}, log, log);
  }

  // Forks a coordinator with ranks in `mode` and real signal handling (SIGTERM stops it).
  // A coordinator still alive when the test ends (a failed assertion) is killed then.
  pid_t StartCoordinator(const std::string& mode, bool steps = false) {
    const pid_t child = fork();
    if (child > 0) children_.push_back(child);
    if (child == 0) {
      std::ofstream log(dir_ / "coordinator.log");
      SignalInterrupt interrupt;
      test::FakeGpuDiscovery gpus;
      SlurmCommands client;
      std::unique_ptr<Launcher> launcher;
      if (steps) launcher = std::make_unique<SlurmStepLauncher>(client, Options(mode));
      else launcher = std::make_unique<SlurmLauncher>(client, Options(mode),
                                                      std::chrono::milliseconds(100));
      _exit(RunSweep(options_, SweepEffects{*launcher, interrupt, gpus}, log, log));
    }
    return child;
  }

  // The child's exit code, waiting at most `seconds`; -1 if it did not end (then killed).
  static int Reap(pid_t child, double seconds) {
    int status = 0;
    if (!LocalSlurm::WaitFor([&] { return waitpid(child, &status, WNOHANG) == child; },
                             seconds)) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // The run folder of the sweep's only trial (empty until it exists).
  std::filesystem::path TrialDir() const {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(dir_ / "results.runs", ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->path().filename() == "trial.json") return it->path().parent_path();
    return {};
  }
  // Waits until every rank of the trial has written `file_prefix`<rank>`suffix`.
  bool RanksWrote(const std::string& file_prefix, const std::string& suffix, int ranks,
                  double seconds = 30) {
    return LocalSlurm::WaitFor(
        [&] {
          const auto dir = TrialDir();
          if (dir.empty()) return false;
          for (int r = 0; r < ranks; ++r)
            if (!std::filesystem::exists(dir / (file_prefix + std::to_string(r) + suffix)))
              return false;
          return true;
        },
        seconds);
  }

  // One column of the only trial row, as text ("" for NULL).
  std::string TrialColumn(const std::string& column) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(options_.db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    std::string value;
    {
      Statement query(db, "SELECT " + column + " FROM trials");
      if (query.Step() && !query.IsNull(0)) value = query.Text(0);
    }
    sqlite3_close(db);
    return value;
  }
  static std::string JobState(const std::string& job) {
    return ParseScontrolJob(RunProgram("scontrol", {"show", "job", "-o", job}).text)
        .value_or(SlurmJobState{"(unknown)", "", 0, 0})
        .state;
  }

  std::string Log(const std::string& name) const {
    std::ifstream in(dir_ / name);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  static inline LocalSlurm* slurm_ = nullptr;
  static inline std::string why_not_;
  static inline bool failed_to_boot_ = false;
  test::TempDir dir_;
  RunOptions options_;
  std::vector<pid_t> children_;
};

TEST_F(SlurmLauncherTest, PartitionIsReadFromSinfo) {
  std::string error;
  const auto partition = QuerySlurmPartition("", &error);
  ASSERT_TRUE(partition) << error;
  EXPECT_EQ(partition->nodes, 1);
  EXPECT_EQ(partition->gpus_per_node, 0);  // the test node declares no GPUs
  EXPECT_FALSE(QuerySlurmPartition("no-such-partition", &error));
  EXPECT_NE(error.find("no-such-partition"), std::string::npos) << error;
}

TEST_F(SlurmLauncherTest, TwoRankTrialRunsThroughSrun) {
  ASSERT_EQ(RunHere("ok"), 0) << Log("coordinator-here.log");
  EXPECT_EQ(TrialColumn("status"), "ok") << TrialColumn("error");
  const std::string job = TrialColumn("scheduler_job");
  ASSERT_FALSE(job.empty());
  EXPECT_EQ(JobState(job), "COMPLETED");
  // Each rank wrote its own file under its Slurm-derived rank (ingest checks rank and world
  // size against the file name and the trial), its log, and its exit status.
  const auto dir = TrialDir();
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(std::filesystem::exists(dir / ("rank" + std::to_string(r) + ".log")));
    std::ifstream exit_file(dir / ("rank" + std::to_string(r) + ".exit"));
    int code = -1;
    exit_file >> code;
    EXPECT_EQ(code, 0) << "rank " << r;
  }
  sqlite3* db = nullptr;
  sqlite3_open_v2(options_.db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  {
    Statement ranks(db, "SELECT count(DISTINCT rank) FROM samples");
    ASSERT_TRUE(ranks.Step());
    EXPECT_EQ(ranks.Int(0), 2);
  }
  sqlite3_close(db);
}

TEST_F(SlurmLauncherTest, TwoRankTrialRunsAsAJobStep) {
  ASSERT_EQ(RunHereAsSteps("ok"), 0) << Log("coordinator-here.log");
  EXPECT_EQ(TrialColumn("status"), "ok") << TrialColumn("error");
  EXPECT_EQ(TrialColumn("scheduler_job"), "") << "steps die with their coordinator";
  // Rank 0 named its step; both ranks reported under their Slurm-derived ranks.
  std::ifstream step_file(TrialDir() / "slurm_step");
  std::string step;
  step_file >> step;
  EXPECT_NE(step.find('.'), std::string::npos) << step;
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(std::filesystem::exists(TrialDir() / ("rank" + std::to_string(r) + ".json")));
}

TEST_F(SlurmLauncherTest, FailingRankOfAStepIsRecordedWithItsExit) {
  ASSERT_EQ(RunHereAsSteps("oom"), 1) << Log("coordinator-here.log");
  EXPECT_EQ(TrialColumn("status"), "oom") << TrialColumn("error");
  EXPECT_NE(TrialColumn("error").find("rank 1"), std::string::npos) << TrialColumn("error");
}

TEST_F(SlurmLauncherTest, JobEndedBySlurmsTimeLimitIsRecordedAsTimeout) {
  const pid_t coordinator = StartCoordinator("timeout");
  ASSERT_TRUE(RanksWrote("sleeper", ".pid", 2)) << Log("coordinator.log");
  const std::string job = TrialColumn("scheduler_job");
  ASSERT_FALSE(job.empty());
  // Slurm counts limits in whole minutes: the 1-minute limit is cut to 0 so that Slurm's own
  // time-limit check ends the job now instead of in a minute.
  ASSERT_EQ(RunProgram("scontrol", {"update", "JobId=" + job, "TimeLimit=-1"}).exit_code, 0);
  EXPECT_EQ(Reap(coordinator, 45), 1) << Log("coordinator.log");
  EXPECT_EQ(JobState(job), "TIMEOUT");
  EXPECT_EQ(TrialColumn("status"), "timeout");
  EXPECT_NE(TrialColumn("error").find("TIMEOUT"), std::string::npos) << TrialColumn("error");
}

// Both modes: the job (scancel JOBID) and the step (scancel JOBID.STEP, then srun killed).
class SlurmCancelTest : public SlurmLauncherTest, public ::testing::WithParamInterface<bool> {};
INSTANTIATE_TEST_SUITE_P(JobAndStep, SlurmCancelTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "step" : "job"; });

TEST_P(SlurmCancelTest, SigtermCancelsTheTrialsSlurmWork) {
  const bool steps = GetParam();
  const pid_t coordinator = StartCoordinator("timeout", steps);
  ASSERT_TRUE(RanksWrote("sleeper", ".pid", 2)) << Log("coordinator.log");
  std::string job = TrialColumn("scheduler_job");
  if (steps) {  // a step's job id is its allocation's: the part before the dot
    std::ifstream step_file(TrialDir() / "slurm_step");
    std::getline(step_file, job);
    job = job.substr(0, job.find('.'));
  }
  ASSERT_FALSE(job.empty());
  std::vector<pid_t> ranks;
  for (int r = 0; r < 2; ++r) {
    std::ifstream pid_file(TrialDir() / ("sleeper" + std::to_string(r) + ".pid"));
    pid_t pid = 0;
    pid_file >> pid;
    ranks.push_back(pid);
  }
  ASSERT_EQ(kill(coordinator, SIGTERM), 0);
  EXPECT_EQ(Reap(coordinator, 20), 130) << Log("coordinator.log");
  // The step's own allocation (srun outside one made it) ends as srun goes.
  EXPECT_TRUE(LocalSlurm::WaitFor([&] { return !SlurmJobActive(JobState(job)); }, 10))
      << JobState(job);
  if (!steps) {
    EXPECT_EQ(JobState(job), "CANCELLED");
  }
  EXPECT_EQ(TrialColumn("status"), "interrupted");
  for (pid_t pid : ranks)
    EXPECT_TRUE(LocalSlurm::WaitFor([pid] { return kill(pid, 0) != 0; }, 10))
        << "rank " << pid << " outlived scancel";
}

TEST_F(SlurmLauncherTest, RestartedCoordinatorWaitsForItsRunningJob) {
  const pid_t first = StartCoordinator("hold");
  ASSERT_TRUE(RanksWrote("holding", "", 2)) << Log("coordinator.log");
  const std::string job = TrialColumn("scheduler_job");
  ASSERT_FALSE(job.empty());
  kill(first, SIGKILL);  // no handler, no destructor: the job is left running
  ASSERT_EQ(Reap(first, 10), -1);
  EXPECT_EQ(JobState(job), "RUNNING");
  EXPECT_EQ(TrialColumn("status"), "running");

  // The next coordinator attaches to the job; the ranks finish only after it started.
  const auto trial_dir = TrialDir();
  std::thread release([&trial_dir] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::ofstream(trial_dir / "release") << "go\n";
  });
  const int code = RunHere("ok");
  release.join();
  EXPECT_EQ(code, 0) << Log("coordinator-here.log");
  EXPECT_NE(Log("coordinator-here.log").find("watching it again"), std::string::npos)
      << Log("coordinator-here.log");
  EXPECT_EQ(TrialColumn("status"), "ok") << TrialColumn("error");
  EXPECT_EQ(TrialColumn("scheduler_job"), job) << "the trial was submitted again\n"
                                               << Log("coordinator-here.log");
  int outputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(trial_dir))
    if (entry.path().filename().string().rfind("slurm-", 0) == 0) ++outputs;
  EXPECT_EQ(outputs, 1) << "one job only";
}

TEST_F(SlurmLauncherTest, JobThatEndedWhileNoCoordinatorWatchedIsIngested) {
  const pid_t first = StartCoordinator("hold");
  ASSERT_TRUE(RanksWrote("holding", "", 2)) << Log("coordinator.log");
  const std::string job = TrialColumn("scheduler_job");
  ASSERT_FALSE(job.empty());
  kill(first, SIGKILL);
  Reap(first, 10);
  std::ofstream(TrialDir() / "release") << "go\n";
  ASSERT_TRUE(LocalSlurm::WaitFor([&] { return JobState(job) == "COMPLETED"; }, 20))
      << JobState(job);
  EXPECT_EQ(TrialColumn("status"), "running");  // nobody recorded its end yet

  EXPECT_EQ(RunHere("ok"), 0) << Log("coordinator-here.log");
  EXPECT_EQ(TrialColumn("status"), "ok") << TrialColumn("error");
  EXPECT_EQ(TrialColumn("scheduler_job"), job) << Log("coordinator-here.log");
}

// A `command` workload's ranks start in the sweep file's folder under Slurm too (sbatch
// --chdir in job mode, srun --chdir in step mode), as they do locally.
class SlurmCommandFolderTest : public SlurmLauncherTest,
                               public ::testing::WithParamInterface<bool> {};
INSTANTIATE_TEST_SUITE_P(JobAndStep, SlurmCommandFolderTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Step" : "Job"; });

TEST_P(SlurmCommandFolderTest, CommandRanksStartInTheSweepsFolder) {
  const auto folder = dir_ / "my sweeps";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "bench.sh")
      << "#!/bin/sh\npwd > \"$DITBENCH_RESULT/cwd$RANK\"\n"
      << "exec python3 " DITBENCH_COMMAND_BENCH " --steps 1 --size 1 --mode ok\n";
  std::filesystem::permissions(folder / "bench.sh", std::filesystem::perms::owner_all);
  options_.sweep = folder / "sweep.yaml";
  std::ofstream(options_.sweep)
      << "name: slurm-command\nworkload: command\ncommand: [./bench.sh]\n"
         "defaults: {model: pixart-alpha-tiny, steps: 1, warmup: 1, repeats: 3, ulysses: 2, "
         "timeout: 1m}\n";
  const int code = GetParam() ? RunHereAsSteps("ok") : RunHere("ok");
  ASSERT_EQ(code, 0) << Log("coordinator-here.log");
  EXPECT_EQ(TrialColumn("status"), "ok") << TrialColumn("error");
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream cwd(TrialDir() / ("cwd" + std::to_string(rank)));
    std::string line;
    std::getline(cwd, line);
    EXPECT_EQ(line, folder.string()) << "rank " << rank;
  }
}

}  // namespace
}  // namespace ditbench::slurm_launcher_test
