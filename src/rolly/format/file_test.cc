// Tests of Write, Read, ReadPrelude, ReadHeader and Diagnose: round trips, invalid input, newer
// versions, headers alone, and which part a failure names. Damage, forgeries and bounds are in
// file_damage_test.cc and file_bounds_test.cc; the golden fixtures in file_fixtures_test.cc.

#include "rolly/format/file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <string>
#include <utility>
#include <vector>

#include "rolly/core/status_matchers.h"
#include "rolly/format/format_test_util.h"

namespace rolly::format {
namespace {

using format_testing::Compressible;
using format_testing::Incompressible;
using format_testing::RawEntry;
using format_testing::RawFile;
using format_testing::ToBytes;
using ::testing::HasSubstr;

// Writes `file`, reads it back, checks it reads as `file`, and that writing what was read gives
// the same bytes. Returns the bytes.
Bytes RoundTrip(const File& file, const WriteOptions& options = {}) {
  Result<Bytes> bytes = Write(file, options);
  EXPECT_OK(bytes);
  if (!bytes.ok()) return {};
  Result<File> read = Read(*bytes);
  EXPECT_OK(read);
  if (!read.ok()) return {};
  EXPECT_TRUE(*read == file);
  Result<Bytes> again = Write(*read, options);
  EXPECT_OK(again);
  if (again.ok()) {
    EXPECT_TRUE(*again == *bytes) << "Read then Write changed the bytes";
  }
  // A File read without its stored bytes still reads as the same File once written again.
  ReadOptions lean;
  lean.keep_stored = false;
  Result<File> lean_read = Read(*bytes, lean);
  EXPECT_OK(lean_read);
  if (lean_read.ok()) {
    EXPECT_TRUE(*lean_read == file);
  }
  return std::move(bytes).value();
}

// Reads `bytes` and checks that writing them back gives the same bytes.
File ReadBack(const Bytes& bytes) {
  Result<File> read = Read(bytes);
  EXPECT_OK(read);
  if (!read.ok()) return {};
  Result<Bytes> again = Write(*read);
  EXPECT_OK(again);
  if (again.ok()) {
    EXPECT_TRUE(*again == bytes) << "Read then Write changed the bytes";
  }
  return std::move(read).value();
}

Header EveryField() {
  Header h;
  h.slot_name = "Slot 3";
  h.sequence = UINT64_MAX;
  h.game_data_version = UINT32_MAX;
  h.library_version = (1u << 16) | (2u << 8) | 3u;
  h.record_version = 9;
  h.game_build = "build-77";
  h.save_time_us = INT64_MIN;
  h.kind = static_cast<std::uint32_t>(SaveKind::kIndex);
  h.title = "\xE6\x97\xA5\xE6\x9C\xAC";  // Japanese for "Japan"
  h.metadata = Incompressible(100, 1);
  h.thumbnail = Incompressible(300, 2);
  h.custom_versions = {{"A", 0}, {"B", UINT32_MAX}, {"B.c", 1}};
  h.carried_fields = {{13, ToBytes("x")}, {UINT32_MAX, Bytes()}};
  return h;
}

File ChunkyFile() {
  File f;
  f.header.slot_name = "chunky";
  f.chunks.emplace_back(kGlobalsChunk, "", Compressible(3000, 1));
  f.chunks.emplace_back(kWorldChunk, "Maps/Town", Compressible(5000, 2));
  f.chunks.emplace_back(kWorldChunk, "Maps/Cave", Incompressible(500, 3));
  f.chunks.emplace_back(kPlayerChunk, "Local:0", Bytes());
  f.chunks.emplace_back(kPlayerChunk, "Local:1", ToBytes("a"));
  return f;
}

// --- Round trips -------------------------------------------------------------------------------

TEST(FileRoundTripTest, EmptyFile) {
  const Bytes bytes = RoundTrip(File{});
  // Prelude and a directory of one byte (a count of zero).
  EXPECT_EQ(bytes.size(), kPreludeSize + 1);
}

TEST(FileRoundTripTest, EveryHeaderField) {
  File f;
  f.header = EveryField();
  RoundTrip(f);
  ASSERT_OK_AND_ASSIGN(const Header h, ReadHeader(RoundTrip(f)));
  EXPECT_TRUE(h == f.header);
}

TEST(FileRoundTripTest, EachHeaderFieldAlone) {
  const Header all = EveryField();
  std::vector<Header> singles(13);
  singles[0].slot_name = all.slot_name;
  singles[1].sequence = 1;
  singles[2].game_data_version = 1;
  singles[3].library_version = 1;
  singles[4].record_version = 1;
  singles[5].game_build = all.game_build;
  singles[6].save_time_us = -1;
  singles[7].kind = 1;
  singles[8].title = all.title;
  singles[9].metadata = all.metadata;
  singles[10].thumbnail = all.thumbnail;
  singles[11].custom_versions = all.custom_versions;
  singles[12].carried_fields = all.carried_fields;
  for (const Header& h : singles) {
    File f;
    f.header = h;
    RoundTrip(f);
  }
}

TEST(FileRoundTripTest, EveryZstdLevel) {
  File f = ChunkyFile();
  // Keep the dearest levels cheap: small chunks there.
  File small = f;
  small.chunks[0].set_data(Compressible(600, 4));
  small.chunks[1].set_data(Compressible(900, 5));
  std::vector<int> levels = {ZSTD_minCLevel(), -1000, -100};
  for (int level = -5; level <= ZSTD_maxCLevel(); ++level) levels.push_back(level);
  for (const int level : levels) {
    SCOPED_TRACE(level);
    const File& file = level > 15 ? small : f;
    const Bytes bytes = RoundTrip(file, {.compress = true, .zstd_level = level});
    ASSERT_OK_AND_ASSIGN(const File read, Read(bytes));
    // The fastest levels may not shrink these small chunks; the round trip is what counts there.
    if (level < -5) continue;
    // The compressible chunks went to zstd, the others stayed stored.
    EXPECT_EQ(read.chunks[0].stored_codec(), static_cast<std::uint8_t>(Codec::kZstd));
    EXPECT_EQ(read.chunks[1].stored_codec(), static_cast<std::uint8_t>(Codec::kZstd));
    EXPECT_EQ(read.chunks[2].stored_codec(), static_cast<std::uint8_t>(Codec::kStored));
    EXPECT_EQ(read.chunks[3].stored_codec(), static_cast<std::uint8_t>(Codec::kStored));
    EXPECT_EQ(read.chunks[4].stored_codec(), static_cast<std::uint8_t>(Codec::kStored));
  }
}

TEST(FileRoundTripTest, StoredChunks) {
  const Bytes bytes = RoundTrip(ChunkyFile(), {.compress = false, .zstd_level = 3});
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes));
  for (const Chunk& c : read.chunks) {
    EXPECT_EQ(c.stored_codec(), static_cast<std::uint8_t>(Codec::kStored));
  }
}

