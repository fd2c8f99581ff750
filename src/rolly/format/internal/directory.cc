// Directory entries: id, key, flags, codec, sizes, checksum.

#include "rolly/format/internal/directory.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "rolly/format/internal/header_codec.h"

namespace rolly::format_internal {
namespace {

Status Bad(std::string_view what) { return DamagedError(fmt::format("directory: {}", what)); }

// The fewest bytes an entry takes: id, key length, flags, codec, two sizes, checksum.
constexpr std::uint64_t kMinEntrySize = 4 + 1 + 1 + 1 + 1 + 1 + 8;

}  // namespace

Checksum ChunkChecksum(format::ChunkId id, std::string_view key, ByteView stored) {
  Bytes prefix;
  prefix.reserve(4 + 10 + key.size());
  ByteWriter w(&prefix);
  w.Raw(id.view());
  w.LengthPrefixed(key);
  ChecksumBuilder b;
  b.Add(prefix).Add(stored);
  return b.Finish();
}

void EncodeEntry(const DirectoryEntry& e, Bytes* out) {
  ByteWriter w(out);
  w.Raw(e.id.view());
  w.LengthPrefixed(e.key);
  w.Varint(e.flags);
  w.U8(e.codec);
  w.Varint(e.stored_size);
  w.Varint(e.decoded_size);
  w.U64(e.checksum.bits());
}

Result<std::vector<DirectoryEntry>> DecodeDirectory(ByteView bytes, std::uint64_t chunks_offset,
                                                    std::uint64_t chunks_size) {
  ByteReader r(bytes);
  std::uint64_t count;
  if (!r.VarintAtMost(format::kMaxChunks, &count)) return Bad("chunk count is not valid");
  if (count > r.remaining() / kMinEntrySize) return Bad("chunk count runs past the directory");
  std::vector<DirectoryEntry> entries;
  entries.reserve(count);
  std::uint64_t offset = chunks_offset;
  std::uint64_t stored_total = 0;
  std::uint64_t decoded_total = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    DirectoryEntry e;
    ByteView id_bytes;
    std::uint64_t checksum_bits;
    if (!r.Raw(4, &id_bytes)) return Bad(fmt::format("entry {} is cut short", i));
    const auto id = format::ChunkId::FromBytes(id_bytes.data());
    if (!id) return Bad(fmt::format("entry {} has an ID that is not printable", i));
    e.id = *id;
    if (!r.LengthPrefixed(format::kMaxChunkKeySize, &e.key) ||
        !IsReadableString(e.key, format::kMaxChunkKeySize)) {
      return Bad(fmt::format("entry {} has a key that is not valid", i));
    }
    if (!r.Varint(&e.flags) || !r.U8(&e.codec) || !r.Varint(&e.stored_size) ||
        !r.Varint(&e.decoded_size) || !r.U64(&checksum_bits)) {
      return Bad(fmt::format("entry {} is cut short", i));
    }
    e.checksum = Checksum::FromBits(checksum_bits);
    if (e.codec == static_cast<std::uint8_t>(format::Codec::kStored) &&
        e.stored_size != e.decoded_size) {
      return Bad(fmt::format("entry {} is stored but its sizes differ", i));
    }
    if (e.codec == static_cast<std::uint8_t>(format::Codec::kZstd) &&
        e.stored_size >= e.decoded_size) {
      return Bad(fmt::format("entry {} is zstd but not smaller than its decoded size", i));
    }
    if (e.stored_size > chunks_size - stored_total) {
      return Bad(fmt::format("entry {} runs past the end of the file", i));
    }
    if (e.decoded_size > format::kMaxDecodedTotal - decoded_total) {
      return Bad("decoded sizes add up to more than 1 GiB");
    }
    stored_total += e.stored_size;
    decoded_total += e.decoded_size;
    e.offset = offset;
    offset += e.stored_size;
    entries.push_back(e);
  }
  if (!r.empty()) return Bad("trailing bytes after the last entry");
  if (stored_total != chunks_size) return Bad("chunks do not fill the rest of the file");

  std::vector<std::pair<format::ChunkId, std::string_view>> keys;
  keys.reserve(entries.size());
  for (const DirectoryEntry& e : entries) keys.emplace_back(e.id, e.key);
  std::sort(keys.begin(), keys.end());
  if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) {
    return Bad("two chunks have the same ID and key");
  }
  return entries;
}

std::string ChunkLabel(std::size_t index, format::ChunkId id, std::string_view key) {
  if (key.empty()) return fmt::format("chunk {} ({})", index, id.view());
  constexpr std::size_t kShown = 64;
  if (key.size() <= kShown) return fmt::format("chunk {} ({} \"{}\")", index, id.view(), key);
  // Cut at a code point's start, so the message stays UTF-8 (keys are UTF-8 when read).
  std::size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(key[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("chunk {} ({} \"{}...\")", index, id.view(), key.substr(0, cut));
}

}  // namespace rolly::format_internal
