#include "plan/resume.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ditbench::resume_test {
namespace {

PlannedTrial Valid() { return PlannedTrial{}; }
PlannedTrial Invalid() {
  PlannedTrial t;
  t.invalid_reason = "world size 4 exceeds the 2 CPU slots available";
  return t;
}

TEST(JudgeResumeTest, UnrecordedTrialsRunAndOkOnesAreKept) {
  EXPECT_TRUE(JudgeResume(Valid(), std::nullopt, Rerun::kNone).run);
  EXPECT_EQ(JudgeResume(Valid(), std::nullopt, Rerun::kNone).note, "");
  auto ok = JudgeResume(Valid(), TrialStatus::kOk, Rerun::kNone);
  EXPECT_FALSE(ok.run);
  EXPECT_EQ(ok.note, "recorded ok: kept");
  EXPECT_TRUE(JudgeResume(Valid(), TrialStatus::kOk, Rerun::kAll).run);
}

TEST(JudgeResumeTest, SkippedTrialsAreJudgedAgainstThisMachine) {
  auto still = JudgeResume(Invalid(), TrialStatus::kSkipped, Rerun::kNone);
  EXPECT_FALSE(still.run);
  EXPECT_EQ(still.note, "recorded skipped: kept (world size 4 exceeds the 2 CPU slots available)");
  auto fits = JudgeResume(Valid(), TrialStatus::kSkipped, Rerun::kNone);
  EXPECT_TRUE(fits.run);
  EXPECT_EQ(fits.note, "run (skipped earlier; fits this machine now)");
}

TEST(JudgeResumeTest, FailuresAreKeptUnlessRerunFailedAndInterruptedRunAgain) {
  for (TrialStatus s : {TrialStatus::kFailed, TrialStatus::kOom, TrialStatus::kTimeout,
                        TrialStatus::kCrashed}) {
    EXPECT_FALSE(JudgeResume(Valid(), s, Rerun::kNone).run) << StatusName(s);
    EXPECT_TRUE(JudgeResume(Valid(), s, Rerun::kFailed).run) << StatusName(s);
  }
  EXPECT_EQ(JudgeResume(Valid(), TrialStatus::kOom, Rerun::kNone).note,
            "recorded oom: kept (--rerun failed retries it)");
  auto interrupted = JudgeResume(Valid(), TrialStatus::kInterrupted, Rerun::kNone);
  EXPECT_TRUE(interrupted.run);
  EXPECT_EQ(interrupted.note, "run again (was interrupted)");
}

using Launches = std::map<int, TrialStatus>;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(RerunForTest, BusyRerunsOnlyTheBusyTrialsAndOtherModesApplyToAll) {
  const std::set<std::string> busy = {"k1"};
  EXPECT_EQ(RerunFor(Rerun::kBusy, "k1", busy), Rerun::kAll);
  EXPECT_EQ(RerunFor(Rerun::kBusy, "k2", busy), Rerun::kNone);
  EXPECT_EQ(RerunFor(Rerun::kFailed, "k2", busy), Rerun::kFailed);
  EXPECT_EQ(RerunFor(Rerun::kNone, "k1", busy), Rerun::kNone);
}

TEST(PlanLaunchesTest, AnUnrecordedTrialRunsEveryLaunch) {
  const LaunchPlan plan = PlanLaunches(Valid(), 3, std::nullopt, {}, Rerun::kNone);
  EXPECT_THAT(plan.launches, ElementsAre(0, 1, 2));
  EXPECT_EQ(plan.note, "");
}

TEST(PlanLaunchesTest, ACampaignKilledBetweenReplicatesRunsOnlyTheMissingLaunches) {
  // Killed after the first round: launch 0 ok, launch 1 interrupted, launch 2 never started.
  const LaunchPlan plan =
      PlanLaunches(Valid(), 3, TrialStatus::kInterrupted,
                   Launches{{0, TrialStatus::kOk}, {1, TrialStatus::kInterrupted}}, Rerun::kNone);
  EXPECT_THAT(plan.launches, ElementsAre(1, 2));
  EXPECT_EQ(plan.note, "launches of 3: kept 1 (ok); run 2 (interrupted), 3 (not run)");
  // Every launch ok: nothing runs.
  EXPECT_THAT(
      PlanLaunches(Valid(), 3, TrialStatus::kOk,
                   Launches{{0, TrialStatus::kOk}, {1, TrialStatus::kOk}, {2, TrialStatus::kOk}},
                   Rerun::kNone)
          .launches,
      IsEmpty());
  // A gap (launch 1 missing, 2 ok) is filled, nothing else.
  EXPECT_THAT(PlanLaunches(Valid(), 3, TrialStatus::kOk,
                           Launches{{0, TrialStatus::kOk}, {2, TrialStatus::kOk}}, Rerun::kNone)
                  .launches,
              ElementsAre(1));
}

TEST(PlanLaunchesTest, AKeptFailureEndsTheTrialAndRerunFailedResumesIt) {
  const Launches launches{{0, TrialStatus::kOk}, {1, TrialStatus::kOom}};
  EXPECT_THAT(PlanLaunches(Valid(), 3, TrialStatus::kOom, launches, Rerun::kNone).launches,
              IsEmpty());
  EXPECT_THAT(PlanLaunches(Valid(), 3, TrialStatus::kOom, launches, Rerun::kFailed).launches,
              ElementsAre(1, 2));
  EXPECT_THAT(PlanLaunches(Valid(), 3, TrialStatus::kOom, launches, Rerun::kAll).launches,
              ElementsAre(0, 1, 2));
}

TEST(PlanLaunchesTest, MoreReplicatesThanRecordedRunsTheNewOnes) {
  // A campaign measured with one launch, continued with replicates: 3.
  EXPECT_THAT(
      PlanLaunches(Valid(), 3, TrialStatus::kOk, Launches{{0, TrialStatus::kOk}}, Rerun::kNone)
          .launches,
      ElementsAre(1, 2));
}

TEST(PlanLaunchesTest, OneReplicateIsJudgeResume) {
  for (auto status : {TrialStatus::kOk, TrialStatus::kFailed, TrialStatus::kInterrupted}) {
    const LaunchPlan plan = PlanLaunches(Valid(), 1, status, Launches{{0, status}}, Rerun::kNone);
    const ResumeVerdict verdict = JudgeResume(Valid(), status, Rerun::kNone);
    EXPECT_EQ(plan.launches.empty(), !verdict.run) << StatusName(status);
    EXPECT_EQ(plan.note, verdict.note);
  }
}

TEST(PlanLaunchesTest, SkippedTrialsAreJudgedAsAWhole) {
  EXPECT_THAT(PlanLaunches(Invalid(), 3, TrialStatus::kSkipped, {}, Rerun::kNone).launches,
              IsEmpty());
  EXPECT_THAT(PlanLaunches(Valid(), 3, TrialStatus::kSkipped, {}, Rerun::kNone).launches,
              ElementsAre(0, 1, 2));
  // An invalid trial to record is recorded once, never launched.
  EXPECT_THAT(PlanLaunches(Invalid(), 3, std::nullopt, {}, Rerun::kNone).launches, ElementsAre(0));
}

CampaignInfo Campaign(std::int64_t id, const std::string& sweep, const std::string& text) {
  CampaignInfo c;
  c.id = id;
  c.record.sweep_name = sweep;
  c.record.spec_text = text;
  c.record.spec_hash = "hash of " + text;
  return c;
}

TEST(ChooseCampaignTest, TheNewestCampaignOfTheSameSpecIsResumed) {
  CampaignRecord wanted = Campaign(0, "s", "steps: 20\n").record;
  std::vector<CampaignInfo> campaigns = {Campaign(1, "s", "steps: 20\n"),
                                         Campaign(2, "other", "x"),
                                         Campaign(3, "s", "steps: 20\n")};
  EXPECT_EQ(ChooseCampaign(campaigns, wanted, false, false).resume, 3);
  EXPECT_FALSE(ChooseCampaign(campaigns, wanted, /*fresh=*/true, false).resume.has_value());
  EXPECT_FALSE(ChooseCampaign({}, wanted, false, false).resume.has_value());
}

TEST(ChooseCampaignTest, ACampaignOfABisectIsNeverResumed) {
  // `bisect` measured one build of the worker in campaign 3: a plain run goes on with 1.
  CampaignRecord wanted = Campaign(0, "s", "steps: 20\n").record;
  std::vector<CampaignInfo> campaigns = {Campaign(1, "s", "steps: 20\n"),
                                         Campaign(3, "s", "steps: 20\n")};
  campaigns[1].record.environment["bisect"] = {{"build", "worker-5"}};
  EXPECT_EQ(ChooseCampaign(campaigns, wanted, false, false).resume, 1);
  campaigns.erase(campaigns.begin());
  EXPECT_FALSE(ChooseCampaign(campaigns, wanted, false, false).resume.has_value());
}

TEST(ChooseCampaignTest, AChangedSpecStartsANewCampaignUnlessContinued) {
  CampaignRecord wanted = Campaign(0, "s", "name: s\nsteps: 20\n").record;
  std::vector<CampaignInfo> campaigns = {Campaign(4, "s", "name: s\nsteps: 28\n")};
  CampaignChoice changed = ChooseCampaign(campaigns, wanted, false, false);
  EXPECT_FALSE(changed.resume.has_value());
  EXPECT_EQ(changed.changed_from, 4);
  EXPECT_EQ(changed.diff, "- steps: 28\n+ steps: 20\n");
  EXPECT_EQ(ChooseCampaign(campaigns, wanted, false, /*keep_campaign=*/true).resume, 4);
}


TEST(ChooseCampaignTest, ACommentOnlyEditResumesTheCampaign) {
  CampaignRecord wanted =
      Campaign(0, "s", "# nightly sweep\nname: s\nsteps: 20   # more is slower\n").record;
  std::vector<CampaignInfo> campaigns = {Campaign(4, "s", "name: s\nsteps: 20\n")};
  const CampaignChoice choice = ChooseCampaign(campaigns, wanted, false, false);
  EXPECT_EQ(choice.resume, 4);
  EXPECT_FALSE(choice.changed_from.has_value());
}

TEST(RunsHalvingRoundTest, OkLaunchesAreKeptUnlessRerunAll) {
  EXPECT_TRUE(RunsHalvingRound(Valid(), 0, std::nullopt, std::nullopt, Rerun::kNone));
  EXPECT_FALSE(RunsHalvingRound(Valid(), 1, TrialStatus::kOk, TrialStatus::kOk, Rerun::kNone));
  EXPECT_FALSE(RunsHalvingRound(Valid(), 1, TrialStatus::kOk, TrialStatus::kOk, Rerun::kFailed));
  EXPECT_TRUE(RunsHalvingRound(Valid(), 1, TrialStatus::kOk, TrialStatus::kOk, Rerun::kAll));
  // Round 2 not measured yet for a trial whose earlier rounds are ok: it runs.
  EXPECT_TRUE(RunsHalvingRound(Valid(), 2, TrialStatus::kOk, std::nullopt, Rerun::kNone));
  EXPECT_TRUE(RunsHalvingRound(Valid(), 1, TrialStatus::kInterrupted, TrialStatus::kInterrupted,
                               Rerun::kNone));
}

TEST(RunsHalvingRoundTest, AFailedTrialRunsNoLaterRoundWithoutRerun) {
  EXPECT_FALSE(
      RunsHalvingRound(Valid(), 0, TrialStatus::kFailed, TrialStatus::kFailed, Rerun::kNone));
  EXPECT_TRUE(
      RunsHalvingRound(Valid(), 0, TrialStatus::kFailed, TrialStatus::kFailed, Rerun::kFailed));
  EXPECT_FALSE(RunsHalvingRound(Valid(), 1, TrialStatus::kOom, std::nullopt, Rerun::kNone));
  EXPECT_TRUE(RunsHalvingRound(Valid(), 1, TrialStatus::kOom, std::nullopt, Rerun::kFailed));
  // The trial's own failure ends it only after round 0 (round 0 is judged by its launch).
  EXPECT_TRUE(RunsHalvingRound(Valid(), 0, TrialStatus::kFailed, std::nullopt, Rerun::kNone));
}

TEST(RunsHalvingRoundTest, InvalidTrialsAreJudgedAsAWholeInRoundZeroOnly) {
  EXPECT_TRUE(RunsHalvingRound(Invalid(), 0, std::nullopt, std::nullopt, Rerun::kNone));
  EXPECT_FALSE(RunsHalvingRound(Invalid(), 0, TrialStatus::kSkipped, std::nullopt, Rerun::kNone));
  EXPECT_FALSE(RunsHalvingRound(Invalid(), 1, std::nullopt, std::nullopt, Rerun::kNone));
}

}  // namespace
}  // namespace ditbench::resume_test
