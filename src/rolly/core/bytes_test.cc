// Tests for ByteWriter, ByteSink, ByteReader, varints, zigzag and the little-endian loads and
// stores.

#include "rolly/core/bytes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rolly {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

// gmock's container matchers want a container with const_iterator, which std::span lacks.
Bytes Copy(ByteView v) { return Bytes(v.begin(), v.end()); }

Bytes EncodeVarint(std::uint64_t v) {
  Bytes out;
  ByteWriter(&out).Varint(v);
  return out;
}

// --- Fixed-size numbers ---------------------------------------------------------------------

TEST(ByteWriterTest, FixedNumbersAreLittleEndian) {
  Bytes out;
  ByteWriter w(&out);
  w.U8(0xAB);
  w.U16(0x0102);
  w.U32(0x03040506);
  w.U64(0x0708090A0B0C0D0Eull);
  EXPECT_THAT(out, ElementsAre(0xAB, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0E, 0x0D, 0x0C, 0x0B,
                               0x0A, 0x09, 0x08, 0x07));
  EXPECT_EQ(w.size(), 15u);
}

TEST(ByteWriterTest, SignedAndFloatLayouts) {
  Bytes out;
  ByteWriter w(&out);
  w.I64(-2);
  w.F32(1.0f);  // 0x3F800000
  w.F64(-2.0);  // 0xC000000000000000
  EXPECT_THAT(out, ElementsAre(0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  //
                               0x00, 0x00, 0x80, 0x3F,                          //
                               0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC0));
}

TEST(ByteReaderTest, EveryFixedTypeRoundTripsAtEdgeValues) {
  const std::uint8_t u8s[] = {0, 1, 0x7F, 0x80, 0xFF};
  const std::uint16_t u16s[] = {0, 1, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF};
  const std::uint32_t u32s[] = {0, 1, 0xFF, 0x10000, 0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu};
  const std::uint64_t u64s[] = {
      0, 1, 0xFF, 0x100000000ull, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, kU64Max};
  const std::int64_t i64s[] = {0, 1, -1, kI64Min, kI64Max, kI64Min + 1, -256};
  const float f32s[] = {0.0f,
                        -0.0f,
                        1.5f,
                        -3.25e10f,
                        std::numeric_limits<float>::min(),
                        std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::denorm_min(),
                        std::numeric_limits<float>::infinity()};
  const double f64s[] = {0.0,
                         -0.0,
                         0.1,
                         -1e300,
                         std::numeric_limits<double>::min(),
                         std::numeric_limits<double>::max(),
                         std::numeric_limits<double>::denorm_min(),
                         -std::numeric_limits<double>::infinity()};

  Bytes out;
  ByteWriter w(&out);
  for (auto v : u8s) w.U8(v);
  for (auto v : u16s) w.U16(v);
  for (auto v : u32s) w.U32(v);
  for (auto v : u64s) w.U64(v);
  for (auto v : i64s) w.I64(v);
  for (auto v : f32s) w.F32(v);
  for (auto v : f64s) w.F64(v);
  w.F64(std::numeric_limits<double>::quiet_NaN());
  const std::size_t expected_size = std::size(u8s) + 2 * std::size(u16s) + 4 * std::size(u32s) +
                                    8 * std::size(u64s) + 8 * std::size(i64s) +
                                    4 * std::size(f32s) + 8 * std::size(f64s) + 8;
  ASSERT_EQ(out.size(), expected_size);

  ByteReader r(out);
  for (auto v : u8s) {
    std::uint8_t got = 0;
    ASSERT_TRUE(r.U8(&got));
    EXPECT_EQ(got, v);
  }
  for (auto v : u16s) {
    std::uint16_t got = 0;
    ASSERT_TRUE(r.U16(&got));
    EXPECT_EQ(got, v);
  }
  for (auto v : u32s) {
    std::uint32_t got = 0;
    ASSERT_TRUE(r.U32(&got));
    EXPECT_EQ(got, v);
  }
  for (auto v : u64s) {
    std::uint64_t got = 0;
    ASSERT_TRUE(r.U64(&got));
    EXPECT_EQ(got, v);
  }
  for (auto v : i64s) {
    std::int64_t got = 0;
    ASSERT_TRUE(r.I64(&got));
    EXPECT_EQ(got, v);
  }
  for (auto v : f32s) {
    float got = 0;
    ASSERT_TRUE(r.F32(&got));
    EXPECT_EQ(got, v);
    EXPECT_EQ(std::signbit(got), std::signbit(v));
  }
  for (auto v : f64s) {
    double got = 0;
    ASSERT_TRUE(r.F64(&got));
    EXPECT_EQ(got, v);
    EXPECT_EQ(std::signbit(got), std::signbit(v));
  }
  double nan = 0;
  ASSERT_TRUE(r.F64(&nan));
  EXPECT_TRUE(std::isnan(nan));
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.position(), out.size());
}

