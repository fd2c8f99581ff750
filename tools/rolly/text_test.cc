// Tests of the command line's text helpers: what Printable and Quoted let through to a terminal.

#include "text.h"

#include <gtest/gtest.h>

#include <string>

namespace rolly::cli {
namespace {

TEST(PrintableTest, ControlsAndBytesThatAreNotUtf8AreMadeVisible) {
  EXPECT_EQ(Printable("plain text"), "plain text");
  EXPECT_EQ(Printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(Printable("\x1b[2J"), "\\x1b[2J");  // ESC: a terminal's escape sequence
  EXPECT_EQ(Printable(std::string("nul\0", 4)), "nul\\x00");
  EXPECT_EQ(Printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(Printable("back\\slash"), "back\\\\slash");
  EXPECT_EQ(Printable("cut \xC3"), "cut \\xc3");        // a sequence cut short
  EXPECT_EQ(Printable("over \xC0\xAF"), "over \\xc0\\xaf");  // an overlong form
  EXPECT_EQ(Printable("say \"hi\""), "say \"hi\"");
}

TEST(PrintableTest, C1ControlsAndInvisibleFormatCharactersAreEscaped) {
  EXPECT_EQ(Printable("s\xC2\x9B" "2J"), "s\\u{009b}2J");        // U+009B, the 8-bit CSI
  EXPECT_EQ(Printable("\xC2\x80\xC2\x9F"), "\\u{0080}\\u{009f}");  // the first and last C1
  EXPECT_EQ(Printable("\xE2\x80\xAEtxt.exe"), "\\u{202e}txt.exe");  // right-to-left override
  EXPECT_EQ(Printable("a\xE2\x81\xA6" "b\xE2\x81\xA9"), "a\\u{2066}b\\u{2069}");  // isolates
  EXPECT_EQ(Printable("zero\xE2\x80\x8Bwidth"), "zero\\u{200b}width");
  EXPECT_EQ(Printable("\xEF\xBB\xBF" "bom"), "\\u{feff}bom");
  EXPECT_EQ(Printable("line\xE2\x80\xA8sep"), "line\\u{2028}sep");
  // Characters next to those ranges, and others beyond ASCII, print as they are.
  EXPECT_EQ(Printable("\xC2\xA0\xC3\xA9\xE2\x80\x8A\xE2\x80\xAF"),
            "\xC2\xA0\xC3\xA9\xE2\x80\x8A\xE2\x80\xAF");
  EXPECT_EQ(Printable("\xF0\x9F\x8E\xAE \xE6\x97\xA5\xE6\x9C\xAC"),
            "\xF0\x9F\x8E\xAE \xE6\x97\xA5\xE6\x9C\xAC");
}

TEST(QuotedTest, QuotesAreEscapedInside) {
  EXPECT_EQ(Quoted("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
  EXPECT_EQ(Quoted("\xE2\x80\xAE"), "\"\\u{202e}\"");
}

}  // namespace
}  // namespace rolly::cli
