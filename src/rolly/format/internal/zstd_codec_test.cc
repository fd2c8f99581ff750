// Tests of the zstd codec behind the format: frames made in blocks, joined, and read back.

#include "rolly/format/internal/zstd_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>

#include "rolly/core/status_matchers.h"
#include "rolly/format/format_test_util.h"

namespace rolly::format_internal {
namespace {

using format_testing::Compressible;
using format_testing::Incompressible;

// The blocks' sizes add up to the frame's, and none is above kZstdOutputBlock.
void ExpectBlocksAddUp(const ZstdFrameBlocks& frame) {
  std::size_t sum = 0;
  for (const Bytes& block : frame.blocks) {
    EXPECT_LE(block.size(), kZstdOutputBlock);
    sum += block.size();
  }
  EXPECT_EQ(sum, frame.size);
}

TEST(ZstdCodecTest, LargeFrameIsMadeInBlocksAndJoinsToWhatDecodes) {
  // Incompressible bytes make a frame about the source's size: several blocks.
  Bytes src = Incompressible(3 * kZstdOutputBlock + 1000, 7);
  const Bytes tail = Compressible(200000, 8);
  src.insert(src.end(), tail.begin(), tail.end());
  ZstdFrameBlocks frame;
  ASSERT_TRUE(ZstdCompressBlocks(src, 3, &frame));
  EXPECT_GT(frame.blocks.size(), 3u);
  ExpectBlocksAddUp(frame);
  const std::size_t size = frame.size;
  Bytes joined;
  frame.JoinInto(&joined);
  EXPECT_EQ(joined.size(), size);
  EXPECT_EQ(joined.capacity(), size);
  EXPECT_TRUE(frame.blocks.empty());
  Bytes decoded;
  ASSERT_OK(ZstdDecompress(joined, src.size(), &decoded));
  EXPECT_EQ(decoded, src);
}

TEST(ZstdCodecTest, SmallSourceTakesOneSmallBlock) {
  const Bytes src = Compressible(3000, 1);
  ZstdFrameBlocks frame;
  ASSERT_TRUE(ZstdCompressBlocks(src, 3, &frame));
  ASSERT_EQ(frame.blocks.size(), 1u);
  ExpectBlocksAddUp(frame);
  // Sized to the worst case of 3,000 bytes, not to a whole output block.
  EXPECT_LT(frame.blocks[0].capacity(), 4096u);
  Bytes out;
  ASSERT_TRUE(ZstdCompress(src, 3, &out));
  Bytes decoded;
  ASSERT_OK(ZstdDecompress(out, src.size(), &decoded));
  EXPECT_EQ(decoded, src);
}

TEST(ZstdCodecTest, EmptySourceMakesAFrame) {
  Bytes out;
  ASSERT_TRUE(ZstdCompress(Bytes(), 3, &out));
  Bytes decoded;
  ASSERT_OK(ZstdDecompress(out, 0, &decoded));
  EXPECT_TRUE(decoded.empty());
}

}  // namespace
}  // namespace rolly::format_internal
