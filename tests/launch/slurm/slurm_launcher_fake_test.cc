// SlurmLauncher's bookkeeping with a fake SlurmClient: what it submits, how Slurm's final
// states and the ranks' exit files become a LaunchOutcome, and what happens when Slurm refuses
// a job or forgets one. No Slurm needed (tests/launch/slurm/slurm_launcher_test.cc uses the real one).
#include "launch/slurm/slurm_launcher.h"

#include <signal.h>

#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "runner/ingest.h"
#include "tests/support/temp_dir.h"

namespace ditbench::slurm_launcher_fake_test {
namespace {

using std::chrono::milliseconds;

// Jobs get ids 100, 101, ...; their states are whatever the test sets in `states`.
class FakeSlurmClient final : public SlurmClient {
 public:
  std::string Submit(const std::vector<std::string>& arguments) override {
    if (!refuse.empty()) throw std::runtime_error(refuse);
    submitted.push_back(arguments);
    const std::string id = std::to_string(100 + static_cast<int>(submitted.size()) - 1);
    states[id] = SlurmJobState{"PENDING", "", 0, 0};
    return id;
  }
  std::optional<SlurmJobState> Query(const std::string& job_id) override {
    ++queries;
    auto it = states.find(job_id);
    if (it == states.end()) return std::nullopt;
    return it->second;
  }
  void Cancel(const std::string& job_id) override { cancelled.push_back(job_id); }

  std::map<std::string, SlurmJobState> states;
  std::vector<std::vector<std::string>> submitted;
  std::vector<std::string> cancelled;
  std::string refuse;
  int queries = 0;
};

class SlurmLauncherFakeTest : public ::testing::Test {
 protected:
  LaunchRequest Request(int world_size) {
    LaunchRequest r;
    r.trial_key = "k";
    r.run_dir = dir_.path();
    r.worker = "/opt/worker";
    r.world_size = world_size;
    r.timeout_s = 60;
    return r;
  }
  void RankExit(int rank, int code) {
    std::ofstream(RankExitPath(dir_.path(), rank)) << code << "\n";
  }
  // Ends job `id` in `state` and returns what Wait() reports.
  LaunchOutcome End(const std::string& id, SlurmJobState state) {
    client_.states[id] = state;
    auto finished = launcher_.Wait(milliseconds(50));
    EXPECT_TRUE(finished);
    return finished ? finished->outcome : LaunchOutcome{};
  }

