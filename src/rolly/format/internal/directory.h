// The directory's bytes (docs/format.md, "Directory"): entries, their one-form decoder, and the
// chunk checksum. Internal to the format layer.
//
// Thread rules: pure functions.

#ifndef ROLLY_FORMAT_INTERNAL_DIRECTORY_H_
#define ROLLY_FORMAT_INTERNAL_DIRECTORY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/checksum.h"
#include "rolly/core/status.h"
#include "rolly/format/format_constants.h"

namespace rolly::format_internal {

struct DirectoryEntry {
  format::ChunkId id = format::kTestChunk;
  std::string_view key;  // views the directory's bytes
  std::uint64_t flags = 0;
  std::uint8_t codec = 0;
  std::uint64_t stored_size = 0;
  std::uint64_t decoded_size = 0;
  Checksum checksum;
  // Offset of the chunk's bytes from the start of the file.
  std::uint64_t offset = 0;
};

// The checksum of a chunk: its ID, its key as a length-prefixed string, then its stored bytes.
Checksum ChunkChecksum(format::ChunkId id, std::string_view key, ByteView stored);

// Appends one entry's bytes.
void EncodeEntry(const DirectoryEntry& entry, Bytes* out);

// Decodes the directory in its one form, for a file whose chunks start at `chunks_offset` and
// take exactly `chunks_size` bytes. Damaged ("directory: ...") otherwise.
Result<std::vector<DirectoryEntry>> DecodeDirectory(ByteView bytes, std::uint64_t chunks_offset,
                                                    std::uint64_t chunks_size);

// "chunk 3 (WRLD "Maps/Town")", for messages.
std::string ChunkLabel(std::size_t index, format::ChunkId id, std::string_view key);

}  // namespace rolly::format_internal

#endif  // ROLLY_FORMAT_INTERNAL_DIRECTORY_H_
