// zstd behind two calls, with the checks docs/format.md asks of a zstd chunk. Internal to the
// format layer.
//
// Thread rules: each thread keeps its own zstd contexts, so both calls run on any thread at once.

#ifndef ROLLY_FORMAT_INTERNAL_ZSTD_CODEC_H_
#define ROLLY_FORMAT_INTERNAL_ZSTD_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"

namespace rolly::format_internal {

// True when `level` is in zstd's range of compression levels.
bool IsValidZstdLevel(int level);

// A frame as zstd wrote it: blocks of at most kZstdOutputBlock bytes each, in order. Compressing
// this way never allocates room for the worst case (about the source's size) that a one-shot call
// needs; the bytes held are the frame's, rounded up to one block.
struct ZstdFrameBlocks {
  std::vector<Bytes> blocks;
  std::size_t size = 0;  // the frame's bytes, summed over the blocks

  // Replaces `out` with the frame in one buffer of exactly `size` bytes, letting go of each block
  // once copied.
  void JoinInto(Bytes* out);
};
inline constexpr std::size_t kZstdOutputBlock = 256 * 1024;

// Compresses `src` into one frame (content size recorded, no checksum, no dictionary) and
// replaces `out` with it. Returns false when zstd fails, which only a level out of range causes.
// The frame is made in blocks (ZstdCompressBlocks) and joined: at most the frame twice over is
// held at once, never a buffer of the worst-case size, and nothing is kept between calls.
bool ZstdCompress(ByteView src, int level, Bytes* out);

// As ZstdCompress, leaving the frame in blocks: a caller that can let go of `src` once it is
// compressed (EncodeChunks owns its chunks) does so before joining them.
bool ZstdCompressBlocks(ByteView src, int level, ZstdFrameBlocks* out);

// The checks of a chunk's frame that need no decoding: one frame of exactly src.size() bytes,
// declaring exactly `decoded_size`, without checksum or dictionary, whose blocks can produce at
// least `decoded_size` bytes. Reads the frame's header and block headers only. Returns Ok or a
// failed status whose message says what failed (the caller names the chunk).
Status CheckZstdFrame(ByteView src, std::uint64_t decoded_size);

// Decodes a chunk's frame into `out` (replaced), checking it first (CheckZstdFrame). Nothing is
// allocated before those checks pass. Statuses as CheckZstdFrame, or one saying the frame does
// not decode.
Status ZstdDecompress(ByteView src, std::uint64_t decoded_size, Bytes* out);

// Decodes a frame CheckZstdFrame passed into `out`, exactly its declared size, front to back in
// steps: after each that wrote, `arrived(n)` is told that the first n bytes of `out` are final (n
// grows; only the status says whether the frame decoded). Allocates nothing but what zstd keeps
// with the thread's context (an input block). Fails as ZstdDecompress when the frame does not
// decode; the bytes of `out` are unspecified then.
Status ZstdDecodeInSteps(ByteView src, std::span<std::uint8_t> out,
                         const std::function<void(std::size_t)>& arrived);
// The compressed bytes each step of ZstdDecodeInSteps gives zstd.
inline constexpr std::size_t kZstdDecodeStep = 32 * 1024;

}  // namespace rolly::format_internal

#endif  // ROLLY_FORMAT_INTERNAL_ZSTD_CODEC_H_
