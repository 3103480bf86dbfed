#include "launch/slurm/slurm_states.h"

#include <gtest/gtest.h>

namespace ditbench::slurm_states_test {
namespace {

TEST(SlurmStatesTest, ScontrolLineGivesStateReasonAndExitCode) {
  const auto job = ParseScontrolJob(
      "JobId=7 JobName=ditbench-abc UserId=root(0) JobState=TIMEOUT Reason=TimeLimit "
      "Dependency=(null) Requeue=1 Restarts=0 ExitCode=0:15 RunTime=00:01:02");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, "TIMEOUT");
  EXPECT_EQ(job->reason, "TimeLimit");
  EXPECT_EQ(job->exit_code, 0);
  EXPECT_EQ(job->signal, 15);
}

TEST(SlurmStatesTest, ScontrolErrorIsNoState) {
  EXPECT_FALSE(ParseScontrolJob("slurm_load_jobs error: Invalid job id specified\n"));
  EXPECT_FALSE(ParseScontrolJob(""));
}

TEST(SlurmStatesTest, SacctLineDropsWhoCancelled) {
  const auto job = ParseSacctLine("CANCELLED by 0|0:9\n");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, "CANCELLED");
  EXPECT_EQ(job->signal, 9);
  const auto failed = ParseSacctLine("FAILED|3:0");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->exit_code, 3);
  EXPECT_FALSE(ParseSacctLine(""));
  EXPECT_FALSE(ParseSacctLine("Slurm accounting storage is disabled"));
}

TEST(SlurmStatesTest, ActiveStatesAreNotEnded) {
  for (const char* state : {"PENDING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED"})
    EXPECT_TRUE(SlurmJobActive(state)) << state;
  for (const char* state : {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY",
                            "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE"})
    EXPECT_FALSE(SlurmJobActive(state)) << state;
}

TEST(SlurmStatesTest, SlurmsOwnEndsMapOntoDitbenchStatuses) {
  auto status = [](const char* state) {
    return JudgeEndedSlurmJob("42", SlurmJobState{state, "", 0, 0}).status;
  };
  EXPECT_EQ(status("OUT_OF_MEMORY"), TrialStatus::kOom);
  EXPECT_EQ(status("TIMEOUT"), TrialStatus::kTimeout);
  EXPECT_EQ(status("NODE_FAIL"), TrialStatus::kCrashed);
  EXPECT_EQ(status("CANCELLED"), TrialStatus::kInterrupted);
  EXPECT_EQ(status("PREEMPTED"), TrialStatus::kInterrupted);
  EXPECT_EQ(status("BOOT_FAIL"), TrialStatus::kFailed);
  EXPECT_EQ(status("DEADLINE"), TrialStatus::kFailed);
  EXPECT_EQ(status("SOMETHING_NEW"), TrialStatus::kFailed);
}

TEST(SlurmStatesTest, CompletedAndFailedJobsAreJudgedByTheirRanks) {
  EXPECT_FALSE(JudgeEndedSlurmJob("1", SlurmJobState{"COMPLETED", "None", 0, 0}).status);
  EXPECT_FALSE(JudgeEndedSlurmJob("1", SlurmJobState{"FAILED", "NonZeroExitCode", 3, 0}).status);
}

TEST(SlurmStatesTest, ReasonNamesTheJobAndSlurmsWords) {
  const auto verdict = JudgeEndedSlurmJob("42", SlurmJobState{"TIMEOUT", "TimeLimit", 0, 0});
  EXPECT_NE(verdict.reason.find("Slurm job 42 ended TIMEOUT (TimeLimit)"), std::string::npos)
      << verdict.reason;
}

TEST(SlurmStatesTest, SrunOutputSaysWhatSlurmDidToAStep) {
  auto status = [](const std::string& text) { return JudgeSrunOutput("5.0", text).status; };
  EXPECT_EQ(status("slurmstepd: error: *** STEP 5.0 ON n1 CANCELLED AT 2026-11-22T10:00:00 DUE "
                   "TO TIME LIMIT ***"),
            TrialStatus::kTimeout);
  EXPECT_EQ(status("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=5.0"),
            TrialStatus::kOom);
  EXPECT_EQ(status("*** STEP 5.0 ON n1 CANCELLED AT 2026-11-22T10:00:00 DUE TO PREEMPTION ***"),
            TrialStatus::kInterrupted);
  EXPECT_EQ(status("*** STEP 5.0 ON n1 CANCELLED AT 2026-11-22T10:00:00 DUE TO NODE FAILURE"),
            TrialStatus::kCrashed);
  EXPECT_EQ(status("srun: error: n1: task 1: Exited with exit code 3"), std::nullopt);
  EXPECT_NE(JudgeSrunOutput("5.0", "DUE TO TIME LIMIT").reason.find("step 5.0"),
            std::string::npos);
}

}  // namespace
}  // namespace ditbench::slurm_states_test
