// zstd behind two calls, with the checks docs/format.md asks of a zstd chunk. Internal to the
// format layer.
//
// Thread rules: each thread keeps its own zstd contexts, so both calls run on any thread at once.

#ifndef ROLLY_FORMAT_INTERNAL_ZSTD_CODEC_H_
#define ROLLY_FORMAT_INTERNAL_ZSTD_CODEC_H_

#include <cstdint>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"

namespace rolly::format_internal {

// True when `level` is in zstd's range of compression levels.
bool IsValidZstdLevel(int level);

// Compresses `src` into one frame (content size recorded, no checksum, no dictionary) and
// replaces `out` with it. Returns false when zstd fails, which only a level out of range causes.
bool ZstdCompress(ByteView src, int level, Bytes* out);

// Decodes a chunk's frame into `out` (replaced), checking the frame first: one frame of exactly
// src.size() bytes, declaring exactly `decoded_size`, without checksum or dictionary, whose blocks
// can produce at least `decoded_size` bytes. Nothing is allocated before those checks pass.
// Returns Ok or a failed status whose message says what failed (the caller names the chunk).
Status ZstdDecompress(ByteView src, std::uint64_t decoded_size, Bytes* out);

}  // namespace rolly::format_internal

#endif  // ROLLY_FORMAT_INTERNAL_ZSTD_CODEC_H_
