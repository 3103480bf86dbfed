#include "base/choices.h"

#include <array>
#include <string>

#include <gtest/gtest.h>

#include "base/user_error.h"

namespace ditbench::choices_test {
namespace {

enum class Colour { kRed, kGreen, kBlue, kNone };
constexpr std::array<Choice<Colour>, 3> kColours{{
    {Colour::kRed, "red", "warm"},
    {Colour::kGreen, "green", "calm"},
    {Colour::kBlue, "blue", "cold"},
}};

TEST(ChoicesTest, ANameParsesToItsValueAndTheValueNamesItBack) {
  for (const auto& c : kColours) {
    EXPECT_EQ(ParseChoice(kColours, c.name, "--colour"), c.value);
    EXPECT_EQ(ChoiceName(kColours, c.value), c.name);
  }
  EXPECT_EQ(ChoiceName(kColours, Colour::kNone), "");
}

TEST(ChoicesTest, AnUnknownNameIsOneUserErrorListingTheValidNames) {
  try {
    ParseChoice(kColours, "Red", "--colour");
    FAIL() << "parsed";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "--colour 'Red': expected red, green or blue");
    EXPECT_EQ(e.where().key, "--colour");
  }
  EXPECT_THROW(ParseChoice(kColours, "", "--colour"), UserError);
}

TEST(ChoicesTest, NameListJoinsWithCommasAndOr) {
  EXPECT_EQ(NameList({}), "");
  EXPECT_EQ(NameList({"a"}), "a");
  EXPECT_EQ(NameList({"a", "b"}), "a or b");
  EXPECT_EQ(NameList({"a", "b", "c"}), "a, b or c");
}

TEST(ChoicesTest, HelpListsEveryNameWithItsHelp) {
  EXPECT_EQ(ChoicesHelp(kColours), "red: warm; green: calm; blue: cold");
}

}  // namespace
}  // namespace ditbench::choices_test
