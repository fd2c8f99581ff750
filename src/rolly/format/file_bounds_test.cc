// Every bound of docs/format.md, "Limits", at its limit and one past it: Write refuses past it
// (InvalidInput), Read refuses a file past it (Damaged, with bytes crafted where Write cannot make
// them), and a file at the limit reads and writes back exactly.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "rolly/core/status_matchers.h"
#include "rolly/format/file.h"
#include "rolly/format/format_test_util.h"
#include "rolly/format/internal/front_bounds.h"

namespace rolly::format {
namespace {

using format_testing::RawEntry;
using format_testing::RawField;
using format_testing::RawFile;
using format_testing::ToBytes;
using ::testing::Eq;
using ::testing::HasSubstr;

// Writes, reads, and checks the bytes come back the same.
void ExpectWritesAndReadsBack(const File& file) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(file, {.compress = false, .zstd_level = 3}));
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes));
  EXPECT_TRUE(read == file);
  ASSERT_OK_AND_ASSIGN(const Bytes again, Write(read));
  EXPECT_TRUE(again == bytes);
}

// A file of no chunks whose header is exactly `fields`, checksums recomputed.
Bytes FileWithHeader(const std::vector<RawField>& fields) {
  Result<Bytes> empty = Write(File{});
  EXPECT_OK(empty);
  RawFile raw = RawFile::Split(*empty);
  raw.header = format_testing::EncodeHeader(fields);
  return raw.Join();
}

Bytes Repeat(std::size_t n, char c = 'a') { return Bytes(n, static_cast<std::uint8_t>(c)); }

// A string field (slot name, game build, title) at its bound and one past.
void CheckStringBound(std::string Header::*member, HeaderField id, std::size_t bound,
                      const char* name) {
  SCOPED_TRACE(name);
  File f;
  f.header.*member = std::string(bound, 'a');
  ExpectWritesAndReadsBack(f);
  // Multi-byte characters count in bytes.
  std::string two_byte;
  while (two_byte.size() + 2 <= bound) two_byte += "\xC3\xA9";
  f.header.*member = two_byte;
  ExpectWritesAndReadsBack(f);
  f.header.*member = std::string(bound + 1, 'a');
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr(name)));
  EXPECT_THAT(Read(FileWithHeader({{static_cast<std::uint64_t>(id), Repeat(bound)}})), IsOk());
  EXPECT_THAT(Read(FileWithHeader({{static_cast<std::uint64_t>(id), Repeat(bound + 1)}})),
              StatusIs(StatusCode::kDamaged, HasSubstr(std::string("header: ") + name)));
}

TEST(FileBoundsTest, SlotNameTitleAndGameBuild) {
  CheckStringBound(&Header::slot_name, HeaderField::kSlotName, kMaxSlotNameSize, "slot name");
  CheckStringBound(&Header::title, HeaderField::kTitle, kMaxTitleSize, "title");
  CheckStringBound(&Header::game_build, HeaderField::kGameBuild, kMaxGameBuildSize, "game build");
}

TEST(FileBoundsTest, MetadataAndThumbnail) {
  File f;
  f.header.metadata = Repeat(kMaxMetadataSize);
  f.header.thumbnail = Repeat(kMaxThumbnailSize);
  ExpectWritesAndReadsBack(f);
  f.header.metadata.push_back(0);
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("metadata")));
  f.header.metadata.pop_back();
  f.header.thumbnail.push_back(0);
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("thumbnail")));
  EXPECT_THAT(Read(FileWithHeader({{10, Repeat(kMaxMetadataSize + 1)}})),
              StatusIs(StatusCode::kDamaged, HasSubstr("header: metadata")));
  EXPECT_THAT(Read(FileWithHeader({{11, Repeat(kMaxThumbnailSize + 1)}})),
              StatusIs(StatusCode::kDamaged, HasSubstr("header: thumbnail")));
}

