// GuidMap and GuidSet: puts, finds, erases, growth past its load bound, the none GUID as a
// key, and agreement with std::unordered_map over seeded keys that collide in the table's low bits.

#include "rolly/core/guid_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace rolly {
namespace {

TEST(GuidMapTest, PutFindAndOverwrite) {
  GuidMap<int> map;
  EXPECT_EQ(map.Find(Guid(1, 2)), nullptr);
  map.Put(Guid(1, 2), 7);
  ASSERT_NE(map.Find(Guid(1, 2)), nullptr);
  EXPECT_EQ(*map.Find(Guid(1, 2)), 7);
  map.Put(Guid(1, 2), 8);
  EXPECT_EQ(*map.Find(Guid(1, 2)), 8);
  EXPECT_EQ(map.size(), 1u);
  EXPECT_FALSE(map.Insert(Guid(1, 2), 9));
  EXPECT_EQ(*map.Find(Guid(1, 2)), 8);
  EXPECT_TRUE(map.Insert(Guid(2, 1), 9));
  EXPECT_EQ(map.size(), 2u);
}

TEST(GuidMapTest, TheNoneGuidIsAKeyLikeAnyOther) {
  GuidMap<int> map;
  EXPECT_FALSE(map.Contains(Guid()));
  map.Put(Guid(), 3);
  EXPECT_TRUE(map.Contains(Guid()));
  EXPECT_EQ(*map.Find(Guid()), 3);
  EXPECT_EQ(map.size(), 1u);
  GuidSet set;
  EXPECT_TRUE(set.Insert(Guid()));
  EXPECT_FALSE(set.Insert(Guid()));
  EXPECT_TRUE(set.Contains(Guid()));
}

// Keys that differ only in their high bits, and random ones, through many growths (from an empty
// table and from a reserved one), always agree with std::unordered_map; keys that differ only in
// the top bits of either half still spread over the table.
TEST(GuidMapTest, AgreesWithUnorderedMapThroughGrowth) {
  for (bool reserve : {false, true}) {
    GuidMap<std::uint64_t> map;
    if (reserve) map.Reserve(5000);
    std::unordered_map<Guid, std::uint64_t> want;
    std::mt19937_64 rng(20261130);
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const Guid id = i % 2 == 0 ? Guid(i << 40, 0) : Guid(rng(), rng());
      map.Put(id, i);
      want[id] = i;
    }
    EXPECT_EQ(map.size(), want.size());
    for (const auto& [id, value] : want) {
      ASSERT_NE(map.Find(id), nullptr);
      EXPECT_EQ(*map.Find(id), value);
    }
    for (std::uint64_t i = 0; i < 1000; ++i) EXPECT_FALSE(map.Contains(Guid(rng(), rng() | 1)));
  }
}

// Puts and erases in a seeded mix, over a small key space so runs of neighbouring entries form and
// wrap past the table's end: after every erase, every key left is still found with its value, and
// no erased key is.
TEST(GuidMapTest, EraseKeepsEveryOtherKeyReachable) {
  GuidMap<std::uint64_t> map;
  std::unordered_map<Guid, std::uint64_t> want;
  std::mt19937_64 rng(7);
  for (std::uint64_t step = 0; step < 20000; ++step) {
    const Guid id(rng() % 4 == 0 ? 0 : rng() % 3, rng() % 300);
    if (rng() % 3 == 0) {
      EXPECT_EQ(map.Erase(id), want.erase(id) == 1) << step;
    } else {
      map.Put(id, step);
      want[id] = step;
    }
    ASSERT_EQ(map.size(), want.size()) << step;
    if (step % 97 == 0) {
      for (const auto& [key, value] : want) {
        const std::uint64_t* found = map.Find(key);
        ASSERT_NE(found, nullptr) << step;
        EXPECT_EQ(*found, value);
      }
    }
  }
  for (const auto& [key, value] : want) EXPECT_TRUE(map.Erase(key));
  EXPECT_EQ(map.size(), 0u);
  for (std::uint64_t i = 0; i < 300; ++i) EXPECT_FALSE(map.Contains(Guid(1, i)));
}

TEST(GuidMapTest, EraseTheNoneGuidAndAbsentKeys) {
  GuidMap<int> map;
  EXPECT_FALSE(map.Erase(Guid()));
  EXPECT_FALSE(map.Erase(Guid(1, 1)));
  map.Put(Guid(), 1);
  map.Put(Guid(1, 1), 2);
  EXPECT_TRUE(map.Erase(Guid()));
  EXPECT_FALSE(map.Contains(Guid()));
  EXPECT_EQ(*map.Find(Guid(1, 1)), 2);
  EXPECT_FALSE(map.Erase(Guid(2, 2)));
  GuidSet set;
  EXPECT_TRUE(set.Insert(Guid(3, 3)));
  EXPECT_TRUE(set.Erase(Guid(3, 3)));
  EXPECT_FALSE(set.Contains(Guid(3, 3)));
  EXPECT_TRUE(set.Insert(Guid(3, 3)));
}

// 2,000 keys that differ only in bits 48 and up of one half: a look-up stays a few probes, which
// a hash that ignores those bits would turn into a walk over every key (the test would crawl).
TEST(GuidMapTest, KeysDifferingOnlyInHighBitsSpread) {
  for (bool high_half : {false, true}) {
    GuidSet set;
    for (std::uint64_t i = 1; i <= 2000; ++i) {
      ASSERT_TRUE(set.Insert(high_half ? Guid(i << 48, 0) : Guid(0, i << 48)));
    }
    for (std::uint64_t i = 1; i <= 2000; ++i) {
      EXPECT_TRUE(set.Contains(high_half ? Guid(i << 48, 0) : Guid(0, i << 48)));
    }
    EXPECT_EQ(set.size(), 2000u);
  }
}

}  // namespace
}  // namespace rolly
