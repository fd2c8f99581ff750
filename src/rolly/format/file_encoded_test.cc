// Tests of the split write (EncodeChunks then WriteEncoded or WriteEncodedPieces, as the store
// does it) and of Verify, the check without decoding: all must agree with Write and Read.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "rolly/core/status_matchers.h"
#include "rolly/format/file.h"
#include "rolly/format/format_test_util.h"

namespace rolly::format {
namespace {

using format_testing::Compressible;
using format_testing::Incompressible;
using ::testing::HasSubstr;

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

TEST(FileEncodedTest, LaidOutPiecesSealedGiveTheBytesOfWrite) {
  for (const bool compress : {true, false}) {
    WriteOptions options;
    options.compress = compress;
    const File file = SampleFile();
    ASSERT_OK_AND_ASSIGN(const Bytes whole, Write(file, options));
    ASSERT_OK_AND_ASSIGN(EncodedChunks encoded, EncodeChunks(file.chunks, options));
    ASSERT_OK_AND_ASSIGN(FilePieces pieces,
                         LayOutEncodedPieces(file.format_version, file.min_reader_version,
                                             file.header, std::move(encoded)));
    EXPECT_EQ(encoded.count(), 0u);
    // Unsealed: the file and prelude checksums are not there yet, so a reader refuses it.
    Bytes unsealed;
    for (const Bytes& p : pieces.pieces) unsealed.insert(unsealed.end(), p.begin(), p.end());
    EXPECT_EQ(unsealed.size(), whole.size());
    EXPECT_THAT(Read(unsealed), StatusIs(StatusCode::kDamaged));
    const std::vector<ByteView> rest(pieces.pieces.begin() + 1, pieces.pieces.end());
    // A chunk with bytes waits for the seal for its checksum; the empty one has it at once.
    EXPECT_EQ(pieces.late_checksums.size(), 2u);
    SealFilePieces(pieces.pieces.front(), rest, pieces.late_checksums);
    Bytes sealed;
    for (const Bytes& p : pieces.pieces) sealed.insert(sealed.end(), p.begin(), p.end());
    EXPECT_EQ(sealed, whole);
  }
}

// CompressChunk encodes a chunk whose bytes its caller keeps: a file of such chunks is the bytes
// of the same file made of the bytes, through Write and through the split write, and a chunk that
// compressed is left encoded and decodes to the bytes.
TEST(FileEncodedTest, CompressChunkGivesTheBytesOfWriteAndKeepsNoCopyWhenItCompresses) {
  for (const bool compress : {true, false}) {
    SCOPED_TRACE(compress ? "compressed" : "stored");
    WriteOptions options;
    options.compress = compress;
    File plain = SampleFile();
    // (Its flags go with the chunk CompressChunk makes, compressed or not.)
    const Chunk& first = plain.chunks[0];
    plain.chunks[0] = Chunk(first.id(), first.key(), first.data(), kChunkMustUnderstand);
    File made;
    made.header = plain.header;
    for (const Chunk& c : plain.chunks) {
      ASSERT_OK_AND_ASSIGN(Chunk chunk,
                           CompressChunk(c.id(), c.key(), c.data(), options, c.flags()));
      made.chunks.push_back(std::move(chunk));
    }
    ASSERT_OK_AND_ASSIGN(const Bytes whole, Write(plain, options));
    ASSERT_OK_AND_ASSIGN(const Bytes written, Write(made, options));
    EXPECT_EQ(written, whole);
    ASSERT_OK_AND_ASSIGN(const EncodedChunks encoded, EncodeChunks(made.chunks, options));
    ASSERT_OK_AND_ASSIGN(const Bytes split, WriteEncoded(made.format_version,
                                                         made.min_reader_version, made.header,
                                                         encoded));
    EXPECT_EQ(split, whole);

    // Written with the other options, each chunk keeps the encoding it was made with.
    WriteOptions other = options;
    other.compress = !compress;
    ASSERT_OK_AND_ASSIGN(const Bytes written_other, Write(made, other));
    EXPECT_EQ(written_other, whole);

    // The compressible chunk holds the frame only; the others (incompressible, empty) a copy,
    // marked stored.
    const Chunk& compressible = made.chunks[0];
    EXPECT_EQ(compressible.is_left_encoded(), compress);
    EXPECT_EQ(compressible.decoded_size(), plain.chunks[0].data().size());
    if (compress) {
      EXPECT_TRUE(compressible.data().empty());
      EXPECT_LT(compressible.stored().size(), plain.chunks[0].data().size() / 2);
      Bytes decoded(compressible.decoded_size());
      ASSERT_OK(DecodeChunk(compressible, decoded, [](std::size_t) {}));
      EXPECT_EQ(decoded, plain.chunks[0].data());
    } else {
      EXPECT_EQ(compressible.data(), plain.chunks[0].data());
      EXPECT_EQ(compressible.stored_codec(), static_cast<std::uint8_t>(Codec::kStored));
    }
    for (std::size_t i = 0; i < made.chunks.size(); ++i) {
      EXPECT_EQ(made.chunks[i].flags(), plain.chunks[i].flags());
      if (i == 0) continue;
      EXPECT_TRUE(made.chunks[i].is_decoded());
      EXPECT_EQ(made.chunks[i].data(), plain.chunks[i].data());
      EXPECT_TRUE(made.chunks[i].has_stored());
      EXPECT_EQ(made.chunks[i].stored_codec(), static_cast<std::uint8_t>(Codec::kStored));
    }
  }
}

// The levels CompressChunk takes are Write's: zstd's range, bounds included.
TEST(FileEncodedTest, CompressChunkRefusesAZstdLevelWriteRefuses) {
  const Bytes data = Compressible(5000, 3);
  for (const int level : {ZSTD_minCLevel(), ZSTD_maxCLevel()}) {
    ASSERT_OK_AND_ASSIGN(const Chunk chunk,
                         CompressChunk(kTestChunk, "k", data, {.compress = true,
                                                               .zstd_level = level}));
    EXPECT_EQ(chunk.decoded_size(), data.size()) << level;
    if (level == ZSTD_maxCLevel()) {
      EXPECT_TRUE(chunk.is_left_encoded());
    }
  }
  for (const int level : {ZSTD_minCLevel() - 1, ZSTD_maxCLevel() + 1}) {
    EXPECT_THAT(CompressChunk(kTestChunk, "k", data, {.compress = true, .zstd_level = level}),
                StatusIs(StatusCode::kInvalidInput, HasSubstr("zstd level")));
  }
  // Without compression the level is not used.
  ASSERT_OK_AND_ASSIGN(const Chunk stored,
                       CompressChunk(kTestChunk, "k", data, {.compress = false,
                                                             .zstd_level = 1000}));
  EXPECT_EQ(stored.data(), data);
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

Bytes Concatenated(const FilePieces& pieces) {
  Bytes out;
  for (const Bytes& piece : pieces.pieces) out.insert(out.end(), piece.begin(), piece.end());
  return out;
}

// Files of every shape: compressed and stored chunks, empty chunks, only empty chunks, none.
std::vector<File> PieceFiles() {
  std::vector<File> files;
  files.push_back(SampleFile());
  File none;
  none.header.title = "No chunks";
  files.push_back(none);
  File empty;
  empty.chunks.emplace_back(kTestChunk, "a", Bytes());
  empty.chunks.emplace_back(kTestChunk, "b", Bytes());
  files.push_back(empty);
  File mixed;
  mixed.chunks.emplace_back(kTestChunk, "first", Bytes());
  mixed.chunks.emplace_back(kWorldChunk, "big", Incompressible(300000, 3));
  mixed.chunks.emplace_back(kGlobalsChunk, "", Compressible(70000, 4));
  mixed.chunks.emplace_back(kTestChunk, "one", Bytes{42});
  files.push_back(mixed);
  return files;
}

TEST(FileEncodedTest, PiecesConcatenateToTheBytesOfWriteEncoded) {
  for (const bool compress : {true, false}) {
    WriteOptions options;
    options.compress = compress;
    for (const File& file : PieceFiles()) {
      ASSERT_OK_AND_ASSIGN(const EncodedChunks for_bytes, EncodeChunks(file.chunks, options));
      ASSERT_OK_AND_ASSIGN(const Bytes whole, WriteEncoded(file.format_version,
                                                           file.min_reader_version, file.header,
                                                           for_bytes));
      ASSERT_OK_AND_ASSIGN(EncodedChunks encoded, EncodeChunks(file.chunks, options));
      const std::uint64_t stored_size = encoded.stored_size();
      ASSERT_OK_AND_ASSIGN(const FilePieces pieces,
                           WriteEncodedPieces(file.format_version, file.min_reader_version,
                                              file.header, std::move(encoded)));
      EXPECT_EQ(Concatenated(pieces), whole) << file.header.title << " compress " << compress;
      EXPECT_EQ(pieces.size, whole.size());
      ASSERT_FALSE(pieces.pieces.empty());
      EXPECT_EQ(pieces.pieces[0].size(), whole.size() - stored_size);
      for (std::size_t i = 1; i < pieces.pieces.size(); ++i) {
        EXPECT_FALSE(pieces.pieces[i].empty()) << "piece " << i;
      }
      EXPECT_EQ(encoded.count(), 0u);  // NOLINT(bugprone-use-after-move): taken over, left empty
      EXPECT_OK(Read(Concatenated(pieces)).status());
    }
  }
}

TEST(FileEncodedTest, PiecesOfChunksReadKeepTheirStoredBytes) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(SampleFile()));
  ASSERT_OK_AND_ASSIGN(File read, Read(bytes));
  ASSERT_OK_AND_ASSIGN(EncodedChunks encoded, EncodeChunks(std::move(read.chunks)));
  ASSERT_OK_AND_ASSIGN(const FilePieces pieces,
                       WriteEncodedPieces(read.format_version, read.min_reader_version,
                                          read.header, std::move(encoded)));
  EXPECT_EQ(Concatenated(pieces), bytes);
}

TEST(FileEncodedTest, PiecesTakeTheChunksBytesWithoutCopying) {
  std::vector<Chunk> chunks;
  chunks.emplace_back(kWorldChunk, "big", Incompressible(100000, 5));
  const std::uint8_t* const stored_at = chunks[0].data().data();
  WriteOptions options;
  options.compress = false;
  ASSERT_OK_AND_ASSIGN(EncodedChunks encoded, EncodeChunks(std::move(chunks), options));
  ASSERT_OK_AND_ASSIGN(const FilePieces pieces,
                       WriteEncodedPieces(1, 1, Header(), std::move(encoded)));
  ASSERT_EQ(pieces.pieces.size(), 2u);
  EXPECT_EQ(pieces.pieces[1].data(), stored_at);
}

TEST(FileEncodedTest, FailedPiecesLeaveTheChunks) {
  ASSERT_OK_AND_ASSIGN(EncodedChunks encoded, EncodeChunks(SampleFile().chunks));
  Header bad_header;
  bad_header.title = std::string("a\0b", 3);
  EXPECT_THAT(WriteEncodedPieces(1, 1, bad_header, std::move(encoded)),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(WriteEncodedPieces(1, 2, Header(), std::move(encoded)),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_EQ(encoded.count(), 3u);  // NOLINT(bugprone-use-after-move): a failure takes nothing
}

TEST(FileVerifyTest, ValidFileGivesItsHeader) {
  const File file = SampleFile();
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(file));
  ASSERT_OK_AND_ASSIGN(const Header header, Verify(bytes));
  EXPECT_EQ(header, file.header);
}

// Read of verified bytes gives the File Read of the bytes gives, within the same decode bound.
TEST(FileVerifyTest, ReadOfVerifiedBytesIsReadOfTheBytes) {
  const File file = SampleFile();
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(file));
  ASSERT_OK_AND_ASSIGN(const VerifiedBytes verified, VerifyForRead(bytes));
  EXPECT_EQ(verified.header(), file.header);
  ASSERT_OK_AND_ASSIGN(const File read, Read(verified));
  EXPECT_TRUE(read == file);
  ReadOptions bounded;
  bounded.decode_at_most = 1;
  EXPECT_EQ(Read(verified, bounded).status(), Read(bytes, bounded).status());
  EXPECT_THAT(Read(verified, bounded), StatusIs(StatusCode::kInvalidInput));
}

// The files of tests/fixtures/format-errors, each with its path.
std::vector<std::pair<std::filesystem::path, Bytes>> ErrorFixtures() {
  std::vector<std::pair<std::filesystem::path, Bytes>> out;
  for (const auto& entry :
       std::filesystem::directory_iterator("tests/fixtures/format-errors")) {
    if (entry.path().extension() != ".rsav") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    out.emplace_back(entry.path(), Bytes((std::istreambuf_iterator<char>(in)),
                                         std::istreambuf_iterator<char>()));
  }
  return out;
}

// Every error fixture gets the same status from Verify as from Read, but for chunks that pass
// their checksums and fail only to decode, which Verify does not decode.
TEST(FileVerifyTest, AgreesWithReadOnEveryErrorFixture) {
  int checked = 0;
  for (const auto& [path, bytes] : ErrorFixtures()) {
    const Status read = Read(bytes).status();
    const Status verify = Verify(bytes).status();
    const Result<VerifiedBytes> verified = VerifyForRead(bytes);
    EXPECT_EQ(verified.status(), verify) << path;
    if (read.message().find("zstd frame") != std::string_view::npos) {
      EXPECT_OK(verify) << path;
      // The decode after the verify finds what Read finds.
      if (verified.ok()) {
        EXPECT_EQ(Read(*verified).status(), read) << path;
      }
    } else {
      EXPECT_EQ(verify, read) << path;
    }
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

// --- Chunks left encoded (ReadOptions::leave_encoded_from) and DecodeChunk -----------------------

File FileWithALargeChunk() {
  File file;
  file.header.slot_name = "Slot 1";
  file.chunks.emplace_back(kGlobalsChunk, "", Compressible(20000, 1));
  file.chunks.emplace_back(kWorldChunk, "Maps/Town", Compressible(600000, 2));
  file.chunks.emplace_back(kTestChunk, "noise", Incompressible(300000, 3));
  return file;
}

// Decodes `chunk` with DecodeChunk, keeping what `arrived` was told.
Status DecodeAll(const Chunk& chunk, Bytes* out, std::vector<std::size_t>* arrived) {
  out->assign(chunk.decoded_size(), 0);
  return DecodeChunk(chunk, *out, [arrived](std::size_t n) { arrived->push_back(n); });
}

TEST(FileLeftEncodedTest, AChunkAtTheBoundIsLeftEncodedAndDecodesToWhatReadGives) {
  const File file = FileWithALargeChunk();
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(file));
  ASSERT_OK_AND_ASSIGN(const File whole, Read(bytes));
  const std::uint64_t size = file.chunks[1].data().size();
  ReadOptions at_bound;
  at_bound.leave_encoded_from = size;
  for (const bool keep_stored : {true, false}) {
    at_bound.keep_stored = keep_stored;
    ASSERT_OK_AND_ASSIGN(const File read, Read(bytes, at_bound));
    // The world chunk only: the small one is under the bound, the large one is stored as it is.
    EXPECT_TRUE(read.chunks[0].is_decoded());
    EXPECT_TRUE(read.chunks[2].is_decoded());
    EXPECT_FALSE(read.chunks[2].is_left_encoded());
    const Chunk& left = read.chunks[1];
    EXPECT_FALSE(left.is_decoded());
    EXPECT_TRUE(left.is_left_encoded());
    EXPECT_EQ(left.decoded_size(), size);
    EXPECT_TRUE(left.data().empty());
    EXPECT_EQ(left.stored_codec(), static_cast<std::uint8_t>(Codec::kZstd));
    EXPECT_LT(left.stored().size(), size);

    Bytes decoded;
    std::vector<std::size_t> arrived;
    ASSERT_OK(DecodeAll(left, &decoded, &arrived));
    EXPECT_EQ(decoded, whole.chunks[1].data());
    // In several steps, each further than the one before, the last at the end.
    ASSERT_GT(arrived.size(), 2u);
    for (std::size_t k = 1; k < arrived.size(); ++k) EXPECT_GT(arrived[k], arrived[k - 1]);
    EXPECT_EQ(arrived.back(), size);
  }
  // One past the bound, the chunk is decoded as Read always did.
  ReadOptions past = at_bound;
  past.leave_encoded_from = size + 1;
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes, past));
  EXPECT_TRUE(read.chunks[1].is_decoded());
  EXPECT_TRUE(read == whole);
}

