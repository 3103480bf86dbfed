#include "experiments/terminal_text.h"

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

}  // namespace
}  // namespace ditbench