TEST(ByteReaderTest, TruncatedFixedNumbersFail) {
  const std::uint8_t three[] = {1, 2, 3};
  {
    ByteReader r(three);
    std::uint32_t v = 0;
    EXPECT_FALSE(r.U32(&v));
    EXPECT_FALSE(r.ok());
  }
  {
    ByteReader r(ByteView(three, 1));
    std::uint16_t v = 0;
    EXPECT_FALSE(r.U16(&v));
    EXPECT_FALSE(r.ok());
  }
  {
    ByteReader r(three);
    std::uint64_t u = 0;
    EXPECT_FALSE(r.U64(&u));
  }
  {
    ByteReader r(three);
    std::int64_t i = 0;
    EXPECT_FALSE(r.I64(&i));
  }
  {
    ByteReader r(three);
    float f = 0;
    EXPECT_FALSE(r.F32(&f));
  }
  {
    ByteReader r(three);
    double d = 0;
    EXPECT_FALSE(r.F64(&d));
  }
  {
    ByteReader r(ByteView{});
    std::uint8_t b = 0;
    EXPECT_FALSE(r.U8(&b));
    EXPECT_FALSE(r.ok());
  }
}

// --- Varints --------------------------------------------------------------------------------

TEST(ByteWriterTest, VarintEncodingsAtEdges) {
  EXPECT_THAT(EncodeVarint(0), ElementsAre(0x00));
  EXPECT_THAT(EncodeVarint(1), ElementsAre(0x01));
  EXPECT_THAT(EncodeVarint(127), ElementsAre(0x7F));
  EXPECT_THAT(EncodeVarint(128), ElementsAre(0x80, 0x01));
  EXPECT_THAT(EncodeVarint(300), ElementsAre(0xAC, 0x02));
  EXPECT_THAT(EncodeVarint(16383), ElementsAre(0xFF, 0x7F));
  EXPECT_THAT(EncodeVarint(16384), ElementsAre(0x80, 0x80, 0x01));
  EXPECT_THAT(EncodeVarint(1ull << 63),
              ElementsAre(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01));
  EXPECT_THAT(EncodeVarint(kU64Max),
              ElementsAre(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01));
}

TEST(ByteReaderTest, VarintRoundTripsAtEdgeValues) {
  std::vector<std::uint64_t> values = {
      0, 1, 127, 128, 255, 256, 16383, 16384, 1ull << 63, (1ull << 63) - 1, kU64Max, kU64Max - 1};
  for (int k = 1; k <= 9; ++k) {
    values.push_back((1ull << (7 * k)) - 1);
    values.push_back(1ull << (7 * k));
  }
  for (const std::uint64_t v : values) {
    const Bytes encoded = EncodeVarint(v);
    EXPECT_EQ(encoded.size(), VarintSize(v)) << v;
    ByteReader r(encoded);
    std::uint64_t got = 0;
    ASSERT_TRUE(r.Varint(&got)) << v;
    EXPECT_EQ(got, v);
    EXPECT_TRUE(r.empty()) << v;
  }
}

