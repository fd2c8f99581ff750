// Tests for Guid: parsing, printing, random generation, ordering and hashing.

#include "rolly/core/guid.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

namespace rolly {
namespace {

using ::testing::MatchesRegex;
using ::testing::Optional;

constexpr std::string_view kText = "0123abcd-4567-89ef-fedc-ba9876543210";
constexpr Guid kGuid(0x0123ABCD456789EFull, 0xFEDCBA9876543210ull);

TEST(GuidTest, DefaultIsNone) {
  constexpr Guid none;
  EXPECT_TRUE(none.is_none());
  EXPECT_EQ(none.high(), 0u);
  EXPECT_EQ(none.low(), 0u);
  EXPECT_EQ(none.ToString(), "00000000-0000-0000-0000-000000000000");
  EXPECT_THAT(Guid::Parse("00000000-0000-0000-0000-000000000000"), Optional(none));
}

TEST(GuidTest, OnlyAllZeroIsNone) {
  EXPECT_FALSE(Guid(0, 1).is_none());
  EXPECT_FALSE(Guid(1, 0).is_none());
  EXPECT_FALSE(kGuid.is_none());
}

TEST(GuidTest, ToStringIsLowerCaseEightFourFourFourTwelve) {
  EXPECT_EQ(kGuid.ToString(), kText);
  EXPECT_EQ(Guid(1, 2).ToString(), "00000000-0000-0001-0000-000000000002");
  EXPECT_EQ(Guid(~0ull, ~0ull).ToString(), "ffffffff-ffff-ffff-ffff-ffffffffffff");
  // Each group comes from the right bits: high is 8-4-4, low is 4-12.
  EXPECT_EQ(Guid(0x0000000100020003ull, 0x0004000000000005ull).ToString(),
            "00000001-0002-0003-0004-000000000005");
}

TEST(GuidTest, ParseReadsEachGroupIntoTheRightBits) {
  const std::optional<Guid> g = Guid::Parse(kText);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->high(), 0x0123ABCD456789EFull);
  EXPECT_EQ(g->low(), 0xFEDCBA9876543210ull);
}

TEST(GuidTest, ParseAcceptsUpperAndMixedCase) {
  EXPECT_THAT(Guid::Parse("0123ABCD-4567-89EF-FEDC-BA9876543210"), Optional(kGuid));
  EXPECT_THAT(Guid::Parse("0123AbCd-4567-89eF-FeDc-bA9876543210"), Optional(kGuid));
  EXPECT_THAT(Guid::Parse("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"), Optional(Guid(~0ull, ~0ull)));
}

TEST(GuidTest, ParseAndToStringRoundTrip) {
  for (int i = 0; i < 200; ++i) {
    const Guid g = Guid::Random();
    const std::string text = g.ToString();
    EXPECT_THAT(Guid::Parse(text), Optional(g)) << text;
  }
  for (const Guid g : {Guid(), Guid(0, 1), Guid(1, 0), Guid(~0ull, 0), Guid(0, ~0ull), kGuid}) {
    EXPECT_THAT(Guid::Parse(g.ToString()), Optional(g)) << g.ToString();
  }
}

TEST(GuidTest, ParseRefusesWrongLengths) {
  EXPECT_EQ(Guid::Parse(""), std::nullopt);
  EXPECT_EQ(Guid::Parse(kText.substr(0, 35)), std::nullopt);
  EXPECT_EQ(Guid::Parse(std::string(kText) + "0"), std::nullopt);
  EXPECT_EQ(Guid::Parse(std::string(kText) + " "), std::nullopt);
  EXPECT_EQ(Guid::Parse(" " + std::string(kText)), std::nullopt);
  EXPECT_EQ(Guid::Parse("{" + std::string(kText) + "}"), std::nullopt);
  EXPECT_EQ(Guid::Parse("0123abcd456789effedcba9876543210"), std::nullopt);  // no dashes
}

TEST(GuidTest, ParseRefusesBadCharacters) {
  for (const char bad : {'g', 'G', 'x', ' ', '+', '-', ':', '\0', '/', '@', '`', '{'}) {
    for (const std::size_t pos : {0u, 7u, 9u, 14u, 19u, 24u, 35u}) {
      std::string text(kText);
      text[pos] = bad;
      EXPECT_EQ(Guid::Parse(text), std::nullopt) << "'" << bad << "' at " << pos;
    }
  }
}

TEST(GuidTest, ParseRefusesDashesInTheWrongPlaces) {
  // Every dash moved one place left or right, keeping the length.
  for (const std::size_t dash : {8u, 13u, 18u, 23u}) {
    for (const int shift : {-1, 1}) {
      std::string text(kText);
      const std::size_t to = static_cast<std::size_t>(static_cast<int>(dash) + shift);
      std::swap(text[dash], text[to]);
      EXPECT_EQ(Guid::Parse(text), std::nullopt) << text;
    }
  }
  // A digit where a dash belongs.
  for (const std::size_t dash : {8u, 13u, 18u, 23u}) {
    std::string text(kText);
    text[dash] = '0';
    EXPECT_EQ(Guid::Parse(text), std::nullopt) << text;
  }
  // Dashes in the 8-4-4-4-12 count but other grouping, such as 4-4-4-4-12 with an extra digit.
  EXPECT_EQ(Guid::Parse("0123abc-d4567-89ef-fedc-ba9876543210"), std::nullopt);
  EXPECT_EQ(Guid::Parse("0123abcd-4567-89ef-fedcb-a987654321"), std::nullopt);
}

TEST(GuidTest, RandomIsVersionFourVariantOne) {
  for (int i = 0; i < 1000; ++i) {
    const Guid g = Guid::Random();
    EXPECT_EQ((g.high() >> 12) & 0xF, 4u) << g.ToString();
    EXPECT_EQ(g.low() >> 62, 0b10u) << g.ToString();
    EXPECT_FALSE(g.is_none());
    // In the text form: the version is the first digit of the third group, the variant the
    // first digit of the fourth.
    EXPECT_THAT(
        g.ToString(),
        MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  }
}

TEST(GuidTest, RandomValuesAreDistinct) {
  std::unordered_set<Guid> seen;
  for (int i = 0; i < 10000; ++i) {
    EXPECT_TRUE(seen.insert(Guid::Random()).second);
  }
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(GuidTest, RandomBitsOutsideVersionAndVariantVary) {
  // Every one of the 122 random bits takes both values across a few hundred Guids.
  std::uint64_t high_ones = 0, high_zeros = 0, low_ones = 0, low_zeros = 0;
  for (int i = 0; i < 500; ++i) {
    const Guid g = Guid::Random();
    high_ones |= g.high();
    high_zeros |= ~g.high();
    low_ones |= g.low();
    low_zeros |= ~g.low();
  }
  EXPECT_EQ(high_ones & high_zeros, ~0xF000ull);
  EXPECT_EQ(low_ones & low_zeros, ~(0xC0ull << 56));
}

TEST(GuidTest, RandomDiffersAcrossThreads) {
  // Each thread's generator is seeded separately, so threads do not repeat each other.
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  std::vector<std::vector<Guid>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&made, t] {
      for (int i = 0; i < kPerThread; ++i) made[t].push_back(Guid::Random());
    });
  }
  for (std::thread& th : threads) th.join();
  std::unordered_set<Guid> all;
  for (const auto& list : made) all.insert(list.begin(), list.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kPerThread));
}

