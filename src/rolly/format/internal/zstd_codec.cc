// zstd behind the format's rules. The frame checks run on the frame's header and block headers
// only, so a forged frame is refused before its claimed size is allocated.

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader, ZSTD_frameHeaderSize
#include "rolly/format/internal/zstd_codec.h"

#include <zstd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <memory>

namespace rolly::format_internal {
namespace {

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

ZSTD_CCtx* ThreadCCtx() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
  return cctx.get();
}

ZSTD_DCtx* ThreadDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  return dctx.get();
}

// The most bytes the frame's blocks can produce, walking only the block headers; 0 when the block
// structure is broken. Raw and RLE blocks produce exactly their size; a compressed block at most
// the frame's block size. No block may be larger than that size (zstd refuses one, but only
// after the output was allocated: 2 KiB of RLE blocks claiming 2 MiB each would make a reader
// allocate and zero a gigabyte first).
std::uint64_t DecodedBound(ByteView frame, std::size_t header_size, unsigned block_size_max) {
  std::uint64_t bound = 0;
  std::size_t pos = header_size;
  for (;;) {
    if (frame.size() - pos < 3) return 0;
    const std::uint32_t block = static_cast<std::uint32_t>(frame[pos]) |
                                static_cast<std::uint32_t>(frame[pos + 1]) << 8 |
                                static_cast<std::uint32_t>(frame[pos + 2]) << 16;
    pos += 3;
    const bool last = (block & 1) != 0;
    const std::uint32_t type = (block >> 1) & 3;
    const std::uint32_t size = block >> 3;
    if (size > block_size_max) return 0;
    std::size_t stored;
    switch (type) {
      case 0:  // raw
        stored = size;
        bound += size;
        break;
      case 1:  // RLE
        stored = 1;
        bound += size;
        break;
      case 2:  // compressed
        stored = size;
        bound += block_size_max;
        break;
      default:
        return 0;
    }
    if (frame.size() - pos < stored) return 0;
    pos += stored;
    if (last) return bound;
  }
}

}  // namespace

bool IsValidZstdLevel(int level) {
  return level >= ZSTD_minCLevel() && level <= ZSTD_maxCLevel();
}

void ZstdFrameBlocks::JoinInto(Bytes* out) {
  out->clear();
  out->shrink_to_fit();
  out->reserve(size);
  for (Bytes& block : blocks) {
    out->insert(out->end(), block.begin(), block.end());
    Bytes().swap(block);
  }
  blocks.clear();
}

bool ZstdCompressBlocks(ByteView src, int level, ZstdFrameBlocks* out) {
  out->blocks.clear();
  out->size = 0;
  ZSTD_CCtx* cctx = ThreadCCtx();
  if (cctx == nullptr) return false;
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  // The source stays where it is until the frame ends (stable input): zstd reads it in place
  // instead of copying it into a window buffer of its own. The pledged size puts the content size
  // in the frame's header and picks the parameters a one-shot call would for this size.
  if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_stableInBuffer, 1)) ||
      ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, src.size()))) {
    return false;
  }
  // Each block is sized to what the frame can still need at worst, at most kZstdOutputBlock: a
  // small source gets one small block, and no block is zero-filled far past what it keeps.
  const std::size_t bound = ZSTD_compressBound(src.size());
  ZSTD_inBuffer in{src.data(), src.size(), 0};
  for (;;) {
    const std::size_t room = std::min(kZstdOutputBlock, std::max<std::size_t>(
                                                            bound - std::min(bound, out->size), 64));
    Bytes& block = out->blocks.emplace_back(room);
    ZSTD_outBuffer buffer{block.data(), block.size(), 0};
    std::size_t left = 0;
    // Fill this block, or end the frame.
    do {
      left = ZSTD_compressStream2(cctx, &buffer, &in, ZSTD_e_end);
      if (ZSTD_isError(left)) {
        out->blocks.clear();
        out->size = 0;
        return false;
      }
    } while (left != 0 && buffer.pos < buffer.size);
    block.resize(buffer.pos);
    out->size += buffer.pos;
    if (left == 0) return true;
  }
}

