// Test helpers for the format layer: split a file into its parts without checking anything, edit
// the parts (header fields, directory entries, chunk bytes) in any form, forged or not, and put
// the file back together with every checksum recomputed, so the parsers behind the checksums see
// the forged content. Also the golden Files the fixtures and the mutation tests start from, and a
// canonical text description of a File for the fixture manifest.
//
// Test code only. Thread rules: pure functions.

#ifndef ROLLY_FORMAT_FORMAT_TEST_UTIL_H_
#define ROLLY_FORMAT_FORMAT_TEST_UTIL_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/format/file.h"

namespace rolly::format_testing {

// Appends a varint in the shortest form.
void PutVarint(Bytes* out, std::uint64_t v);

// A varint read leniently (overlong forms and up to 10 bytes accepted); false past the end.
bool GetVarint(ByteView bytes, std::size_t* pos, std::uint64_t* v);

// One header field as bytes: an ID and a payload, in whatever form.
struct RawField {
  std::uint64_t id = 0;
  Bytes payload;
};

// Parses header bytes leniently (no order, default or bound checks). False when the fields do not
// even split.
bool ParseHeader(ByteView bytes, std::vector<RawField>* fields);
Bytes EncodeHeader(const std::vector<RawField>& fields);

// One directory entry as bytes.
struct RawEntry {
  std::array<std::uint8_t, 4> id{};
  Bytes key;
  std::uint64_t flags = 0;
  std::uint8_t codec = 0;
  std::uint64_t stored_size = 0;
  std::uint64_t decoded_size = 0;
  std::uint64_t checksum = 0;
};

// Parses directory bytes leniently; `count` is the recorded count even when it is forged.
// `checksum_pos[i]` is where entry i's checksum sits in `bytes`.
bool ParseDirectory(ByteView bytes, std::uint64_t* count, std::vector<RawEntry>* entries,
                    std::vector<std::size_t>* checksum_pos = nullptr);
Bytes EncodeDirectory(std::uint64_t count, const std::vector<RawEntry>& entries);

// A file split along its prelude's sizes (clamped to the bytes there are), unchecked.
struct RawFile {
  Bytes prelude;  // kPreludeSize bytes (zero-padded when the file is shorter)
  Bytes header;
  Bytes directory;
  Bytes chunks;

  static RawFile Split(ByteView file);
  // Joins the parts, records their sizes in the prelude, and recomputes every checksum (Reseal).
  Bytes Join() const;
};

// Recomputes, in place and in the writer's order, the chunk checksums in the directory (when the
// directory splits leniently and a chunk's bytes are in the file), then the header, directory,
// file and prelude checksums, using the sizes the prelude records (clamped). Sizes are left as
// they are, so forged sizes stay forged.
void Reseal(Bytes* file);

// Sets one directory entry's codec and reseals: how files in a codec this version lacks are made.
Bytes WithCodec(ByteView file, std::size_t entry, std::uint8_t codec);

// A golden file: how it is made and its name under tests/fixtures/format/.
struct Golden {
  std::string name;
  Bytes bytes;
};
// The golden files, made by this version (used to write the fixtures once, and by the mutation
// tests, which need no files on disk).
std::vector<Golden> MakeGoldenFiles();

// A canonical description of a read File (every header field, every chunk's sizes, codec and
// checksum of its decoded bytes), one item a line; the fixture manifest holds these.
std::string Describe(const format::File& file, ByteView bytes);

// Bytes of a text, for readable test data.
Bytes ToBytes(std::string_view s);
// `n` bytes that compress well (a repeating pattern with some variety), seeded.
Bytes Compressible(std::size_t n, std::uint32_t seed);
// `n` bytes that do not compress, seeded.
Bytes Incompressible(std::size_t n, std::uint32_t seed);

}  // namespace rolly::format_testing

#endif  // ROLLY_FORMAT_FORMAT_TEST_UTIL_H_