Bytes CustomVersionsPayload(std::size_t count, std::size_t key_size) {
  Bytes p;
  format_testing::PutVarint(&p, count);
  for (std::size_t i = 0; i < count; ++i) {
    char prefix[24];  // room for any size_t
    std::snprintf(prefix, sizeof prefix, "%05zu", i);
    std::string key(prefix);
    key.resize(std::max(key_size, key.size()), 'k');
    format_testing::PutVarint(&p, key.size());
    p.insert(p.end(), key.begin(), key.end());
    format_testing::PutVarint(&p, i);
  }
  return p;
}

TEST(FileBoundsTest, CustomVersionCountAndKeySize) {
  File f;
  for (std::size_t i = 0; i < kMaxCustomVersions; ++i) {
    char key[8];
    std::snprintf(key, sizeof key, "%05zu", i);
    f.header.custom_versions.push_back({key, static_cast<std::uint32_t>(i)});
  }
  ExpectWritesAndReadsBack(f);
  f.header.custom_versions.push_back({"99999", 1});
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("custom versions")));
  EXPECT_OK(Read(FileWithHeader({{12, CustomVersionsPayload(kMaxCustomVersions, 5)}})));
  EXPECT_THAT(Read(FileWithHeader({{12, CustomVersionsPayload(kMaxCustomVersions + 1, 5)}})),
              StatusIs(StatusCode::kDamaged, HasSubstr("header: custom versions")));

  f = File{};
  f.header.custom_versions = {{std::string(kMaxCustomVersionKeySize, 'k'), 1}};
  ExpectWritesAndReadsBack(f);
  f.header.custom_versions = {{std::string(kMaxCustomVersionKeySize + 1, 'k'), 1}};
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("custom version key")));
  EXPECT_OK(Read(FileWithHeader({{12, CustomVersionsPayload(2, kMaxCustomVersionKeySize)}})));
  EXPECT_THAT(Read(FileWithHeader({{12, CustomVersionsPayload(2, kMaxCustomVersionKeySize + 1)}})),
              StatusIs(StatusCode::kDamaged, HasSubstr("header: a custom version")));
}

TEST(FileBoundsTest, CarriedFieldCount) {
  File f;
  std::vector<RawField> fields;
  for (std::uint32_t i = 0; i < kMaxCarriedFields; ++i) {
    f.header.carried_fields.push_back({100 + i, Bytes{1}});
    fields.push_back({100 + i, Bytes{1}});
  }
  ExpectWritesAndReadsBack(f);
  EXPECT_OK(Read(FileWithHeader(fields)));
  f.header.carried_fields.push_back({100 + kMaxCarriedFields, Bytes{1}});
  fields.push_back({100 + kMaxCarriedFields, Bytes{1}});
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("carried header fields")));
  EXPECT_THAT(Read(FileWithHeader(fields)),
              StatusIs(StatusCode::kDamaged, HasSubstr("header: more carried fields")));
}

// The header's u32 fields hold 2^32 - 1, and a file saying 2^32 is damaged.
TEST(FileBoundsTest, HeaderU32FieldsAtTheirBound) {
  const struct {
    HeaderField id;
    const char* name;
  } fields[] = {{HeaderField::kGameDataVersion, "game data version"},
                {HeaderField::kLibraryVersion, "library version"},
                {HeaderField::kRecordVersion, "record version"},
                {HeaderField::kKind, "kind"}};
  auto varint = [](std::uint64_t v) {
    Bytes b;
    ByteWriter(&b).Varint(v);
    return b;
  };
  for (const auto& f : fields) {
    SCOPED_TRACE(f.name);
    const auto id = static_cast<std::uint64_t>(f.id);
    EXPECT_OK(Read(FileWithHeader({{id, varint(UINT32_MAX)}})).status());
    EXPECT_THAT(Read(FileWithHeader({{id, varint(std::uint64_t{UINT32_MAX} + 1)}})),
                StatusIs(StatusCode::kDamaged,
                         HasSubstr(std::string("header: ") + f.name + " is not valid")));
  }
}

