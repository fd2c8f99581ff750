// Tests for the UTF-8 checks: valid samples, overlong forms, surrogates, code points above
// U+10FFFF, truncated sequences and bad continuation bytes, plus exhaustive comparisons with an
// independent decoder written here.

#include "rolly/core/utf8.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace rolly {
namespace {

using ::testing::Optional;

// Encodes any value up to 0x1FFFFF the way UTF-8's bit layout does, surrogates included, so tests
// can build both valid and invalid sequences.
std::string Encode(std::uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// An independent validator: decodes by the bit layout, then refuses what the standard forbids
// (overlong forms, surrogates, values above U+10FFFF). A different method from the library's
// table of second-byte ranges, so the two can check each other.
std::optional<std::size_t> ReferenceCount(std::string_view text) {
  std::size_t count = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<std::uint8_t>(text[i]);
    std::size_t len;
    std::uint32_t cp;
    if ((lead & 0x80) == 0) {
      len = 1;
      cp = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      len = 2;
      cp = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      len = 3;
      cp = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      len = 4;
      cp = lead & 0x07;
    } else {
      return std::nullopt;
    }
    if (text.size() - i < len) return std::nullopt;
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<std::uint8_t>(text[i + k]);
      if ((b & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (b & 0x3F);
    }
    const std::uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len]) return std::nullopt;
    if (cp >= 0xD800 && cp <= 0xDFFF) return std::nullopt;
    if (cp > 0x10FFFF) return std::nullopt;
    i += len;
    ++count;
  }
  return count;
}

std::string Str(std::initializer_list<int> bytes) {
  std::string out;
  for (const int b : bytes) out += static_cast<char>(b);
  return out;
}

TEST(Utf8Test, EmptyAndAsciiAreValid) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_THAT(CountCodePoints(""), Optional(0u));
  EXPECT_TRUE(IsValidUtf8("Door_01 open"));
  EXPECT_THAT(CountCodePoints("Door_01 open"), Optional(12u));
  EXPECT_THAT(CountCodePoints(std::string_view("\0\x7F", 2)), Optional(2u));
}

TEST(Utf8Test, ValidMultiByteSamples) {
  EXPECT_THAT(CountCodePoints("\xC2\x80"), Optional(1u));                  // U+0080
  EXPECT_THAT(CountCodePoints("\xC3\xA9t\xC3\xA9"), Optional(3u));         // "été"
  EXPECT_THAT(CountCodePoints("\xDF\xBF"), Optional(1u));                  // U+07FF
  EXPECT_THAT(CountCodePoints("\xE0\xA0\x80"), Optional(1u));              // U+0800
  EXPECT_THAT(CountCodePoints("\xE2\x82\xAC"), Optional(1u));              // U+20AC euro
  EXPECT_THAT(CountCodePoints("\xE6\x97\xA5\xE6\x9C\xAC"), Optional(2u));  // "日本"
  EXPECT_THAT(CountCodePoints("\xED\x9F\xBF"), Optional(1u));              // U+D7FF
  EXPECT_THAT(CountCodePoints("\xEE\x80\x80"), Optional(1u));              // U+E000
  EXPECT_THAT(CountCodePoints("\xEF\xBF\xBF"), Optional(1u));              // U+FFFF
  EXPECT_THAT(CountCodePoints("\xF0\x90\x80\x80"), Optional(1u));          // U+10000
  EXPECT_THAT(CountCodePoints("\xF0\x9F\x98\x80"), Optional(1u));          // U+1F600 emoji
  EXPECT_THAT(CountCodePoints("\xF3\xBF\xBF\xBF"), Optional(1u));          // U+FFFFF
  EXPECT_THAT(CountCodePoints("\xF4\x8F\xBF\xBF"), Optional(1u));          // U+10FFFF
  EXPECT_THAT(CountCodePoints("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z"), Optional(5u));
  EXPECT_TRUE(IsValidUtf8("\xEF\xBB\xBF"));  // BOM
}

TEST(Utf8Test, OverlongFormsAreRefused) {
  for (const std::string& s :
       {Str({0xC0, 0x80}), Str({0xC1, 0xBF}), Str({0xC0, 0xAF}), Str({0xE0, 0x80, 0x80}),
        Str({0xE0, 0x9F, 0xBF}), Str({0xE0, 0x80, 0xAF}), Str({0xF0, 0x80, 0x80, 0x80}),
        Str({0xF0, 0x8F, 0xBF, 0xBF}), Str({0xF0, 0x80, 0x80, 0xAF})}) {
    EXPECT_FALSE(IsValidUtf8(s)) << ::testing::PrintToString(s);
    EXPECT_EQ(CountCodePoints(s), std::nullopt) << ::testing::PrintToString(s);
  }
}

TEST(Utf8Test, SurrogatesAreRefused) {
  for (const std::string& s : {Str({0xED, 0xA0, 0x80}), Str({0xED, 0xAF, 0xBF}),
                               Str({0xED, 0xB0, 0x80}), Str({0xED, 0xBF, 0xBF}),
                               // A CESU-8 pair for U+1F600.
                               Str({0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80})}) {
    EXPECT_FALSE(IsValidUtf8(s)) << ::testing::PrintToString(s);
  }
  for (std::uint32_t cp = 0xD800; cp <= 0xDFFF; ++cp) {
    ASSERT_FALSE(IsValidUtf8(Encode(cp))) << cp;
  }
}

