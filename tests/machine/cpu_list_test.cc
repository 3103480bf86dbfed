#include "machine/cpu_list.h"

#include <gtest/gtest.h>

namespace ditbench::cpu_list_test {
namespace {

using Ints = std::vector<int>;

TEST(CpuListTest, ListsRoundTrip) {
  EXPECT_EQ(ParseCpuList("0-3,8,10-11\n"), (Ints{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(ParseCpuList("3,1,1-2"), (Ints{1, 2, 3}));
  EXPECT_EQ(ParseCpuList(""), Ints{});
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_FALSE(ParseCpuList("3-1").has_value());
  EXPECT_FALSE(ParseCpuList("a").has_value());
  EXPECT_FALSE(ParseCpuList("1-").has_value());
}

TEST(CpuListTest, PinnedRankStartsOneThreadPerCoreOfItsOwn) {
  EXPECT_EQ(CpuThreadsPerRank("4-7", 16, 4), 4);
  EXPECT_EQ(CpuThreadsPerRank("3", 2, 1), 1);  // a packed 1-rank trial on one core of two
}

TEST(CpuListTest, UnpinnedRanksShareTheCores) {
  EXPECT_EQ(CpuThreadsPerRank(nullptr, 16, 4), 4);
  EXPECT_EQ(CpuThreadsPerRank("", 16, 4), 4);
  EXPECT_EQ(CpuThreadsPerRank("garbage", 16, 4), 4);
  EXPECT_EQ(CpuThreadsPerRank(nullptr, 2, 4), 1);  // never zero
}

}  // namespace
}  // namespace ditbench::cpu_list_test
