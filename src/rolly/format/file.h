// The save file container: a prelude, a header of known and carried fields, a directory, and
// chunks. Write turns a File into bytes; Read checks bytes and turns them back into a File;
// ReadHeader reads only the header, for slot lists; Diagnose names every damaged part.
// The bytes are specified in docs/format.md.
//
// Bad input never crashes, hangs, allocates more than the format's bounds, or yields a partial
// File: a call either succeeds whole or returns a status.
//
// Thread rules: every function here is pure and may run on any thread, several at once. Reading
// and writing belong on workers, not the game thread.

#ifndef ROLLY_FORMAT_FILE_H_
#define ROLLY_FORMAT_FILE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/checksum.h"
#include "rolly/core/status.h"
#include "rolly/format/format_constants.h"

namespace rolly::format_internal {
struct CheckedFile;
}  // namespace rolly::format_internal

namespace rolly::format {

// A custom version: a key the game or a plugin owns and the version of its data in this save.
struct CustomVersion {
  std::string key;
  std::uint32_t version = 0;
  friend bool operator==(const CustomVersion&, const CustomVersion&) = default;
};

// A header field this version does not know, kept as read and written back unchanged.
struct CarriedField {
  std::uint32_t id = 0;
  Bytes payload;
  friend bool operator==(const CarriedField&, const CarriedField&) = default;
};

// The header: what a slot list shows and what a load checks before anything else.
// See docs/format.md, "Header", for each field's meaning and bound.
struct Header {
  std::string slot_name;
  std::uint64_t sequence = 0;
  std::uint32_t game_data_version = 0;
  std::uint32_t library_version = 0;
  std::uint32_t record_version = 0;
  std::string game_build;
  // Microseconds since 1970-01-01T00:00:00Z.
  std::int64_t save_time_us = 0;
  // A SaveKind, or a number a newer version defined.
  std::uint32_t kind = static_cast<std::uint32_t>(SaveKind::kManual);
  std::string title;
  Bytes metadata;
  Bytes thumbnail;
  // Sorted by key, keys unique.
  std::vector<CustomVersion> custom_versions;
  // Sorted by ID, IDs above kLastKnownHeaderField and unique.
  std::vector<CarriedField> carried_fields;

  friend bool operator==(const Header&, const Header&) = default;
};

// One chunk: an ID, a key telling which one of its kind, flags, and its bytes.
//
// A chunk read from a file also keeps its bytes as stored (its codec and stored bytes), so
// writing the File back reproduces the file exactly; set_data() drops them, and the next Write
// encodes the new bytes. A chunk in a codec this version lacks is carried: it has no decoded
// bytes (is_decoded() is false) and is written back as stored. So is a chunk a reader asked to
// be left encoded (ReadOptions::leave_encoded_from), which DecodeChunk decodes, and one
// CompressChunk made.
class Chunk {
 public:
  Chunk(ChunkId id, std::string key, Bytes data, std::uint64_t flags = 0);
  // A copy holds the stored bytes only, never the file buffer they may lie in. A chunk moved
  // from is left with no stored bytes.
  Chunk(const Chunk& other);
  Chunk& operator=(const Chunk& other);
  Chunk(Chunk&& other) noexcept;
  Chunk& operator=(Chunk&& other) noexcept;

  ChunkId id() const { return id_; }
  const std::string& key() const { return key_; }
  std::uint64_t flags() const { return flags_; }
  bool must_understand() const { return (flags_ & kChunkMustUnderstand) != 0; }