TEST(FileRoundTripTest, EmptyChunks) {
  File f;
  f.chunks.emplace_back(kGlobalsChunk, "", Bytes());
  f.chunks.emplace_back(kTestChunk, "", Bytes());
  f.chunks.emplace_back(kTestChunk, "also empty", Bytes());
  RoundTrip(f);
  RoundTrip(f, {.compress = false, .zstd_level = 3});
}

TEST(FileRoundTripTest, ManyChunks) {
  File f;
  for (int i = 0; i < 1000; ++i) {
    f.chunks.emplace_back(i % 2 ? kWorldChunk : kLevelSegmentChunk, "Maps/" + std::to_string(i),
                          i % 3 ? Compressible(static_cast<std::size_t>(i % 97), i) : Bytes());
  }
  RoundTrip(f);
}

TEST(FileRoundTripTest, UnknownChunkIdsAndFlagsAreCarried) {
  File f;
  f.chunks.emplace_back(ChunkId("ZZZZ"), "", Compressible(1000, 1));
  f.chunks.emplace_back(ChunkId("!~!~"), "k", ToBytes("stored"), 0xFFFFFFFFFFFFFFFEull);
  f.chunks.emplace_back(kGlobalsChunk, "", ToBytes("g"), kChunkMustUnderstand | 4);
  RoundTrip(f);
}