TEST(FileLeftEncodedTest, AFileWithAChunkLeftEncodedWritesBackAsItWasRead) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(FileWithALargeChunk()));
  ReadOptions options;
  options.leave_encoded_from = 0;
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes, options));
  EXPECT_TRUE(read.chunks[0].is_left_encoded());
  EXPECT_TRUE(read.chunks[1].is_left_encoded());
  ASSERT_OK_AND_ASSIGN(const Bytes again, Write(read));
  EXPECT_EQ(again, bytes);
  // Read from verified bytes, as the store reads, leaves the same chunks.
  ASSERT_OK_AND_ASSIGN(const VerifiedBytes verified, VerifyForRead(bytes, options));
  ASSERT_OK_AND_ASSIGN(const File from_verified, Read(verified, options));
  EXPECT_TRUE(from_verified == read);
}

// Read taking the verified buffer over: the largest chunk left encoded keeps its stored bytes in
// that buffer, not in a copy; the others copy theirs. The File is the one Read of the bytes
// gives, it writes back as it was read (whole, or in pieces: the chunk then gives the file
// buffer up for a buffer of its own bytes), and a copy of the chunk is equal to it.
TEST(FileLeftEncodedTest, ReadTakingTheBufferOverKeepsTheLargestChunkLeftEncodedInIt) {
  ASSERT_OK_AND_ASSIGN(const Bytes written, Write(FileWithALargeChunk()));
  ReadOptions options;
  options.leave_encoded_from = 0;
  ASSERT_OK_AND_ASSIGN(const File expected, Read(written, options));
  // The globals and the world chunk are left encoded; the noise is stored as it is.
  ASSERT_TRUE(expected.chunks[0].is_left_encoded());
  ASSERT_TRUE(expected.chunks[1].is_left_encoded());
  ASSERT_GT(expected.chunks[1].stored().size(), expected.chunks[0].stored().size());
  for (const bool keep_stored : {true, false}) {
    options.keep_stored = keep_stored;
    Bytes bytes = written;
    const std::uint8_t* const begin = bytes.data();
    const std::uint8_t* const end = begin + bytes.size();
    const auto inside = [&](ByteView v) {
      return v.data() >= begin && v.data() + v.size() <= end;
    };
    ASSERT_OK_AND_ASSIGN(const VerifiedBytes verified, VerifyForRead(bytes, options));
    ASSERT_OK_AND_ASSIGN(File read, Read(verified, std::move(bytes), options));
    EXPECT_TRUE(read == expected);
    EXPECT_TRUE(inside(read.chunks[1].stored()));
    EXPECT_FALSE(inside(read.chunks[0].stored()));
    EXPECT_TRUE(std::ranges::equal(read.chunks[0].stored(), expected.chunks[0].stored()));

    // Decoded as any chunk left encoded is.
    Bytes decoded;
    std::vector<std::size_t> arrived;
    ASSERT_OK(DecodeAll(read.chunks[1], &decoded, &arrived));
    EXPECT_EQ(decoded, FileWithALargeChunk().chunks[1].data());

    // A copy is equal; the chunk moved from holds no stored bytes.
    const Chunk copy = read.chunks[1];
    EXPECT_TRUE(copy == read.chunks[1]);
    File moved = read;
    const Chunk taken = std::move(moved.chunks[1]);
    EXPECT_TRUE(taken == read.chunks[1]);
    EXPECT_TRUE(moved.chunks[1].stored().empty());
    EXPECT_FALSE(moved.chunks[1].has_stored());

    ASSERT_OK_AND_ASSIGN(const Bytes again, Write(read));
    EXPECT_EQ(again, written);
    // Encoded in pieces, the chunk hands over exactly its stored bytes, not the file around them.
    const File header = read;
    ASSERT_OK_AND_ASSIGN(EncodedChunks encoded, EncodeChunks(std::move(read.chunks)));
    ASSERT_OK_AND_ASSIGN(FilePieces pieces,
                         LayOutEncodedPieces(header.format_version, header.min_reader_version,
                                             header.header, std::move(encoded)));
    std::vector<ByteView> rest(pieces.pieces.begin() + 1, pieces.pieces.end());
    SealFilePieces(pieces.pieces[0], rest, pieces.late_checksums);
    Bytes joined;
    for (const Bytes& piece : pieces.pieces) {
      EXPECT_FALSE(inside(piece));
      joined.insert(joined.end(), piece.begin(), piece.end());
    }
    EXPECT_EQ(joined, written);
  }
}

