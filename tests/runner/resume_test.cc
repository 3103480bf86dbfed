#include "runner/resume.h"

#include <gtest/gtest.h>

namespace ditbench {
namespace {

PlannedTrial Valid() { return PlannedTrial{}; }
PlannedTrial Invalid() {
  PlannedTrial t;
  t.invalid_reason = "world size 4 exceeds the 2 CPU slots available";
  return t;
}

TEST(JudgeResumeTest, UnrecordedTrialsRunAndOkOnesAreKept) {
  EXPECT_TRUE(JudgeResume(Valid(), std::nullopt, "").run);
  EXPECT_EQ(JudgeResume(Valid(), std::nullopt, "").note, "");
  auto ok = JudgeResume(Valid(), TrialStatus::kOk, "");
  EXPECT_FALSE(ok.run);
  EXPECT_EQ(ok.note, "recorded ok: kept");
  EXPECT_TRUE(JudgeResume(Valid(), TrialStatus::kOk, "all").run);
}

TEST(JudgeResumeTest, SkippedTrialsAreJudgedAgainstThisMachine) {
  auto still = JudgeResume(Invalid(), TrialStatus::kSkipped, "");
  EXPECT_FALSE(still.run);
  EXPECT_EQ(still.note, "recorded skipped: kept (world size 4 exceeds the 2 CPU slots available)");
  auto fits = JudgeResume(Valid(), TrialStatus::kSkipped, "");
  EXPECT_TRUE(fits.run);
  EXPECT_EQ(fits.note, "run (skipped earlier; fits this machine now)");
}

TEST(JudgeResumeTest, FailuresAreKeptUnlessRerunFailedAndInterruptedRunAgain) {
  for (TrialStatus s : {TrialStatus::kFailed, TrialStatus::kOom, TrialStatus::kTimeout,
                        TrialStatus::kCrashed}) {
    EXPECT_FALSE(JudgeResume(Valid(), s, "").run) << StatusName(s);
    EXPECT_TRUE(JudgeResume(Valid(), s, "failed").run) << StatusName(s);
  }
  EXPECT_EQ(JudgeResume(Valid(), TrialStatus::kOom, "").note,
            "recorded oom: kept (--rerun failed retries it)");
  auto interrupted = JudgeResume(Valid(), TrialStatus::kInterrupted, "");
  EXPECT_TRUE(interrupted.run);
  EXPECT_EQ(interrupted.note, "run again (was interrupted)");
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

TEST(ChooseCampaignTest, AChangedSpecStartsANewCampaignUnlessContinued) {
  CampaignRecord wanted = Campaign(0, "s", "name: s\nsteps: 20\n").record;
  std::vector<CampaignInfo> campaigns = {Campaign(4, "s", "name: s\nsteps: 28\n")};
  CampaignChoice changed = ChooseCampaign(campaigns, wanted, false, false);
  EXPECT_FALSE(changed.resume.has_value());
  EXPECT_EQ(changed.changed_from, 4);
  EXPECT_EQ(changed.diff, "- steps: 28\n+ steps: 20\n");
  EXPECT_EQ(ChooseCampaign(campaigns, wanted, false, /*keep_campaign=*/true).resume, 4);
}

}  // namespace
}  // namespace ditbench