TEST(FileRoundTripTest, CustomVersions) {
  File f;
  for (int i = 0; i < 50; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "Plugin.%03d", i);
    f.header.custom_versions.push_back({key, static_cast<std::uint32_t>(i * 1000)});
  }
  RoundTrip(f);
}

TEST(FileRoundTripTest, CarriedFieldsAndCarriedChunks) {
  File f;
  f.header.title = "t";
  f.header.carried_fields = {{13, ToBytes("payload")}, {14, Bytes()}, {1u << 30, Bytes{0}}};
  f.chunks.emplace_back(kGlobalsChunk, "", ToBytes("globals"));
  f.chunks.emplace_back(ChunkId("FUTR"), "later", Incompressible(40, 7));
  f.chunks.emplace_back(ChunkId("FUTZ"), "later", Compressible(4000, 7));
  ASSERT_OK_AND_ASSIGN(const Bytes written, Write(f));
  // A newer writer's codec 200 on two unknown, non-MustUnderstand chunks (one that was stored,
  // one that was zstd): carried as stored bytes and written back unchanged.
  const Bytes bytes =
      format_testing::WithCodec(format_testing::WithCodec(written, 1, 200), 2, 200);
  const File read = ReadBack(bytes);
  ASSERT_EQ(read.chunks.size(), 3u);
  EXPECT_TRUE(read.chunks[0].is_decoded());
  for (int i : {1, 2}) {
    const Chunk& c = read.chunks[static_cast<std::size_t>(i)];
    EXPECT_FALSE(c.is_decoded());
    EXPECT_TRUE(c.data().empty());
    EXPECT_EQ(c.stored_codec(), 200);
    EXPECT_EQ(c.decoded_size(), f.chunks[static_cast<std::size_t>(i)].data().size());
  }
  EXPECT_EQ(read.chunks[1].stored().size(), 40u);
  EXPECT_LT(read.chunks[2].stored().size(), 4000u);
  // A carried chunk cannot forget its stored bytes, and is written back even without keep_stored.
  File copy = read;
  copy.chunks[1].DropStored();
  ASSERT_OK_AND_ASSIGN(const Bytes again, Write(copy, {.compress = false, .zstd_level = 3}));
  EXPECT_TRUE(again == bytes);
  ReadOptions lean;
  lean.keep_stored = false;
  ASSERT_OK_AND_ASSIGN(const File lean_read, Read(bytes, lean));
  EXPECT_FALSE(lean_read.chunks[1].is_decoded());
  ASSERT_OK_AND_ASSIGN(const Bytes lean_again, Write(lean_read, {.compress = false, .zstd_level = 3}));
  EXPECT_TRUE(lean_again == bytes);
}

TEST(FileRoundTripTest, ExtraKnownChunksAreRead) {
  File f;
  f.chunks.emplace_back(ChunkId("MINE"), "", ToBytes("game's own"), kChunkMustUnderstand);
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(f));
  EXPECT_THAT(Read(bytes), StatusIs(StatusCode::kNewerVersion, HasSubstr("MINE")));
  const ChunkId mine[] = {ChunkId("MINE")};
  ReadOptions options;
  options.extra_known_chunks = mine;
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes, options));
  EXPECT_TRUE(read == f);
}

TEST(FileRoundTripTest, ReadKeepsVersionsAndWritesThemBack) {
  // A newer writer (format version 7) whose file format-version-1 readers can read.
  ASSERT_OK_AND_ASSIGN(Bytes bytes, Write(ChunkyFile()));
  StoreU16(bytes.data() + 8, 7);
  format_testing::Reseal(&bytes);
  const File read = ReadBack(bytes);
  EXPECT_EQ(read.format_version, 7);
  EXPECT_EQ(read.min_reader_version, 1);
}