TEST(ByteReaderTest, RandomVarintsRoundTrip) {
  std::mt19937_64 rng(12345);
  Bytes out;
  ByteWriter w(&out);
  std::vector<std::uint64_t> values;
  for (int i = 0; i < 2000; ++i) {
    // Shift by a random amount so that every encoded length is well represented.
    const std::uint64_t v = rng() >> (rng() % 64);
    values.push_back(v);
    w.Varint(v);
  }
  ByteReader r(out);
  for (const std::uint64_t v : values) {
    std::uint64_t got = 0;
    ASSERT_TRUE(r.Varint(&got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(r.empty());
}

TEST(VarintSizeTest, SizesAtEveryLengthBoundary) {
  EXPECT_EQ(VarintSize(0), 1u);
  EXPECT_EQ(VarintSize(127), 1u);
  EXPECT_EQ(VarintSize(128), 2u);
  for (std::size_t k = 1; k <= 9; ++k) {
    EXPECT_EQ(VarintSize((1ull << (7 * k)) - 1), k) << k;
    EXPECT_EQ(VarintSize(1ull << (7 * k)), k + 1) << k;
  }
  EXPECT_EQ(VarintSize(1ull << 63), 10u);
  EXPECT_EQ(VarintSize(kU64Max), 10u);
}

TEST(ByteReaderTest, OverlongVarintIsRefused) {
  const std::vector<Bytes> overlong = {
      {0x80, 0x00},                                                  // 0 in two bytes
      {0x81, 0x00},                                                  // 1 in two bytes
      {0xFF, 0x80, 0x00},                                            // 127 in three bytes
      {0x80, 0x80, 0x80, 0x00},                                      // 0 in four bytes
      {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00},  // 0 in ten bytes
  };
  for (const Bytes& bytes : overlong) {
    ByteReader r(bytes);
    std::uint64_t v = 0;
    EXPECT_FALSE(r.Varint(&v)) << ::testing::PrintToString(bytes);
    EXPECT_FALSE(r.ok());
  }
}

TEST(ByteReaderTest, TenByteVarintWithLastByteAboveOneIsRefused) {
  for (const int last : {0x02, 0x03, 0x7F, 0x81}) {
    Bytes bytes(9, 0xFF);
    bytes.push_back(static_cast<std::uint8_t>(last));
    ByteReader r(bytes);
    std::uint64_t v = 0;
    EXPECT_FALSE(r.Varint(&v)) << last;
    EXPECT_FALSE(r.ok());
  }
}

TEST(ByteReaderTest, ElevenByteVarintIsRefused) {
  Bytes bytes(10, 0x80);
  bytes.push_back(0x01);
  ByteReader r(bytes);
  std::uint64_t v = 0;
  EXPECT_FALSE(r.Varint(&v));
}

TEST(ByteReaderTest, TruncatedVarintIsRefused) {
  for (const Bytes& bytes : std::vector<Bytes>{{}, {0x80}, {0xFF, 0xFF}, Bytes(9, 0xFF)}) {
    ByteReader r(bytes);
    std::uint64_t v = 0;
    EXPECT_FALSE(r.Varint(&v)) << ::testing::PrintToString(bytes);
    EXPECT_FALSE(r.ok());
  }
}

// The reader accepts exactly the bytes the writer makes: every two-byte input that decodes is
// what the writer writes for the value decoded.
TEST(ByteReaderTest, EveryAcceptedTwoByteVarintIsTheWritersForm) {
  int accepted = 0;
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const Bytes bytes = {static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)};
      ByteReader r(bytes);
      std::uint64_t v = 0;
      if (!r.Varint(&v)) continue;
      const Bytes reencoded = EncodeVarint(v);
      EXPECT_THAT(Copy(ByteView(bytes).first(r.position())), ElementsAreArray(reencoded))
          << a << " " << b;
      if (r.position() == 2) ++accepted;
    }
  }
  // 128..16383 are the two-byte values.
  EXPECT_EQ(accepted, 16384 - 128);
}

