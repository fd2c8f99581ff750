// Tests for Name: interning, case, None, Find, ordering, hashing and concurrent interning.
//
// The intern table is process-wide and never shrinks, so tests that need a text nobody interned
// yet use texts unique to that test.

#include "rolly/core/name.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <barrier>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

namespace rolly {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

TEST(NameTest, SameTextGivesEqualNames) {
  const Name a("Door");
  const Name b(std::string("Do") + "or");  // a different buffer with the same text
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.id(), b.id());
  EXPECT_EQ(a.view().data(), b.view().data());  // one interned copy
}

TEST(NameTest, DifferentTextGivesDifferentNames) {
  EXPECT_NE(Name("Door"), Name("Window"));
  EXPECT_NE(Name("Door"), Name("Door "));
  EXPECT_NE(Name("Door").id(), Name("Window").id());
}

TEST(NameTest, DifferentCaseGivesDifferentNames) {
  const Name upper("Door");
  const Name lower("door");
  EXPECT_NE(upper, lower);
  EXPECT_NE(upper.id(), lower.id());
  EXPECT_TRUE(upper.EqualsIgnoreCase(lower));
  EXPECT_TRUE(lower.EqualsIgnoreCase(upper));
  EXPECT_TRUE(Name("DOOR").EqualsIgnoreCase(lower));
}

TEST(NameTest, ViewKeepsCase) {
  EXPECT_EQ(Name("MyDoor_01").view(), "MyDoor_01");
  EXPECT_EQ(Name("mydoor_01").view(), "mydoor_01");
  EXPECT_EQ(Name("MyDoor_01").str(), "MyDoor_01");
}

TEST(NameTest, TextIsCopiedWhenInterned) {
  std::string text = "CopiedText.name_test";
  const Name name(text);
  text[0] = 'X';
  text.assign(100, 'y');
  EXPECT_EQ(name.view(), "CopiedText.name_test");
}

TEST(NameTest, EmbeddedNulIsPartOfTheText) {
  const Name with_nul(std::string_view("a\0b", 3));
  EXPECT_EQ(with_nul.view().size(), 3u);
  EXPECT_NE(with_nul, Name("a"));
}

TEST(NameTest, PlainTextIsUtf8WithoutNul) {
  EXPECT_TRUE(Name().is_plain_text());
  EXPECT_TRUE(Name("Door").is_plain_text());
  EXPECT_TRUE(Name("caf\xC3\xA9").is_plain_text());
  EXPECT_FALSE(Name(std::string_view("a\0b", 3)).is_plain_text());
  EXPECT_FALSE(Name("bad\xC3").is_plain_text());     // a truncated sequence
  EXPECT_FALSE(Name("\xC0\x80").is_plain_text());     // an overlong NUL
  // Asked again, the same answer (it was found once, when interned).
  EXPECT_FALSE(Name("bad\xC3").is_plain_text());
}

TEST(NameTest, EqualsIgnoreCaseIsAsciiOnly) {
  EXPECT_FALSE(Name("Door").EqualsIgnoreCase(Name("Doors")));
  EXPECT_FALSE(Name("Door").EqualsIgnoreCase(Name("Dour")));
  // Neighbours of the letters differ by the case bit (0x20) but are not letters.
  EXPECT_FALSE(Name("@").EqualsIgnoreCase(Name("`")));
  EXPECT_FALSE(Name("[").EqualsIgnoreCase(Name("{")));
  EXPECT_FALSE(Name("^").EqualsIgnoreCase(Name("~")));
  EXPECT_FALSE(Name("1").EqualsIgnoreCase(Name("\x11")));
  // Non-ASCII letters are compared as bytes: "É" (C3 89) and "é" (C3 A9).
  EXPECT_FALSE(Name("\xC3\x89").EqualsIgnoreCase(Name("\xC3\xA9")));
  EXPECT_TRUE(Name("\xC3\x89x").EqualsIgnoreCase(Name("\xC3\x89X")));
  EXPECT_TRUE(Name("AZaz").EqualsIgnoreCase(Name("azAZ")));
}

TEST(NameTest, DefaultIsNone) {
  const Name none;
  EXPECT_TRUE(none.is_none());
  EXPECT_EQ(none.view(), "");
  // Its text points somewhere: callers copy view().data() with memcpy, even when empty.
  EXPECT_NE(none.view().data(), nullptr);
  EXPECT_EQ(none.str(), "");
  EXPECT_EQ(none.id(), 0u);
}

