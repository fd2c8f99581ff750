// Forged files: seeded mutations of the golden files behind recomputed checksums, forged sizes,
// and zstd frames that claim more than they hold. Each must be refused with a status, or read and
// written back to exactly the same bytes; none may take long or allocate what it claims.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rolly/core/status_matchers.h"
#include "rolly/format/file.h"
#include "rolly/format/format_test_util.h"

namespace rolly::format {
namespace {

using format_testing::Compressible;
using format_testing::RawEntry;
using format_testing::RawField;
using format_testing::RawFile;
using format_testing::ToBytes;
using ::testing::AnyOf;
using ::testing::HasSubstr;

// --- Seeded structured mutations ------------------------------------------------------------------

class Mutator {
 public:
  explicit Mutator(std::uint32_t seed) : rng_(seed) {}

  std::uint64_t Below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool OneIn(std::uint64_t n) { return Below(n) == 0; }

  // A number a forger would try: small, near a bound, or huge.
  std::uint64_t Number(std::uint64_t near) {
    switch (Below(10)) {
      case 0: return 0;
      case 1: return 1;
      case 2: return near + 1;
      case 3: return near == 0 ? 0 : near - 1;
      case 4: return Below(300);
      case 5: return 1ull << Below(64);
      case 6: return (1ull << 30) + Below(3) - 1;
      case 7: return UINT64_MAX - Below(2);
      case 8: return static_cast<std::uint64_t>(UINT32_MAX) + Below(3) - 1;
      default: return near ^ (1ull << Below(16));
    }
  }

  void EditBytes(Bytes* b) {
    const int n = 1 + static_cast<int>(Below(3));
    for (int i = 0; i < n; ++i) {
      const std::size_t pos = b->empty() ? 0 : Below(b->size());
      switch (Below(5)) {
        case 0:
          if (!b->empty()) (*b)[pos] ^= static_cast<std::uint8_t>(1u << Below(8));
          break;
        case 1:
          if (!b->empty()) (*b)[pos] = static_cast<std::uint8_t>(rng_());
          break;
        case 2:
          b->insert(b->begin() + static_cast<std::ptrdiff_t>(pos), static_cast<std::uint8_t>(rng_()));
          break;
        case 3:
          if (!b->empty()) b->erase(b->begin() + static_cast<std::ptrdiff_t>(pos));
          break;
        default: {
          static constexpr std::uint8_t kSpecial[] = {0x00, 0x80, 0xFF, 0x7F, 0xC0, 0xED, 0x01};
          if (!b->empty()) (*b)[pos] = kSpecial[Below(std::size(kSpecial))];
          break;
        }
      }
    }
  }

  Bytes Payload() {
    Bytes p;
    switch (Below(5)) {
      case 0: break;
      case 1: format_testing::PutVarint(&p, Number(5)); break;
      case 2: p = {0x80, 0x00}; break;  // an overlong zero
      case 3: p = ToBytes("text"); break;
      default:
        for (std::uint64_t i = Below(8); i > 0; --i) p.push_back(static_cast<std::uint8_t>(rng_()));
    }
    return p;
  }

  void MutateHeader(Bytes* header) {
    std::vector<RawField> fields;
    if (OneIn(4) || !format_testing::ParseHeader(*header, &fields)) {
      EditBytes(header);
      return;
    }
    const std::size_t i = fields.empty() ? 0 : Below(fields.size());
    switch (Below(9)) {
      case 0:
        if (!fields.empty()) fields[i].id = Number(fields[i].id);
        break;
      case 1:
        if (!fields.empty()) fields[i].id = Below(16);
        break;
      case 2:
        if (!fields.empty()) EditBytes(&fields[i].payload);
        break;
      case 3:
        if (!fields.empty()) fields[i].payload = Payload();
        break;
      case 4:
        if (!fields.empty()) fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      case 5:
        if (!fields.empty()) fields.insert(fields.begin() + static_cast<std::ptrdiff_t>(i), fields[i]);
        break;
      case 6:
        if (fields.size() > 1 && i + 1 < fields.size()) std::swap(fields[i], fields[i + 1]);
        break;
      case 7:
        fields.insert(fields.begin() + static_cast<std::ptrdiff_t>(fields.empty() ? 0 : i),
                      RawField{Below(20), Payload()});
        break;
      default:
        // A custom version list or a carried field re-forged.
        if (!fields.empty()) {
          Bytes p;
          format_testing::PutVarint(&p, Number(2));
          for (std::uint64_t n = Below(4); n > 0; --n) {
            const Bytes key = OneIn(3) ? Bytes{} : ToBytes(OneIn(2) ? "a" : "b");
            format_testing::PutVarint(&p, key.size());
            p.insert(p.end(), key.begin(), key.end());
            format_testing::PutVarint(&p, Number(3));
          }
          fields[i] = RawField{OneIn(2) ? 12u : Number(12), p};
        }
        break;
    }
    *header = format_testing::EncodeHeader(fields);
  }