  // False only for a chunk carried in a codec this version lacks, left encoded by Read, or
  // compressed by CompressChunk.
  bool is_decoded() const { return decoded_; }
  // True for a chunk left encoded by Read (ReadOptions::leave_encoded_from) or compressed by
  // CompressChunk: not decoded, in a codec this version has.
  bool is_left_encoded() const;
  // The decoded bytes; empty when !is_decoded().
  const Bytes& data() const { return data_; }
  // The decoded size (as recorded for a carried chunk).
  std::uint64_t decoded_size() const { return decoded_ ? data_.size() : carried_decoded_size_; }
  // Replaces the bytes and forgets the as-read encoding. The chunk is decoded from then on.
  void set_data(Bytes data);
  // Moves the decoded bytes out, leaving the chunk empty, and forgets the as-read encoding.
  Bytes TakeData();

  // True when the chunk keeps the encoding it was read with.
  bool has_stored() const { return has_stored_; }
  // The codec as read (a Codec, or a number a newer version defined).
  std::uint8_t stored_codec() const { return stored_codec_; }
  // The bytes as stored in the file read. For a chunk left encoded by a Read that took the file's
  // buffer over, a part of that buffer, which the chunk keeps whole.
  ByteView stored() const;
  // Forgets the as-read encoding to save memory (a carried chunk cannot forget it).
  void DropStored();

  friend bool operator==(const Chunk& a, const Chunk& b);

 private:
  friend class ChunkAccess;
  void DropStoredUnchecked();

  ChunkId id_;
  std::string key_;
  std::uint64_t flags_ = 0;
  Bytes data_;
  bool decoded_ = true;
  std::uint64_t carried_decoded_size_ = 0;
  bool has_stored_ = false;
  std::uint8_t stored_codec_ = 0;
  // Holds the stored bytes at [stored_at_, stored_at_ + stored_size_): all of it, or the whole
  // file read for the chunk that took its buffer over. Empty for kStored, whose stored bytes are
  // data_.
  Bytes stored_;
  std::size_t stored_at_ = 0;
  std::size_t stored_size_ = 0;
};

// A whole file. A File made in code holds the current format versions; a File read keeps the
// versions it was read with, and Write writes them back.
struct File {
  std::uint16_t format_version = kFormatVersion;
  std::uint16_t min_reader_version = kMinReaderVersion;
  Header header;
  std::vector<Chunk> chunks;

  // The chunk of `id` and `key`, or nullptr.
  const Chunk* Find(ChunkId id, std::string_view key = {}) const;
  Chunk* Find(ChunkId id, std::string_view key = {});

  friend bool operator==(const File&, const File&) = default;
};

struct WriteOptions {
  // False stores every chunk as it is.
  bool compress = true;
  // The zstd level for chunks that compress (zstd's own range: negative fast levels to 22).
  int zstd_level = 3;
};

// Encodes `file`. A chunk that keeps its as-read encoding (or the one CompressChunk gave it) is
// written as it is; any other is compressed at the chosen level when that makes it smaller, and
// stored otherwise.
// Returns the bytes, or InvalidInput when the file breaks a rule of docs/format.md (a bound, a
// string that is not UTF-8 or holds NUL, a duplicate chunk, a carried field with a known ID, an
// unsorted list, a level out of range, min_reader_version above this version).
Result<Bytes> Write(const File& file, const WriteOptions& options = {});

struct FilePieces;

// Chunks encoded ahead of their header: a save compresses its chunks on a worker as soon as it is
// asked for, before the store knows the header's sequence number. Holds only what goes into the
// file (compressed bytes, or the bytes of chunks stored as they are). Move-only.
class EncodedChunks {
 public:
  EncodedChunks();
  EncodedChunks(EncodedChunks&&) noexcept;
  EncodedChunks& operator=(EncodedChunks&&) noexcept;
  ~EncodedChunks();

  std::size_t count() const;
  // Bytes the chunks take in the file.
  std::uint64_t stored_size() const;

