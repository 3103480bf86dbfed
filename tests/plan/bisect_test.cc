#include "plan/bisect.h"

#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace ditbench::bisect_test {
namespace {

// Runs a search whose builds are judged by `judge(position)`; returns the measured positions.
template <typename Judge>
std::vector<int> Search(BisectSearch& search, Judge judge) {
  std::vector<int> measured;
  while (auto next = search.Next()) {
    measured.push_back(*next);
    search.Record(*next, judge(*next));
    if (measured.size() > 64) break;  // a search that never ends fails below
  }
  return measured;
}

TEST(BisectJudgementTest, SameAsGoodAndFasterThanBadIsGood) {
  EXPECT_EQ(JudgeBuild(Verdict::kSame, Verdict::kFaster), BuildJudgement::kGood);
  EXPECT_EQ(JudgeBuild(Verdict::kFaster, Verdict::kFaster), BuildJudgement::kGood);
  EXPECT_EQ(JudgeBuild(Verdict::kInconclusive, Verdict::kFaster), BuildJudgement::kGood);
  EXPECT_EQ(JudgeBuild(Verdict::kSame, Verdict::kInconclusive), BuildJudgement::kGood);
}

TEST(BisectJudgementTest, SlowerThanGoodAndSameAsBadIsBad) {
  EXPECT_EQ(JudgeBuild(Verdict::kSlower, Verdict::kSame), BuildJudgement::kBad);
  EXPECT_EQ(JudgeBuild(Verdict::kSlower, Verdict::kSlower), BuildJudgement::kBad);
  EXPECT_EQ(JudgeBuild(Verdict::kSlower, Verdict::kInconclusive), BuildJudgement::kBad);
  EXPECT_EQ(JudgeBuild(Verdict::kInconclusive, Verdict::kSame), BuildJudgement::kBad);
}

TEST(BisectJudgementTest, ContradictoryOrSilentVerdictsAreUnclear) {
  // Same as both ends: the noise hides the difference between good and bad here.
  EXPECT_EQ(JudgeBuild(Verdict::kSame, Verdict::kSame), BuildJudgement::kUnclear);
  // Slower than good and faster than bad: a change of its own between them.
  EXPECT_EQ(JudgeBuild(Verdict::kSlower, Verdict::kFaster), BuildJudgement::kUnclear);
  EXPECT_EQ(JudgeBuild(Verdict::kInconclusive, Verdict::kInconclusive), BuildJudgement::kUnclear);
  EXPECT_STREQ(BuildJudgementName(BuildJudgement::kUnclear), "unclear");
}

TEST(BisectSearchTest, EightBuildsSlowFromTheFifthNeedThreeMeasurements) {
  // Builds 1..8 are positions 0..7, both ends measured; the slowdown came with build 5.
  BisectSearch search(8, 0, 7);
  const std::vector<int> measured =
      Search(search, [](int p) { return p >= 4 ? BuildJudgement::kBad : BuildJudgement::kGood; });
  EXPECT_EQ(measured, (std::vector<int>{3, 5, 4}));
  ASSERT_TRUE(search.Done());
  EXPECT_EQ(search.Suspects(), std::vector<int>{4});
  EXPECT_EQ(search.good(), 3);
}

TEST(BisectSearchTest, FindsEveryFirstBadPositionWithinLogTwoMeasurements) {
  for (int count = 1; count <= 33; ++count) {
    for (int good = -1; good < count; ++good) {
      for (int bad = good + 1; bad <= count; ++bad) {
        for (int first_bad = good + 1; first_bad <= bad; ++first_bad) {
          BisectSearch search(count, good, bad);
          const std::vector<int> measured = Search(search, [&](int p) {
            return p >= first_bad ? BuildJudgement::kBad : BuildJudgement::kGood;
          });
          ASSERT_EQ(search.Suspects(), std::vector<int>{first_bad})
              << count << " builds, ends " << good << ".." << bad;
          ASSERT_LE(static_cast<int>(measured.size()), MaxMeasurements(good, bad));
        }
      }
    }
  }
  EXPECT_EQ(MaxMeasurements(0, 7), 3);
  EXPECT_EQ(MaxMeasurements(-1, 8), 4);
  EXPECT_EQ(MaxMeasurements(3, 4), 0);
}

TEST(BisectSearchTest, AFailedBuildIsSkippedAndTheNeighbourMeasured) {
  BisectSearch search(8, 0, 7);
  ASSERT_EQ(search.Next(), 3);
  search.Record(3, BuildJudgement::kFailed);
  EXPECT_EQ(search.Next(), 2);  // as near the midpoint, the lower one
  search.Record(2, BuildJudgement::kGood);
  EXPECT_EQ(search.Next(), 4);
  search.Record(4, BuildJudgement::kBad);
  // Only the skipped build is left between 2 and 4: the answer is a range.
  EXPECT_TRUE(search.Done());
  EXPECT_EQ(search.Suspects(), (std::vector<int>{3, 4}));
}

TEST(BisectSearchTest, EndsOutsideTheListAreCampaignsBeforeAndAfterIt) {
  // The good campaign's build is before the list, the bad one's after it; nothing in the
  // list is bad: the first bad build is the bad end itself (position 8).
  BisectSearch search(8, -1, 8);
  Search(search, [](int) { return BuildJudgement::kGood; });
  EXPECT_EQ(search.Suspects(), std::vector<int>{8});
  EXPECT_THROW(BisectSearch(8, 3, 3), std::invalid_argument);
  EXPECT_THROW(BisectSearch(8, -2, 3), std::invalid_argument);
  BisectSearch other(8, 0, 7);
  EXPECT_THROW(other.Record(7, BuildJudgement::kBad), std::invalid_argument);
}

}  // namespace
}  // namespace ditbench::bisect_test
