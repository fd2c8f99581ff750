// The golden fixtures: files under tests/fixtures/format/ that every later version must read as
// their manifest says and write back byte for byte, and files under tests/fixtures/format-errors/
// that must be refused with the status their name gives. Every single-byte change and every
// truncation of a golden file is refused as Damaged.
//
// The fixtures are written once. To write them again (only when the format version changes):
//   ROLLY_REGENERATE_FIXTURES=1 ./format_test --gtest_filter='FormatFixtures.Regenerate'
// from the source directory (ctest runs the tests there).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rolly/core/fixture_files.h"
#include "rolly/core/status_matchers.h"
#include "rolly/format/file.h"
#include "rolly/format/format_test_util.h"

namespace rolly::format {
namespace {

namespace fs = std::filesystem;
using format_testing::RawEntry;
using format_testing::RawField;
using format_testing::RawFile;
using ::testing::HasSubstr;
using fixture_files::ParseManifest;
using fixture_files::ReadFileBytes;
using fixture_files::ReadText;
using fixture_files::WriteFileBytes;

fs::path FixturesDir() { return fixture_files::FixturesRoot(); }


// An error fixture: its bytes, the status Read must return and a part of its message.
struct ErrorCase {
  std::string name;
  StatusCode code;
  std::string message;
  Bytes bytes;
};

std::string FileName(const ErrorCase& c) {
  return c.name + "." + std::string(StatusCodeName(c.code)) + ".rsav";
}

Bytes EditEntry(ByteView file, std::size_t i, void (*edit)(RawEntry*)) {
  RawFile raw = RawFile::Split(file);
  std::uint64_t count;
  std::vector<RawEntry> entries;
  const bool parsed = format_testing::ParseDirectory(raw.directory, &count, &entries);
  EXPECT_TRUE(parsed);
  if (!parsed) return {};
  edit(&entries[i]);
  raw.directory = format_testing::EncodeDirectory(count, entries);
  return raw.Join();
}

Bytes EditHeader(ByteView file, void (*edit)(std::vector<RawField>*)) {
  RawFile raw = RawFile::Split(file);
  std::vector<RawField> fields;
  EXPECT_TRUE(format_testing::ParseHeader(raw.header, &fields));
  edit(&fields);
  raw.header = format_testing::EncodeHeader(fields);
  return raw.Join();
}

std::vector<ErrorCase> MakeErrorCases(const std::vector<format_testing::Golden>& goldens) {
  const Bytes* chunks_file = nullptr;
  for (const auto& g : goldens) {
    if (g.name == "chunks.rsav") chunks_file = &g.bytes;
  }
  EXPECT_NE(chunks_file, nullptr);
  const Bytes& base = *chunks_file;
  const Result<Prelude> prelude = ReadPrelude(base);
  EXPECT_OK(prelude);
  const std::size_t header_at = kPreludeSize;
  const std::size_t directory_at = header_at + prelude->header_size;
  const std::size_t chunks_at = directory_at + prelude->directory_size;
  std::vector<ErrorCase> out;
  auto add = [&out](std::string name, StatusCode code, std::string message, Bytes bytes) {
    out.push_back(ErrorCase{std::move(name), code, std::move(message), std::move(bytes)});
  };
  auto flipped = [&base](std::size_t at) {
    Bytes b = base;
    b[at] ^= 0x01;
    return b;
  };
  add("damaged_prelude", StatusCode::kDamaged, "prelude: checksum", flipped(13));
  Bytes magic = base;
  magic[6] = '\n';
  magic[7] = '\n';  // a text-mode copy's newline
  add("text_mode_magic", StatusCode::kDamaged, "prelude: the magic", magic);
  add("damaged_header", StatusCode::kDamaged, "header: checksum", flipped(header_at + 5));
  add("damaged_directory", StatusCode::kDamaged, "directory: checksum", flipped(directory_at + 3));
  // Chunk 2 is the stored WRLD "Maps/Cave", after the zstd GLOB and WRLD "Maps/Town".
  Result<File> read = Read(base);
  EXPECT_OK(read);
  const std::size_t chunk2_at =
      chunks_at + read->chunks[0].stored().size() + read->chunks[1].stored().size();
  add("damaged_chunk", StatusCode::kDamaged, "chunk 2 (WRLD \"Maps/Cave\"): checksum",
      flipped(chunk2_at + 7));
  add("truncated", StatusCode::kDamaged, "file: truncated",
      Bytes(base.begin(), base.end() - 100));
  add("truncated_prelude", StatusCode::kDamaged, "prelude", Bytes(base.begin(), base.begin() + 40));
  Bytes trailing = base;
  trailing.push_back(0);
  add("trailing_byte", StatusCode::kDamaged, "file: 1 bytes follow", trailing);

  Bytes newer = base;
  StoreU16(newer.data() + 8, 2);
  StoreU16(newer.data() + 10, 2);
  format_testing::Reseal(&newer);
  add("newer_min_reader_version", StatusCode::kNewerVersion, "needs format version 2", newer);
  Bytes reserved = base;
  reserved[21] = 1;
  format_testing::Reseal(&reserved);
  add("reserved_not_zero", StatusCode::kDamaged, "prelude: the reserved field", reserved);

  File must;
  must.header.slot_name = "must understand";
  must.chunks.emplace_back(kGlobalsChunk, "", format_testing::ToBytes("globals"));
  must.chunks.emplace_back(ChunkId("FUTR"), "", format_testing::ToBytes("new"),
                           kChunkMustUnderstand);
  Result<Bytes> must_bytes = Write(must);
  EXPECT_OK(must_bytes);
  add("must_understand_unknown_chunk", StatusCode::kNewerVersion,
      "chunk 1 (FUTR) must be understood", *must_bytes);
  add("known_chunk_unknown_codec", StatusCode::kNewerVersion, "chunk 0 (GLOB) uses codec 2",
      format_testing::WithCodec(base, 0, 2));

  add("forged_decoded_size", StatusCode::kDamaged, "directory: decoded sizes",
      EditEntry(base, 0, [](RawEntry* e) { e->decoded_size = 1ull << 63; }));
  add("forged_stored_size", StatusCode::kDamaged, "directory: entry 2 runs past",
      EditEntry(base, 2, [](RawEntry* e) { e->stored_size = e->decoded_size = 1ull << 40; }));
  add("zstd_size_mismatch", StatusCode::kDamaged, "chunk 1 (WRLD \"Maps/Town\"): zstd frame declares",
      EditEntry(base, 1, [](RawEntry* e) { e->decoded_size += 1; }));
  add("duplicate_chunk", StatusCode::kDamaged, "directory: two chunks",
      EditEntry(base, 2, [](RawEntry* e) { e->key = format_testing::ToBytes("Maps/Town"); }));
  add("unprintable_chunk_id", StatusCode::kDamaged, "directory: entry 3 has an ID",
      EditEntry(base, 3, [](RawEntry* e) { e->id[1] = ' '; }));
  add("header_out_of_order", StatusCode::kDamaged, "header: field",
      EditHeader(base, [](std::vector<RawField>* f) { std::swap((*f)[0], (*f)[1]); }));
  add("header_default_value", StatusCode::kDamaged, "header: sequence",
      EditHeader(base, [](std::vector<RawField>* f) { (*f)[1].payload = {0}; }));
  add("header_overlong_varint", StatusCode::kDamaged, "header: sequence",
      EditHeader(base, [](std::vector<RawField>* f) {
        (*f)[1].payload.back() |= 0x80;
        (*f)[1].payload.push_back(0);
      }));
  add("header_bad_utf8", StatusCode::kDamaged, "header: slot name",
      EditHeader(base, [](std::vector<RawField>* f) { (*f)[0].payload[0] = 0xC0; }));
  return out;
}

const char kManifestHeader[] =
    "# What each golden file must read as: the description the tests build from Read's File\n"
    "# (format_test_util.cc, Describe), one section per file. Written once by\n"
    "# ROLLY_REGENERATE_FIXTURES=1 format_test --gtest_filter=FormatFixtures.Regenerate.\n";

const char kErrorManifestHeader[] =
    "# Files Read must refuse: <file name> <TAB> <status> <TAB> <part of the message>.\n"
    "# The status is also in each file's name: <case>.<Status>.rsav.\n";

TEST(FormatFixtures, Regenerate) {
  if (std::getenv("ROLLY_REGENERATE_FIXTURES") == nullptr) {
    GTEST_SKIP() << "set ROLLY_REGENERATE_FIXTURES=1 to write the fixtures again";
  }
  const fs::path golden_dir = FixturesDir() / "format";
  const fs::path error_dir = FixturesDir() / "format-errors";
  fs::create_directories(golden_dir);
  fs::create_directories(error_dir);
  const std::vector<format_testing::Golden> goldens = format_testing::MakeGoldenFiles();
  std::string manifest = kManifestHeader;
  for (const auto& g : goldens) {
    WriteFileBytes(golden_dir / g.name, g.bytes);
    ASSERT_OK_AND_ASSIGN(const File read, Read(g.bytes));
    manifest += "\n== " + g.name + "\n" + format_testing::Describe(read, g.bytes);
  }
  std::ofstream(golden_dir / "MANIFEST.txt", std::ios::trunc) << manifest;
  std::string errors = kErrorManifestHeader;
  for (const ErrorCase& c : MakeErrorCases(goldens)) {
    WriteFileBytes(error_dir / FileName(c), c.bytes);
    errors += FileName(c) + "\t" + std::string(StatusCodeName(c.code)) + "\t" + c.message + "\n";
  }
  std::ofstream(error_dir / "MANIFEST.txt", std::ios::trunc) << errors;
}

class GoldenFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    manifest_ = ParseManifest(ReadText(FixturesDir() / "format" / "MANIFEST.txt"));
    ASSERT_GE(manifest_.size(), 4u) << "no manifest under " << FixturesDir();
    for (const auto& [name, description] : manifest_) {
      files_.emplace_back(name, ReadFileBytes(FixturesDir() / "format" / name));
      ASSERT_FALSE(files_.back().second.empty()) << name;
    }
  }

