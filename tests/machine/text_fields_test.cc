#include "machine/text_fields.h"

#include <gtest/gtest.h>

namespace ditbench::text_fields_test {
namespace {

TEST(TextFieldsTest, BlanksAroundAFieldGo) {
  EXPECT_EQ(TrimBlanks("  GPU-a \t\r\n"), "GPU-a");
  EXPECT_EQ(TrimBlanks("a b"), "a b");
  EXPECT_EQ(TrimBlanks(" \n "), "");
}

TEST(TextFieldsTest, OnlySmallDecimalNumbersAreNumbers) {
  EXPECT_EQ(SmallNumber("0"), 0);
  EXPECT_EQ(SmallNumber("999999"), 999999);
  EXPECT_EQ(SmallNumber("1000000"), std::nullopt);
  EXPECT_EQ(SmallNumber("-1"), std::nullopt);
  EXPECT_EQ(SmallNumber(" 1"), std::nullopt);
  EXPECT_EQ(SmallNumber("N/A"), std::nullopt);
  EXPECT_EQ(SmallNumber(""), std::nullopt);
}

}  // namespace
}  // namespace ditbench::text_fields_test