// Every status of Read taking a buffer over. Bytes that are not the verified buffer (a copy of
// it, or another size) are refused, reading nothing; a file over the decode bound is refused as
// Read refuses it; and a frame found damaged after the buffer was taken over (the last chunk's,
// after the world chunk's) fails the Read as Read of the bytes fails, with the buffer let go.
TEST(FileLeftEncodedTest, ReadTakingABufferOverFailsAsReadDoes) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(FileWithALargeChunk()));
  ASSERT_OK_AND_ASSIGN(const VerifiedBytes verified, VerifyForRead(bytes));
  EXPECT_THAT(Read(verified, Bytes(bytes)),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("not the ones that were verified")));
  Bytes shorter = bytes;
  ASSERT_OK_AND_ASSIGN(const VerifiedBytes of_shorter, VerifyForRead(shorter));
  shorter.pop_back();
  EXPECT_THAT(Read(of_shorter, std::move(shorter)), StatusIs(StatusCode::kInvalidInput));

  ReadOptions bounded;
  bounded.decode_at_most = 1;
  Bytes again = bytes;
  ASSERT_OK_AND_ASSIGN(const VerifiedBytes of_again, VerifyForRead(again, bounded));
  EXPECT_EQ(Read(of_again, std::move(again), bounded).status(), Read(bytes, bounded).status());

  File file = FileWithALargeChunk();
  file.chunks.emplace_back(kTestChunk, "last", Compressible(30000, 4));
  ASSERT_OK_AND_ASSIGN(Bytes damaged, Write(file));
  ReadOptions options;
  options.leave_encoded_from = 0;
  ASSERT_OK_AND_ASSIGN(const File before, Read(damaged, options));
  ASSERT_TRUE(before.chunks[3].is_left_encoded());
  // The last chunk's frame ends the file: its first byte (the frame's magic number) is broken.
  damaged[damaged.size() - before.chunks[3].stored().size()] ^= 0xFF;
  format_testing::Reseal(&damaged);
  const Status read = Read(damaged, options).status();
  ASSERT_THAT(read, StatusIs(StatusCode::kDamaged, HasSubstr("chunk 3")));
  ASSERT_OK_AND_ASSIGN(const VerifiedBytes of_damaged, VerifyForRead(damaged, options));
  EXPECT_EQ(Read(of_damaged, std::move(damaged), options).status(), read);
}

