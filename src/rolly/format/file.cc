// Write, Read, ReadPrelude and ReadHeader, following docs/format.md step by step.

#include "rolly/format/file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

#include "rolly/format/internal/directory.h"
#include "rolly/format/internal/front_bounds.h"
#include "rolly/format/internal/header_codec.h"
#include "rolly/format/internal/zstd_codec.h"

namespace rolly::format_internal {

// What steps 1 to 7 of "Reading" found, short of decoding the chunks.
struct CheckedFile {
  format::Prelude prelude;
  format::Header header;
  std::vector<DirectoryEntry> entries;
};

}  // namespace rolly::format_internal

namespace rolly::format {

using format_internal::ChunkLabel;
using format_internal::DirectoryEntry;

// Sets what Read found on a Chunk without widening Chunk's public surface.
class ChunkAccess {
 public:
  static void SetStored(Chunk& c, std::uint8_t codec, Bytes stored) {
    const std::size_t size = stored.size();
    SetStoredWithin(c, codec, std::move(stored), 0, size);
  }
  // The stored bytes are `buffer`'s [at, at + size).
  static void SetStoredWithin(Chunk& c, std::uint8_t codec, Bytes buffer, std::size_t at,
                              std::size_t size) {
    assert(at <= buffer.size() && size <= buffer.size() - at);
    c.has_stored_ = true;
    c.stored_codec_ = codec;
    c.stored_ = std::move(buffer);
    c.stored_at_ = at;
    c.stored_size_ = size;
  }
  // Makes the chunk's buffer hold its stored bytes only: a chunk that took a file's buffer over
  // copies its own bytes out and lets the file go, so that TakeStored hands over exactly the
  // bytes stored() viewed, in a buffer of their size.
  static void TrimStored(Chunk& c) {
    if (c.stored_at_ == 0 && c.stored_size_ == c.stored_.size()) return;
    const ByteView bytes = c.stored();
    c.stored_ = Bytes(bytes.begin(), bytes.end());
    c.stored_at_ = 0;
  }
  // The stored bytes, once TrimStored made them the whole buffer.
  static Bytes TakeStored(Chunk& c) {
    assert(c.stored_at_ == 0 && c.stored_size_ == c.stored_.size());
    c.has_stored_ = false;
    c.stored_size_ = 0;
    return std::exchange(c.stored_, Bytes());
  }
  static void SetCarried(Chunk& c, std::uint8_t codec, Bytes stored, std::uint64_t decoded_size) {
    const std::size_t size = stored.size();
    SetCarriedWithin(c, codec, std::move(stored), 0, size, decoded_size);
  }
  static void SetCarriedWithin(Chunk& c, std::uint8_t codec, Bytes buffer, std::size_t at,
                               std::size_t size, std::uint64_t decoded_size) {
    c.decoded_ = false;
    c.carried_decoded_size_ = decoded_size;
    SetStoredWithin(c, codec, std::move(buffer), at, size);
  }
};

std::optional<ChunkId> ChunkId::FromBytes(const std::uint8_t* bytes) {
  ChunkId id;
  for (int i = 0; i < 4; ++i) {
    if (bytes[i] < 0x21 || bytes[i] > 0x7E) return std::nullopt;
    id.chars_[i] = static_cast<char>(bytes[i]);
  }
  return id;
}

Chunk::Chunk(ChunkId id, std::string key, Bytes data, std::uint64_t flags)
    : id_(id), key_(std::move(key)), flags_(flags), data_(std::move(data)) {}

Chunk::Chunk(const Chunk& other)
    : id_(other.id_),
      key_(other.key_),
      flags_(other.flags_),
      data_(other.data_),
      decoded_(other.decoded_),
      carried_decoded_size_(other.carried_decoded_size_),
      has_stored_(other.has_stored_),
      stored_codec_(other.stored_codec_) {
  const ByteView bytes = ByteView(other.stored_).subspan(other.stored_at_, other.stored_size_);
  stored_.assign(bytes.begin(), bytes.end());
  stored_size_ = bytes.size();
}

Chunk& Chunk::operator=(const Chunk& other) {
  if (this != &other) *this = Chunk(other);
  return *this;
}

Chunk::Chunk(Chunk&& other) noexcept
    : id_(other.id_),
      key_(std::move(other.key_)),
      flags_(other.flags_),
      data_(std::move(other.data_)),
      decoded_(std::exchange(other.decoded_, true)),
      carried_decoded_size_(std::exchange(other.carried_decoded_size_, 0)),
      has_stored_(std::exchange(other.has_stored_, false)),
      stored_codec_(std::exchange(other.stored_codec_, 0)),
      stored_(std::move(other.stored_)),
      stored_at_(std::exchange(other.stored_at_, 0)),
      stored_size_(std::exchange(other.stored_size_, 0)) {}

Chunk& Chunk::operator=(Chunk&& other) noexcept {
  if (this == &other) return *this;
  id_ = other.id_;
  key_ = std::move(other.key_);
  flags_ = other.flags_;
  data_ = std::move(other.data_);
  decoded_ = std::exchange(other.decoded_, true);
  carried_decoded_size_ = std::exchange(other.carried_decoded_size_, 0);
  has_stored_ = std::exchange(other.has_stored_, false);
  stored_codec_ = std::exchange(other.stored_codec_, 0);
  stored_ = std::move(other.stored_);
  stored_at_ = std::exchange(other.stored_at_, 0);
  stored_size_ = std::exchange(other.stored_size_, 0);
  return *this;
}

void Chunk::set_data(Bytes data) {
  data_ = std::move(data);
  decoded_ = true;
  DropStoredUnchecked();
}

Bytes Chunk::TakeData() {
  Bytes out = std::move(data_);
  data_.clear();
  decoded_ = true;
  DropStoredUnchecked();
  return out;
}

ByteView Chunk::stored() const {
  if (!has_stored_) return {};
  if (stored_codec_ == static_cast<std::uint8_t>(Codec::kStored)) return data_;
  return ByteView(stored_).subspan(stored_at_, stored_size_);
}

void Chunk::DropStored() {
  if (decoded_) DropStoredUnchecked();
}

void Chunk::DropStoredUnchecked() {
  has_stored_ = false;
  stored_codec_ = 0;
  stored_ = Bytes();
  stored_at_ = 0;
  stored_size_ = 0;
}

bool operator==(const Chunk& a, const Chunk& b) {
  return a.id_ == b.id_ && a.key_ == b.key_ && a.flags_ == b.flags_ && a.decoded_ == b.decoded_ &&
         a.data_ == b.data_ && a.decoded_size() == b.decoded_size() &&
         (a.decoded_ ||
          (a.stored_codec_ == b.stored_codec_ && std::ranges::equal(a.stored(), b.stored())));
}

const Chunk* File::Find(ChunkId id, std::string_view key) const {
  for (const Chunk& c : chunks) {
    if (c.id() == id && c.key() == key) return &c;
  }
  return nullptr;
}

Chunk* File::Find(ChunkId id, std::string_view key) {
  return const_cast<Chunk*>(std::as_const(*this).Find(id, key));
}

namespace {

// A chunk as it goes into the file.
struct EncodedChunk {
  const Chunk* chunk = nullptr;  // its ID, key and flags
  std::uint8_t codec = 0;
  ByteView stored;  // views the chunk's bytes or `owned`
  Bytes owned;      // compressed bytes made by this write
  std::uint64_t decoded_size = 0;
  // Not computed yet (EncodeChunks leaves it to the layout).
  bool checksum_late = false;
  Checksum checksum;
};

Status CheckChunks(const std::vector<Chunk>& chunks) {
  if (chunks.size() > kMaxChunks) {
    return InvalidInputError(
        fmt::format("{} chunks, above the bound of {}", chunks.size(), kMaxChunks));
  }
  std::uint64_t decoded_total = 0;
  std::vector<std::pair<ChunkId, std::string_view>> keys;
  keys.reserve(chunks.size());
  for (const Chunk& c : chunks) {
    ROLLY_RETURN_IF_ERROR(
        format_internal::CheckWritableString(c.key(), kMaxChunkKeySize, "chunk key"));
    if (c.decoded_size() > kMaxDecodedTotal - decoded_total) {
      return InvalidInputError("chunks add up to more than 1 GiB");
    }
    decoded_total += c.decoded_size();
    keys.emplace_back(c.id(), c.key());
  }
  std::sort(keys.begin(), keys.end());
  if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) {
    return InvalidInputError("two chunks have the same ID and key");
  }
  return OkStatus();
}

// Compresses `data` into `frame` when compression is on and makes it smaller (false otherwise,
// `frame` then unspecified).
bool CompressSmaller(ByteView data, const WriteOptions& options,
                     format_internal::ZstdFrameBlocks* frame) {
  return options.compress && !data.empty() &&
         format_internal::ZstdCompressBlocks(data, options.zstd_level, frame) &&
         frame->size < data.size();
}

// Encodes `c`. `owned`: the same chunk when the caller owns it (EncodeChunks); a chunk that
// compresses then lets go of its decoded bytes before the compressed ones are joined into one
// buffer, so the decoded bytes, the compressed blocks and the joined copy are never all held.
// `checksum`: compute the checksum now (false: checksum_late).
EncodedChunk EncodeChunk(const Chunk& c, const WriteOptions& options, Chunk* owned = nullptr,
                         bool checksum = true) {
  EncodedChunk e;
  e.chunk = &c;
  e.decoded_size = c.decoded_size();
  if (c.has_stored()) {
    e.codec = c.stored_codec();
    e.stored = c.stored();
  } else {
    e.codec = static_cast<std::uint8_t>(Codec::kStored);
    e.stored = c.data();
    format_internal::ZstdFrameBlocks frame;
    if (CompressSmaller(c.data(), options, &frame)) {
      if (owned != nullptr) owned->TakeData();
      frame.JoinInto(&e.owned);
      e.codec = static_cast<std::uint8_t>(Codec::kZstd);
      e.stored = e.owned;
    }
  }
  if (checksum) {
    e.checksum = format_internal::ChunkChecksum(c.id(), c.key(), e.stored);
  } else {
    e.checksum_late = true;
  }
  return e;
}

Status CheckVersions(std::uint16_t format_version, std::uint16_t min_reader_version) {
  if (min_reader_version == 0 || min_reader_version > kFormatVersion ||
      format_version < min_reader_version) {
    return InvalidInputError(fmt::format(
        "format version {} with minimum reader version {} cannot be written by format version {}",
        format_version, min_reader_version, kFormatVersion));
  }
  return OkStatus();
}

Status CheckLevel(const WriteOptions& options) {
  if (options.compress && !format_internal::IsValidZstdLevel(options.zstd_level)) {
    return InvalidInputError(fmt::format("zstd level {} is out of range", options.zstd_level));
  }
  return OkStatus();
}

void StorePrelude(std::uint8_t* p, std::uint16_t format_version, std::uint16_t min_reader_version,
                  std::uint32_t header_size, std::uint32_t directory_size,
                  std::uint64_t file_size) {
  std::memcpy(p, kMagic.data(), kMagic.size());
  StoreU16(p + 8, format_version);
  StoreU16(p + 10, min_reader_version);
  StoreU32(p + 12, header_size);
  StoreU32(p + 16, directory_size);
  StoreU32(p + 20, 0);
  StoreU64(p + 24, file_size);
}

Status Damaged(std::string_view part, std::string_view what) {
  return DamagedError(fmt::format("{}: {}", part, what));
}

// The parts of a file before its chunks, encoded and checked against their bounds.
struct Front {
  Bytes header;
  Bytes directory;
  // The whole file's size, as checked against its bound.
  std::uint64_t file_size = 0;
};

// `late`: where a late chunk checksum goes, listed (its 8 bytes left zero) instead of computed
// here; null: each is computed.
Result<Front> EncodeFront(const Header& header_fields, const std::vector<EncodedChunk>& encoded,
                          std::vector<LateChecksum>* late = nullptr) {
  Front front;
  format_internal::EncodeHeader(header_fields, &front.header);
  if (front.header.size() > kMaxHeaderSize) {
    return InvalidInputError(fmt::format("header is {} bytes, above its bound of {}",
                                         front.header.size(), kMaxHeaderSize));
  }
  ByteWriter(&front.directory).Varint(encoded.size());
  std::size_t piece = 1;
  std::uint64_t chunks_size = 0;
  for (const EncodedChunk& e : encoded) {
    DirectoryEntry entry;
    entry.id = e.chunk->id();
    entry.key = e.chunk->key();
    entry.flags = e.chunk->flags();
    entry.codec = e.codec;
    entry.stored_size = e.stored.size();
    entry.decoded_size = e.decoded_size;
    entry.checksum = e.checksum;
    // A chunk with no bytes has no piece to wait for.
    const bool leave = e.checksum_late && late != nullptr && !e.stored.empty();
    if (e.checksum_late && !leave) {
      entry.checksum = format_internal::ChunkChecksum(entry.id, entry.key, e.stored);
    }
    format_internal::EncodeEntry(entry, &front.directory);
    if (leave) {
      // The checksum is an entry's last 8 bytes; `at` counts from the directory here.
      late->push_back({front.directory.size() - 8, piece, entry.id, std::string(entry.key)});
    }
    if (!e.stored.empty()) ++piece;
    chunks_size += e.stored.size();
  }
  ROLLY_ASSIGN_OR_RETURN(front.file_size,
                         format_internal::CheckFrontSizes(front.header.size(),
                                                          front.directory.size(), chunks_size));
  return front;
}

// Fills the prelude at `p`, given the checksum of every byte after it.
void StoreFullPrelude(std::uint8_t* p, std::uint16_t format_version,
                      std::uint16_t min_reader_version, const Front& front,
                      Checksum file_checksum) {
  StorePrelude(p, format_version, min_reader_version,
               static_cast<std::uint32_t>(front.header.size()),
               static_cast<std::uint32_t>(front.directory.size()), front.file_size);
  StoreU64(p + 32, Checksum::Of(front.header).bits());
  StoreU64(p + 40, Checksum::Of(front.directory).bits());
  StoreU64(p + 48, file_checksum.bits());
  StoreU64(p + 56, Checksum::Of(ByteView(p, 56)).bits());
}

// Lays out a file from its header and encoded chunks, which passed their checks.
Result<Bytes> Assemble(std::uint16_t format_version, std::uint16_t min_reader_version,
                       const Header& header_fields, const std::vector<EncodedChunk>& encoded) {
  ROLLY_ASSIGN_OR_RETURN(const Front front, EncodeFront(header_fields, encoded));
  const std::uint64_t file_size = front.file_size;
  // Appended piece by piece into reserved room: sizing `out` first would zero-fill every byte
  // just before it is overwritten.
  Bytes out;
  out.reserve(file_size);
  out.resize(kPreludeSize);
  out.insert(out.end(), front.header.begin(), front.header.end());
  out.insert(out.end(), front.directory.begin(), front.directory.end());
  for (const EncodedChunk& e : encoded) out.insert(out.end(), e.stored.begin(), e.stored.end());
  // Invariant: the pieces add up to the size computed above.
  assert(out.size() == file_size);
  StoreFullPrelude(out.data(), format_version, min_reader_version, front,
                   Checksum::Of(ByteView(out).subspan(kPreludeSize)));
  return out;
}

}  // namespace