// A field ID is at most 2^32 - 1: one this version does not know is carried at that bound, and
// one past it is refused.
TEST(FileBoundsTest, HeaderFieldIds) {
  constexpr std::uint64_t kLast = UINT32_MAX;
  ASSERT_OK_AND_ASSIGN(const File read, Read(FileWithHeader({{kLast, Bytes{1}}})));
  ASSERT_EQ(read.header.carried_fields.size(), 1u);
  EXPECT_EQ(read.header.carried_fields[0].id, kLast);
  EXPECT_THAT(Read(FileWithHeader({{kLast + 1, Bytes{1}}})),
              StatusIs(StatusCode::kDamaged, HasSubstr("header: a field ID is not readable")));
}

TEST(FileBoundsTest, HeaderSize) {
  // One carried field of 1 ID byte, 4 length bytes and the payload: exactly 16 MiB.
  File f;
  f.header.carried_fields = {{13, Repeat(kMaxHeaderSize - 5)}};
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(f));
  ASSERT_OK_AND_ASSIGN(const Prelude prelude, ReadPrelude(bytes));
  EXPECT_EQ(prelude.header_size, kMaxHeaderSize);
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes));
  ASSERT_OK_AND_ASSIGN(const Bytes again, Write(read));
  EXPECT_TRUE(again == bytes);
  f.header.carried_fields[0].payload.push_back(0);
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("header is")));
  // Crafted: a header one byte past the bound.
  RawFile raw = RawFile::Split(bytes);
  raw.header = format_testing::EncodeHeader({{13, Repeat(kMaxHeaderSize - 4)}});
  ASSERT_EQ(raw.header.size(), kMaxHeaderSize + 1);
  const Bytes past = raw.Join();
  EXPECT_THAT(Read(past), StatusIs(StatusCode::kDamaged, HasSubstr("prelude: the header size")));
  EXPECT_THAT(ReadHeader(past), StatusIs(StatusCode::kDamaged, HasSubstr("header size")));
}

// The directory at exactly 16 MiB (65,536 chunks with long keys) is written and read back; one
// byte more is refused by Write.
TEST(FileBoundsTest, DirectorySizeAtItsBound) {
  // A chunk's entry takes a fixed size plus its key's bytes (keys of 128 bytes and more).
  auto one = [](std::size_t key) {
    File f;
    f.chunks.emplace_back(kTestChunk, std::string(key, 'k'), ToBytes("x"));
    return ReadPrelude(*Write(f))->directory_size - 1;  // less the count's one byte
  };
  const std::uint64_t fixed = one(200) - 200;
  ASSERT_EQ(one(300) - 300, fixed);
  constexpr std::uint64_t kChunks = kMaxChunks;
  const std::uint64_t entries = kMaxDirectorySize - 3;  // less the count's three bytes
  const std::uint64_t key = entries / kChunks - fixed;
  const std::uint64_t longer = entries - kChunks * (fixed + key);  // entries one byte longer
  File f;
  f.chunks.reserve(kChunks);
  for (std::uint64_t i = 0; i < kChunks; ++i) {
    std::string k = std::to_string(i);
    k.resize(key + (i < longer ? 1 : 0), 'k');
    f.chunks.emplace_back(kTestChunk, std::move(k), ToBytes("x"));
  }
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(f));
  ASSERT_OK_AND_ASSIGN(const Prelude prelude, ReadPrelude(bytes));
  EXPECT_EQ(prelude.directory_size, kMaxDirectorySize);
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes));
  EXPECT_EQ(read.chunks.size(), kChunks);
  f.chunks.back() = Chunk(kTestChunk, f.chunks.back().key() + "k", ToBytes("x"));
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("directory is")));
}