  void MutateDirectory(Bytes* directory) {
    std::uint64_t count;
    std::vector<RawEntry> entries;
    if (OneIn(4) || !format_testing::ParseDirectory(*directory, &count, &entries)) {
      EditBytes(directory);
      return;
    }
    const std::size_t i = entries.empty() ? 0 : Below(entries.size());
    RawEntry* e = entries.empty() ? nullptr : &entries[i];
    switch (Below(12)) {
      case 0: count = Number(count); break;
      case 1: if (e) e->id[Below(4)] = static_cast<std::uint8_t>(OneIn(2) ? rng_() : 0x20); break;
      case 2: if (e) EditBytes(&e->key); break;
      case 3: if (e) e->flags = Number(e->flags); break;
      case 4: if (e) e->codec = static_cast<std::uint8_t>(OneIn(2) ? Below(3) : rng_()); break;
      case 5: if (e) e->stored_size = Number(e->stored_size); break;
      case 6: if (e) e->decoded_size = Number(e->decoded_size); break;
      case 7:
        if (e) {
          e->stored_size = Number(e->stored_size);
          e->decoded_size = e->stored_size;
        }
        break;
      case 8:
        if (entries.size() > 1 && i + 1 < entries.size()) std::swap(entries[i], entries[i + 1]);
        break;
      case 9:
        if (e) {
          entries.insert(entries.begin() + static_cast<std::ptrdiff_t>(i), *e);
          count += OneIn(2) ? 1 : 0;
        }
        break;
      case 10:
        if (e) {
          entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i));
          count -= OneIn(2) ? 1 : 0;
        }
        break;
      default:
        // Another entry's ID and key: a duplicate.
        if (entries.size() > 1) {
          const RawEntry& other = entries[Below(entries.size())];
          e->id = other.id;
          e->key = other.key;
        }
        break;
    }
    *directory = format_testing::EncodeDirectory(count, entries);
  }

  void MutateChunks(Bytes* chunks) {
    if (chunks->empty() || OneIn(2)) {
      EditBytes(chunks);
      return;
    }
    // A zstd frame's header or block headers, wherever a frame starts.
    static constexpr std::uint8_t kZstdMagic[] = {0x28, 0xB5, 0x2F, 0xFD};
    std::vector<std::size_t> frames;
    for (std::size_t p = 0; p + 4 <= chunks->size(); ++p) {
      if (std::equal(kZstdMagic, kZstdMagic + 4, chunks->begin() + static_cast<std::ptrdiff_t>(p))) {
        frames.push_back(p);
      }
    }
    if (frames.empty()) {
      EditBytes(chunks);
      return;
    }
    const std::size_t at = frames[Below(frames.size())] + 4 + Below(12);
    if (at < chunks->size()) (*chunks)[at] = static_cast<std::uint8_t>(OneIn(2) ? rng_() : (*chunks)[at] ^ (1u << Below(8)));
  }

  // One mutant of `base`, checksums recomputed.
  Bytes Mutate(const Bytes& base) {
    RawFile raw = RawFile::Split(base);
    bool forge_prelude = false;
    for (std::uint64_t n = 1 + Below(2); n > 0; --n) {
      switch (Below(10)) {
        case 0: case 1: case 2: MutateHeader(&raw.header); break;
        case 3: case 4: case 5: MutateDirectory(&raw.directory); break;
        case 6: case 7: MutateChunks(&raw.chunks); break;
        default: {
          forge_prelude = true;
          static constexpr std::size_t kFields[] = {8, 10, 12, 16, 20, 24};
          const std::size_t at = kFields[Below(std::size(kFields))];
          if (at < 12) {
            StoreU16(raw.prelude.data() + at, static_cast<std::uint16_t>(Number(1)));
          } else if (at < 24) {
            StoreU32(raw.prelude.data() + at,
                     static_cast<std::uint32_t>(Number(LoadU32(raw.prelude.data() + at))));
          } else {
            StoreU64(raw.prelude.data() + at, Number(base.size()));
          }
          break;
        }
      }
    }
    if (!forge_prelude) return raw.Join();
    Bytes out = raw.prelude;
    for (const Bytes* part : {&raw.header, &raw.directory, &raw.chunks}) {
      out.insert(out.end(), part->begin(), part->end());
    }
    format_testing::Reseal(&out);
    return out;
  }