  std::map<std::string, std::string> manifest_;
  std::vector<std::pair<std::string, Bytes>> files_;
};

TEST_F(GoldenFixtureTest, ReadAsTheManifestSaysAndWriteBackExactly) {
  for (const auto& [name, bytes] : files_) {
    SCOPED_TRACE(name);
    EXPECT_LE(bytes.size(), 8192u) << "keep fixtures small";
    ASSERT_OK_AND_ASSIGN(const File read, Read(bytes));
    EXPECT_EQ(format_testing::Describe(read, bytes), manifest_[name]);
    ASSERT_OK_AND_ASSIGN(const Bytes again, Write(read));
    EXPECT_TRUE(again == bytes) << "Read then Write changed the bytes";
    ASSERT_OK_AND_ASSIGN(const Header header, ReadHeader(bytes));
    EXPECT_TRUE(header == read.header);
    EXPECT_OK(Diagnose(bytes).status);
  }
}

TEST_F(GoldenFixtureTest, EveryDirectoryHoldsOnlyListedFiles) {
  for (const auto& entry : fs::directory_iterator(FixturesDir() / "format")) {
    const std::string name = entry.path().filename().string();
    if (name == "MANIFEST.txt") continue;
    EXPECT_EQ(manifest_.count(name), 1u) << name << " is not in the manifest";
  }
}

