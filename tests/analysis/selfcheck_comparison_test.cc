// How A's and B's machines checked, as `compare` shows it (analysis/selfcheck_comparison.h).
#include "analysis/selfcheck_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ditbench {
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

}  // namespace
}  // namespace ditbench