TEST(Utf8Test, AboveMaximumCodePointIsRefused) {
  for (const std::string& s :
       {Str({0xF4, 0x90, 0x80, 0x80}), Str({0xF4, 0xBF, 0xBF, 0xBF}), Str({0xF5, 0x80, 0x80, 0x80}),
        Str({0xF7, 0xBF, 0xBF, 0xBF}), Str({0xF8, 0x88, 0x80, 0x80, 0x80}),
        Str({0xFC, 0x84, 0x80, 0x80, 0x80, 0x80})}) {
    EXPECT_FALSE(IsValidUtf8(s)) << ::testing::PrintToString(s);
  }
}

TEST(Utf8Test, TruncatedSequencesAreRefused) {
  for (const std::string& s :
       {Str({0xC3}), Str({0xE2}), Str({0xE2, 0x82}), Str({0xF0}), Str({0xF0, 0x9F}),
        Str({0xF0, 0x9F, 0x98}), Str({'a', 0xC3}), Str({'a', 0xF0, 0x9F, 0x98})}) {
    EXPECT_FALSE(IsValidUtf8(s)) << ::testing::PrintToString(s);
  }
  // A valid sequence cut at every point short of its end.
  const std::string full = "a\xF0\x9F\x98\x80";
  for (std::size_t n = 2; n < full.size(); ++n) {
    EXPECT_FALSE(IsValidUtf8(std::string_view(full).substr(0, n))) << n;
  }
  EXPECT_TRUE(IsValidUtf8(full));
}

TEST(Utf8Test, BadContinuationBytesAreRefused) {
  for (const std::string& s :
       {Str({0x80}), Str({0xBF}), Str({'a', 0x80, 'b'}),         // lone continuation
        Str({0xC3, 'a'}), Str({0xC3, 0xC3}), Str({0xC3, 0xFF}),  // second byte
        Str({0xE2, 0x82, 'a'}), Str({0xE2, 0x82, 0xC0}),         // third byte
        Str({0xE2, 'a', 0xAC}), Str({0xF0, 0x9F, 0x98, 'a'}),    // fourth byte
        Str({0xF0, 0x9F, 0x98, 0xC0}), Str({0xF0, 0x9F, 0x7F, 0x80}),
        Str({0xC3, 0xA9, 0xA9})}) {  // one too many
    EXPECT_FALSE(IsValidUtf8(s)) << ::testing::PrintToString(s);
    EXPECT_EQ(CountCodePoints(s), std::nullopt) << ::testing::PrintToString(s);
  }
}

TEST(Utf8Test, BytesThatNeverAppearAreRefused) {
  for (const int b : {0xC0, 0xC1, 0xF5, 0xF6, 0xF7, 0xF8, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF}) {
    EXPECT_FALSE(IsValidUtf8(Str({b}))) << b;
    EXPECT_FALSE(IsValidUtf8(Str({b, 0x80}))) << b;
    EXPECT_FALSE(IsValidUtf8(Str({b, 0x80, 0x80, 0x80}))) << b;
  }
}

TEST(Utf8Test, ErrorAfterValidTextIsFound) {
  std::string text(1000, 'a');
  text += "\xC3\xA9";
  EXPECT_THAT(CountCodePoints(text), Optional(1001u));
  text += "\xED\xA0\x80";
  EXPECT_EQ(CountCodePoints(text), std::nullopt);
}

TEST(Utf8Test, CountCodePointsCountsEachSequenceOnce) {
  std::string text;
  std::size_t expected = 0;
  for (const std::uint32_t cp :
       {0x41u, 0xE9u, 0x7FFu, 0x800u, 0x20ACu, 0xFFFDu, 0x10000u, 0x1F600u, 0x10FFFFu}) {
    text += Encode(cp);
    ++expected;
    EXPECT_THAT(CountCodePoints(text), Optional(expected));
  }
}

TEST(Utf8Test, EveryScalarValueEncodesAsOneValidCodePoint) {
  for (std::uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    ASSERT_THAT(CountCodePoints(Encode(cp)), Optional(1u)) << cp;
  }
  for (std::uint32_t cp = 0x110000; cp <= 0x1FFFFF; cp += 0x1111) {
    ASSERT_FALSE(IsValidUtf8(Encode(cp))) << cp;
  }
}

TEST(Utf8Test, AgreesWithReferenceOnEveryShortSequence) {
  // Every sequence of one, two and three bytes.
  std::string s;
  for (int a = 0; a < 256; ++a) {
    s.assign(1, static_cast<char>(a));
    ASSERT_EQ(CountCodePoints(s), ReferenceCount(s)) << ::testing::PrintToString(s);
    for (int b = 0; b < 256; ++b) {
      s.assign({static_cast<char>(a), static_cast<char>(b)});
      ASSERT_EQ(CountCodePoints(s), ReferenceCount(s)) << ::testing::PrintToString(s);
      if (a < 0x80) continue;  // an ASCII byte then two more is the two-byte case again
      for (int c = 0; c < 256; ++c) {
        s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
        ASSERT_EQ(CountCodePoints(s), ReferenceCount(s)) << ::testing::PrintToString(s);
      }
    }
  }
}

TEST(Utf8Test, AgreesWithReferenceOnFourByteSequences) {
  // Every lead and second byte, with third and fourth bytes at the edges of their ranges.
  const int edges[] = {0x00, 0x41, 0x7F, 0x80, 0x81, 0xA0, 0xBF, 0xC0, 0xC2, 0xF0, 0xFF};
  std::string s;
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (const int c : edges) {
        for (const int d : edges) {
          s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c),
                    static_cast<char>(d)});
          ASSERT_EQ(CountCodePoints(s), ReferenceCount(s)) << ::testing::PrintToString(s);
        }
      }
    }
  }
}

}  // namespace
}  // namespace rolly