Result<Bytes> Write(const File& file, const WriteOptions& options) {
  ROLLY_RETURN_IF_ERROR(CheckVersions(file.format_version, file.min_reader_version));
  ROLLY_RETURN_IF_ERROR(CheckLevel(options));
  ROLLY_RETURN_IF_ERROR(format_internal::CheckHeader(file.header));
  ROLLY_RETURN_IF_ERROR(CheckChunks(file.chunks));
  std::vector<EncodedChunk> encoded;
  encoded.reserve(file.chunks.size());
  for (const Chunk& c : file.chunks) encoded.push_back(EncodeChunk(c, options));
  return Assemble(file.format_version, file.min_reader_version, file.header, encoded);
}

struct EncodedChunks::Rep {
  std::vector<Chunk> chunks;
  std::vector<EncodedChunk> encoded;
};

EncodedChunks::EncodedChunks() : rep_(std::make_unique<Rep>()) {}
EncodedChunks::EncodedChunks(EncodedChunks&&) noexcept = default;
EncodedChunks& EncodedChunks::operator=(EncodedChunks&&) noexcept = default;
EncodedChunks::~EncodedChunks() = default;

std::size_t EncodedChunks::count() const { return rep_ ? rep_->encoded.size() : 0; }

std::uint64_t EncodedChunks::stored_size() const {
  std::uint64_t n = 0;
  if (rep_) {
    for (const EncodedChunk& e : rep_->encoded) n += e.stored.size();
  }
  return n;
}

