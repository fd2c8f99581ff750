// FileName: making, parsing, and refusing every name not made by the rules.

#include "rolly/store/file_name.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "rolly/core/status_matchers.h"

namespace rolly::store {
namespace {

TEST(FileNameTest, SlotNameRoundTrips) {
  ASSERT_OK_AND_ASSIGN(FileName name, FileName::ForSlot("rolly", "slot-1_a", Copy::kA));
  EXPECT_EQ(name.str(), "rolly.slot.slot-1_a.a.rsav");
  EXPECT_EQ(name.kind(), FileKind::kSlot);
  EXPECT_EQ(name.copy(), Copy::kA);
  EXPECT_EQ(name.prefix(), "rolly");
  EXPECT_EQ(name.stem(), "slot-1_a");
  const std::optional<FileName> parsed = FileName::Parse(name.str());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, name);
  EXPECT_EQ(parsed->kind(), FileKind::kSlot);
  EXPECT_EQ(parsed->stem(), "slot-1_a");
  EXPECT_EQ(DecodeStem(parsed->stem()), "slot-1_a");
}

TEST(FileNameTest, ProfileAndIndexRoundTrip) {
  ASSERT_OK_AND_ASSIGN(FileName profile, FileName::ForProfile("game", "Player One", Copy::kB));
  EXPECT_EQ(profile.str(), "game.profile.^player~20^one.b.rsav");
  EXPECT_EQ(profile.kind(), FileKind::kProfile);
  EXPECT_EQ(DecodeStem(profile.stem()), "Player One");
  ASSERT_TRUE(FileName::Parse(profile.str()).has_value());
  EXPECT_EQ(FileName::Parse(profile.str())->kind(), FileKind::kProfile);

  ASSERT_OK_AND_ASSIGN(FileName index, FileName::ForIndex("game", Copy::kA));
  EXPECT_EQ(index.str(), "game.index.a.rsav");
  EXPECT_EQ(index.kind(), FileKind::kIndex);
  EXPECT_EQ(index.stem(), "");
  EXPECT_EQ(index.base(), "game.index");
  ASSERT_TRUE(FileName::Parse(index.str()).has_value());
  EXPECT_EQ(*FileName::Parse(index.str()), index);
}

TEST(FileNameTest, NamesDifferingInCaseStayApart) {
  ASSERT_OK_AND_ASSIGN(FileName lower, FileName::ForSlot("p", "save", Copy::kA));
  ASSERT_OK_AND_ASSIGN(FileName upper, FileName::ForSlot("p", "Save", Copy::kA));
  ASSERT_OK_AND_ASSIGN(FileName all_upper, FileName::ForSlot("p", "SAVE", Copy::kA));
  EXPECT_NE(lower, upper);
  EXPECT_NE(upper, all_upper);
  // Apart even on a file system that ignores case: no two differ only in letter case.
  auto fold = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  EXPECT_NE(fold(lower.str()), fold(upper.str()));
  EXPECT_NE(fold(upper.str()), fold(all_upper.str()));
  EXPECT_EQ(DecodeStem(upper.stem()), "Save");
}

TEST(FileNameTest, EveryByteRoundTrips) {
  std::string name;
  for (int b = 1; b < 128; ++b) name.push_back(static_cast<char>(b));
  name += "\xc3\xa9\xe2\x82\xac";  // é €
  ASSERT_OK_AND_ASSIGN(FileName f, FileName::ForSlot("p", name, Copy::kB));
  EXPECT_LE(f.stem().size(), 160u + 0u + 18u);
  const std::optional<FileName> parsed = FileName::Parse(f.str());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, f);
}

TEST(FileNameTest, LongNamesAreCutWithTheirHash) {
  const std::string long_a(300, 'a');
  std::string long_b = long_a;
  long_b.back() = 'b';
  ASSERT_OK_AND_ASSIGN(FileName a, FileName::ForSlot("p", long_a, Copy::kA));
  ASSERT_OK_AND_ASSIGN(FileName b, FileName::ForSlot("p", long_b, Copy::kA));
  EXPECT_EQ(a.stem().size(), 120u + 2u + 16u);
  EXPECT_EQ(a.stem().substr(0, 120), std::string(120, 'a'));
  EXPECT_EQ(a.stem().substr(120, 2), "~~");
  EXPECT_NE(a, b);  // the hash keeps names with the same first 120 characters apart
  EXPECT_EQ(DecodeStem(a.stem()), std::nullopt);  // a cut stem cannot be turned back
  const std::optional<FileName> parsed = FileName::Parse(a.str());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, a);

  // 160 characters exactly stay whole; 161 are cut.
  ASSERT_OK_AND_ASSIGN(FileName at_bound, FileName::ForSlot("p", std::string(160, 'x'), Copy::kA));
  EXPECT_EQ(at_bound.stem(), std::string(160, 'x'));
  ASSERT_OK_AND_ASSIGN(FileName past, FileName::ForSlot("p", std::string(161, 'x'), Copy::kA));
  EXPECT_EQ(past.stem().size(), 138u);
}