TEST(GuidTest, OrderingIsHighThenLow) {
  EXPECT_LT(Guid(0, 5), Guid(1, 0));
  EXPECT_LT(Guid(1, 0), Guid(1, 1));
  EXPECT_LT(Guid(), Guid(0, 1));
  EXPECT_GT(Guid(2, 0), Guid(1, ~0ull));
  EXPECT_EQ(Guid(3, 4), Guid(3, 4));
  EXPECT_NE(Guid(3, 4), Guid(4, 3));
  EXPECT_LE(Guid(3, 4), Guid(3, 4));
}

TEST(GuidTest, UsableInOrderedAndUnorderedSets) {
  const std::vector<Guid> guids = {Guid(2, 1), Guid(1, 9), Guid(2, 0), Guid(1, 9), Guid(), kGuid};
  const std::set<Guid> ordered(guids.begin(), guids.end());
  EXPECT_THAT(ordered, ::testing::ElementsAre(Guid(), Guid(1, 9), Guid(2, 0), Guid(2, 1), kGuid));

  const std::unordered_set<Guid> unordered(guids.begin(), guids.end());
  EXPECT_EQ(unordered.size(), 5u);
  EXPECT_EQ(unordered.count(Guid(1, 9)), 1u);
  EXPECT_EQ(unordered.count(*Guid::Parse(kText)), 1u);
  EXPECT_EQ(unordered.count(Guid(9, 1)), 0u);
}

TEST(GuidTest, HashIsConsistentWithEquality) {
  const std::hash<Guid> hash;
  EXPECT_EQ(hash(kGuid), hash(*Guid::Parse(kText)));
  EXPECT_NE(hash(Guid(0, 1)), hash(Guid(0, 2)));
  EXPECT_NE(hash(Guid(1, 0)), hash(Guid(2, 0)));
}

}  // namespace
}  // namespace rolly