Result<Chunk> CompressChunk(ChunkId id, std::string key, ByteView data,
                            const WriteOptions& options, std::uint64_t flags) {
  ROLLY_RETURN_IF_ERROR(CheckLevel(options));
  // As EncodeChunk encodes a chunk's bytes; what the chunk keeps then is the frame only.
  format_internal::ZstdFrameBlocks frame;
  if (CompressSmaller(data, options, &frame)) {
    Chunk chunk(id, std::move(key), Bytes(), flags);
    Bytes stored;
    frame.JoinInto(&stored);
    ChunkAccess::SetCarried(chunk, static_cast<std::uint8_t>(Codec::kZstd), std::move(stored),
                            data.size());
    return chunk;
  }
  // Marked stored, as a Read keeping its stored bytes marks a stored chunk: written as it is, not
  // compressed again to no gain.
  Chunk chunk(id, std::move(key), Bytes(data.begin(), data.end()), flags);
  ChunkAccess::SetStored(chunk, static_cast<std::uint8_t>(Codec::kStored), Bytes());
  return chunk;
}

Result<EncodedChunks> EncodeChunks(std::vector<Chunk> chunks, const WriteOptions& options) {
  ROLLY_RETURN_IF_ERROR(CheckLevel(options));
  ROLLY_RETURN_IF_ERROR(CheckChunks(chunks));
  EncodedChunks out;
  out.rep_->chunks = std::move(chunks);
  out.rep_->encoded.reserve(out.rep_->chunks.size());
  // A compressed chunk no longer needs its decoded bytes: only what goes into the file is kept.
  for (Chunk& c : out.rep_->chunks) {
    // The bytes a chunk keeps as read go into the file as they are, moved out of the chunk.
    ChunkAccess::TrimStored(c);
    out.rep_->encoded.push_back(EncodeChunk(c, options, &c, /*checksum=*/false));
  }
  return out;
}