TEST(FileLeftEncodedTest, DecodeChunkRefusesAChunkNotLeftEncodedOrABufferOfAnotherSize) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, Write(FileWithALargeChunk()));
  ASSERT_OK_AND_ASSIGN(const File whole, Read(bytes));
  Bytes out;
  std::vector<std::size_t> arrived;
  EXPECT_THAT(DecodeAll(whole.chunks[1], &out, &arrived),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("not left encoded")));
  ReadOptions options;
  options.leave_encoded_from = 0;
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes, options));
  const Chunk& left = read.chunks[1];
  for (const std::uint64_t size : {left.decoded_size() - 1, left.decoded_size() + 1}) {
    Bytes wrong(size);
    EXPECT_THAT(DecodeChunk(left, wrong, [&](std::size_t n) { arrived.push_back(n); }),
                StatusIs(StatusCode::kInvalidInput, HasSubstr("decodes to")));
  }
  EXPECT_TRUE(arrived.empty());
}

// Every error fixture fails Read as before when its chunks are left encoded: each is refused by
// a check that needs no decoding.
TEST(FileLeftEncodedTest, ErrorFixturesFailReadAsBeforeWhenLeftEncoded) {
  int checked = 0;
  for (const auto& [path, bytes] : ErrorFixtures()) {
    ReadOptions options;
    options.leave_encoded_from = 0;
    EXPECT_EQ(Read(bytes, options).status(), Read(bytes).status()) << path;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

// A frame whose blocks are damaged behind good checksums: Read finds it when it decodes; left
// encoded, Read passes it and DecodeChunk finds it, with Read's reason.
TEST(FileLeftEncodedTest, AFrameThatDoesNotDecodeIsFoundByDecodeChunk) {
  ASSERT_OK_AND_ASSIGN(Bytes bytes, Write(FileWithALargeChunk()));
  ReadOptions options;
  options.leave_encoded_from = 0;
  ASSERT_OK_AND_ASSIGN(const File before, Read(bytes, options));
  // The world chunk's stored bytes follow the globals' at the end of the file but for the noise.
  const std::size_t noise = before.chunks[2].stored().size();
  const std::size_t world = before.chunks[1].stored().size();
  const std::size_t middle = bytes.size() - noise - world / 2;
  for (std::size_t k = 0; k < 64; ++k) bytes[middle + k] = 0xFF;
  format_testing::Reseal(&bytes);
  const Status read = Read(bytes).status();
  ASSERT_THAT(read, StatusIs(StatusCode::kDamaged, HasSubstr("chunk 1 (WRLD \"Maps/Town\"): "
                                                             "zstd frame does not decode")));
  ASSERT_OK_AND_ASSIGN(const File left, Read(bytes, options));
  Bytes out;
  std::vector<std::size_t> arrived;
  const Status decoded = DecodeAll(left.chunks[1], &out, &arrived);
  EXPECT_THAT(decoded, StatusIs(StatusCode::kDamaged, HasSubstr("zstd frame does not decode")));
  EXPECT_THAT(std::string(read.message()), HasSubstr(std::string(decoded.message())));
  // What arrived before the damage was told, and stops short of the end.
  for (std::size_t n : arrived) EXPECT_LT(n, out.size());
}

}  // namespace
}  // namespace rolly::format
