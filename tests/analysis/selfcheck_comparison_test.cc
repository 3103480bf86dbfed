// How A's and B's machines checked, as `compare` shows it (analysis/selfcheck_comparison.h).
#include "analysis/selfcheck_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::selfcheck_comparison_test {
namespace {

SelfcheckRecord Check(SelfcheckVerdict clocks, SelfcheckVerdict energy = SelfcheckVerdict::kPass) {
  SelfcheckRecord r;
  r.device = "H100";
  r.rows = {{"worker", SelfcheckVerdict::kPass, "cuda:0", ""},
            {"clocks", clocks,
             clocks == SelfcheckVerdict::kPass ? "SM 1980 of 1980 MHz" : "SM 1410 of 1980 MHz", ""},
            {"energy", energy, "400 W", ""}};
  return r;
}

TEST(SelfcheckComparisonTest, ARowWhoseVerdictDiffersIsADifference) {
  const auto d = SelfcheckDifferences({{"H100", Check(SelfcheckVerdict::kWarn)}},
                                      {{"H100", Check(SelfcheckVerdict::kPass)}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].setting, "selfcheck H100: clocks");
  EXPECT_EQ(d[0].a, "warn: SM 1410 of 1980 MHz");
  EXPECT_EQ(d[0].b, "pass: SM 1980 of 1980 MHz");
}

TEST(SelfcheckComparisonTest, SameVerdictsOrNoChecksAreNoDifference) {
  EXPECT_TRUE(SelfcheckDifferences({{"H100", Check(SelfcheckVerdict::kPass)}},
                                   {{"H100", Check(SelfcheckVerdict::kPass)}})
                  .empty());
  EXPECT_TRUE(SelfcheckDifferences({}, {}).empty());
}

TEST(SelfcheckComparisonTest, OneDeviceASideIsPairedWhateverItsName) {
  const auto d =
      SelfcheckDifferences({{"H100", Check(SelfcheckVerdict::kPass)}},
                           {{"A100", Check(SelfcheckVerdict::kPass, SelfcheckVerdict::kFail)}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].setting, "selfcheck H100 | A100: energy");
}

TEST(SelfcheckComparisonTest, ADeviceCheckedOnOneSideOnlySaysSo) {
  auto a = std::map<std::string, SelfcheckRecord>{{"H100", Check(SelfcheckVerdict::kWarn)},
                                                  {"cpu", Check(SelfcheckVerdict::kPass)}};
  const auto d = SelfcheckDifferences(a, {{"cpu", Check(SelfcheckVerdict::kPass)}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].setting, "selfcheck H100");
  EXPECT_THAT(d[0].a, ::testing::HasSubstr("clocks: warn"));
  EXPECT_EQ(d[0].b, "(none)");
}

// Two machines, each with its own database: `compare` lists the row that checked differently
// among the differences between A and B, after the settings.
TEST(SelfcheckComparisonTest, CompareListsTheRowsTheTwoMachinesCheckedDifferently) {
  test::TempDir dir;
  std::vector<std::unique_ptr<ResultsDb>> dbs;
  std::vector<CampaignSet> sides;
  for (const auto& [name, clocks] :
       {std::pair{"a.db", SelfcheckVerdict::kWarn}, std::pair{"b.db", SelfcheckVerdict::kPass}}) {
    dbs.push_back(ResultsDb::Open(dir / name));
    auto& db = *dbs.back();
    const auto id = db.writer().ResumeOrCreateCampaign(test::MakeCampaign("sp"), true);
    db.writer().RecordTrial(
        id, test::MakeTrialWithSamples(test::MakeConfig(1), {10, 11, 10, 11, 10}, "H100"));
    SelfcheckRecord check = Check(clocks);
    check.started_at = "2026-01-01T00:00:00.000Z";
    db.selfchecks().Record(check);
    sides.push_back({dir / name, {id}, name});
  }
  const Comparison c = CompareCampaigns(dbs[0]->reader(), sides[0], dbs[1]->reader(), sides[1], {},
                                        &dbs[0]->selfchecks(), &dbs[1]->selfchecks());
  ASSERT_FALSE(c.differences.empty());
  EXPECT_EQ(c.differences.back().setting, "selfcheck H100: clocks");
  EXPECT_EQ(c.differences.back().a, "warn: SM 1410 of 1980 MHz");
  // Without the stores, nothing about the checks.
  const Comparison without =
      CompareCampaigns(dbs[0]->reader(), sides[0], dbs[1]->reader(), sides[1]);
  for (const auto& d : without.differences)
    EXPECT_THAT(d.setting, ::testing::Not(::testing::HasSubstr("selfcheck")));
}

}  // namespace
}  // namespace ditbench::selfcheck_comparison_test