 private:
  friend Result<EncodedChunks> EncodeChunks(std::vector<Chunk> chunks,
                                            const WriteOptions& options);
  friend Result<Bytes> WriteEncoded(std::uint16_t format_version,
                                    std::uint16_t min_reader_version, const Header& header,
                                    const EncodedChunks& chunks);
  friend Result<FilePieces> LayOutEncodedPieces(std::uint16_t format_version,
                                                std::uint16_t min_reader_version,
                                                const Header& header, EncodedChunks&& chunks);
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

// A chunk of `data` encoded now, as Write would encode it with `options`, for a caller that keeps
// its own `data` (a save keeps its records as the held save): `data` is read where it lies and
// need not outlive the call, and the chunk holds no copy of it when it compresses. When
// compression is on and makes it smaller, the chunk holds the zstd frame only, left encoded
// (is_left_encoded, as a Read may leave a chunk), which DecodeChunk decodes; otherwise it holds a
// copy of `data`, marked stored. Either way it keeps that encoding: Write and EncodeChunks write
// it as it is, whatever their options, and a file of such chunks written with the same `options`
// is the same bytes as one of Chunk(id, key, data, flags). InvalidInput for a zstd level out of
// range when compression is on; the chunk's other rules (its key, its decoded size among the
// file's, no two alike) are checked when it is written, as any chunk's.
Result<Chunk> CompressChunk(ChunkId id, std::string key, ByteView data,
                            const WriteOptions& options = {}, std::uint64_t flags = 0);

// Encodes `chunks` as Write would (taking them over), but leaves the chunks' checksums to the
// layout: WriteEncoded computes them, LayOutEncodedPieces leaves them to SealFilePieces, which a
// writer runs while the chunks are written. InvalidInput as Write for the chunks' rules and the
// level.
Result<EncodedChunks> EncodeChunks(std::vector<Chunk> chunks, const WriteOptions& options = {});

// Lays out a file from a header and chunks encoded before: the same bytes Write makes of a File
// with these versions, header and chunks. InvalidInput as Write for the versions and the header.
Result<Bytes> WriteEncoded(std::uint16_t format_version, std::uint16_t min_reader_version,
                           const Header& header, const EncodedChunks& chunks);

// A chunk checksum LayOutEncodedPieces left to SealFilePieces: the 8 bytes at `at` in pieces[0]
// (in the directory) take the checksum of piece `piece` (1 or more) under this ID and key.
struct LateChecksum {
  std::size_t at = 0;
  std::size_t piece = 0;
  ChunkId id;
  std::string key;
};

// A file laid out in pieces, for a gather write: their concatenation is the file.
struct FilePieces {
  // pieces[0] holds the prelude, the header and the directory; each piece after it holds one
  // chunk's stored bytes, in directory order (a chunk with no stored bytes has no piece).
  std::vector<Bytes> pieces;
  // The file's size: the sum of the pieces' sizes.
  std::uint64_t size = 0;
  // LayOutEncodedPieces only: the chunk checksums still to compute (SealFilePieces).
  std::vector<LateChecksum> late_checksums;
};

// As WriteEncoded, but without copying the chunks into one buffer: the concatenation of the
// pieces is exactly the bytes WriteEncoded gives for the same arguments (the file checksum is
// computed across the pieces). Takes the chunks' bytes over: on success `chunks` is left empty
// (count() 0), and the pieces own the bytes; on failure (InvalidInput as WriteEncoded) `chunks`
// is left as it was.
Result<FilePieces> WriteEncodedPieces(std::uint16_t format_version,
                                      std::uint16_t min_reader_version, const Header& header,
                                      EncodedChunks&& chunks);

// WriteEncodedPieces in two steps, so a writer can start on the chunks' bytes while their
// checksums are computed: LayOutEncodedPieces gives the pieces with the chunks' checksums (listed
// in late_checksums), the directory checksum, the file checksum and the prelude checksum left
// zero (pieces[0] has its final size), and SealFilePieces computes them over the pieces' bytes
// and fills them into pieces[0]. The pieces then hold exactly what WriteEncodedPieces gives.
// Statuses and the taking of `chunks` as WriteEncodedPieces.
Result<FilePieces> LayOutEncodedPieces(std::uint16_t format_version,
                                       std::uint16_t min_reader_version, const Header& header,
                                       EncodedChunks&& chunks);
// `first`: pieces[0] of LayOutEncodedPieces; `rest`: the bytes of the pieces after it, in order;
// `late`: its late_checksums. Reads `rest` only, so another thread may be writing those bytes out
// meanwhile.
void SealFilePieces(Bytes& first, std::span<const ByteView> rest,
                    std::span<const LateChecksum> late);

struct ReadOptions {
  // Chunk IDs the caller knows beyond kKnownChunkIds (a game's own chunks).
  std::span<const ChunkId> extra_known_chunks;
  // Keep each chunk's as-read encoding so Write reproduces the file exactly. A load that will
  // not write the File back may turn it off to hold less memory.
  bool keep_stored = true;
  // The most the chunks may decode to in all, for a reader that bounds the work it takes on (a
  // listing on a thread that must stay quick): Read refuses a file that passes every check but
  // decodes to more with InvalidInput, decoding nothing. Verify does not look at it.
  std::uint64_t decode_at_most = kMaxDecodedTotal;
  // A zstd chunk whose decoded size is at least this is not decoded by Read: it passes every check
  // that needs no decoding (its checksum, and its frame's header and block headers) and is kept
  // as stored (Chunk::is_left_encoded), for a caller that decodes it as it goes through it
  // (DecodeChunk). Such a frame that fails part way through decoding is then found by
  // DecodeChunk, not by Read. Its stored bytes are kept whatever keep_stored says.
  std::uint64_t leave_encoded_from = kNeverLeaveEncoded;
};

// Checks and decodes a whole file, in the order of docs/format.md, "Reading".
// Returns the File, or:
//   Damaged       a check failed; the message names the part (prelude, header, directory,
//                 chunk N) and what failed;
//   NewerVersion  a newer version wrote it in a way this one cannot read (a minimum reader version
//                 above ours, a MustUnderstand chunk we do not know, a known chunk in a codec we
//                 lack);
//   InvalidInput  a valid file that decodes to more than options.decode_at_most.
Result<File> Read(ByteView bytes, const ReadOptions& options = {});

// Decodes a chunk Read left encoded (Chunk::is_left_encoded) into `out`, which must be exactly its
// decoded size, front to back in steps: after each, `arrived(n)` is told that the first n bytes of
// `out` are final (n grows; `arrived` must not throw). So another thread may read each byte once
// it has arrived. Only the status says whether the chunk decoded: n may reach out.size() before
// a failure is found (a block producing more than its frame declares). Returns Ok, or:
//   Damaged       the frame does not decode to exactly its size (the bytes of `out` are then
//                 unspecified); the message says why, not which chunk;
//   InvalidInput  the chunk is not left encoded, or `out` is not its decoded size.
// Thread: any; the chunk is only read, so several threads may decode chunks at once.
Status DecodeChunk(const Chunk& chunk, std::span<std::uint8_t> out,
                   const std::function<void(std::size_t)>& arrived);

// Runs every check of Read (checksums, one form, bounds, what a newer version wrote) without
// decoding the chunks, and returns the header. Cheaper than Read for telling which of a slot's
// copies is valid; a zstd chunk that passes its checksum but fails to decode is found only by Read.
// Statuses as Read.
Result<Header> Verify(ByteView bytes, const ReadOptions& options = {});

// A file's bytes that passed every check of Read short of decoding, with what the checks found, so
// that Read decodes them without checking them again (a reader that verifies copies to choose one,
// then reads the one chosen). It views the bytes: they must stay alive and unchanged until that
// Read (a std::vector moved keeps its bytes where they were). Copies share what was found.
class VerifiedBytes {
 public:
  const Header& header() const;