TEST(FileBoundsTest, DirectorySizeInThePrelude) {
  ASSERT_OK_AND_ASSIGN(Bytes bytes, Write(File{}));
  StoreU32(bytes.data() + 16, static_cast<std::uint32_t>(kMaxDirectorySize + 1));
  StoreU64(bytes.data() + 24, kPreludeSize + kMaxDirectorySize + 1);
  format_testing::Reseal(&bytes);
  EXPECT_THAT(ReadPrelude(bytes),
              StatusIs(StatusCode::kDamaged, HasSubstr("prelude: the directory size")));
}

// The prelude's file size at its bound passes the prelude's checks (the file is then short of
// it); one byte past is refused there, so no reader reads further.
TEST(FileBoundsTest, FileSizeInThePrelude) {
  ASSERT_OK_AND_ASSIGN(Bytes bytes, Write(File{}));
  StoreU64(bytes.data() + 24, kMaxFileSize);
  format_testing::Reseal(&bytes);
  EXPECT_OK(ReadPrelude(bytes).status());
  EXPECT_THAT(Read(bytes), StatusIs(StatusCode::kDamaged, HasSubstr("truncated")));
  StoreU64(bytes.data() + 24, kMaxFileSize + 1);
  format_testing::Reseal(&bytes);
  EXPECT_THAT(ReadPrelude(bytes), StatusIs(StatusCode::kDamaged,
                                           HasSubstr("prelude: the file size is above its bound")));
  EXPECT_THAT(Read(bytes), StatusIs(StatusCode::kDamaged, HasSubstr("prelude: the file size")));
}

// The writer's file-size bound, through the check Write runs on the sizes of what it encoded,
// which gives the size Write records. A file can only pass the bound by chunks carried in a codec
// a later version added (stored larger than they decode): writing one takes over 2 GB and
// seconds, so the sizes alone stand in here. The whole file at its bound: the prelude, a header
// and a directory at theirs, and 1 GiB.
TEST(FileBoundsTest, FileSizeWhenWritten) {
  using format_internal::CheckFrontSizes;
  ASSERT_OK_AND_ASSIGN(const std::uint64_t size,
                       CheckFrontSizes(kMaxHeaderSize, kMaxDirectorySize, kMaxDecodedTotal));
  EXPECT_EQ(size, kMaxFileSize);
  EXPECT_THAT(CheckFrontSizes(kMaxHeaderSize, kMaxDirectorySize, kMaxDecodedTotal + 1),
              StatusIs(StatusCode::kInvalidInput,
                       Eq("the file would be 1107296321 bytes, above its bound of 1107296320")));
  // The bound is the whole file's: smaller parts before the chunks leave the chunks more room.
  const std::uint64_t chunks = kMaxFileSize - kPreludeSize - 100 - 200;
  EXPECT_OK(CheckFrontSizes(100, 200, chunks).status());
  EXPECT_THAT(CheckFrontSizes(100, 200, chunks + 1),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("the file would be")));
}

// A reader may bound what it decodes below the format's bound (ReadOptions::decode_at_most): a
// valid file decoding to more is InvalidInput from Read, and still passes Verify.
TEST(FileBoundsTest, DecodeAtMostIsTheReadersOwnBound) {
  File f;
  f.chunks.emplace_back(kTestChunk, "", Bytes(1000, 'x'));
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(f));
  ReadOptions options;
  options.decode_at_most = 1000;
  EXPECT_OK(Read(bytes, options).status());
  options.decode_at_most = 999;
  EXPECT_THAT(Read(bytes, options),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("more than the 999 asked")));
  EXPECT_OK(Verify(bytes, options).status());
}

TEST(FileBoundsTest, ChunkKeySize) {
  File f;
  f.chunks.emplace_back(kWorldChunk, std::string(kMaxChunkKeySize, 'k'), ToBytes("x"));
  ExpectWritesAndReadsBack(f);
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(f));
  f.chunks[0] = Chunk(kWorldChunk, std::string(kMaxChunkKeySize + 1, 'k'), ToBytes("x"));
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("chunk key")));
  RawFile raw = RawFile::Split(bytes);
  std::uint64_t count;
  std::vector<RawEntry> entries;
  ASSERT_TRUE(format_testing::ParseDirectory(raw.directory, &count, &entries));
  entries[0].key.push_back('k');
  raw.directory = format_testing::EncodeDirectory(count, entries);
  EXPECT_THAT(Read(raw.Join()),
              StatusIs(StatusCode::kDamaged, HasSubstr("directory: entry 0 has a key")));
}