 private:
  std::mt19937 rng_;
};

TEST(FileMutationTest, ForgedFilesAreRefusedOrReadBackExactly) {
  const std::vector<format_testing::Golden> goldens = format_testing::MakeGoldenFiles();
  Mutator mutator(20240611);
  int ok = 0, newer = 0, checksum = 0, parse = 0;
  constexpr int kMutations = 4000;
  for (int i = 0; i < kMutations; ++i) {
    const format_testing::Golden& golden = goldens[static_cast<std::size_t>(i) % goldens.size()];
    const Bytes mutant = mutator.Mutate(golden.bytes);
    const Result<File> read = Read(mutant);
    // Whatever Read said, the other readers agree with it and do not crash.
    const Diagnosis diagnosis = Diagnose(mutant);
    EXPECT_EQ(diagnosis.status.code(), read.status().code());
    const Result<Header> header = ReadHeader(mutant);
    if (!read.ok()) {
      ASSERT_THAT(read, AnyOf(StatusIs(StatusCode::kDamaged), StatusIs(StatusCode::kNewerVersion)))
          << "mutant " << i << " of " << golden.name;
      if (read.status().code() == StatusCode::kNewerVersion) {
        ++newer;
      } else if (read.status().message().find("checksum") != std::string_view::npos) {
        ++checksum;
      } else {
        ++parse;
      }
      continue;
    }
    ++ok;
    ASSERT_OK(header) << "mutant " << i << " of " << golden.name;
    EXPECT_TRUE(*header == read->header);
    const Result<Bytes> again = Write(*read);
    ASSERT_OK(again) << "mutant " << i << " of " << golden.name;
    ASSERT_TRUE(*again == mutant) << "mutant " << i << " of " << golden.name
                                  << " was read but written back differently";
  }
  std::printf("mutants: %d read back exactly, %d newer, %d refused by a parser, %d by a checksum\n",
              ok, newer, parse, checksum);
  // The checksums were recomputed, so most mutants reach the parsers, and some survive them.
  EXPECT_GT(parse, kMutations / 2);
  EXPECT_LT(checksum, kMutations / 10);
  EXPECT_GT(ok, 20);
  EXPECT_GT(newer, 20);
}

// --- Forged sizes and zstd bombs ------------------------------------------------------------------

// A file of one WRLD chunk whose stored bytes are `stored`, recorded as `codec` with
// `decoded_size`, checksums recomputed.
Bytes OneChunkFile(Bytes stored, std::uint8_t codec, std::uint64_t decoded_size) {
  File f;
  f.chunks.emplace_back(kWorldChunk, "Maps/Town", ToBytes("x"));
  Result<Bytes> written = Write(f);
  EXPECT_OK(written);
  RawFile raw = RawFile::Split(*written);
  std::uint64_t count;
  std::vector<RawEntry> entries;
  EXPECT_TRUE(format_testing::ParseDirectory(raw.directory, &count, &entries));
  entries[0].codec = codec;
  entries[0].stored_size = stored.size();
  entries[0].decoded_size = decoded_size;
  raw.directory = format_testing::EncodeDirectory(count, entries);
  raw.chunks = std::move(stored);
  return raw.Join();
}

// A zstd frame whose header declares `content_size` (or none), followed by `blocks` RLE blocks of
// `block_size` bytes each. RLE blocks are four bytes that stand for up to 128 KiB.
Bytes RleFrame(std::optional<std::uint64_t> content_size, std::uint32_t blocks,
               std::uint32_t block_size) {
  Bytes f = {0x28, 0xB5, 0x2F, 0xFD};
  if (content_size) {
    f.push_back(0xE0);  // 8-byte content size, single segment
    for (int i = 0; i < 8; ++i) f.push_back(static_cast<std::uint8_t>(*content_size >> (8 * i)));
  } else {
    f.push_back(0x00);  // no content size
    f.push_back(0x38);  // window of 128 KiB
  }
  for (std::uint32_t i = 0; i < blocks; ++i) {
    const std::uint32_t header = (block_size << 3) | (1u << 1) | (i + 1 == blocks ? 1u : 0u);
    f.push_back(static_cast<std::uint8_t>(header));
    f.push_back(static_cast<std::uint8_t>(header >> 8));
    f.push_back(static_cast<std::uint8_t>(header >> 16));
    f.push_back('z');
  }
  return f;
}