TEST(FileRoundTripTest, ChangedChunkIsEncodedAgain) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(ChunkyFile()));
  ASSERT_OK_AND_ASSIGN(File read, Read(bytes));
  EXPECT_TRUE(read.chunks[0].has_stored());
  read.chunks[0].set_data(ToBytes("short now"));
  EXPECT_FALSE(read.chunks[0].has_stored());
  ASSERT_OK_AND_ASSIGN(const Bytes changed, Write(read));
  ASSERT_OK_AND_ASSIGN(const File again, Read(changed));
  EXPECT_TRUE(again.chunks[0].data() == ToBytes("short now"));
  EXPECT_TRUE(again.chunks[1] == read.chunks[1]);
  EXPECT_EQ(again.chunks[0].stored_codec(), static_cast<std::uint8_t>(Codec::kStored));
}

// --- Invalid input to Write ----------------------------------------------------------------------

TEST(FileWriteTest, RefusesBadUtf8) {
  for (const std::string bad : {"\xFF", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "a\xE2\x82"}) {
    File f;
    f.header.slot_name = bad;
    EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("slot name")));
    f = File{};
    f.header.title = bad;
    EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("title")));
    f = File{};
    f.header.game_build = bad;
    EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("game build")));
    f = File{};
    f.header.custom_versions = {{bad, 1}};
    EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("custom version")));
    f = File{};
    f.chunks.emplace_back(kTestChunk, bad, Bytes());
    EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("chunk key")));
  }
}

TEST(FileWriteTest, RefusesNulInStrings) {
  const std::string nul("a\0b", 3);
  File f;
  f.header.slot_name = nul;
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("NUL")));
  f = File{};
  f.header.title = nul;
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("NUL")));
  f = File{};
  f.header.game_build = nul;
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("NUL")));
  f = File{};
  f.header.custom_versions = {{nul, 1}};
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("NUL")));
  f = File{};
  f.chunks.emplace_back(kTestChunk, nul, Bytes());
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("NUL")));
}

TEST(FileWriteTest, RefusesDuplicateChunks) {
  File f;
  f.chunks.emplace_back(kWorldChunk, "Maps/Town", ToBytes("a"));
  f.chunks.emplace_back(kWorldChunk, "Maps/Cave", ToBytes("b"));
  f.chunks.emplace_back(kWorldChunk, "Maps/Town", ToBytes("c"));
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("same ID and key")));
  // The same key under another ID is another chunk.
  f.chunks.pop_back();
  f.chunks.emplace_back(kLevelSegmentChunk, "Maps/Town", ToBytes("c"));
  EXPECT_OK(Write(f));
}

TEST(FileWriteTest, RefusesUnsortedOrRepeatedCustomVersions) {
  File f;
  f.header.custom_versions = {{"b", 1}, {"a", 1}};
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("sorted")));
  f.header.custom_versions = {{"a", 1}, {"a", 2}};
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("sorted")));
  f.header.custom_versions = {{"", 1}};
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("empty key")));
}

TEST(FileWriteTest, RefusesCarriedFieldWithKnownIdOrOutOfOrder) {
  for (std::uint32_t id = 0; id <= kLastKnownHeaderField; ++id) {
    File f;
    f.header.carried_fields = {{id, ToBytes("x")}};
    EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("knows")));
  }
  File f;
  f.header.carried_fields = {{14, {}}, {13, {}}};
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("sorted")));
  f.header.carried_fields = {{14, {}}, {14, {}}};
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("sorted")));
}

TEST(FileWriteTest, RefusesZstdLevelOutOfRange) {
  const File f = ChunkyFile();
  EXPECT_THAT(Write(f, {.compress = true, .zstd_level = ZSTD_maxCLevel() + 1}),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("zstd level")));
  EXPECT_THAT(Write(f, {.compress = true, .zstd_level = ZSTD_minCLevel() - 1}),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("zstd level")));
  // Without compression the level is not used.
  EXPECT_OK(Write(f, {.compress = false, .zstd_level = 1000}));
}

TEST(FileWriteTest, RefusesVersionsItCannotWrite) {
  File f;
  f.min_reader_version = kFormatVersion + 1;
  f.format_version = kFormatVersion + 1;
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("minimum reader version")));
  f.min_reader_version = 0;
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput));
  f.min_reader_version = 1;
  f.format_version = 0;
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput));
}

