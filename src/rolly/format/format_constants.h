// The numbers of the file format: magic, versions, header field IDs, chunk IDs, codecs and bounds.
// Each is specified in docs/format.md; every number here is permanent once released.
//
// Thread rules: constants only.

#ifndef ROLLY_FORMAT_FORMAT_CONSTANTS_H_
#define ROLLY_FORMAT_FORMAT_CONSTANTS_H_

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rolly::format {

// docs/format.md, "Prelude".
inline constexpr std::array<std::uint8_t, 8> kMagic = {0x89, 'R', 'O', 'L', 'L', 'Y', '\r', '\n'};
inline constexpr std::size_t kPreludeSize = 64;
// The format version this library writes and reads.
inline constexpr std::uint16_t kFormatVersion = 1;
// The lowest reader version that can read what this library writes.
inline constexpr std::uint16_t kMinReaderVersion = 1;

// docs/format.md, "Limits".
inline constexpr std::uint64_t kMaxHeaderSize = 16u << 20;
inline constexpr std::uint64_t kMaxDirectorySize = 16u << 20;
inline constexpr std::uint64_t kMaxChunks = 65536;
inline constexpr std::uint64_t kMaxChunkKeySize = 1024;
inline constexpr std::uint64_t kMaxDecodedTotal = 1ull << 30;
// ReadOptions::leave_encoded_from's default: Read decodes every chunk.
inline constexpr std::uint64_t kNeverLeaveEncoded = ~std::uint64_t{0};
inline constexpr std::uint64_t kMaxSlotNameSize = 4096;
inline constexpr std::uint64_t kMaxTitleSize = 4096;
inline constexpr std::uint64_t kMaxGameBuildSize = 256;
inline constexpr std::uint64_t kMaxMetadataSize = 1u << 20;
inline constexpr std::uint64_t kMaxThumbnailSize = 8u << 20;
inline constexpr std::uint64_t kMaxCustomVersions = 1024;
inline constexpr std::uint64_t kMaxCustomVersionKeySize = 256;
inline constexpr std::uint64_t kMaxCarriedFields = 256;
// A whole file: the prelude, a header and a directory at their bounds, and chunks stored in at
// most as many bytes as all chunks may decode to. A reader reads no more of a file than this
// (and one byte, to see that the file is larger).
inline constexpr std::uint64_t kMaxFileSize =
    kPreludeSize + kMaxHeaderSize + kMaxDirectorySize + kMaxDecodedTotal;

// docs/format.md, "Header": field IDs. Never reused.
enum class HeaderField : std::uint32_t {
  kSlotName = 1,
  kSequence = 2,
  kGameDataVersion = 3,
  kLibraryVersion = 4,
  kRecordVersion = 5,
  kGameBuild = 6,
  kSaveTime = 7,
  kKind = 8,
  kTitle = 9,
  kMetadata = 10,
  kThumbnail = 11,
  kCustomVersions = 12,
};
// The highest field ID this version knows; fields above it are carried.
inline constexpr std::uint32_t kLastKnownHeaderField = 12;

// docs/format.md, "Header", field 8. Values other than these are kept as numbers.
enum class SaveKind : std::uint32_t {
  kManual = 0,
  kAutosave = 1,
  kQuicksave = 2,
  kCheckpoint = 3,
  kProfile = 4,
  kIndex = 5,
};

// docs/format.md, "Directory": codecs.
enum class Codec : std::uint8_t {
  kStored = 0,
  kZstd = 1,
};

// docs/format.md, "Directory": flags.
inline constexpr std::uint64_t kChunkMustUnderstand = 1u << 0;

// Not defined: calling it in a constant expression stops the build with its name as the reason.
void ChunkIdMustBeFourPrintableAsciiCharacters();

// A chunk's four-character ID, such as "WRLD". Made from a literal, or checked when read.
class ChunkId {
 public:
  // From a four-character literal: ChunkId("WRLD").
  consteval explicit ChunkId(const char (&text)[5])
      : chars_{text[0], text[1], text[2], text[3]} {
    for (char c : chars_) {
      if (c < 0x21 || c > 0x7E) ChunkIdMustBeFourPrintableAsciiCharacters();
    }
  }
  // From four bytes read from a file; nullopt unless each is printable ASCII (0x21..0x7E).
  static std::optional<ChunkId> FromBytes(const std::uint8_t* bytes);

  std::string_view view() const { return std::string_view(chars_.data(), 4); }

  friend bool operator==(const ChunkId&, const ChunkId&) = default;
  friend auto operator<=>(const ChunkId&, const ChunkId&) = default;

 private:
  ChunkId() = default;
  std::array<char, 4> chars_{};
};

// docs/format.md, "Directory": the chunk IDs. Never reused.
inline constexpr ChunkId kGlobalsChunk("GLOB");
inline constexpr ChunkId kWorldChunk("WRLD");
inline constexpr ChunkId kPlayerChunk("PLYR");
inline constexpr ChunkId kLevelSegmentChunk("LSEG");
inline constexpr ChunkId kProfileChunk("PROF");
inline constexpr ChunkId kSlotIndexChunk("SIDX");
inline constexpr ChunkId kTestChunk("TEST");

// The chunk IDs this version of the library knows.
inline constexpr std::array<ChunkId, 7> kKnownChunkIds = {
    kGlobalsChunk,  kWorldChunk,     kPlayerChunk, kLevelSegmentChunk,
    kProfileChunk,  kSlotIndexChunk, kTestChunk,
};

}  // namespace rolly::format

#endif  // ROLLY_FORMAT_FORMAT_CONSTANTS_H_