 private:
  friend Result<VerifiedBytes> VerifyForRead(ByteView bytes, const ReadOptions& options);
  friend Result<File> Read(const VerifiedBytes& verified, const ReadOptions& options);
  friend Result<File> Read(const VerifiedBytes& verified, Bytes&& bytes,
                           const ReadOptions& options);
  VerifiedBytes(ByteView bytes, std::shared_ptr<const format_internal::CheckedFile> checked)
      : bytes_(bytes), checked_(std::move(checked)) {}
  ByteView bytes_;
  std::shared_ptr<const format_internal::CheckedFile> checked_;
};

// Verify, keeping what it found for Read. Statuses as Verify.
Result<VerifiedBytes> VerifyForRead(ByteView bytes, const ReadOptions& options = {});
// Read of bytes VerifyForRead passed: decodes them, checking nothing again (a zstd chunk that
// fails to decode is Damaged, as in Read; the decode bound of `options` is checked, as in Read).
Result<File> Read(const VerifiedBytes& verified, const ReadOptions& options = {});
// The same, taking over `bytes`, the buffer `verified` views (moved in, so it is where it was):
// the largest chunk left encoded (ReadOptions::leave_encoded_from) keeps its stored bytes in that
// buffer instead of a copy of them, which spares a load a copy of nearly the whole file. That
// chunk then holds the whole file's bytes until set_data or TakeData replaces them (a copy of it
// holds its own bytes only, and EncodeChunks cuts the buffer down to them).
// Statuses as Read(verified), and InvalidInput, reading nothing, when `bytes` is not the buffer
// `verified` views. Whatever the status, the bytes are the File's or gone, and `verified` (and
// every copy of it) views them no more: it must not be read again.
Result<File> Read(const VerifiedBytes& verified, Bytes&& bytes, const ReadOptions& options = {});

// The prelude's fields, as recorded.
struct Prelude {
  std::uint16_t format_version = 0;
  std::uint16_t min_reader_version = 0;
  std::uint32_t header_size = 0;
  std::uint32_t directory_size = 0;
  std::uint64_t file_size = 0;
  Checksum header_checksum;
  Checksum directory_checksum;
  Checksum file_checksum;
  Checksum prelude_checksum;