// --- Newer versions ------------------------------------------------------------------------------

TEST(FileReadTest, MinReaderVersionAboveOursIsNewerVersion) {
  ASSERT_OK_AND_ASSIGN(Bytes bytes, Write(ChunkyFile()));
  StoreU16(bytes.data() + 8, kFormatVersion + 1);
  StoreU16(bytes.data() + 10, kFormatVersion + 1);
  format_testing::Reseal(&bytes);
  EXPECT_THAT(Read(bytes), StatusIs(StatusCode::kNewerVersion, HasSubstr("format version 2")));
  EXPECT_THAT(ReadPrelude(bytes), StatusIs(StatusCode::kNewerVersion));
  EXPECT_THAT(ReadHeader(bytes), StatusIs(StatusCode::kNewerVersion));
  // Without resealing, the prelude checksum catches the change first.
  ASSERT_OK_AND_ASSIGN(Bytes unsealed, Write(ChunkyFile()));
  StoreU16(unsealed.data() + 10, kFormatVersion + 1);
  EXPECT_THAT(Read(unsealed), StatusIs(StatusCode::kDamaged, HasSubstr("prelude")));
}

TEST(FileReadTest, UnknownMustUnderstandChunkIsNewerVersion) {
  File f = ChunkyFile();
  f.chunks.emplace_back(ChunkId("FUTR"), "x", ToBytes("new"), kChunkMustUnderstand);
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(f));
  EXPECT_THAT(Read(bytes),
              StatusIs(StatusCode::kNewerVersion, HasSubstr("chunk 5 (FUTR \"x\") must be understood")));
  // The header is still readable for a slot list.
  EXPECT_OK(ReadHeader(bytes));
}

TEST(FileReadTest, KnownChunkInUnknownCodecIsNewerVersion) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(ChunkyFile()));
  EXPECT_THAT(Read(format_testing::WithCodec(bytes, 0, 2)),
              StatusIs(StatusCode::kNewerVersion, HasSubstr("chunk 0 (GLOB) uses codec 2")));
  EXPECT_THAT(Read(format_testing::WithCodec(bytes, 2, 255)),
              StatusIs(StatusCode::kNewerVersion, HasSubstr("chunk 2 (WRLD \"Maps/Cave\")")));
}

TEST(FileReadTest, UnknownMustUnderstandChunkInUnknownCodecIsNewerVersion) {
  File f;
  f.chunks.emplace_back(ChunkId("FUTR"), "", ToBytes("new"), kChunkMustUnderstand);
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(f));
  EXPECT_THAT(Read(format_testing::WithCodec(bytes, 0, 3)), StatusIs(StatusCode::kNewerVersion));
}

// --- Prelude and header alone --------------------------------------------------------------------

TEST(FileReadHeaderTest, ReadsFromThePreludeAndHeaderAlone) {
  File f = ChunkyFile();
  f.header = EveryField();
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(f));
  ASSERT_OK_AND_ASSIGN(const Prelude prelude, ReadPrelude(ByteView(bytes).first(kPreludeSize)));
  EXPECT_EQ(prelude.format_version, kFormatVersion);
  EXPECT_EQ(prelude.min_reader_version, kMinReaderVersion);
  EXPECT_EQ(prelude.file_size, bytes.size());
  ASSERT_LT(prelude.header_end(), bytes.size());
  ASSERT_OK_AND_ASSIGN(const Header h, ReadHeader(ByteView(bytes).first(prelude.header_end())));
  EXPECT_TRUE(h == f.header);
  // Anything after the header is neither needed nor checked.
  Bytes damaged_tail = bytes;
  damaged_tail.back() ^= 0xFF;
  EXPECT_OK(ReadHeader(damaged_tail));
  EXPECT_THAT(Read(damaged_tail), StatusIs(StatusCode::kDamaged));
  for (std::size_t n = 0; n < prelude.header_end(); ++n) {
    EXPECT_THAT(ReadHeader(ByteView(bytes).first(n)), StatusIs(StatusCode::kDamaged)) << n;
  }
  EXPECT_THAT(ReadHeader(ByteView(bytes).first(prelude.header_end() - 1)),
              StatusIs(StatusCode::kDamaged, HasSubstr("header: truncated")));
  for (std::size_t n = 0; n < kPreludeSize; ++n) {
    EXPECT_THAT(ReadPrelude(ByteView(bytes).first(n)),
                StatusIs(StatusCode::kDamaged, HasSubstr("prelude")));
  }
}