TEST(ByteReaderTest, VarintAtMostAcceptsMaxAndRefusesOnePast) {
  const Bytes at = EncodeVarint(1000);
  {
    ByteReader r(at);
    std::uint64_t v = 0;
    EXPECT_TRUE(r.VarintAtMost(1000, &v));
    EXPECT_EQ(v, 1000u);
  }
  {
    ByteReader r(at);
    std::uint64_t v = 0;
    EXPECT_FALSE(r.VarintAtMost(999, &v));
    EXPECT_FALSE(r.ok());
  }
}

// --- Zigzag ---------------------------------------------------------------------------------

TEST(ZigZagTest, SmallMagnitudesStaySmall) {
  EXPECT_EQ(ZigZagEncode(0), 0u);
  EXPECT_EQ(ZigZagEncode(-1), 1u);
  EXPECT_EQ(ZigZagEncode(1), 2u);
  EXPECT_EQ(ZigZagEncode(-2), 3u);
  EXPECT_EQ(ZigZagEncode(2), 4u);
}

TEST(ZigZagTest, EdgeValues) {
  EXPECT_EQ(ZigZagEncode(kI64Max), kU64Max - 1);
  EXPECT_EQ(ZigZagEncode(kI64Min), kU64Max);
  EXPECT_EQ(ZigZagDecode(kU64Max), kI64Min);
  EXPECT_EQ(ZigZagDecode(kU64Max - 1), kI64Max);
  EXPECT_EQ(ZigZagDecode(1), -1);
  EXPECT_EQ(ZigZagDecode(0), 0);
  for (const std::int64_t v : {kI64Min, kI64Min + 1, std::int64_t{-1}, std::int64_t{0},
                               std::int64_t{1}, kI64Max - 1, kI64Max}) {
    EXPECT_EQ(ZigZagDecode(ZigZagEncode(v)), v);
  }
}