  // Bytes needed by ReadHeader: the prelude and the header.
  std::uint64_t header_end() const { return kPreludeSize + header_size; }
};

// Checks the first kPreludeSize bytes (steps 1 and 2 of "Reading", and the bounds of the sizes).
// Damaged or NewerVersion as Read.
Result<Prelude> ReadPrelude(ByteView bytes);

// Reads the header from the start of a file: `bytes` holds at least Prelude::header_end() bytes
// (the rest of the file is not needed and not checked). Damaged or NewerVersion as Read; Damaged
// also when `bytes` is shorter than the prelude says the header needs.
Result<Header> ReadHeader(ByteView bytes);

// One checked part of a file, for Diagnose.
struct PartReport {
  // "prelude", "header", "directory", "file", or "chunk N".
  std::string part;
  // For chunks: the ID and key; otherwise empty.
  std::string chunk_id;
  std::string chunk_key;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  // Whether the part's checksum could be checked, and whether it matched.
  bool checked = false;
  bool ok = false;
  Checksum recorded;
  Checksum actual;
};

// Every checksum of a file and what Read says of it.
struct Diagnosis {
  // What Read returns for these bytes.
  Status status;
  // False when even the prelude could not be read (too short, wrong magic, damaged).
  bool prelude_readable = false;
  Prelude prelude;
  // Each part that could be located, in file order.
  std::vector<PartReport> parts;
};

// Checks every part it can locate, without stopping at the first failure.
Diagnosis Diagnose(ByteView bytes);
// The same, given the status Read gave for `bytes` (a caller that read them already is spared a
// second decoding, and its ReadOptions count).
Diagnosis Diagnose(ByteView bytes, Status read_status);

}  // namespace rolly::format

#endif  // ROLLY_FORMAT_FILE_H_