Result<Bytes> WriteEncoded(std::uint16_t format_version, std::uint16_t min_reader_version,
                           const Header& header, const EncodedChunks& chunks) {
  ROLLY_RETURN_IF_ERROR(CheckVersions(format_version, min_reader_version));
  ROLLY_RETURN_IF_ERROR(format_internal::CheckHeader(header));
  static const std::vector<EncodedChunk> kNone;
  return Assemble(format_version, min_reader_version, header,
                  chunks.rep_ ? chunks.rep_->encoded : kNone);
}

Result<FilePieces> LayOutEncodedPieces(std::uint16_t format_version,
                                       std::uint16_t min_reader_version, const Header& header,
                                       EncodedChunks&& chunks) {
  ROLLY_RETURN_IF_ERROR(CheckVersions(format_version, min_reader_version));
  ROLLY_RETURN_IF_ERROR(format_internal::CheckHeader(header));
  static const std::vector<EncodedChunk> kNone;
  const std::vector<EncodedChunk>& encoded = chunks.rep_ ? chunks.rep_->encoded : kNone;
  FilePieces out;
  ROLLY_ASSIGN_OR_RETURN(const Front front, EncodeFront(header, encoded, &out.late_checksums));
  const std::size_t directory_at = kPreludeSize + front.header.size();
  for (LateChecksum& l : out.late_checksums) l.at += directory_at;

  out.size = front.file_size;
  out.pieces.reserve(1 + encoded.size());
  Bytes& first = out.pieces.emplace_back();
  first.reserve(kPreludeSize + front.header.size() + front.directory.size());
  first.resize(kPreludeSize);
  first.insert(first.end(), front.header.begin(), front.header.end());
  first.insert(first.end(), front.directory.begin(), front.directory.end());
  // The file and prelude checksums are SealFilePieces's; zero until then, as is the directory's
  // when a chunk's checksum is left to it.
  StoreFullPrelude(first.data(), format_version, min_reader_version, front, Checksum::FromBits(0));
  if (!out.late_checksums.empty()) StoreU64(first.data() + 40, 0);
  StoreU64(first.data() + 56, 0);

  // Nothing can fail from here: take the chunks over and move each one's stored bytes out of
  // whichever buffer holds them (compressed bytes made by EncodeChunks, the decoded bytes of a
  // stored chunk, or the bytes as read).
  EncodedChunks taken = std::move(chunks);
  if (taken.rep_) {
    for (std::size_t i = 0; i < taken.rep_->encoded.size(); ++i) {
      EncodedChunk& e = taken.rep_->encoded[i];
      Chunk& c = taken.rep_->chunks[i];
      if (e.stored.empty()) continue;
      if (e.stored.data() == e.owned.data()) {
        out.pieces.push_back(std::move(e.owned));
      } else if (e.stored.data() == c.data().data()) {
        out.pieces.push_back(c.TakeData());
      } else {
        out.pieces.push_back(ChunkAccess::TakeStored(c));
      }
      // Invariant: the bytes moved are the ones the directory and checksum describe.
      assert(out.pieces.back().data() == e.stored.data() &&
             out.pieces.back().size() == e.stored.size());
    }
  }
  return out;
}