// Runs Read and checks it took less than a second: nothing sized by the forgery was allocated
// or filled (allocating and zeroing gigabytes takes longer, or fails).
Status TimedRead(const Bytes& bytes) {
  const auto start = std::chrono::steady_clock::now();
  Status s = Read(bytes).status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  return s;
}

TEST(FileForgeryTest, SelfConsistentFrameReadsBack) {
  // The crafting is right: an honest RLE frame reads, and writes back the same bytes.
  const Bytes bytes = OneChunkFile(RleFrame(3000, 3, 1000), 1, 3000);
  ASSERT_OK_AND_ASSIGN(const File read, Read(bytes));
  EXPECT_TRUE(read.chunks[0].data() == Bytes(3000, 'z'));
  ASSERT_OK_AND_ASSIGN(const Bytes again, Write(read));
  EXPECT_TRUE(again == bytes);
}

TEST(FileForgeryTest, DecodedSizeOfTwoToTheSixtyThirdIsRefused) {
  const std::uint64_t huge = 1ull << 63;
  EXPECT_THAT(TimedRead(OneChunkFile(RleFrame(huge, 1, 10), 1, huge)),
              StatusIs(StatusCode::kDamaged, HasSubstr("directory: decoded sizes")));
  // Stored: the sizes must agree; carried in an unknown codec: the total is still bounded.
  EXPECT_THAT(TimedRead(OneChunkFile(ToBytes("abc"), 0, huge)),
              StatusIs(StatusCode::kDamaged, HasSubstr("directory")));
  EXPECT_THAT(TimedRead(OneChunkFile(ToBytes("abc"), 9, huge)),
              StatusIs(StatusCode::kDamaged, HasSubstr("directory: decoded sizes")));
  // A stored size of 2^63 runs past the file.
  Bytes forged = OneChunkFile(ToBytes("abc"), 0, 3);
  RawFile raw = RawFile::Split(forged);
  std::uint64_t count;
  std::vector<RawEntry> entries;
  ASSERT_TRUE(format_testing::ParseDirectory(raw.directory, &count, &entries));
  entries[0].stored_size = huge;
  entries[0].decoded_size = huge;
  raw.directory = format_testing::EncodeDirectory(count, entries);
  EXPECT_THAT(TimedRead(raw.Join()), StatusIs(StatusCode::kDamaged, HasSubstr("directory")));
}

TEST(FileForgeryTest, ZstdBombIsRefusedWithoutAllocating) {
  // 128 KiB of RLE blocks that decode to 4 GiB.
  const std::uint64_t four_gib = 4ull << 30;
  const Bytes bomb = RleFrame(four_gib, 32768, 128 << 10);
  // Honest about its size: past the decoded bound.
  EXPECT_THAT(TimedRead(OneChunkFile(bomb, 1, four_gib)),
              StatusIs(StatusCode::kDamaged, HasSubstr("directory: decoded sizes")));
  // The directory says less than the frame: refused on the frame header.
  EXPECT_THAT(TimedRead(OneChunkFile(bomb, 1, 1000000)),
              StatusIs(StatusCode::kDamaged, HasSubstr("declares another decoded size")));
  // No content size in the frame at all.
  EXPECT_THAT(TimedRead(OneChunkFile(RleFrame(std::nullopt, 32768, 128 << 10), 1, 1000000)),
              StatusIs(StatusCode::kDamaged, HasSubstr("chunk 0 (WRLD \"Maps/Town\"): zstd")));
  // The frame and the directory both say 1,000,000 bytes; the blocks make 4 GiB: decoding stops
  // at the 1,000,000 bytes allocated.
  EXPECT_THAT(TimedRead(OneChunkFile(RleFrame(1000000, 32768, 128 << 10), 1, 1000000)),
              StatusIs(StatusCode::kDamaged, HasSubstr("chunk 0 (WRLD \"Maps/Town\"): zstd")));
}

