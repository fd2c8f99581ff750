// Record chunk payloads in bytes (docs/records.md): a record count, then each record's size and
// bytes; record 0 is the chunk's tables, every other record a kind, a subject, a layout index and
// sections. DecodePayload checks every value against its saved types, so a payload that decodes
// encodes back to the same bytes and its records may be applied; record kinds and sections this
// version does not know are kept whole and written back unchanged.
//
// Thread rules: pure functions over values; use from any thread.

#ifndef ROLLY_RECORD_RECORD_CODEC_H_
#define ROLLY_RECORD_RECORD_CODEC_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/status.h"
#include "rolly/record/chunk_tables.h"

namespace rolly::record {

// Record kinds (docs/records.md, "Record kinds"). Permanent numbers.
enum class RecordKind : std::uint8_t {
  kTables = 0,
  kObject = 1,
  kActor = 2,
  kComponent = 3,
  kPlayer = 4,
};
// Whether this version knows the layout of records of `kind` (1..4).
bool IsKnownObjectKind(std::uint8_t kind);

using SectionId = std::array<char, 4>;
inline constexpr SectionId kPropSection = {'P', 'R', 'O', 'P'};
inline constexpr SectionId kExtraSection = {'E', 'X', 'T', 'R'};
inline constexpr std::size_t kMaxSections = 64;
inline constexpr std::size_t kMaxRecords = 1u << 22;

struct Section {
  SectionId id{};
  Bytes bytes;
  friend bool operator==(const Section&, const Section&) = default;
};

// One record other than the tables.
struct Record {
  std::uint8_t kind = static_cast<std::uint8_t>(RecordKind::kObject);
  // Known kinds only: the subject, its layout and the sections in order.
  Guid subject;
  std::uint32_t layout = 0;
  std::vector<Section> sections;
  // A kind this version does not know: every byte after the kind byte, kept whole.
  Bytes unknown;

  // The section `id`, or null.
  const Section* Find(SectionId id) const;
  friend bool operator==(const Record&, const Record&) = default;
};

struct Payload {
  ChunkTables tables;
  std::vector<Record> records;
};

// The payload's bytes. InvalidData when a record breaks a rule a reader would refuse it for (no
// PROP section, sections repeated or past 64).
Result<Bytes> EncodePayload(const Payload& payload);
// Reads and checks a payload. Damaged (naming the record and field) for bytes not in the one form
// or past a bound; NewerVersion for a saved kind this version does not support.
Result<Payload> DecodePayload(ByteView bytes);

// The bytes of a value of a fixed-size saved kind (Float, Guid, Vector3d...); 0 for other kinds.
std::size_t FixedValueSize(SavedKind kind);

// Checks one value of saved type `type` and moves past it: the walk skip and check share.
// `depth` is the value's level (the record's fields are level 1); `elements` counts container
// elements against the record's bound. On failure returns Damaged naming `what`.
Status SkipValue(ByteReader& in, const ChunkTables& tables, std::uint32_t type, int depth,
                 std::uint64_t* elements);
// Checks a record's PROP section against its layout (every field, in order, filling it exactly).
// `index` is the record's index in the payload, for messages.
Status CheckRecord(const ChunkTables& tables, const Record& record, std::size_t index);

}  // namespace rolly::record

#endif  // ROLLY_RECORD_RECORD_CODEC_H_