TEST_F(GoldenFixtureTest, EverySingleByteChangeIsDamaged) {
  int checked = 0;
  for (const auto& [name, original] : files_) {
    SCOPED_TRACE(name);
    Bytes bytes = original;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      for (const std::uint8_t mask : {0x01, 0x80, 0xFF}) {
        bytes[i] ^= mask;
        ASSERT_THAT(Read(bytes), StatusIs(StatusCode::kDamaged)) << "byte " << i << " ^ " << +mask;
        bytes[i] ^= mask;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST_F(GoldenFixtureTest, EveryTruncationAndExtensionIsDamaged) {
  for (const auto& [name, bytes] : files_) {
    SCOPED_TRACE(name);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      ASSERT_THAT(Read(ByteView(bytes).first(n)), StatusIs(StatusCode::kDamaged)) << n;
    }
    for (const std::size_t extra : {1, 2, 64, 4096}) {
      Bytes longer = bytes;
      longer.resize(bytes.size() + extra, 0);
      EXPECT_THAT(Read(longer), StatusIs(StatusCode::kDamaged, HasSubstr("follow"))) << extra;
    }
  }
}

TEST(ErrorFixtureTest, EachIsRefusedWithItsStatus) {
  const fs::path dir = FixturesDir() / "format-errors";
  std::istringstream manifest(ReadText(dir / "MANIFEST.txt"));
  std::map<std::string, bool> listed;
  std::string line;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string file, status, message;
    std::getline(fields, file, '\t');
    std::getline(fields, status, '\t');
    std::getline(fields, message);
    SCOPED_TRACE(file);
    listed[file] = true;
    // The status is in the name too.
    EXPECT_NE(file.find("." + status + ".rsav"), std::string::npos);
    const Bytes bytes = ReadFileBytes(dir / file);
    ASSERT_FALSE(bytes.empty());
    EXPECT_LE(bytes.size(), 8192u) << "keep fixtures small";
    const Status s = Read(bytes).status();
    EXPECT_EQ(StatusCodeName(s.code()), status) << s.ToString();
    EXPECT_THAT(std::string(s.message()), HasSubstr(message));
    EXPECT_EQ(Diagnose(bytes).status.code(), s.code());
  }
  EXPECT_GE(listed.size(), 10u);
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name == "MANIFEST.txt") continue;
    EXPECT_TRUE(listed[name]) << name << " is not in the manifest";
  }
}

TEST(ErrorFixtureTest, TheGeneratorStillMakesTheSameCases) {
  // The cases the generator makes today are refused as their fixtures say, so a change to the
  // generator that drifts from the checked-in files shows here.
  for (const ErrorCase& c : MakeErrorCases(format_testing::MakeGoldenFiles())) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(Read(c.bytes), StatusIs(c.code, HasSubstr(c.message)));
  }
}

}  // namespace
}  // namespace rolly::format