TEST(FileForgeryTest, FrameClaimingMoreThanItsBlocksCanMakeIsRefused) {
  // The frame and the directory both claim 1 GiB (within the bound); one RLE block makes 128 KiB.
  EXPECT_THAT(TimedRead(OneChunkFile(RleFrame(1ull << 30, 1, 128 << 10), 1, 1ull << 30)),
              StatusIs(StatusCode::kDamaged, HasSubstr("cannot produce the declared size")));
  EXPECT_THAT(TimedRead(OneChunkFile(RleFrame(3001, 3, 1000), 1, 3001)),
              StatusIs(StatusCode::kDamaged, HasSubstr("cannot produce the declared size")));
  // Blocks larger than the frame's block size (128 KiB), which zstd refuses only once the output
  // is allocated: 2 KiB of them claiming 2 MiB each add up to 1 GiB. At the block size they read.
  EXPECT_THAT(TimedRead(OneChunkFile(RleFrame(1ull << 30, 513, (1u << 21) - 1), 1, 1ull << 30)),
              StatusIs(StatusCode::kDamaged, HasSubstr("cannot produce the declared size")));
  constexpr std::uint32_t kBlockMax = 128 << 10;
  EXPECT_OK(TimedRead(OneChunkFile(RleFrame(4 * kBlockMax, 4, kBlockMax), 1, 4 * kBlockMax)));
  constexpr std::uint32_t kPast = kBlockMax + 1;
  EXPECT_THAT(TimedRead(OneChunkFile(RleFrame(4 * kPast, 4, kPast), 1, 4 * kPast)),
              StatusIs(StatusCode::kDamaged, HasSubstr("cannot produce the declared size")));
  // Blocks that run past the frame's end.
  Bytes cut = RleFrame(3000, 3, 1000);
  cut.pop_back();
  EXPECT_THAT(TimedRead(OneChunkFile(cut, 1, 3000)),
              StatusIs(StatusCode::kDamaged, HasSubstr("zstd")));
  // Bytes after the frame, and a second frame.
  Bytes trailing = RleFrame(3000, 3, 1000);
  trailing.push_back(0);
  EXPECT_THAT(TimedRead(OneChunkFile(trailing, 1, 3000)),
              StatusIs(StatusCode::kDamaged, HasSubstr("not exactly the chunk's stored bytes")));
  Bytes two = RleFrame(1500, 1, 1500);
  const Bytes second = RleFrame(1500, 1, 1500);
  two.insert(two.end(), second.begin(), second.end());
  EXPECT_THAT(TimedRead(OneChunkFile(two, 1, 3000)), StatusIs(StatusCode::kDamaged));
}

TEST(FileForgeryTest, FrameWithChecksumDictionaryOrSkippableIsRefused) {
  Bytes with_checksum = RleFrame(3000, 3, 1000);
  with_checksum[4] |= 0x04;  // content checksum flag
  for (int i = 0; i < 4; ++i) with_checksum.push_back(0);
  EXPECT_THAT(TimedRead(OneChunkFile(with_checksum, 1, 3000)),
              StatusIs(StatusCode::kDamaged, HasSubstr("checksum")));
  Bytes with_dictionary = {0x28, 0xB5, 0x2F, 0xFD, 0xE1, 7};  // 1-byte dictionary ID 7
  const Bytes rest = RleFrame(3000, 3, 1000);
  with_dictionary.insert(with_dictionary.end(), rest.begin() + 5, rest.end());
  EXPECT_THAT(TimedRead(OneChunkFile(with_dictionary, 1, 3000)),
              StatusIs(StatusCode::kDamaged, HasSubstr("dictionary")));
  Bytes skippable = {0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
  EXPECT_THAT(TimedRead(OneChunkFile(skippable, 1, 3000)),
              StatusIs(StatusCode::kDamaged, HasSubstr("skippable")));
}

TEST(FileForgeryTest, SizesThatDisagreeWithTheCodecAreRefused) {
  // Stored with sizes that differ; zstd not smaller than decoded.
  EXPECT_THAT(Read(OneChunkFile(ToBytes("abc"), 0, 4)),
              StatusIs(StatusCode::kDamaged, HasSubstr("stored but its sizes differ")));
  const Bytes frame = RleFrame(3000, 3, 1000);
  EXPECT_THAT(Read(OneChunkFile(frame, 1, frame.size())),
              StatusIs(StatusCode::kDamaged, HasSubstr("not smaller")));
}

}  // namespace
}  // namespace rolly::format
