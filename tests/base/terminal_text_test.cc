#include "base/did_you_mean.h"
#include "base/terminal_text.h"

#include <gtest/gtest.h>

namespace ditbench {
namespace {

TEST(TerminalTextTest, PlainTextAndUtf8AreKept) {
  EXPECT_EQ(StripTerminalControls("rank 1: CUDA out of memory\tµs 😀\n"),
            "rank 1: CUDA out of memory\tµs 😀\n");
}

TEST(TerminalTextTest, EscapeSequencesAreRemovedWhole) {
  EXPECT_EQ(StripTerminalControls("\x1b[31mred\x1b[0m"), "red");
  EXPECT_EQ(StripTerminalControls("a\x1b[2J\x1b[1;1Hb"), "ab");                 // clear, move
  EXPECT_EQ(StripTerminalControls("\x1b]0;owned title\a done"), " done");       // OSC + BEL
  EXPECT_EQ(StripTerminalControls("\x1b]8;;http://x\x1b\\link"), "link");      // OSC + ST
  EXPECT_EQ(StripTerminalControls("x\x1b" "cy"), "xy");                         // reset
  EXPECT_EQ(StripTerminalControls("cut \x1b["), "cut ");                        // truncated
}

TEST(TerminalTextTest, ControlCharactersAreRemoved) {
  EXPECT_EQ(StripTerminalControls(std::string("a\0b\rc\bd\x7f" "e", 9)), "abcde");
  EXPECT_EQ(StripTerminalControls("a\xc2\x9b" "31mb"), "a31mb");  // C1 CSI as UTF-8
}

TEST(OneLineTest, ControlCharactersAreEscapedAndOtherBytesKept) {
  EXPECT_EQ(OneLine("disk full\nat x\r\ty"), "disk full\\nat x\\r\\ty");
  EXPECT_EQ(OneLine("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
  EXPECT_EQ(OneLine(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(OneLine("sweep µs.yaml"), "sweep µs.yaml");
}

// The one edit distance that "did you mean" and the sweep's near-miss key check both read.
TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("steps", "steps"), 0u);
  EXPECT_EQ(EditDistance("step", "steps"), 1u);    // insertion
  EXPECT_EQ(EditDistance("stepps", "steps"), 1u);  // deletion
  EXPECT_EQ(EditDistance("stebs", "steps"), 1u);   // substitution
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "ring"), 4u);
  EXPECT_EQ(DidYouMean("ulyses", {"ring", "ulysses"}), "ulysses");
  EXPECT_EQ(DidYouMean("zzzzzz", {"ring", "ulysses"}), "");
}

}  // namespace
}  // namespace ditbench