void SealFilePieces(Bytes& first, std::span<const ByteView> rest,
                    std::span<const LateChecksum> late) {
  // Invariant: `first` is a laid-out first piece: at least the prelude, the rest after it.
  assert(first.size() >= kPreludeSize);
  if (!late.empty()) {
    for (const LateChecksum& l : late) {
      assert(l.piece >= 1 && l.piece <= rest.size() && l.at + 8 <= first.size());
      StoreU64(first.data() + l.at,
               format_internal::ChunkChecksum(l.id, l.key, rest[l.piece - 1]).bits());
    }
    // The directory changed: its checksum too.
    const std::size_t directory_at = kPreludeSize + LoadU32(first.data() + 12);
    const ByteView directory(first.data() + directory_at, LoadU32(first.data() + 16));
    StoreU64(first.data() + 40, Checksum::Of(directory).bits());
  }
  ChecksumBuilder file_checksum;
  file_checksum.Add(ByteView(first).subspan(kPreludeSize));
  for (const ByteView piece : rest) file_checksum.Add(piece);
  std::uint8_t* p = first.data();
  StoreU64(p + 48, file_checksum.Finish().bits());
  StoreU64(p + 56, Checksum::Of(ByteView(p, 56)).bits());
}

Result<FilePieces> WriteEncodedPieces(std::uint16_t format_version,
                                      std::uint16_t min_reader_version, const Header& header,
                                      EncodedChunks&& chunks) {
  ROLLY_ASSIGN_OR_RETURN(
      FilePieces out,
      LayOutEncodedPieces(format_version, min_reader_version, header, std::move(chunks)));
  std::vector<ByteView> rest(out.pieces.begin() + 1, out.pieces.end());
  SealFilePieces(out.pieces.front(), rest, out.late_checksums);
  out.late_checksums.clear();
  return out;
}