TEST(ByteReaderTest, SignedVarintRoundTrips) {
  const std::int64_t values[] = {0, -1, 1, -64, 63, -65, 64, kI64Min, kI64Max};
  Bytes out;
  ByteWriter w(&out);
  for (const std::int64_t v : values) w.SignedVarint(v);
  ByteReader r(out);
  for (const std::int64_t v : values) {
    std::int64_t got = 0;
    ASSERT_TRUE(r.SignedVarint(&got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(VarintSize(ZigZagEncode(-64)), 1u);
  EXPECT_EQ(VarintSize(ZigZagEncode(-65)), 2u);
}

TEST(ByteReaderTest, SignedVarintRefusesOverlong) {
  const Bytes bytes = {0x80, 0x00};
  ByteReader r(bytes);
  std::int64_t v = 0;
  EXPECT_FALSE(r.SignedVarint(&v));
}

// --- Failure is sticky ----------------------------------------------------------------------

TEST(ByteReaderTest, ReadsAfterFailureStayFailed) {
  const Bytes bytes = {0x80, 0x00, 0x05, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  ByteReader r(bytes);
  std::uint64_t v = 0;
  ASSERT_FALSE(r.Varint(&v));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_TRUE(r.empty());

  std::uint8_t u8 = 0;
  std::uint16_t u16 = 0;
  std::uint32_t u32 = 0;
  std::uint64_t u64 = 0;
  std::int64_t i64 = 0;
  float f32 = 0;
  double f64 = 0;
  ByteView raw;
  std::string_view text;
  EXPECT_FALSE(r.U8(&u8));
  EXPECT_FALSE(r.U16(&u16));
  EXPECT_FALSE(r.U32(&u32));
  EXPECT_FALSE(r.U64(&u64));
  EXPECT_FALSE(r.I64(&i64));
  EXPECT_FALSE(r.F32(&f32));
  EXPECT_FALSE(r.F64(&f64));
  EXPECT_FALSE(r.Varint(&v));
  EXPECT_FALSE(r.VarintAtMost(kU64Max, &v));
  EXPECT_FALSE(r.SignedVarint(&i64));
  EXPECT_FALSE(r.Raw(0, &raw));
  EXPECT_FALSE(r.Skip(0));
  EXPECT_FALSE(r.LengthPrefixed(100, &raw));
  EXPECT_FALSE(r.LengthPrefixed(100, &text));
  EXPECT_FALSE(r.ok());
}

TEST(ByteReaderTest, FailMarksReaderFailed) {
  const Bytes bytes = {1, 2, 3};
  ByteReader r(bytes);
  EXPECT_FALSE(r.Fail());
  EXPECT_FALSE(r.ok());
  std::uint8_t b = 0;
  EXPECT_FALSE(r.U8(&b));
}

// --- Raw and length-prefixed ----------------------------------------------------------------

TEST(ByteReaderTest, RawViewsBytesAndTracksPosition) {
  const Bytes bytes = {10, 11, 12, 13, 14};
  ByteReader r(bytes);
  ByteView a;
  ASSERT_TRUE(r.Raw(2, &a));
  EXPECT_THAT(Copy(a), ElementsAre(10, 11));
  EXPECT_EQ(a.data(), bytes.data());  // a view, not a copy
  EXPECT_EQ(r.position(), 2u);
  EXPECT_EQ(r.remaining(), 3u);
  ASSERT_TRUE(r.Skip(1));
  ByteView b;
  ASSERT_TRUE(r.Raw(2, &b));  // exactly to the end
  EXPECT_THAT(Copy(b), ElementsAre(13, 14));
  EXPECT_TRUE(r.empty());
  ByteView none;
  EXPECT_TRUE(r.Raw(0, &none));
  EXPECT_TRUE(r.ok());
}

TEST(ByteReaderTest, RawPastEndFails) {
  const Bytes bytes = {1, 2, 3};
  ByteReader r(bytes);
  ByteView v;
  ASSERT_TRUE(r.Skip(1));
  EXPECT_FALSE(r.Raw(3, &v));
  EXPECT_FALSE(r.ok());
}

TEST(ByteReaderTest, RawOfHugeLengthFails) {
  const Bytes bytes = {1, 2, 3};
  ByteReader r(bytes);
  ASSERT_TRUE(r.Skip(1));
  ByteView v;
  // Must not wrap around when added to the position.
  EXPECT_FALSE(r.Raw(std::numeric_limits<std::size_t>::max(), &v));
  EXPECT_FALSE(r.ok());
}

TEST(ByteReaderTest, LengthPrefixedRoundTrips) {
  Bytes out;
  ByteWriter w(&out);
  w.LengthPrefixed(std::string_view("door"));
  w.LengthPrefixed(std::string_view(""));
  const Bytes blob(200, 0x5A);
  w.LengthPrefixed(ByteView(blob));
  EXPECT_EQ(out.size(), 1 + 4 + 1 + 2 + 200u);
  EXPECT_EQ(out[0], 4);

  ByteReader r(out);
  std::string_view s;
  ASSERT_TRUE(r.LengthPrefixed(100, &s));
  EXPECT_EQ(s, "door");
  ASSERT_TRUE(r.LengthPrefixed(100, &s));
  EXPECT_EQ(s, "");
  ByteView b;
  ASSERT_TRUE(r.LengthPrefixed(1000, &b));
  EXPECT_THAT(Copy(b), ElementsAreArray(blob));
  EXPECT_TRUE(r.empty());
}

TEST(ByteReaderTest, LengthPrefixedAtMaxIsAccepted) {
  Bytes out;
  ByteWriter(&out).LengthPrefixed(std::string_view("abcdefgh"));
  ByteReader r(out);
  std::string_view s;
  ASSERT_TRUE(r.LengthPrefixed(8, &s));
  EXPECT_EQ(s, "abcdefgh");
}

TEST(ByteReaderTest, LengthPrefixedOnePastMaxIsRefused) {
  Bytes out;
  ByteWriter(&out).LengthPrefixed(std::string_view("abcdefghi"));
  {
    ByteReader r(out);
    std::string_view s;
    EXPECT_FALSE(r.LengthPrefixed(8, &s));
    EXPECT_FALSE(r.ok());
  }
  {
    ByteReader r(out);
    ByteView b;
    EXPECT_FALSE(r.LengthPrefixed(8, &b));
    EXPECT_FALSE(r.ok());
  }
}

TEST(ByteReaderTest, LengthPrefixedLongerThanInputIsRefused) {
  const Bytes bytes = {5, 'a', 'b', 'c'};
  ByteReader r(bytes);
  std::string_view s;
  EXPECT_FALSE(r.LengthPrefixed(100, &s));
  EXPECT_FALSE(r.ok());
}

TEST(ByteReaderTest, LengthPrefixedWithOverlongLengthIsRefused) {
  const Bytes bytes = {0x83, 0x00, 'a', 'b', 'c'};
  ByteReader r(bytes);
  std::string_view s;
  EXPECT_FALSE(r.LengthPrefixed(100, &s));
}

// --- Patch, loads and stores ----------------------------------------------------------------

TEST(ByteWriterTest, PatchU64OverwritesInPlace) {
  Bytes out;
  ByteWriter w(&out);
  w.U8(0xEE);
  const std::size_t at = w.size();
  w.U64(0);
  w.U8(0xFF);
  w.PatchU64(at, 0x1122334455667788ull);
  EXPECT_THAT(out, ElementsAre(0xEE, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0xFF));
  EXPECT_EQ(w.size(), 10u);

  ByteReader r(out);
  ASSERT_TRUE(r.Skip(1));
  std::uint64_t v = 0;
  ASSERT_TRUE(r.U64(&v));
  EXPECT_EQ(v, 0x1122334455667788ull);
}

TEST(ByteWriterTest, WriterAppendsToExistingBytes) {
  Bytes out = {1, 2};
  ByteWriter w(&out);
  EXPECT_EQ(w.size(), 2u);
  w.Raw(std::string_view("xy"));
  EXPECT_THAT(out, ElementsAre(1, 2, 'x', 'y'));
}

// --- ByteSink ---------------------------------------------------------------------------------

// Writes the same values through a ByteWriter and a ByteSink.
template <typename W>
void WriteMix(W& w, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t v = rng() >> (rng() % 64);
    switch (rng() % 9) {
      case 0: w.U8(static_cast<std::uint8_t>(v)); break;
      case 1: w.U16(static_cast<std::uint16_t>(v)); break;
      case 2: w.U32(static_cast<std::uint32_t>(v)); break;
      case 3: w.U64(v); break;
      case 4: w.I64(-static_cast<std::int64_t>(v)); break;
      case 5: w.F32(static_cast<float>(v) * 0.5f); break;
      case 6: w.F64(-static_cast<double>(v)); break;
      case 7: w.SignedVarint(static_cast<std::int64_t>(v) * (v % 2 ? -1 : 1)); break;
      default: {
        w.Varint(v);
        const std::string text(v % 300, static_cast<char>('a' + v % 26));
        w.LengthPrefixed(std::string_view(text));
        w.Raw(std::string_view());
        break;
      }
    }
  }
}

TEST(ByteSinkTest, WritesTheBytesAByteWriterWrites) {
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    Bytes expected;
    ByteWriter w(&expected);
    WriteMix(w, seed);
    ByteSink sink;
    WriteMix(sink, seed);
    EXPECT_EQ(sink.size(), expected.size());
    EXPECT_EQ(sink.ToBytes(), expected) << "seed " << seed;
    EXPECT_GE(sink.capacity(), sink.size());
  }
}

TEST(ByteSinkTest, VarintsAtEveryLengthMatchTheWriter) {
  ByteSink sink;
  Bytes expected;
  ByteWriter w(&expected);
  for (int bits = 0; bits <= 64; ++bits) {
    const std::uint64_t v = bits == 64 ? kU64Max : (std::uint64_t{1} << bits) - 1;
    sink.Varint(v);
    w.Varint(v);
    sink.Varint(v + 1);
    w.Varint(v + 1);
  }
  EXPECT_EQ(sink.ToBytes(), expected);
}

TEST(ByteSinkTest, ExtendReserveTruncateAndClear) {
  ByteSink sink;
  EXPECT_TRUE(sink.empty());
  EXPECT_EQ(sink.view().size(), 0u);
  sink.Reserve(100);
  const std::uint8_t* const room = sink.data();
  EXPECT_GE(sink.capacity(), 100u);
  std::uint8_t* p = sink.Extend(100);  // within the room reserved: no growth
  EXPECT_EQ(p, room);
  std::memset(p, 7, 100);
  EXPECT_EQ(sink.data(), room);
  sink.Truncate(3);
  EXPECT_THAT(sink.ToBytes(), ElementsAre(7, 7, 7));
  sink.Truncate(10);  // never longer
  EXPECT_EQ(sink.size(), 3u);
  // Growth keeps the bytes written.
  for (int i = 0; i < 100000; ++i) sink.U8(static_cast<std::uint8_t>(i));
  EXPECT_EQ(sink.size(), 100003u);
  EXPECT_EQ(sink.data()[2], 7);
  EXPECT_EQ(sink.data()[100002], static_cast<std::uint8_t>(99999));
  const std::size_t capacity = sink.capacity();
  sink.clear();
  EXPECT_TRUE(sink.empty());
  EXPECT_EQ(sink.capacity(), capacity);
}

TEST(ByteSinkTest, MovesTakeTheBuffer) {
  ByteSink a;
  a.Raw(std::string_view("abc"));
  const std::uint8_t* const data = a.data();
  ByteSink b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(AsChars(b.view()), "abc");
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  a.U8(1);                   // and usable
  b = std::move(a);
  EXPECT_THAT(b.ToBytes(), ElementsAre(1));
}

TEST(LoadStoreTest, RoundTripLittleEndian) {
  std::uint8_t buf[8] = {};
  StoreU64(buf, 0x0102030405060708ull);
  EXPECT_THAT(buf, ElementsAre(8, 7, 6, 5, 4, 3, 2, 1));
  EXPECT_EQ(LoadU64(buf), 0x0102030405060708ull);
  StoreU64(buf, kU64Max);
  EXPECT_EQ(LoadU64(buf), kU64Max);

  std::uint8_t b4[4] = {};
  StoreU32(b4, 0xA1B2C3D4u);
  EXPECT_THAT(b4, ElementsAre(0xD4, 0xC3, 0xB2, 0xA1));
  EXPECT_EQ(LoadU32(b4), 0xA1B2C3D4u);

  std::uint8_t b2[2] = {};
  StoreU16(b2, 0xBEEF);
  EXPECT_THAT(b2, ElementsAre(0xEF, 0xBE));
  EXPECT_EQ(LoadU16(b2), 0xBEEF);
}

TEST(LoadStoreTest, LoadsMatchReader) {
  const Bytes bytes = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  ByteReader r(bytes);
  std::uint64_t v = 0;
  ASSERT_TRUE(r.U64(&v));
  EXPECT_EQ(LoadU64(bytes.data()), v);
  EXPECT_EQ(LoadU32(bytes.data()), 0x44332211u);
  EXPECT_EQ(LoadU16(bytes.data()), 0x2211);
}

TEST(AsBytesTest, ViewsTheSameMemory) {
  const std::string text = "h\xC3\xA9llo";
  const ByteView bytes = AsBytes(text);
  EXPECT_EQ(bytes.size(), text.size());
  EXPECT_EQ(bytes[1], 0xC3);
  EXPECT_EQ(AsChars(bytes), text);
  EXPECT_EQ(static_cast<const void*>(AsChars(bytes).data()), static_cast<const void*>(text.data()));
}

}  // namespace
}  // namespace rolly