TEST(FileReadHeaderTest, DamagedHeaderIsDamaged) {
  File f;
  f.header = EveryField();
  ASSERT_OK_AND_ASSIGN(Bytes bytes, Write(f));
  bytes[kPreludeSize + 3] ^= 1;
  EXPECT_THAT(ReadHeader(bytes), StatusIs(StatusCode::kDamaged, HasSubstr("header")));
  EXPECT_OK(ReadPrelude(bytes));
}

// --- Which part a failure names ------------------------------------------------------------------

class FilePartsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(bytes_, Write(ChunkyFile()));
    ASSERT_OK_AND_ASSIGN(prelude_, ReadPrelude(bytes_));
  }

  std::size_t ChunkOffset(std::size_t n) const {
    std::uint64_t count;
    std::vector<RawEntry> entries;
    const RawFile raw = RawFile::Split(bytes_);
    EXPECT_TRUE(format_testing::ParseDirectory(raw.directory, &count, &entries));
    std::size_t offset = kPreludeSize + prelude_.header_size + prelude_.directory_size;
    for (std::size_t i = 0; i < n; ++i) offset += entries[i].stored_size;
    return offset;
  }

  // The Diagnose part names whose checksum did not match.
  static std::vector<std::string> FailedParts(const Diagnosis& d) {
    std::vector<std::string> out;
    for (const PartReport& p : d.parts) {
      if (p.checked && !p.ok) out.push_back(p.part);
    }
    return out;
  }

  Bytes bytes_;
  Prelude prelude_;
};

TEST_F(FilePartsTest, IntactFileDiagnosesClean) {
  const Diagnosis d = Diagnose(bytes_);
  EXPECT_OK(d.status);
  EXPECT_TRUE(d.prelude_readable);
  ASSERT_EQ(d.parts.size(), 4u + 5u);
  EXPECT_THAT(FailedParts(d), ::testing::IsEmpty());
  EXPECT_EQ(d.parts[0].part, "prelude");
  EXPECT_EQ(d.parts[1].part, "header");
  EXPECT_EQ(d.parts[2].part, "directory");
  EXPECT_EQ(d.parts[3].part, "file");
  EXPECT_EQ(d.parts[6].part, "chunk 2");
  EXPECT_EQ(d.parts[6].chunk_id, "WRLD");
  EXPECT_EQ(d.parts[6].chunk_key, "Maps/Cave");
  EXPECT_EQ(d.parts[6].offset, ChunkOffset(2));
  EXPECT_EQ(d.parts[6].size, 500u);
}

TEST_F(FilePartsTest, DamagedPreludeIsNamed) {
  bytes_[20] ^= 1;
  EXPECT_THAT(Read(bytes_), StatusIs(StatusCode::kDamaged, HasSubstr("prelude: checksum")));
  const Diagnosis d = Diagnose(bytes_);
  EXPECT_THAT(d.status, StatusIs(StatusCode::kDamaged));
  EXPECT_FALSE(d.prelude_readable);
  EXPECT_THAT(FailedParts(d), ::testing::ElementsAre("prelude"));
}

TEST_F(FilePartsTest, WrongMagicIsNamed) {
  bytes_[1] = 'X';
  EXPECT_THAT(Read(bytes_), StatusIs(StatusCode::kDamaged, HasSubstr("prelude: the magic")));
  const Diagnosis d = Diagnose(bytes_);
  EXPECT_FALSE(d.prelude_readable);
  EXPECT_TRUE(d.parts.empty());
}

