// Tests for Checksum and ChecksumBuilder. The reference is XXH3_64bits from Debian's compiled
// libxxhash, called directly (this file never inlines xxHash): a code path separate from the one
// Checksum takes, so the two check each other digest for digest.

#include "rolly/core/checksum.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cinttypes>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#ifdef XXH_INLINE_ALL
#error "checksum_test compares against the compiled libxxhash; do not inline xxHash here"
#endif

#include "rolly/core/bytes.h"

namespace rolly {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

// The strong type: equality only, no ordering, no arithmetic, no silent conversions.
template <typename T>
concept Ordered = requires(T a, T b) {
  a < b;
};
template <typename T>
concept Addable = requires(T a, T b) {
  a + b;
};
static_assert(std::equality_comparable<Checksum>);
static_assert(!Ordered<Checksum>);
static_assert(!Addable<Checksum>);
static_assert(!std::is_convertible_v<Checksum, std::uint64_t>);
static_assert(!std::is_convertible_v<std::uint64_t, Checksum>);

Bytes RandomBytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

std::uint64_t Reference(ByteView bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

TEST(ChecksumTest, ReferenceIsTheSharedLibrary) {
  // The reference must be the compiled library, not a second inline copy of the header.
  const auto fn = &XXH3_64bits;
  void* address = nullptr;
  static_assert(sizeof address == sizeof fn);
  std::memcpy(&address, &fn, sizeof address);
  Dl_info info{};
  ASSERT_NE(dladdr(address, &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  EXPECT_THAT(info.dli_fname, HasSubstr("libxxhash"));
}

TEST(ChecksumTest, EmptyInputHasTheKnownDigest) {
  // XXH3-64 of no bytes with seed 0, from the xxHash test vectors.
  EXPECT_EQ(Checksum().bits(), 0x2D06800538D394C2ull);
  EXPECT_EQ(Checksum::Of(ByteView{}).bits(), 0x2D06800538D394C2ull);
  EXPECT_EQ(Checksum::Of(ByteView{}), Checksum());
  EXPECT_EQ(Checksum().bits(), Reference(ByteView{}));
}

TEST(ChecksumTest, OfMatchesReferenceForEverySizeUpTo4096) {
  const Bytes data = RandomBytes(4096, 1);
  for (std::size_t n = 0; n <= data.size(); ++n) {
    const ByteView view(data.data(), n);
    ASSERT_EQ(Checksum::Of(view).bits(), Reference(view)) << "size " << n;
  }
}

TEST(ChecksumTest, OfMatchesReferenceAtUnalignedStarts) {
  const Bytes data = RandomBytes(2048 + 16, 2);
  for (std::size_t start = 1; start < 16; ++start) {
    for (const std::size_t n : {1u, 3u, 16u, 17u, 128u, 129u, 240u, 241u, 1024u, 2048u}) {
      const ByteView view(data.data() + start, n);
      ASSERT_EQ(Checksum::Of(view).bits(), Reference(view)) << start << " " << n;
    }
  }
}

TEST(ChecksumTest, OfMatchesReferenceForLargeInputs) {
  const Bytes data = RandomBytes((4u << 20) + 333, 3);
  for (const std::size_t n : {std::size_t{65536}, std::size_t{65537}, std::size_t{1} << 20,
                              (std::size_t{1} << 20) + 63, data.size()}) {
    const ByteView view(data.data(), n);
    EXPECT_EQ(Checksum::Of(view).bits(), Reference(view)) << "size " << n;
  }
}

TEST(ChecksumTest, OfMatchesReferenceForUniformBytes) {
  for (const std::uint8_t fill : {std::uint8_t{0x00}, std::uint8_t{0xFF}}) {
    const Bytes data(5000, fill);
    for (const std::size_t n : {1u, 4u, 8u, 9u, 16u, 17u, 128u, 129u, 240u, 241u, 5000u}) {
      const ByteView view(data.data(), n);
      EXPECT_EQ(Checksum::Of(view).bits(), Reference(view)) << int{fill} << " " << n;
    }
  }
}

TEST(ChecksumTest, EveryFlippedBitChangesTheChecksum) {
  Bytes data = RandomBytes(64, 4);
  const Checksum original = Checksum::Of(data);
  for (std::size_t i = 0; i < data.size() * 8; ++i) {
    data[i / 8] ^= static_cast<std::uint8_t>(1u << (i % 8));
    EXPECT_NE(Checksum::Of(data), original) << "bit " << i;
    data[i / 8] ^= static_cast<std::uint8_t>(1u << (i % 8));
  }
  EXPECT_EQ(Checksum::Of(data), original);
}

TEST(ChecksumTest, TruncationChangesTheChecksum) {
  const Bytes data = RandomBytes(100, 5);
  const Checksum full = Checksum::Of(data);
  EXPECT_NE(Checksum::Of(ByteView(data).first(99)), full);
  EXPECT_NE(Checksum::Of(ByteView(data).subspan(1)), full);
}

TEST(ChecksumTest, FromBitsAndBitsRoundTrip) {
  for (const std::uint64_t bits :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{0x0123456789ABCDEF},
        std::uint64_t{0xFFFFFFFFFFFFFFFF}}) {
    EXPECT_EQ(Checksum::FromBits(bits).bits(), bits);
  }
  const Checksum c = Checksum::Of(AsBytes("door"));
  EXPECT_EQ(Checksum::FromBits(c.bits()), c);
}

TEST(ChecksumTest, BitsSurviveAStoreAndLoad) {
  const Checksum c = Checksum::Of(AsBytes("chunk payload"));
  Bytes out;
  ByteWriter(&out).U64(c.bits());
  EXPECT_EQ(Checksum::FromBits(LoadU64(out.data())), c);
}

TEST(ChecksumTest, ToHexIsSixteenLowerCaseDigits) {
  EXPECT_EQ(Checksum::FromBits(0).ToHex(), "0000000000000000");
  EXPECT_EQ(Checksum::FromBits(0xAB).ToHex(), "00000000000000ab");
  EXPECT_EQ(Checksum::FromBits(0x0123456789ABCDEFull).ToHex(), "0123456789abcdef");
  EXPECT_EQ(Checksum::FromBits(0xFFFFFFFFFFFFFFFFull).ToHex(), "ffffffffffffffff");
  EXPECT_EQ(Checksum().ToHex(), "2d06800538d394c2");

  const Bytes data = RandomBytes(4096, 6);
  for (std::size_t n = 0; n < 64; ++n) {
    const Checksum c = Checksum::Of(ByteView(data.data(), n));
    const std::string hex = c.ToHex();
    EXPECT_THAT(hex, MatchesRegex("[0-9a-f]{16}"));
    char expected[17];
    std::snprintf(expected, sizeof expected, "%016" PRIx64, c.bits());
    EXPECT_EQ(hex, expected);
  }
}

TEST(ChecksumTest, EqualityFollowsBits) {
  EXPECT_EQ(Checksum::FromBits(7), Checksum::FromBits(7));
  EXPECT_NE(Checksum::FromBits(7), Checksum::FromBits(8));
  EXPECT_TRUE(Checksum::Of(AsBytes("a")) == Checksum::Of(AsBytes("a")));
  EXPECT_FALSE(Checksum::Of(AsBytes("a")) != Checksum::Of(AsBytes("a")));
  EXPECT_TRUE(Checksum::Of(AsBytes("a")) != Checksum::Of(AsBytes("b")));
}

TEST(ChecksumBuilderTest, NothingAddedIsTheEmptyChecksum) {
  const ChecksumBuilder builder;
  EXPECT_EQ(builder.Finish(), Checksum());
}

TEST(ChecksumBuilderTest, SplitAtEveryPointEqualsOneShot) {
  // Long enough to cross the streaming buffer and several stripes and blocks.
  const Bytes data = RandomBytes(2500, 7);
  const Checksum whole = Checksum::Of(data);
  ASSERT_EQ(whole.bits(), Reference(data));
  for (std::size_t cut = 0; cut <= data.size(); ++cut) {
    ChecksumBuilder builder;
    builder.Add(ByteView(data).first(cut)).Add(ByteView(data).subspan(cut));
    ASSERT_EQ(builder.Finish(), whole) << "cut at " << cut;
  }
}

TEST(ChecksumBuilderTest, ManyPiecesOfRandomSizesEqualOneShot) {
  std::mt19937_64 rng(8);
  for (int round = 0; round < 50; ++round) {
    const Bytes data = RandomBytes(rng() % 20000, rng());
    ChecksumBuilder builder;
    std::size_t pos = 0;
    while (pos < data.size()) {
      const std::size_t n = std::min<std::size_t>(rng() % 700, data.size() - pos);
      builder.Add(ByteView(data).subspan(pos, n));
      pos += n;
    }
    ASSERT_EQ(builder.Finish(), Checksum::Of(data)) << "round " << round;
    ASSERT_EQ(builder.Finish().bits(), Reference(data)) << "round " << round;
  }
}

TEST(ChecksumBuilderTest, ByteAtATimeEqualsOneShot) {
  const Bytes data = RandomBytes(1100, 9);
  ChecksumBuilder builder;
  for (const std::uint8_t b : data) builder.Add(ByteView(&b, 1));
  EXPECT_EQ(builder.Finish(), Checksum::Of(data));
}

TEST(ChecksumBuilderTest, EmptyPiecesChangeNothing) {
  const Bytes data = RandomBytes(300, 10);
  ChecksumBuilder builder;
  builder.Add(ByteView{})
      .Add(ByteView(data).first(100))
      .Add(ByteView{})
      .Add(ByteView(data).subspan(100));
  EXPECT_EQ(builder.Finish(), Checksum::Of(data));
}

TEST(ChecksumBuilderTest, FinishDoesNotEndTheStream) {
  const Bytes data = RandomBytes(600, 11);
  ChecksumBuilder builder;
  builder.Add(ByteView(data).first(250));
  EXPECT_EQ(builder.Finish(), Checksum::Of(ByteView(data).first(250)));
  EXPECT_EQ(builder.Finish(), Checksum::Of(ByteView(data).first(250)));
  builder.Add(ByteView(data).subspan(250));
  EXPECT_EQ(builder.Finish(), Checksum::Of(data));
}

TEST(ChecksumBuilderTest, BuildersAreIndependent) {
  ChecksumBuilder a;
  ChecksumBuilder b;
  a.Add(AsBytes("left"));
  b.Add(AsBytes("right"));
  EXPECT_EQ(a.Finish(), Checksum::Of(AsBytes("left")));
  EXPECT_EQ(b.Finish(), Checksum::Of(AsBytes("right")));
}

}  // namespace
}  // namespace rolly
