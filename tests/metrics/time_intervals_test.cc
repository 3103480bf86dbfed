#include "metrics/time_intervals.h"

#include <gtest/gtest.h>

namespace ditbench::time_intervals_test {
namespace {

using Set = std::vector<TimeInterval>;

TEST(IntervalSetTest, UnionMergesOverlappingAndTouchingAndDropsEmpty) {
  const IntervalSet set({{5, 7}, {0, 2}, {1, 3}, {3, 4}, {6, 6}, {9, 8}});
  EXPECT_EQ(set.intervals(), (Set{{0, 4}, {5, 7}}));
  EXPECT_EQ(set.Length(), 6);
}

TEST(IntervalSetTest, LengthWithinClipsAtBothEnds) {
  const IntervalSet set({{0, 4}, {5, 7}, {10, 20}});
  EXPECT_EQ(set.LengthWithin(3, 12), 1 + 2 + 2);
  EXPECT_EQ(set.LengthWithin(4, 5), 0);
  EXPECT_EQ(set.LengthWithin(-10, 100), 16);
  EXPECT_EQ(set.LengthWithin(15, 16), 1);
}

TEST(IntervalSetTest, IntersectionMinusAndUnionAddUp) {
  const IntervalSet a({{0, 10}, {20, 30}});
  const IntervalSet b({{5, 25}, {28, 40}});
  EXPECT_EQ(a.Intersection(b).intervals(), (Set{{5, 10}, {20, 25}, {28, 30}}));
  EXPECT_EQ(a.Minus(b).intervals(), (Set{{0, 5}, {25, 28}}));
  EXPECT_EQ(b.Minus(a).intervals(), (Set{{10, 20}, {30, 40}}));
  EXPECT_EQ(a.Union(b).intervals(), (Set{{0, 40}}));
  // |A u B| = |A| + |B| - |A n B|
  EXPECT_EQ(a.Union(b).Length(), a.Length() + b.Length() - a.Intersection(b).Length());
}

TEST(IntervalSetTest, MinusSplitsAnIntervalAroundSeveralHoles) {
  const IntervalSet a({{0, 100}});
  const IntervalSet holes({{10, 20}, {30, 40}, {90, 120}});
  EXPECT_EQ(a.Minus(holes).intervals(), (Set{{0, 10}, {20, 30}, {40, 90}}));
}

TEST(IntervalSetTest, ContainsOnlyWithinOneInterval) {
  const IntervalSet set({{0, 4}, {5, 7}});
  EXPECT_TRUE(set.Contains(1, 4));
  EXPECT_TRUE(set.Contains(5, 5));
  EXPECT_FALSE(set.Contains(3, 6));
  EXPECT_FALSE(set.Contains(-1, 1));
  EXPECT_EQ(set.Clip(3, 6).intervals(), (Set{{3, 4}, {5, 6}}));
}

}  // namespace
}  // namespace ditbench::time_intervals_test