TEST(FileBoundsTest, ChunkCount) {
  File f;
  f.chunks.reserve(kMaxChunks + 1);
  for (std::uint64_t i = 0; i < kMaxChunks; ++i) {
    f.chunks.emplace_back(kLevelSegmentChunk, std::to_string(i), Bytes());
  }
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(f));
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes));
  EXPECT_EQ(read.chunks.size(), kMaxChunks);
  ASSERT_OK_AND_ASSIGN(const Bytes again, Write(read));
  EXPECT_TRUE(again == bytes);
  f.chunks.emplace_back(kLevelSegmentChunk, "one more", Bytes());
  EXPECT_THAT(Write(f), StatusIs(StatusCode::kInvalidInput, HasSubstr("65537 chunks")));
  // Crafted: one more entry in the directory.
  RawFile raw = RawFile::Split(bytes);
  std::uint64_t count;
  std::vector<RawEntry> entries;
  ASSERT_TRUE(format_testing::ParseDirectory(raw.directory, &count, &entries));
  RawEntry extra = entries.back();
  extra.key = ToBytes("one more");
  entries.push_back(extra);
  raw.directory = format_testing::EncodeDirectory(count + 1, entries);
  EXPECT_THAT(Read(raw.Join()),
              StatusIs(StatusCode::kDamaged, HasSubstr("directory: chunk count")));
}

// A file of chunks in an unknown codec (carried, so never decoded) recording `decoded` sizes.
Bytes CarriedChunks(const std::vector<std::uint64_t>& decoded) {
  File f;
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    f.chunks.emplace_back(ChunkId("ZZZZ"), std::to_string(i), ToBytes("abc"));
  }
  Result<Bytes> written = Write(f);
  EXPECT_OK(written);
  RawFile raw = RawFile::Split(*written);
  std::uint64_t count;
  std::vector<RawEntry> entries;
  EXPECT_TRUE(format_testing::ParseDirectory(raw.directory, &count, &entries));
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    entries[i].codec = 77;
    entries[i].decoded_size = decoded[i];
  }
  raw.directory = format_testing::EncodeDirectory(count, entries);
  return raw.Join();
}

TEST(FileBoundsTest, DecodedTotal) {
  const Bytes at_bound = CarriedChunks({kMaxDecodedTotal / 2, kMaxDecodedTotal / 2});
  ASSERT_OK_AND_ASSIGN(const File read, Read(at_bound));
  EXPECT_EQ(read.chunks[0].decoded_size() + read.chunks[1].decoded_size(), kMaxDecodedTotal);
  ASSERT_OK_AND_ASSIGN(const Bytes again, Write(read));
  EXPECT_TRUE(again == at_bound);
  EXPECT_THAT(Read(CarriedChunks({kMaxDecodedTotal / 2, kMaxDecodedTotal / 2 + 1})),
              StatusIs(StatusCode::kDamaged, HasSubstr("directory: decoded sizes")));
  EXPECT_THAT(Read(CarriedChunks({kMaxDecodedTotal + 1})),
              StatusIs(StatusCode::kDamaged, HasSubstr("directory: decoded sizes")));
  // Write: a carried chunk of 1 GiB plus one more byte.
  ASSERT_OK_AND_ASSIGN(File whole, Read(CarriedChunks({kMaxDecodedTotal})));
  ASSERT_OK(Write(whole));
  whole.chunks.emplace_back(kTestChunk, "", ToBytes("x"));
  EXPECT_THAT(Write(whole), StatusIs(StatusCode::kInvalidInput, HasSubstr("1 GiB")));
}

}  // namespace
}  // namespace rolly::format