  test::TempDir dir_;
  FakeSlurmClient client_;
  SlurmLauncher launcher_{client_, SlurmOptions{}, milliseconds(1)};
};

TEST_F(SlurmLauncherFakeTest, StartSubmitsTheScriptAndRecordsTheJobId) {
  const LaunchHandle handle = launcher_.Start(Request(2));
  ASSERT_EQ(client_.submitted.size(), 1u);
  EXPECT_EQ(client_.submitted[0].back(), (dir_ / "slurm_job.sh").string());
  EXPECT_TRUE(std::filesystem::exists(dir_ / "slurm_job.sh"));
  EXPECT_EQ(launcher_.ExternalId(handle), "100");
  EXPECT_EQ(launcher_.InFlight(), 1);
  EXPECT_FALSE(launcher_.Wait(milliseconds(20)));  // pending is not ended
}

TEST_F(SlurmLauncherFakeTest, CompletedJobHasEveryRankExitedZero) {
  launcher_.Start(Request(2));
  RankExit(0, 0);
  RankExit(1, 0);
  const LaunchOutcome outcome = End("100", {"COMPLETED", "None", 0, 0});
  EXPECT_EQ(outcome.first_failed_rank, -1);
  EXPECT_FALSE(outcome.scheduler_status);
  ASSERT_EQ(outcome.ranks.size(), 2u);
  EXPECT_TRUE(outcome.ranks[1].exited);
  EXPECT_EQ(outcome.ranks[1].exit_code, 0);
}

TEST_F(SlurmLauncherFakeTest, FailedJobIsJudgedByTheRankThatFailed) {
  launcher_.Start(Request(2));
  RankExit(1, 3);  // the worker's out-of-memory exit; rank 0 was killed before it could write
  const LaunchOutcome outcome = End("100", {"FAILED", "NonZeroExitCode", 3, 0});
  EXPECT_EQ(outcome.first_failed_rank, 1);
  EXPECT_EQ(outcome.ranks[1].exit_code, 3);
  EXPECT_EQ(outcome.ranks[0].signal, SIGKILL);
  EXPECT_FALSE(outcome.scheduler_status);
  // Ingest then calls it what the worker said: out of memory.
  TrialConfig config;
  config.ulysses = 2;
  EXPECT_EQ(IngestTrial(config, "k", dir_.path(), outcome).status, TrialStatus::kOom);
}

TEST_F(SlurmLauncherFakeTest, RankKilledBySignalReadsAsASignal) {
  launcher_.Start(Request(1));
  RankExit(0, 128 + SIGSEGV);
  const LaunchOutcome outcome = End("100", {"FAILED", "NonZeroExitCode", 139, 0});
  EXPECT_EQ(outcome.ranks[0].signal, SIGSEGV);
  EXPECT_EQ(outcome.first_failed_rank, 0);
}

TEST_F(SlurmLauncherFakeTest, SlurmsOwnEndsWinOverTheRanks) {
  TrialConfig config;
  const std::map<std::string, TrialStatus> expected = {
      {"OUT_OF_MEMORY", TrialStatus::kOom},   {"TIMEOUT", TrialStatus::kTimeout},
      {"NODE_FAIL", TrialStatus::kCrashed},   {"PREEMPTED", TrialStatus::kInterrupted},
      {"CANCELLED", TrialStatus::kInterrupted}, {"BOOT_FAIL", TrialStatus::kFailed}};
  int job = 100;
  for (const auto& [state, status] : expected) {
    launcher_.Start(Request(1));
    const LaunchOutcome outcome = End(std::to_string(job++), {state, "", 0, 0});
    ASSERT_TRUE(outcome.scheduler_status) << state;
    EXPECT_EQ(*outcome.scheduler_status, status) << state;
    const TrialRecord record = IngestTrial(config, "k", dir_.path(), outcome);
    EXPECT_EQ(record.status, status) << state;
    EXPECT_NE(record.error.find(state), std::string::npos) << record.error;
  }
}

TEST_F(SlurmLauncherFakeTest, FailedJobWithoutRankExitsIsFailedWithSlurmsLog) {
  launcher_.Start(Request(2));
  const LaunchOutcome outcome = End("100", {"FAILED", "NonZeroExitCode", 1, 0});
  ASSERT_TRUE(outcome.scheduler_status);
  EXPECT_EQ(*outcome.scheduler_status, TrialStatus::kFailed);
  EXPECT_NE(outcome.scheduler_reason.find("slurm-100.out"), std::string::npos)
      << outcome.scheduler_reason;
}

TEST_F(SlurmLauncherFakeTest, CancelIsScancelAndEndsAsCancelled) {
  const LaunchHandle handle = launcher_.Start(Request(1));
  launcher_.Cancel(handle);
  EXPECT_EQ(client_.cancelled, std::vector<std::string>{"100"});
  const LaunchOutcome outcome = End("100", {"CANCELLED", "", 0, 15});
  EXPECT_TRUE(outcome.cancelled);
  EXPECT_FALSE(outcome.scheduler_status);  // our own cancel: the sweep calls it interrupted
}

TEST_F(SlurmLauncherFakeTest, RefusedSubmissionIsALaunchError) {
  client_.refuse = "sbatch: error: invalid partition specified: nope";
  const LaunchHandle handle = launcher_.Start(Request(1));
  EXPECT_EQ(launcher_.ExternalId(handle), "");
  auto finished = launcher_.Wait(milliseconds(50));
  ASSERT_TRUE(finished);
  EXPECT_NE(finished->outcome.launch_error.find("invalid partition"), std::string::npos)
      << finished->outcome.launch_error;
}

TEST_F(SlurmLauncherFakeTest, ImpossibleShapeIsALaunchErrorNotASubmission) {
  SlurmOptions options;
  options.gpus_per_node = 8;
  options.nodes_per_trial = 1;
  SlurmLauncher launcher(client_, options, milliseconds(1));
  launcher.Start(Request(16));
  EXPECT_TRUE(client_.submitted.empty());
  auto finished = launcher.Wait(milliseconds(50));
  ASSERT_TRUE(finished);
  EXPECT_NE(finished->outcome.launch_error.find("at least 2 nodes"), std::string::npos)
      << finished->outcome.launch_error;
}

TEST_F(SlurmLauncherFakeTest, AttachFollowsAKnownJobAndRefusesAForgottenOne) {
  client_.states["77"] = SlurmJobState{"RUNNING", "", 0, 0};
  const auto handle = launcher_.Attach("77", Request(1));
  ASSERT_TRUE(handle);
  EXPECT_EQ(launcher_.ExternalId(*handle), "77");
  EXPECT_FALSE(launcher_.Attach("78", Request(1)));
  RankExit(0, 0);
  const LaunchOutcome outcome = End("77", {"COMPLETED", "", 0, 0});
  EXPECT_EQ(outcome.first_failed_rank, -1);
}

TEST_F(SlurmLauncherFakeTest, SlurmIsAskedAtMostOncePerPollInterval) {
  SlurmLauncher launcher(client_, SlurmOptions{}, milliseconds(200));
  launcher.Start(Request(1));
  for (int i = 0; i < 10; ++i) launcher.Wait(milliseconds(1));
  EXPECT_LE(client_.queries, 2);
}

}  // namespace
}  // namespace ditbench::slurm_launcher_fake_test
