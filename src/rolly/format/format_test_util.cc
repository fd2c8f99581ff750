// Test helpers for the format layer; see format_test_util.h.

#include "rolly/format/format_test_util.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <random>
#include <utility>

#include "rolly/core/checksum.h"

namespace rolly::format_testing {
namespace {

using format::Chunk;
using format::ChunkId;
using format::File;

void PutU64(Bytes* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

std::string Quote(ByteView bytes) {
  std::string out = "\"";
  for (const std::uint8_t b : bytes) {
    if (b == '"' || b == '\\') {
      out += '\\';
      out += static_cast<char>(b);
    } else if (b >= 0x20 && b < 0x7F) {
      out += static_cast<char>(b);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out += buf;
    }
  }
  return out + "\"";
}

std::string Hex(ByteView bytes) {
  std::string out;
  for (const std::uint8_t b : bytes) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

format::Header FullHeader() {
  format::Header h;
  h.slot_name = "Slot 1 \xC3\xA9t\xC3\xA9";  // "Slot 1 été"
  h.sequence = 1234567890123ull;
  h.game_data_version = 7;
  h.library_version = (0u << 16) | (1u << 8) | 0u;
  h.record_version = 1;
  h.game_build = "1.4.2-rc1+build.5521";
  h.save_time_us = 1718000000123456;
  h.kind = static_cast<std::uint32_t>(format::SaveKind::kCheckpoint);
  h.title = "Chapter 3 \xE2\x80\x94 The Cave";  // an em dash
  h.metadata = Compressible(200, 11);
  // A PNG signature and a few bytes: the format does not look inside.
  h.thumbnail = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  h.custom_versions = {{"Game.Inventory", 3}, {"Plugin.Quests", 12}, {"Z", 0}};
  return h;
}

}  // namespace

void PutVarint(Bytes* out, std::uint64_t v) { ByteWriter(out).Varint(v); }

bool GetVarint(ByteView bytes, std::size_t* pos, std::uint64_t* v) {
  std::uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    if (*pos >= bytes.size()) return false;
    const std::uint8_t b = bytes[(*pos)++];
    result |= static_cast<std::uint64_t>(b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

bool ParseHeader(ByteView bytes, std::vector<RawField>* fields) {
  fields->clear();
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    RawField f;
    std::uint64_t len;
    if (!GetVarint(bytes, &pos, &f.id) || !GetVarint(bytes, &pos, &len)) return false;
    if (len > bytes.size() - pos) return false;
    f.payload.assign(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                     bytes.begin() + static_cast<std::ptrdiff_t>(pos + len));
    pos += len;
    fields->push_back(std::move(f));
  }
  return true;
}

Bytes EncodeHeader(const std::vector<RawField>& fields) {
  Bytes out;
  for (const RawField& f : fields) {
    PutVarint(&out, f.id);
    PutVarint(&out, f.payload.size());
    out.insert(out.end(), f.payload.begin(), f.payload.end());
  }
  return out;
}

bool ParseDirectory(ByteView bytes, std::uint64_t* count, std::vector<RawEntry>* entries,
                    std::vector<std::size_t>* checksum_pos) {
  entries->clear();
  if (checksum_pos != nullptr) checksum_pos->clear();
  std::size_t pos = 0;
  if (!GetVarint(bytes, &pos, count)) return false;
  while (pos < bytes.size()) {
    RawEntry e;
    std::uint64_t key_len;
    if (bytes.size() - pos < 4) return false;
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(pos), 4, e.id.begin());
    pos += 4;
    if (!GetVarint(bytes, &pos, &key_len) || key_len > bytes.size() - pos) return false;
    e.key.assign(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                 bytes.begin() + static_cast<std::ptrdiff_t>(pos + key_len));
    pos += key_len;
    if (!GetVarint(bytes, &pos, &e.flags) || pos >= bytes.size()) return false;
    e.codec = bytes[pos++];
    if (!GetVarint(bytes, &pos, &e.stored_size) || !GetVarint(bytes, &pos, &e.decoded_size) ||
        bytes.size() - pos < 8) {
      return false;
    }
    if (checksum_pos != nullptr) checksum_pos->push_back(pos);
    e.checksum = LoadU64(bytes.data() + pos);
    pos += 8;
    entries->push_back(std::move(e));
  }
  return true;
}

Bytes EncodeDirectory(std::uint64_t count, const std::vector<RawEntry>& entries) {
  Bytes out;
  PutVarint(&out, count);
  for (const RawEntry& e : entries) {
    out.insert(out.end(), e.id.begin(), e.id.end());
    PutVarint(&out, e.key.size());
    out.insert(out.end(), e.key.begin(), e.key.end());
    PutVarint(&out, e.flags);
    out.push_back(e.codec);
    PutVarint(&out, e.stored_size);
    PutVarint(&out, e.decoded_size);
    PutU64(&out, e.checksum);
  }
  return out;
}

RawFile RawFile::Split(ByteView file) {
  RawFile raw;
  raw.prelude.assign(format::kPreludeSize, 0);
  std::copy_n(file.begin(), std::min(file.size(), format::kPreludeSize), raw.prelude.begin());
  if (file.size() <= format::kPreludeSize) return raw;
  ByteView rest = file.subspan(format::kPreludeSize);
  const std::size_t header_size = std::min<std::size_t>(LoadU32(raw.prelude.data() + 12), rest.size());
  raw.header.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(header_size));
  rest = rest.subspan(header_size);
  const std::size_t dir_size = std::min<std::size_t>(LoadU32(raw.prelude.data() + 16), rest.size());
  raw.directory.assign(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(dir_size));
  rest = rest.subspan(dir_size);
  raw.chunks.assign(rest.begin(), rest.end());
  return raw;
}

Bytes RawFile::Join() const {
  Bytes out = prelude;
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), directory.begin(), directory.end());
  out.insert(out.end(), chunks.begin(), chunks.end());
  StoreU32(out.data() + 12, static_cast<std::uint32_t>(header.size()));
  StoreU32(out.data() + 16, static_cast<std::uint32_t>(directory.size()));
  StoreU64(out.data() + 24, out.size());
  Reseal(&out);
  return out;
}