Result<Prelude> ReadPrelude(ByteView bytes) {
  if (bytes.size() < kPreludeSize) {
    return Damaged("prelude", fmt::format("the file is {} bytes, shorter than the {}-byte prelude",
                                          bytes.size(), kPreludeSize));
  }
  const std::uint8_t* p = bytes.data();
  if (std::memcmp(p, kMagic.data(), kMagic.size()) != 0) {
    return Damaged("prelude", "the magic is not a Rolly Save file's");
  }
  Prelude prelude;
  prelude.format_version = LoadU16(p + 8);
  prelude.min_reader_version = LoadU16(p + 10);
  prelude.header_size = LoadU32(p + 12);
  prelude.directory_size = LoadU32(p + 16);
  const std::uint32_t reserved = LoadU32(p + 20);
  prelude.file_size = LoadU64(p + 24);
  prelude.header_checksum = Checksum::FromBits(LoadU64(p + 32));
  prelude.directory_checksum = Checksum::FromBits(LoadU64(p + 40));
  prelude.file_checksum = Checksum::FromBits(LoadU64(p + 48));
  prelude.prelude_checksum = Checksum::FromBits(LoadU64(p + 56));
  if (!(Checksum::Of(bytes.first(56)) == prelude.prelude_checksum)) {
    return Damaged("prelude", "checksum does not match");
  }
  if (prelude.min_reader_version == 0 || prelude.format_version < prelude.min_reader_version) {
    return Damaged("prelude", "the format versions are not valid");
  }
  if (reserved != 0) return Damaged("prelude", "the reserved field is not zero");
  if (prelude.min_reader_version > kFormatVersion) {
    return NewerVersionError(fmt::format(
        "the file needs format version {} to be read; this version reads format version {}",
        prelude.min_reader_version, kFormatVersion));
  }
  if (prelude.header_size > kMaxHeaderSize) {
    return Damaged("prelude", "the header size is above its bound");
  }
  if (prelude.directory_size > kMaxDirectorySize) {
    return Damaged("prelude", "the directory size is above its bound");
  }
  if (prelude.file_size < kPreludeSize + prelude.header_size + prelude.directory_size) {
    return Damaged("prelude", "the file size is smaller than the prelude, header and directory");
  }
  if (prelude.file_size > kMaxFileSize) {
    return Damaged("prelude", "the file size is above its bound");
  }
  return prelude;
}

Result<Header> ReadHeader(ByteView bytes) {
  ROLLY_ASSIGN_OR_RETURN(const Prelude prelude, ReadPrelude(bytes));
  if (bytes.size() < prelude.header_end()) {
    return Damaged("header", fmt::format("truncated: {} bytes of the {} the header needs",
                                         bytes.size(), prelude.header_end()));
  }
  const ByteView header = bytes.subspan(kPreludeSize, prelude.header_size);
  if (!(Checksum::Of(header) == prelude.header_checksum)) {
    return Damaged("header", "checksum does not match");
  }
  return format_internal::DecodeHeader(header);
}

namespace {

bool IsKnownChunk(ChunkId id, const ReadOptions& options) {
  return std::find(kKnownChunkIds.begin(), kKnownChunkIds.end(), id) != kKnownChunkIds.end() ||
         std::find(options.extra_known_chunks.begin(), options.extra_known_chunks.end(), id) !=
             options.extra_known_chunks.end();
}

// Names the part a failed whole-file checksum comes from: the first chunk whose own checksum
// fails, or the file as a whole when every chunk matches (the damage is then in bytes no other
// checksum covers, which a valid file does not have).
Status LocateFileDamage(ByteView bytes, const Prelude& prelude, ByteView directory) {
  const std::uint64_t chunks_offset =
      kPreludeSize + prelude.header_size + prelude.directory_size;
  auto entries =
      format_internal::DecodeDirectory(directory, chunks_offset, prelude.file_size - chunks_offset);
  if (entries.ok()) {
    for (std::size_t i = 0; i < entries->size(); ++i) {
      const DirectoryEntry& e = (*entries)[i];
      const ByteView stored = bytes.subspan(e.offset, e.stored_size);
      if (!(format_internal::ChunkChecksum(e.id, e.key, stored) == e.checksum)) {
        return Damaged(ChunkLabel(i, e.id, e.key), "checksum does not match");
      }
    }
  }
  return Damaged("file", "checksum does not match");
}

}  // namespace

