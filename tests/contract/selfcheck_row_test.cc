// Selfcheck verdict rows as stored (contract/selfcheck_row.h): a round trip, hostile stored
// rows dropped, and the lines `env` shows.
#include "contract/selfcheck_row.h"

#include <gtest/gtest.h>

namespace ditbench::selfcheck_row_test {
namespace {

TEST(SelfcheckRowTest, RowsRoundTripThroughJson) {
  const std::vector<SelfcheckRow> rows = {
      {"clocks", SelfcheckVerdict::kWarn, "SM 1410 of 1980 MHz", "hw thermal"},
      {"energy", SelfcheckVerdict::kPass, "400 W", ""}};
  const auto back = RowsFromJson(nlohmann::json::parse(RowsJson(rows).dump()));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].name, "clocks");
  EXPECT_EQ(back[0].verdict, SelfcheckVerdict::kWarn);
  EXPECT_EQ(back[0].figure, "SM 1410 of 1980 MHz");
  EXPECT_EQ(back[0].reason, "hw thermal");
  EXPECT_EQ(back[1].verdict, SelfcheckVerdict::kPass);
}

TEST(SelfcheckRowTest, EntriesOfAnotherShapeOrVerdictAreDropped) {
  const auto json = nlohmann::json::parse(
      R"([{"name": "a", "verdict": "maybe"}, 3, {"verdict": "pass"}, {"name": "b", "verdict": "fail", "figure": 7}])");
  const auto rows = RowsFromJson(json);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "b");
  EXPECT_EQ(rows[0].figure, "");
  EXPECT_TRUE(RowsFromJson(nlohmann::json::object()).empty());
}

TEST(SelfcheckRowTest, NotPassingLinesListEveryRowButPassesOrSayAllPass) {
  std::vector<SelfcheckRow> rows = {{"worker", SelfcheckVerdict::kPass, "cpu", ""}};
  EXPECT_EQ(NotPassingLines(rows), std::vector<std::string>{"all pass"});
  rows.push_back({"clocks", SelfcheckVerdict::kWarn, "SM 1410 of 1980 MHz", "hw thermal"});
  rows.push_back({"energy", SelfcheckVerdict::kSkip, "", "CPU: no energy counter"});
  EXPECT_EQ(NotPassingLines(rows),
            (std::vector<std::string>{"clocks: warn: SM 1410 of 1980 MHz: hw thermal",
                                      "energy: skip: CPU: no energy counter"}));
}

}  // namespace
}  // namespace ditbench::selfcheck_row_test