void Reseal(Bytes* file) {
  // Invariant: callers reseal whole preludes.
  assert(file->size() >= format::kPreludeSize);
  std::uint8_t* p = file->data();
  const std::size_t size = file->size();
  const std::size_t header_offset = format::kPreludeSize;
  const std::size_t header_size = std::min<std::size_t>(LoadU32(p + 12), size - header_offset);
  const std::size_t dir_offset = header_offset + header_size;
  const std::size_t dir_size = std::min<std::size_t>(LoadU32(p + 16), size - dir_offset);
  const std::size_t chunks_offset = dir_offset + dir_size;

  std::uint64_t count;
  std::vector<RawEntry> entries;
  std::vector<std::size_t> checksum_pos;
  if (ParseDirectory(ByteView(p + dir_offset, dir_size), &count, &entries, &checksum_pos)) {
    std::uint64_t offset = chunks_offset;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const RawEntry& e = entries[i];
      if (offset > size || e.stored_size > size - offset) break;
      Bytes prefix(e.id.begin(), e.id.end());
      PutVarint(&prefix, e.key.size());
      prefix.insert(prefix.end(), e.key.begin(), e.key.end());
      ChecksumBuilder b;
      b.Add(prefix).Add(ByteView(p + offset, e.stored_size));
      StoreU64(p + dir_offset + checksum_pos[i], b.Finish().bits());
      offset += e.stored_size;
    }
  }
  StoreU64(p + 32, Checksum::Of(ByteView(p + header_offset, header_size)).bits());
  StoreU64(p + 40, Checksum::Of(ByteView(p + dir_offset, dir_size)).bits());
  StoreU64(p + 48, Checksum::Of(ByteView(p + header_offset, size - header_offset)).bits());
  StoreU64(p + 56, Checksum::Of(ByteView(p, 56)).bits());
}

Bytes WithCodec(ByteView file, std::size_t entry, std::uint8_t codec) {
  RawFile raw = RawFile::Split(file);
  std::uint64_t count;
  std::vector<RawEntry> entries;
  const bool parsed = ParseDirectory(raw.directory, &count, &entries);
  // Invariant: callers pass files this library wrote, with at least `entry + 1` chunks.
  assert(parsed && entry < entries.size());
  (void)parsed;
  entries[entry].codec = codec;
  raw.directory = EncodeDirectory(count, entries);
  return raw.Join();
}

