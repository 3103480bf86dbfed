#include "base/did_you_mean.h"
#include "base/terminal_text.h"

#include <gtest/gtest.h>

namespace ditbench::terminal_text_test {
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

TEST(ValidUtf8Test, ValidTextIsUnchanged) {
  EXPECT_EQ(ValidUtf8("plain µs 😀 \xf4\x8f\xbf\xbf"), "plain µs 😀 \xf4\x8f\xbf\xbf");
  EXPECT_EQ(FirstInvalidUtf8("plain µs 😀"), std::nullopt);
}

TEST(ValidUtf8Test, IllFormedBytesAreReplacedOnePerMaximalSubpart) {
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(ValidUtf8("a\xff" "b"), "a" + fffd + "b");                    // never a lead byte
  EXPECT_EQ(ValidUtf8("a\x80\x80"), "a" + fffd + fffd);                // stray continuations
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), fffd + fffd);                      // overlong '/'
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), fffd + fffd + fffd);          // a surrogate
  EXPECT_EQ(ValidUtf8("\xf4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // past U+10FFFF
  EXPECT_EQ(ValidUtf8("x\xe2\x82"), "x" + fffd);                      // cut short at the end
  EXPECT_EQ(ValidUtf8("\xe2\x82" "y"), fffd + "y");                      // cut short inside
}

TEST(ValidUtf8Test, FirstInvalidByteIsLocated) {
  EXPECT_EQ(FirstInvalidUtf8("µs\xff"), 3u);
  EXPECT_EQ(FirstInvalidUtf8("\xe2\x82"), 0u);
}

TEST(CappedTest, LongTextIsCutAtACharacterBoundaryWithAMarker) {
  EXPECT_EQ(Capped("short", 10), "short");
  EXPECT_EQ(Capped("abcdefghij", 4), "abcd \xe2\x80\xa6 [6 more bytes cut]");
  EXPECT_EQ(Capped("a😀b", 3), "a \xe2\x80\xa6 [5 more bytes cut]");  // not inside the emoji
}

TEST(StoredTextTest, TwentyMegabyteErrorIsKeptToItsCapAndMadeValid) {
  std::string error = "\x1b[31mboom\xff";
  error += std::string(20 << 20, 'x');
  const std::string stored = StoredText(error);
  EXPECT_LE(stored.size(), kStoredTextBytes + 40);
  EXPECT_EQ(stored.rfind("boom\xef\xbf\xbdxxx", 0), 0u);
  EXPECT_NE(stored.find("more bytes cut]"), std::string::npos);
  EXPECT_EQ(FirstInvalidUtf8(stored), std::nullopt);
}

TEST(ForTerminalTest, ControlsAndBidiOverridesAreEscapedAndUtf8IsKept) {
  EXPECT_EQ(ForTerminal("µs 😀 ok"), "µs 😀 ok");
  EXPECT_EQ(ForTerminal("\x1b]0;owned\a\x1b[2Jx\ny"), "\\x1b]0;owned\\x07\\x1b[2Jx\\ny");
  EXPECT_EQ(ForTerminal("a\xc2\x9b" "31mb"), "a\\u009b31mb");           // C1 CSI
  EXPECT_EQ(ForTerminal("abc\xe2\x80\xae" "cba"), "abc\\u202ecba");     // right-to-left
  EXPECT_EQ(ForTerminal("bad\xff"), "bad\xef\xbf\xbd");
}

TEST(ForTerminalTest, OutputIsCappedWithAMarker) {
  const std::string line = ForTerminal(std::string(1000, 'y'), 20);
  EXPECT_EQ(line, std::string(20, 'y') + " \xe2\x80\xa6 [980 more bytes cut]");
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
}  // namespace ditbench::terminal_text_test