TEST(FileNameTest, OtherSwapsTheCopyAndBaseIgnoresIt) {
  ASSERT_OK_AND_ASSIGN(FileName a, FileName::ForSlot("p", "Slot", Copy::kA));
  const FileName b = a.Other();
  EXPECT_EQ(b.copy(), Copy::kB);
  EXPECT_EQ(b.str(), "p.slot.^slot.b.rsav");
  EXPECT_EQ(b.kind(), FileKind::kSlot);
  EXPECT_EQ(b.stem(), a.stem());
  EXPECT_EQ(b.Other(), a);
  EXPECT_EQ(a.base(), "p.slot.^slot");
  EXPECT_EQ(a.base(), b.base());
  ASSERT_OK_AND_ASSIGN(FileName index, FileName::ForIndex("p", Copy::kB));
  EXPECT_EQ(index.Other().str(), "p.index.a.rsav");
}

TEST(FileNameTest, MakingRefusesBadPrefixesAndNames) {
  EXPECT_THAT(FileName::ForSlot("", "x", Copy::kA), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(FileName::ForSlot("Rolly", "x", Copy::kA), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(FileName::ForSlot("a.b", "x", Copy::kA), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(FileName::ForSlot(std::string(33, 'p'), "x", Copy::kA),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_OK(FileName::ForSlot(std::string(32, 'p'), "x", Copy::kA).status());
  EXPECT_THAT(FileName::ForSlot("p", "", Copy::kA), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(FileName::ForSlot("p", std::string("a\0b", 3), Copy::kA),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(FileName::ForSlot("p", "\xff", Copy::kA), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(FileName::ForSlot("p", std::string(kMaxSlotNameSize + 1, 'a'), Copy::kA),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_OK(FileName::ForSlot("p", std::string(kMaxSlotNameSize, 'a'), Copy::kA).status());
  EXPECT_THAT(FileName::ForProfile("p", "", Copy::kA), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(FileName::ForIndex("P", Copy::kA), StatusIs(StatusCode::kInvalidInput));
}

TEST(FileNameTest, ParseRefusesNamesNotMadeByTheRules) {
  const char* const refused[] = {
      "",
      "notes.txt",
      "rolly.slot.UPPER.a.rsav",      // upper case in a stem
      "Rolly.slot.x.a.rsav",          // upper case in a prefix
      "ro.lly.slot.x.a.rsav",         // a dot in the prefix
      "rolly.slot.x.c.rsav",          // no such copy
      "rolly.slot.x.A.rsav",
      "rolly.slot.x.a.sav",           // another extension
      "rolly.slot.x.a.rsav.tmp",
      "rolly.slot.x.a.RSAV",
      "rolly.slot.x.rsav",            // no copy
      "rolly.save.x.a.rsav",          // no such kind
      "rolly.slot..a.rsav",           // empty stem
      "rolly.slot.~41.a.rsav",        // 'A' has the form ^a, not ~41
      "rolly.slot.~61.a.rsav",        // 'a' stands as it is
      "rolly.slot.~4.a.rsav",         // a short escape
      "rolly.slot.~4G.a.rsav",        // not hex
      "rolly.slot.~2A.a.rsav",        // upper-case hex
      "rolly.slot.^A.a.rsav",         // ^ must be followed by a lower-case letter
      "rolly.slot.^1.a.rsav",
      "rolly.slot.^.a.rsav",
      "rolly.slot.a b.a.rsav",        // a raw space
      "rolly.slot.~00.a.rsav",        // NUL
      "rolly.slot.~ff.a.rsav",        // not UTF-8
      "rolly.slot.x~~0123.a.rsav",    // a short hash
      "rolly.index.x.a.rsav",         // an index has no stem
      ".slot.x.a.rsav",               // empty prefix
      "rolly.slot.x.a.rsav.",
  };
  for (const char* text : refused) {
    EXPECT_EQ(FileName::Parse(text), std::nullopt) << text;
  }
  // A cut stem must be cut where the rules cut it: a short stem with a hash is not a made name.
  EXPECT_EQ(FileName::Parse("rolly.slot.abc~~0123456789abcdef.a.rsav"),
            std::nullopt);
}

TEST(FileNameTest, ParseAcceptsEveryMadeName) {
  for (const char* slot : {"a", "Z", "slot 1", "~", "^", "..", "a.b.c", "\xe2\x82\xac"}) {
    for (Copy copy : {Copy::kA, Copy::kB}) {
      ASSERT_OK_AND_ASSIGN(FileName s, FileName::ForSlot("pre_fix-1", slot, copy));
      ASSERT_TRUE(FileName::Parse(s.str()).has_value()) << s.str();
      EXPECT_EQ(*FileName::Parse(s.str()), s);
      EXPECT_EQ(FileName::Parse(s.str())->copy(), copy);
      EXPECT_EQ(DecodeStem(s.stem()), slot);
    }
  }
}

}  // namespace
}  // namespace rolly::store