namespace {

using format_internal::CheckedFile;

Result<CheckedFile> CheckFile(ByteView bytes, const ReadOptions& options) {
  // Steps 1 to 3: prelude, version, sizes.
  CheckedFile checked;
  ROLLY_ASSIGN_OR_RETURN(checked.prelude, ReadPrelude(bytes));
  const Prelude& prelude = checked.prelude;
  if (bytes.size() < prelude.file_size) {
    return Damaged("file", fmt::format("truncated: {} bytes of the recorded {}", bytes.size(),
                                       prelude.file_size));
  }
  if (bytes.size() > prelude.file_size) {
    return Damaged("file", fmt::format("{} bytes follow the recorded end of the file",
                                       bytes.size() - prelude.file_size));
  }
  const ByteView header_bytes = bytes.subspan(kPreludeSize, prelude.header_size);
  const ByteView directory_bytes =
      bytes.subspan(kPreludeSize + prelude.header_size, prelude.directory_size);
  const std::uint64_t chunks_offset =
      kPreludeSize + prelude.header_size + prelude.directory_size;

  // Step 4: checksums, cheapest first.
  if (!(Checksum::Of(header_bytes) == prelude.header_checksum)) {
    return Damaged("header", "checksum does not match");
  }
  if (!(Checksum::Of(directory_bytes) == prelude.directory_checksum)) {
    return Damaged("directory", "checksum does not match");
  }
  if (!(Checksum::Of(bytes.subspan(kPreludeSize)) == prelude.file_checksum)) {
    return LocateFileDamage(bytes, prelude, directory_bytes);
  }

  // Steps 5 and 6: header and directory in their one form.
  ROLLY_ASSIGN_OR_RETURN(checked.header, format_internal::DecodeHeader(header_bytes));
  ROLLY_ASSIGN_OR_RETURN(
      checked.entries,
      format_internal::DecodeDirectory(directory_bytes, chunks_offset,
                                       prelude.file_size - chunks_offset));

  // Step 7: every chunk's checksum, then what a newer version wrote.
  const std::vector<DirectoryEntry>& entries = checked.entries;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const DirectoryEntry& e = entries[i];
    if (!(format_internal::ChunkChecksum(e.id, e.key, bytes.subspan(e.offset, e.stored_size)) ==
          e.checksum)) {
      return Damaged(ChunkLabel(i, e.id, e.key), "checksum does not match");
    }
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const DirectoryEntry& e = entries[i];
    const bool known = IsKnownChunk(e.id, options);
    const bool must_understand = (e.flags & kChunkMustUnderstand) != 0;
    const bool codec_known = e.codec <= static_cast<std::uint8_t>(Codec::kZstd);
    if (must_understand && !known) {
      return NewerVersionError(fmt::format("{} must be understood and this version does not know it",
                                           ChunkLabel(i, e.id, e.key)));
    }
    if (!codec_known && (known || must_understand)) {
      return NewerVersionError(fmt::format("{} uses codec {}, which this version lacks",
                                           ChunkLabel(i, e.id, e.key), e.codec));
    }
  }
  return checked;
}

}  // namespace

Result<Header> Verify(ByteView bytes, const ReadOptions& options) {
  ROLLY_ASSIGN_OR_RETURN(CheckedFile checked, CheckFile(bytes, options));
  return std::move(checked.header);
}

const Header& VerifiedBytes::header() const { return checked_->header; }

Result<VerifiedBytes> VerifyForRead(ByteView bytes, const ReadOptions& options) {
  ROLLY_ASSIGN_OR_RETURN(CheckedFile checked, CheckFile(bytes, options));
  return VerifiedBytes(bytes, std::make_shared<const CheckedFile>(std::move(checked)));
}

