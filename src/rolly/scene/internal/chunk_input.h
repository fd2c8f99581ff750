// The input form of fuzz/world_apply_fuzzer, and the test that writes its seeds: a save's world
// chunks without the file around them (no header, checksums or compression), so that a fuzzer's
// changes reach the records. Each chunk is one byte saying which (0 GLOB, 1 WRLD, 2 PLYR), its
// payload's size as a varint, then the payload. The keys are implied: "" for GLOB, the map given
// to DecodeChunkInput for WRLD, player 0's for PLYR.
//
// Header-only; for the fuzz target and the tests only.

#ifndef ROLLY_SCENE_INTERNAL_CHUNK_INPUT_H_
#define ROLLY_SCENE_INTERNAL_CHUNK_INPUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/world/sections.h"
#include "rolly/world/world.h"

namespace rolly::scene_internal {

inline constexpr world::ChunkId kInputChunks[] = {world::kGlobalChunk, world::kWorldChunk,
                                                  world::kPlayerChunk};

// The chunks in the input form; chunks of other IDs, and keys, are left out.
inline Bytes EncodeChunkInput(const std::vector<world::WorldChunk>& chunks) {
  Bytes out;
  ByteWriter w(&out);
  for (const world::WorldChunk& c : chunks) {
    for (std::uint8_t which = 0; which < std::size(kInputChunks); ++which) {
      if (c.id != kInputChunks[which]) continue;
      w.U8(which);
      w.LengthPrefixed(ByteView(c.payload));
    }
  }
  return out;
}

// The chunks of an input, with their keys (`map` for WRLD). Reading stops at the first byte that
// does not begin a whole chunk: what came before is the input's.
inline std::vector<world::WorldChunk> DecodeChunkInput(ByteView input, std::string_view map) {
  std::vector<world::WorldChunk> out;
  ByteReader in(input);
  std::uint8_t which = 0;
  ByteView payload;
  while (in.U8(&which) && which < std::size(kInputChunks) &&
         in.LengthPrefixed(in.remaining(), &payload)) {
    world::WorldChunk c;
    c.id = kInputChunks[which];
    if (c.id == world::kWorldChunk) c.key = std::string(map);
    if (c.id == world::kPlayerChunk) c.key = world::PlayerChunkKey(0);
    c.payload.assign(payload.begin(), payload.end());
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace rolly::scene_internal

#endif  // ROLLY_SCENE_INTERNAL_CHUNK_INPUT_H_
