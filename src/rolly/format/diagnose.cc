// Diagnose: every checksum of a file, without stopping at the first failure.

#include "rolly/format/file.h"

#include <fmt/format.h>

#include <cstring>

#include "rolly/format/internal/directory.h"

namespace rolly::format {
namespace {

PartReport Part(std::string name, std::uint64_t offset, std::uint64_t size, ByteView bytes,
                Checksum recorded) {
  PartReport r;
  r.part = std::move(name);
  r.offset = offset;
  r.size = size;
  r.recorded = recorded;
  if (offset <= bytes.size() && size <= bytes.size() - offset) {
    r.checked = true;
    r.actual = Checksum::Of(bytes.subspan(offset, size));
    r.ok = r.actual == recorded;
  }
  return r;
}

}  // namespace

Diagnosis Diagnose(ByteView bytes) { return Diagnose(bytes, Read(bytes).status()); }

Diagnosis Diagnose(ByteView bytes, Status read_status) {
  Diagnosis d;
  d.status = std::move(read_status);
  if (bytes.size() < kPreludeSize) return d;

  // The prelude is reported when its magic matches, even when its checksum fails.
  const std::uint8_t* p = bytes.data();
  if (std::memcmp(p, kMagic.data(), kMagic.size()) != 0) return d;
  Prelude& pr = d.prelude;
  pr.format_version = LoadU16(p + 8);
  pr.min_reader_version = LoadU16(p + 10);
  pr.header_size = LoadU32(p + 12);
  pr.directory_size = LoadU32(p + 16);
  pr.file_size = LoadU64(p + 24);
  pr.header_checksum = Checksum::FromBits(LoadU64(p + 32));
  pr.directory_checksum = Checksum::FromBits(LoadU64(p + 40));
  pr.file_checksum = Checksum::FromBits(LoadU64(p + 48));
  pr.prelude_checksum = Checksum::FromBits(LoadU64(p + 56));
  PartReport prelude = Part("prelude", 0, 56, bytes, pr.prelude_checksum);
  prelude.size = kPreludeSize;
  d.prelude_readable = prelude.ok;
  d.parts.push_back(prelude);
  if (!prelude.ok) return d;

  const std::uint64_t header_offset = kPreludeSize;
  const std::uint64_t directory_offset = header_offset + pr.header_size;
  const std::uint64_t chunks_offset = directory_offset + pr.directory_size;
  d.parts.push_back(Part("header", header_offset, pr.header_size, bytes, pr.header_checksum));
  PartReport directory =
      Part("directory", directory_offset, pr.directory_size, bytes, pr.directory_checksum);
  d.parts.push_back(directory);
  if (pr.file_size >= kPreludeSize) {
    d.parts.push_back(
        Part("file", kPreludeSize, pr.file_size - kPreludeSize, bytes, pr.file_checksum));
  }
  if (!directory.ok || pr.file_size < chunks_offset) return d;

  auto entries = format_internal::DecodeDirectory(bytes.subspan(directory_offset, pr.directory_size),
                                                  chunks_offset, pr.file_size - chunks_offset);
  if (!entries.ok()) return d;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const format_internal::DirectoryEntry& e = (*entries)[i];
    PartReport r;
    r.part = fmt::format("chunk {}", i);
    r.chunk_id = std::string(e.id.view());
    r.chunk_key = std::string(e.key);
    r.offset = e.offset;
    r.size = e.stored_size;
    r.recorded = e.checksum;
    if (e.offset <= bytes.size() && e.stored_size <= bytes.size() - e.offset) {
      r.checked = true;
      r.actual = format_internal::ChunkChecksum(e.id, e.key, bytes.subspan(e.offset, e.stored_size));
      r.ok = r.actual == e.checksum;
    }
    d.parts.push_back(std::move(r));
  }
  return d;
}

}  // namespace rolly::format