namespace {

// Step 7, last part: decoding the chunks of bytes every check passed. `owner`: the buffer holding
// `bytes`, for the largest chunk left encoded to take over, or null (every chunk copies its
// bytes).
Result<File> Decode(ByteView bytes, const CheckedFile& checked, const ReadOptions& options,
                    Bytes* owner = nullptr) {
  const std::vector<DirectoryEntry>& entries = checked.entries;
  File file;
  file.format_version = checked.prelude.format_version;
  file.min_reader_version = checked.prelude.min_reader_version;
  file.header = checked.header;

  // Within what the caller takes on.
  std::uint64_t decoded = 0;
  for (const DirectoryEntry& e : entries) decoded += e.decoded_size;  // at most 1 GiB: checked
  if (decoded > options.decode_at_most) {
    return InvalidInputError(fmt::format("the file decodes to {} bytes, more than the {} asked",
                                         decoded, options.decode_at_most));
  }
  // The chunk that takes `owner` over: the largest left encoded (a load's world chunk).
  std::size_t taker = entries.size();
  for (std::size_t i = 0; owner != nullptr && i < entries.size(); ++i) {
    const DirectoryEntry& e = entries[i];
    if (e.codec == static_cast<std::uint8_t>(Codec::kZstd) &&
        e.decoded_size >= options.leave_encoded_from &&
        (taker == entries.size() || e.stored_size > entries[taker].stored_size)) {
      taker = i;
    }
  }
  file.chunks.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const DirectoryEntry& e = entries[i];
    const ByteView stored = bytes.subspan(e.offset, e.stored_size);
    Chunk chunk(e.id, std::string(e.key), Bytes(), e.flags);
    switch (e.codec) {
      case static_cast<std::uint8_t>(Codec::kStored):
        chunk.set_data(Bytes(stored.begin(), stored.end()));
        if (options.keep_stored) ChunkAccess::SetStored(chunk, e.codec, Bytes());
        break;
      case static_cast<std::uint8_t>(Codec::kZstd): {
        if (e.decoded_size >= options.leave_encoded_from) {
          const Status s = format_internal::CheckZstdFrame(stored, e.decoded_size);
          if (!s.ok()) return Damaged(ChunkLabel(i, e.id, e.key), s.message());
          if (i == taker) {
            // `bytes` still views the buffer, which moves with the chunk but stays where it is.
            ChunkAccess::SetCarriedWithin(chunk, e.codec, std::move(*owner),
                                          static_cast<std::size_t>(e.offset), stored.size(),
                                          e.decoded_size);
          } else {
            ChunkAccess::SetCarried(chunk, e.codec, Bytes(stored.begin(), stored.end()),
                                    e.decoded_size);
          }
          break;
        }
        Bytes data;
        const Status s = format_internal::ZstdDecompress(stored, e.decoded_size, &data);
        if (!s.ok()) return Damaged(ChunkLabel(i, e.id, e.key), s.message());
        chunk.set_data(std::move(data));
        if (options.keep_stored) {
          ChunkAccess::SetStored(chunk, e.codec, Bytes(stored.begin(), stored.end()));
        }
        break;
      }
      default:
        ChunkAccess::SetCarried(chunk, e.codec, Bytes(stored.begin(), stored.end()),
                                e.decoded_size);
        break;
    }
    file.chunks.push_back(std::move(chunk));
  }
  return file;
}

}  // namespace

bool Chunk::is_left_encoded() const {
  return !decoded_ && stored_codec_ == static_cast<std::uint8_t>(Codec::kZstd);
}

Status DecodeChunk(const Chunk& chunk, std::span<std::uint8_t> out,
                   const std::function<void(std::size_t)>& arrived) {
  if (!chunk.is_left_encoded()) return InvalidInputError("the chunk is not left encoded");
  if (out.size() != chunk.decoded_size()) {
    return InvalidInputError(fmt::format("the chunk decodes to {} bytes, not {}",
                                         chunk.decoded_size(), out.size()));
  }
  // Read checked the frame; checked again, as cheap, for a File that was moved about since.
  ROLLY_RETURN_IF_ERROR(format_internal::CheckZstdFrame(chunk.stored(), out.size()));
  return format_internal::ZstdDecodeInSteps(chunk.stored(), out, arrived);
}

Result<File> Read(ByteView bytes, const ReadOptions& options) {
  ROLLY_ASSIGN_OR_RETURN(const CheckedFile checked, CheckFile(bytes, options));
  return Decode(bytes, checked, options);
}

Result<File> Read(const VerifiedBytes& verified, const ReadOptions& options) {
  return Decode(verified.bytes_, *verified.checked_, options);
}

Result<File> Read(const VerifiedBytes& verified, Bytes&& bytes, const ReadOptions& options) {
  Bytes taken = std::move(bytes);  // the caller's, whatever the status
  if (taken.data() != verified.bytes_.data() || taken.size() != verified.bytes_.size()) {
    return InvalidInputError("the bytes given are not the ones that were verified");
  }
  return Decode(verified.bytes_, *verified.checked_, options, &taken);
}

}  // namespace rolly::format
