// Tests of the split write (EncodeChunks then WriteEncoded, as the store does it) and of Verify,
// the check without decoding: both must agree with Write and Read.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "rolly/core/status_matchers.h"
#include "rolly/format/file.h"
#include "rolly/format/format_test_util.h"

namespace rolly::format {
namespace {

using format_testing::Compressible;
using format_testing::Incompressible;

File SampleFile() {
  File file;
  file.header.slot_name = "Slot 1";
  file.header.title = "The Mill";
  file.header.sequence = 4;
  file.chunks.emplace_back(kGlobalsChunk, "", Compressible(20000, 1));
  file.chunks.emplace_back(kWorldChunk, "Maps/Town", Incompressible(3000, 2));
  file.chunks.emplace_back(kTestChunk, "empty", Bytes());
  return file;
}

TEST(FileEncodedTest, SplitWriteGivesTheBytesOfWrite) {
  for (const bool compress : {true, false}) {
    WriteOptions options;
    options.compress = compress;
    const File file = SampleFile();
    ASSERT_OK_AND_ASSIGN(const Bytes whole, Write(file, options));
    ASSERT_OK_AND_ASSIGN(const EncodedChunks encoded, EncodeChunks(file.chunks, options));
    EXPECT_EQ(encoded.count(), 3u);
    ASSERT_OK_AND_ASSIGN(const Bytes split, WriteEncoded(file.format_version,
                                                         file.min_reader_version, file.header,
                                                         encoded));
    EXPECT_EQ(split, whole);
    EXPECT_LT(encoded.stored_size(), whole.size());
  }
}

TEST(FileEncodedTest, EncodedChunksTakeAnyHeaderLater) {
  const File file = SampleFile();
  ASSERT_OK_AND_ASSIGN(const EncodedChunks encoded, EncodeChunks(file.chunks));
  Header later = file.header;
  later.sequence = 99;
  later.title = "Later";
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, WriteEncoded(1, 1, later, encoded));
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes));
  EXPECT_EQ(read.header, later);
  EXPECT_EQ(read.chunks, file.chunks);
}

TEST(FileEncodedTest, ChunksReadKeepTheirStoredBytes) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(SampleFile()));
  ASSERT_OK_AND_ASSIGN(File read, Read(bytes));
  ASSERT_OK_AND_ASSIGN(const EncodedChunks encoded, EncodeChunks(std::move(read.chunks)));
  ASSERT_OK_AND_ASSIGN(const Bytes again, WriteEncoded(read.format_version,
                                                       read.min_reader_version, read.header,
                                                       encoded));
  EXPECT_EQ(again, bytes);
}

TEST(FileEncodedTest, EncodeChunksRefusesWhatWriteRefuses) {
  std::vector<Chunk> duplicate;
  duplicate.emplace_back(kTestChunk, "k", Bytes{1});
  duplicate.emplace_back(kTestChunk, "k", Bytes{2});
  EXPECT_THAT(EncodeChunks(duplicate), StatusIs(StatusCode::kInvalidInput));
  WriteOptions bad_level;
  bad_level.zstd_level = 1000;
  EXPECT_THAT(EncodeChunks({}, bad_level), StatusIs(StatusCode::kInvalidInput));
  Header bad_header;
  bad_header.title = std::string("a\0b", 3);
  ASSERT_OK_AND_ASSIGN(const EncodedChunks none, EncodeChunks({}));
  EXPECT_THAT(WriteEncoded(1, 1, bad_header, none), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(WriteEncoded(1, 2, Header(), none), StatusIs(StatusCode::kInvalidInput));
}

TEST(FileVerifyTest, ValidFileGivesItsHeader) {
  const File file = SampleFile();
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(file));
  ASSERT_OK_AND_ASSIGN(const Header header, Verify(bytes));
  EXPECT_EQ(header, file.header);
}

// Every error fixture gets the same status from Verify as from Read, but for chunks that pass
// their checksums and fail only to decode, which Verify does not decode.
TEST(FileVerifyTest, AgreesWithReadOnEveryErrorFixture) {
  int checked = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("tests/fixtures/format-errors")) {
    if (entry.path().extension() != ".rsav") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const Bytes bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const Status read = Read(bytes).status();
    const Status verify = Verify(bytes).status();
    if (read.message().find("zstd frame") != std::string_view::npos) {
      EXPECT_OK(verify) << entry.path();
    } else {
      EXPECT_EQ(verify, read) << entry.path();
    }
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

}  // namespace
}  // namespace rolly::format