TEST(NameTest, EmptyTextIsNone) {
  const Name empty("");
  EXPECT_TRUE(empty.is_none());
  EXPECT_EQ(empty, Name());
  EXPECT_FALSE(Name("x").is_none());
  EXPECT_NE(Name("x"), Name());
  EXPECT_NE(Name("x").id(), 0u);
  EXPECT_TRUE(Name().EqualsIgnoreCase(Name("")));
  EXPECT_FALSE(Name().EqualsIgnoreCase(Name("x")));
}

TEST(NameTest, FindDoesNotIntern) {
  constexpr std::string_view kText = "FindDoesNotIntern.name_test.7f3a";
  EXPECT_EQ(Name::Find(kText), std::nullopt);
  EXPECT_EQ(Name::Find(kText), std::nullopt);  // the first Find interned nothing
  // Another case of the text is a different text.
  const Name other_case("finddoesnotintern.name_test.7f3a");
  EXPECT_EQ(Name::Find(kText), std::nullopt);

  const Name interned(kText);
  EXPECT_THAT(Name::Find(kText), Optional(interned));
  EXPECT_EQ(Name::Find(kText)->view(), kText);
  EXPECT_THAT(Name::Find("finddoesnotintern.name_test.7f3a"), Optional(other_case));
}

TEST(NameTest, FindOfEmptyTextIsNone) { EXPECT_THAT(Name::Find(""), Optional(Name())); }

TEST(NameTest, OrdersByTextNotByInterningOrder) {
  // Interned in reverse order of their texts.
  const Name z("zz.OrdersByText.name_test");
  const Name m("mm.OrdersByText.name_test");
  const Name a("aa.OrdersByText.name_test");
  EXPECT_LT(a, m);
  EXPECT_LT(m, z);
  EXPECT_LT(Name(), a);                   // None is the empty text, first of all
  EXPECT_LT(Name("Door"), Name("door"));  // byte order: upper case first
  EXPECT_LT(Name("Door"), Name("Doors"));
  EXPECT_EQ(a <=> Name("aa.OrdersByText.name_test"), std::strong_ordering::equal);

  const std::set<Name> sorted = {z, Name(), a, m, a};
  EXPECT_THAT(sorted, ElementsAre(Name(), a, m, z));
}

TEST(NameTest, UsableInUnorderedSet) {
  std::unordered_set<Name> set;
  set.insert(Name("Lamp"));
  set.insert(Name("lamp"));
  set.insert(Name(std::string("La") + "mp"));
  set.insert(Name());
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(set.count(Name("Lamp")), 1u);
  EXPECT_EQ(set.count(Name("LAMP")), 0u);
  EXPECT_EQ(std::hash<Name>()(Name("Lamp")), std::hash<Name>()(Name("Lamp")));
}

TEST(NameTest, ConcurrentInterningFromEightThreadsIsConsistent) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 400;
  constexpr int kTextsPerRound = 100;
  constexpr int kTexts = kRounds * kTextsPerRound;
  // Texts new to this run, also under --gtest_repeat.
  static int run = 0;
  const std::string prefix = "Concurrent.name_test." + std::to_string(run++) + ".";
  std::vector<std::string> texts;
  for (int i = 0; i < kTexts; ++i) {
    texts.push_back(prefix + std::to_string(i) + (i % 2 ? "A" : "a"));
  }
  ASSERT_EQ(Name::Find(texts[0]), std::nullopt);

  std::vector<std::vector<Name>> made(kThreads, std::vector<Name>(kTexts));
  std::barrier sync(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each round, every thread interns the same few new texts at once, half of the threads
      // in one order and half in the other, so that several race to intern each text first.
      for (int round = 0; round < kRounds; ++round) {
        sync.arrive_and_wait();
        for (int k = 0; k < kTextsPerRound; ++k) {
          const int i = round * kTextsPerRound + (t % 2 == 0 ? k : kTextsPerRound - 1 - k);
          made[t][i] = Name(texts[i]);
          // Find from the same threads while others intern: it must see the same name.
          const std::optional<Name> found = Name::Find(texts[i]);
          if (!found.has_value() || *found != made[t][i]) made[t][i] = Name();
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();

  std::unordered_set<std::uint32_t> ids;
  for (int i = 0; i < kTexts; ++i) {
    const Name first = made[0][i];
    ASSERT_FALSE(first.is_none()) << texts[i];
    EXPECT_EQ(first.view(), texts[i]);
    for (int t = 1; t < kThreads; ++t) {
      ASSERT_EQ(made[t][i], first) << "thread " << t << " text " << texts[i];
    }
    EXPECT_EQ(Name(texts[i]), first);
    EXPECT_TRUE(ids.insert(first.id()).second) << "id shared by two texts: " << texts[i];
  }
}

}  // namespace
}  // namespace rolly