std::vector<Golden> MakeGoldenFiles() {
  std::vector<Golden> out;
  auto add = [&out](std::string name, const File& file, const format::WriteOptions& options) {
    Result<Bytes> bytes = format::Write(file, options);
    // Invariant: the golden files are valid input.
    assert(bytes.ok());
    out.push_back(Golden{std::move(name), std::move(bytes).value()});
  };

  add("minimal.rsav", File{}, {});

  File full_header;
  full_header.header = FullHeader();
  add("full_header.rsav", full_header, {});

  File chunks;
  chunks.header = FullHeader();
  chunks.header.kind = static_cast<std::uint32_t>(format::SaveKind::kAutosave);
  chunks.header.save_time_us = -86400000000;  // before 1970: save_time is signed
  chunks.chunks.emplace_back(format::kGlobalsChunk, "", Compressible(2000, 1));
  chunks.chunks.emplace_back(format::kWorldChunk, "Maps/Town", Compressible(1500, 2));
  chunks.chunks.emplace_back(format::kWorldChunk, "Maps/Cave", Incompressible(300, 3));
  chunks.chunks.emplace_back(format::kPlayerChunk, "Local:0", ToBytes("hello"));
  chunks.chunks.emplace_back(format::kTestChunk, "empty", Bytes());
  chunks.chunks.emplace_back(format::kLevelSegmentChunk, "Maps/Town/Seg1", Compressible(800, 4));
  add("chunks.rsav", chunks, {.compress = true, .zstd_level = 19});

  File stored = chunks;
  stored.header = format::Header{};
  stored.header.slot_name = "stored";
  add("stored.rsav", stored, {.compress = false, .zstd_level = 3});

  // Carried parts: header fields above the known IDs, a chunk ID this version does not know
  // (decodable, so read as a plain chunk), unknown flag bits, and a chunk in a codec this version
  // lacks (carried as stored bytes; made by patching the codec byte).
  File carried;
  carried.header.slot_name = "carried";
  carried.header.kind = 42;  // a kind a newer version defined
  carried.header.carried_fields = {{13, ToBytes("new field")}, {200, Bytes()},
                                   {100000, Bytes{0, 1, 2, 0xFF}}};
  carried.chunks.emplace_back(format::kGlobalsChunk, "", ToBytes("globals"));
  carried.chunks.emplace_back(ChunkId("ZZZZ"), "future", Compressible(1000, 5), 0b110);
  carried.chunks.emplace_back(ChunkId("NEWC"), "new codec", Incompressible(64, 6));
  Result<Bytes> carried_bytes = format::Write(carried);
  assert(carried_bytes.ok());
  out.push_back(Golden{"carried.rsav", WithCodec(*carried_bytes, 2, 9)});
  return out;
}

std::string Describe(const File& file, ByteView bytes) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  const format::Header& h = file.header;
  line("size " + std::to_string(bytes.size()));
  line("file_xxh3 " + Checksum::Of(bytes).ToHex());
  line("format_version " + std::to_string(file.format_version));
  line("min_reader_version " + std::to_string(file.min_reader_version));
  line("slot_name " + Quote(AsBytes(h.slot_name)));
  line("sequence " + std::to_string(h.sequence));
  line("game_data_version " + std::to_string(h.game_data_version));
  line("library_version " + std::to_string(h.library_version));
  line("record_version " + std::to_string(h.record_version));
  line("game_build " + Quote(AsBytes(h.game_build)));
  line("save_time_us " + std::to_string(h.save_time_us));
  line("kind " + std::to_string(h.kind));
  line("title " + Quote(AsBytes(h.title)));
  line("metadata size=" + std::to_string(h.metadata.size()) +
       " xxh3=" + Checksum::Of(h.metadata).ToHex());
  line("thumbnail size=" + std::to_string(h.thumbnail.size()) +
       " xxh3=" + Checksum::Of(h.thumbnail).ToHex());
  for (const format::CustomVersion& v : h.custom_versions) {
    line("custom_version " + Quote(AsBytes(v.key)) + " " + std::to_string(v.version));
  }
  for (const format::CarriedField& f : h.carried_fields) {
    line("carried_field " + std::to_string(f.id) + " hex=" + Hex(f.payload));
  }
  for (std::size_t i = 0; i < file.chunks.size(); ++i) {
    const Chunk& c = file.chunks[i];
    std::string s = "chunk " + std::to_string(i) + " id=" + std::string(c.id().view()) +
                    " key=" + Quote(AsBytes(c.key())) + " flags=" + std::to_string(c.flags()) +
                    " codec=" + std::to_string(c.stored_codec()) +
                    " stored_size=" + std::to_string(c.stored().size()) +
                    " decoded_size=" + std::to_string(c.decoded_size());
    if (c.is_decoded()) {
      s += " decoded_xxh3=" + Checksum::Of(c.data()).ToHex();
    } else {
      s += " carried stored_xxh3=" + Checksum::Of(c.stored()).ToHex();
    }
    line(s);
  }
  return out;
}

Bytes ToBytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

Bytes Compressible(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  static constexpr std::string_view kWords[] = {"actor ", "door ", "open ", "closed ", "health ",
                                                "100 ", "Maps/Town ", "\n"};
  Bytes out;
  while (out.size() < n) {
    const std::string_view w = kWords[rng() % std::size(kWords)];
    out.insert(out.end(), w.begin(), w.end());
  }
  out.resize(n);
  return out;
}

Bytes Incompressible(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (std::uint8_t& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

}  // namespace rolly::format_testing