bool ZstdCompress(ByteView src, int level, Bytes* out) {
  ZstdFrameBlocks blocks;
  if (!ZstdCompressBlocks(src, level, &blocks)) return false;
  blocks.JoinInto(out);
  return true;
}

Status CheckZstdFrame(ByteView src, std::uint64_t decoded_size) {
  ZSTD_frameHeader header;
  const std::size_t r = ZSTD_getFrameHeader(&header, src.data(), src.size());
  if (r != 0) return DamagedError("zstd frame header is not readable");
  if (header.frameType != ZSTD_frame) return DamagedError("zstd frame is a skippable frame");
  if (header.frameContentSize != decoded_size) {
    return DamagedError("zstd frame declares another decoded size than the directory");
  }
  if (header.dictID != 0) return DamagedError("zstd frame needs a dictionary");
  if (header.checksumFlag != 0) return DamagedError("zstd frame carries its own checksum");
  const std::size_t frame_size = ZSTD_findFrameCompressedSize(src.data(), src.size());
  if (ZSTD_isError(frame_size) || frame_size != src.size()) {
    return DamagedError("zstd frame is not exactly the chunk's stored bytes");
  }
  if (DecodedBound(src, header.headerSize, header.blockSizeMax) < decoded_size) {
    return DamagedError("zstd frame's blocks cannot produce the declared size");
  }
  return OkStatus();
}

namespace {

Status DoesNotDecode(std::size_t result) {
  return DamagedError(fmt::format("zstd frame does not decode ({})",
                                  ZSTD_isError(result) ? ZSTD_getErrorName(result)
                                                       : "short output"));
}

}  // namespace

Status ZstdDecompress(ByteView src, std::uint64_t decoded_size, Bytes* out) {
  ROLLY_RETURN_IF_ERROR(CheckZstdFrame(src, decoded_size));
  out->resize(decoded_size);
  ZSTD_DCtx* dctx = ThreadDCtx();
  // Invariant: the context exists; its allocation failing ends the process like any other would.
  assert(dctx != nullptr);
  const std::size_t n = ZSTD_decompressDCtx(dctx, out->data(), out->size(), src.data(), src.size());
  if (ZSTD_isError(n) || n != decoded_size) {
    out->clear();
    return DoesNotDecode(n);
  }
  return OkStatus();
}

Status ZstdDecodeInSteps(ByteView src, std::span<std::uint8_t> out,
                         const std::function<void(std::size_t)>& arrived) {
  ZSTD_DCtx* dctx = ThreadDCtx();
  // Invariant: the context exists; its allocation failing ends the process like any other would.
  assert(dctx != nullptr);
  // zstd writes straight into `out`, which stays where it is (stable output): no window buffer of
  // its own, and what it wrote before a step is final.
  // As one-shot decoding, any window size is taken: the window is `out` itself.
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_and_parameters);
  if (ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_stableOutBuffer, 1)) ||
      ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, ZSTD_WINDOWLOG_MAX))) {
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_and_parameters);
    return DamagedError("zstd frame does not decode (the decoder could not be set up)");
  }
  ZSTD_outBuffer to{out.data(), out.size(), 0};
  std::size_t fed = 0;
  std::size_t left = 1;
  while (left != 0 && !ZSTD_isError(left)) {
    const std::size_t step = std::min(kZstdDecodeStep, src.size() - fed);
    ZSTD_inBuffer from{src.data(), fed + step, fed};
    const std::size_t wrote = to.pos;
    left = ZSTD_decompressStream(dctx, &to, &from);
    if (ZSTD_isError(left)) break;
    const bool moved = from.pos != fed || to.pos != wrote;
    fed = from.pos;
    if (to.pos != wrote) arrived(to.pos);
    if (!moved) break;  // all given and the frame not ended: it is short
  }
  const std::size_t result = left;
  // Back to one-shot decoding for the thread's next ZstdDecompress.
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_and_parameters);
  if (ZSTD_isError(result) || left != 0 || to.pos != out.size() || fed != src.size()) {
    return DoesNotDecode(ZSTD_isError(result) ? result : 0);
  }
  return OkStatus();
}

}  // namespace rolly::format_internal