TEST_F(FilePartsTest, DamagedHeaderIsNamed) {
  bytes_[kPreludeSize + 2] ^= 0x40;
  EXPECT_THAT(Read(bytes_), StatusIs(StatusCode::kDamaged, HasSubstr("header: checksum")));
  EXPECT_THAT(FailedParts(Diagnose(bytes_)), ::testing::ElementsAre("header", "file"));
}

TEST_F(FilePartsTest, DamagedDirectoryIsNamed) {
  bytes_[kPreludeSize + prelude_.header_size + 1] ^= 0x01;
  EXPECT_THAT(Read(bytes_), StatusIs(StatusCode::kDamaged, HasSubstr("directory: checksum")));
  EXPECT_THAT(FailedParts(Diagnose(bytes_)), ::testing::ElementsAre("directory", "file"));
}

TEST_F(FilePartsTest, DamagedChunkIsNamed) {
  const struct {
    std::size_t chunk;
    const char* label;
  } cases[] = {{0, "chunk 0 (GLOB): checksum"},
               {1, "chunk 1 (WRLD \"Maps/Town\"): checksum"},
               {2, "chunk 2 (WRLD \"Maps/Cave\"): checksum"},
               {4, "chunk 4 (PLYR \"Local:1\"): checksum"}};
  for (const auto& c : cases) {
    Bytes bytes = bytes_;
    bytes[ChunkOffset(c.chunk)] ^= 0x80;
    EXPECT_THAT(Read(bytes), StatusIs(StatusCode::kDamaged, HasSubstr(c.label)));
    EXPECT_THAT(FailedParts(Diagnose(bytes)),
                ::testing::ElementsAre("file", "chunk " + std::to_string(c.chunk)));
  }
}

TEST_F(FilePartsTest, ChunkThatFailsToDecodeIsNamed) {
  // Replace chunk 1's zstd bytes, behind recomputed checksums, with a frame whose one compressed
  // block is garbage: every check before decoding passes, decoding fails.
  const Bytes frame = {0x28, 0xB5, 0x2F, 0xFD, 0x60, 0x88, 0x12,  // content size 5000
                       0x55, 0x00, 0x00,                          // last compressed block, 10 bytes
                       1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  RawFile raw = RawFile::Split(bytes_);
  std::uint64_t count;
  std::vector<RawEntry> entries;
  ASSERT_TRUE(format_testing::ParseDirectory(raw.directory, &count, &entries));
  const std::size_t at = ChunkOffset(1) - ChunkOffset(0);
  raw.chunks.erase(raw.chunks.begin() + static_cast<std::ptrdiff_t>(at),
                   raw.chunks.begin() + static_cast<std::ptrdiff_t>(at + entries[1].stored_size));
  raw.chunks.insert(raw.chunks.begin() + static_cast<std::ptrdiff_t>(at), frame.begin(), frame.end());
  entries[1].stored_size = frame.size();
  raw.directory = format_testing::EncodeDirectory(count, entries);
  const Bytes forged = raw.Join();
  EXPECT_THAT(Read(forged),
              StatusIs(StatusCode::kDamaged,
                       HasSubstr("chunk 1 (WRLD \"Maps/Town\"): zstd frame does not decode")));
  // Every checksum matches: Diagnose reports the status and no damaged part.
  const Diagnosis d = Diagnose(forged);
  EXPECT_THAT(d.status, StatusIs(StatusCode::kDamaged));
  EXPECT_THAT(FailedParts(d), ::testing::IsEmpty());
}

TEST_F(FilePartsTest, TruncatedAndExtendedFilesAreNamed) {
  Bytes shorter(bytes_.begin(), bytes_.end() - 1);
  EXPECT_THAT(Read(shorter), StatusIs(StatusCode::kDamaged, HasSubstr("truncated")));
  const Diagnosis d = Diagnose(shorter);
  EXPECT_TRUE(d.prelude_readable);
  EXPECT_THAT(d.status, StatusIs(StatusCode::kDamaged, HasSubstr("truncated")));
  Bytes longer = bytes_;
  longer.push_back(0);
  EXPECT_THAT(Read(longer), StatusIs(StatusCode::kDamaged, HasSubstr("follow the recorded end")));
}

}  // namespace
}  // namespace rolly::format
