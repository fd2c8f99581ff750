// Record chunk payloads in bytes (docs/records.md): a record count, then each record's size and
// bytes; record 0 is the chunk's tables, every other record a kind, a subject, a layout index,
// its sections other than PROP, then PROP. DecodePayload runs the structure check on every
// record: each value is walked by its saved types, owned objects (INLN) and save-extra bytes
// (EXTR) included, and what it would make (owned objects, property bag layouts, bag and
// instanced-struct values, displayed text) is counted against a per-file budget. So a payload that
// decodes encodes back to the same bytes, and its records may be applied without failing part
// way; record kinds and sections this version does not know are kept whole and written back
// unchanged.
//
// Thread rules: pure functions over values; use from any thread. A FileBudget is used by one
// thread at a time.

#ifndef ROLLY_RECORD_RECORD_CODEC_H_
#define ROLLY_RECORD_RECORD_CODEC_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/side_task.h"
#include "rolly/core/status.h"
#include "rolly/record/chunk_tables.h"

namespace rolly::record {

// The record format version of docs/records.md, written in a save's header.
inline constexpr std::uint32_t kRecordFormatVersion = 1;

// Record kinds (docs/records.md, "Record kinds"). Permanent numbers.
enum class RecordKind : std::uint8_t {
  kTables = 0,
  kObject = 1,
  kActor = 2,
  kComponent = 3,
  kPlayer = 4,
};
// Whether this version knows the layout of records of `kind` (1..4).
inline bool IsKnownObjectKind(std::uint8_t kind) { return kind >= 1 && kind <= 4; }

using SectionId = std::array<char, 4>;
inline constexpr SectionId kPropSection = {'P', 'R', 'O', 'P'};
inline constexpr SectionId kExtraSection = {'E', 'X', 'T', 'R'};
inline constexpr SectionId kOwnedSection = {'I', 'N', 'L', 'N'};
inline constexpr std::size_t kMaxSections = 64;
// Whether two section IDs are the same, their four bytes compared as one word (std::array's ==
// calls memcmp, and capture and load compare IDs for every record).
inline bool SameSection(const SectionId& a, const SectionId& b) {
  std::uint32_t x, y;
  std::memcpy(&x, a.data(), sizeof x);
  std::memcpy(&y, b.data(), sizeof y);
  return x == y;
}
// Whether every byte of a section ID is printable ASCII other than space (0x21..0x7E), as
// docs/records.md requires.
inline bool IsPrintableSectionId(const SectionId& id) {
  // One unsigned compare and no branch a byte: every record's sections pass here when a save
  // loads.
  auto printable = [](char c) -> unsigned {
    return static_cast<std::uint8_t>(c - 0x21) < 0x5E ? 1u : 0u;
  };
  return (printable(id[0]) & printable(id[1]) & printable(id[2]) & printable(id[3])) != 0;
}
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

// The bounds counted across every record of one file (docs/records.md, "Bounds"): a load decodes
// every chunk of a file against one budget before anything applies, and a save captures every
// record of a file against one, so a save never writes what its load would refuse.
struct FileBudget {
  static constexpr std::uint64_t kMaxOwned = 262'144;
  static constexpr std::uint64_t kMaxBagLayouts = 4'096;
  static constexpr std::uint64_t kMaxBagBytes = std::uint64_t{256} << 20;
  static constexpr std::uint64_t kMaxTextDisplay = std::uint64_t{1} << 26;
  // One formatted text's display bound (characters, counted as UTF-8 bytes).
  static constexpr std::uint64_t kMaxTextDisplayEach = std::uint64_t{1} << 20;

  std::uint64_t owned = 0;
  std::uint64_t bag_layouts = 0;
  std::uint64_t bag_bytes = 0;
  std::uint64_t text_display = 0;
  friend bool operator==(const FileBudget&, const FileBudget&) = default;
};

// The payload's bytes. InvalidData when a record breaks a rule a reader would refuse it for (no
// PROP section, sections repeated or past 64).
Result<Bytes> EncodePayload(const Payload& payload);
// Reads a payload and runs the structure check on every record, counting against `budget` when
// given (the file's; a fresh one otherwise). Damaged (naming the record and field) for bytes not in
// the one form or past a bound, the budget's included; NewerVersion for a saved kind this version
// does not support. On failure `budget` is as it was.
Result<Payload> DecodePayload(ByteView bytes, FileBudget* budget = nullptr);

// The bytes of one record (the kind byte first), as they sit in a payload.
Result<Bytes> EncodeRecord(const Record& record);

// A payload checked whole, as DecodePayload checks it, and kept as its bytes with where each
// record lies: what a loaded or held save keeps in memory. A record's sections are read in place
// (Find), and the record is decoded again only when asked for (Get). It costs the bytes and 40
// bytes per record, where a decoded payload costs several allocations per record.
class CheckedPayload {
 public:
  CheckedPayload() = default;

  // Checks `bytes` as DecodePayload does (the same statuses, the same budget rules) and keeps
  // them.
  static Result<CheckedPayload> Check(Bytes bytes, FileBudget* budget = nullptr);

  // A check of sections this layer gives no meaning to (a layer above's own, such as the world
  // layer's), made in Check's walk of the records, so each record is read once. For each record
  // of a known kind, `check(i, k, body)` runs for each section ids[k] it has (IDs other than
  // PROP), in `ids` order; `i` is the record's index in the payload (from 1, as messages name
  // records).
  struct SectionCheck {
    std::span<const SectionId> ids;
    std::function<Status(std::size_t i, std::size_t k, ByteView body)> check;
  };
  // Check, then `sections`' check: a payload that fails the structure check fails as Check says
  // (whatever its sections); one that passes fails with the first failure `sections.check`
  // returned, if any (`budget` then left as it was), and the checks after it do not run.
  static Result<CheckedPayload> Check(Bytes bytes, FileBudget* budget,
                                      const SectionCheck& sections);

  // Somewhere to run a task on another thread: queues `task` to run once (a worker pool's Post).
  using Post = SideTask::Post;
  // The smallest payload the check below splits.
  static constexpr std::size_t kSplitBytes = std::size_t{1} << 20;
  // The first half's share of the records, in percent, when the check is split (the second
  // half's thread first walks the first half's record sizes).
  static constexpr std::uint64_t kSplitFirstShare = 52;
  // Check with `sections`, on two threads: for a payload of at least `split_bytes` bytes, the
  // second half of its records is checked in a task handed to `post` while the calling thread
  // checks the first, and the caller runs that task itself when no thread has taken it by then
  // (so it never waits on a queue). The result is Check's exactly: a payload either half refuses,
  // or whose halves' budgets add up past a bound, is checked again in order, so the status and
  // message are those of its first failure. `sections.check` may run on two threads at once,
  // and, for a payload refused, more than once for a record. Without `post`, this is Check.
  static Result<CheckedPayload> Check(Bytes bytes, FileBudget* budget,
                                      const SectionCheck& sections, const Post& post,
                                      std::size_t split_bytes = kSplitBytes);

  // Writes a payload's bytes into `out` (sized by the caller) front to back, telling `arrived(n)`
  // each time the first n bytes are final (n grows; `arrived` does not throw), and returns Ok once
  // all are, or why not (a chunk decoded in steps: format::DecodeChunk).
  using Fill = std::function<Status(std::span<std::uint8_t> out,
                                    const std::function<void(std::size_t)>& arrived)>;
  // Check with `sections` of a payload of `size` bytes that `fill` writes while it is checked.
  // The calling thread runs `fill`; a task handed to `post` checks the records as their bytes
  // arrive; once `fill` is done, the calling thread checks about half of the records still left
  // (and the task's share too, when no thread took the task by then, as the split check does).
  // The result is Check's of the bytes `fill` wrote, exactly: a payload either share refuses, or
  // whose shares' budgets add up past a bound, is checked again in order, so the status is that
  // of its first failure. When `fill` fails, its status. Below `split_bytes`, or without `post`,
  // `fill` runs first and the check with `post` follows. `sections.check` as for the split check.
  // Allocates `size` bytes first: the caller bounds `size` (a file's decoded size is). The task
  // handed to `post` waits for bytes while it runs, so `post` must not wait for the task to end
  // (a pool's Post queues it; one that runs it at once leaves it to the join, as SideTask says).
  static Result<CheckedPayload> CheckWhileFilled(std::uint64_t size, const Fill& fill,
                                                 FileBudget* budget,
                                                 const SectionCheck& sections, const Post& post,
                                                 std::size_t split_bytes = kSplitBytes);

  const ChunkTables& tables() const { return tables_; }
  // The records after the tables; record `i` here is record i + 1 of the payload.
  std::size_t size() const { return spans_.size(); }
  std::uint8_t kind(std::size_t i) const { return spans_[i].kind; }
  Guid subject(std::size_t i) const { return spans_[i].subject; }
  std::uint32_t layout(std::size_t i) const { return spans_[i].layout; }
  // Section `id` of record `i` (PROP included), in place; false when the record has none or is of
  // a kind this version does not know.
  bool Find(std::size_t i, SectionId id, ByteView* out) const;
  // Sections `ids` of record `i` in one walk of its sections (a reader after several of a
  // record's sections reads the record once): bit k of the result is set when the record has
  // section ids[k], which is then viewed in place at out[k]; out[k] is left as it was otherwise.
  // 0 for a record of a kind this version does not know. At most 32 IDs.
  std::uint32_t FindEach(std::size_t i, std::span<const SectionId> ids, ByteView* out) const;
  // The first of the check's own sections (SectionCheck::ids, in that order) that record `i`
  // holds, as its index there; -1 when it holds none of them (or of the first 63), is of a kind
  // this version does not know, or was checked without them. The check noted it, so asking
  // reads none of the record's bytes: a reader sorting records by their sections walks only
  // this table, and reads each record once, when it takes it.
  int FirstChecked(std::size_t i) const { return int{spans_[i].first_checked} - 1; }
  // How many of SectionCheck::ids FirstChecked tells apart.
  static constexpr std::size_t kMaxFirstChecked = 63;
  // The parts an apply reads of record `i` (of a known kind): PROP, and INLN and XTRA when it
  // has them. In `has`, 1 is PROP (always there), 2 INLN and 4 XTRA; the view of a part it lacks
  // is empty; `has` is 0 for a kind this version does not know. The check noted which a record
  // has, so one with neither INLN nor XTRA, as most are, is not walked.
  struct AppliedParts {
    ByteView prop, owned, extra;
    std::uint32_t has = 0;
  };
  AppliedParts PartsToApply(std::size_t i) const;
  // Asks the processor to bring record `i`'s first bytes into cache, ahead of a Find or an
  // apply of it (a reader going through a save's records out of step with their bytes).
  // (Always inlined: GCC 12 drops the calls it has not inlined of a function whose only effect
  // is a prefetch.)
  [[gnu::always_inline]] void Prefetch(std::size_t i) const {
    __builtin_prefetch(data_ + spans_[i].offset);
  }
  // Record `i`, decoded (its sections copied out).
  Record Get(std::size_t i) const;
  // The same into `out`, reusing its buffers (one record decoded after another allocates little).
  void Read(std::size_t i, Record* out) const;
  // The payload's bytes as checked (a chunk written back whole needs no encoding).
  ByteView bytes() const { return ByteView(data_, size_); }

 private:
  struct Span {
    std::uint64_t offset = 0;
    std::uint32_t size = 0;
    std::uint32_t layout = 0;
    std::uint8_t kind = 0;
    // Where the record's parts begin, from its first byte (a record of a known kind): the
    // sections other than PROP (`others` of them) at `head`, PROP at `prop` to the end. Kept by
    // the check, so FindEach reads no count or layout again.
    std::uint8_t others = 0;
    std::uint8_t head = 0;
    // 1: the record has INLN; 2: it has XTRA (PartsToApply walks its sections only then).
    std::uint8_t applied : 2 = 0;
    // FirstChecked's answer plus one (0: none), in the bits the byte has left.
    std::uint8_t first_checked : 6 = 0;
    std::uint32_t prop = 0;
    Guid subject;
  };
  // The split check: true with `out` filled (`budget` charged) when both halves passed, false
  // for anything else (the check in order then says why).
  static bool CheckSplit(const Bytes& bytes, FileBudget* budget, const SectionCheck& sections,
                         const Post& post, CheckedPayload* out);
  // Records [from, to) of a payload of `count`, read from `in`: checked against `budget` and
  // `sections`, their spans (offsets from `base`) appended to `spans`. The first failure of
  // `sections` is returned at once, or, with `section_error`, kept there while the structure
  // check goes on (and `sections` is asked no more).
  // With `gate`, each record waits for its bytes first, and the walk may stop early (Gate).
  class Gate;
  static Status CheckRange(ByteReader& in, std::uint64_t from, std::uint64_t to,
                           std::uint64_t count, const ChunkTables& tables, FileBudget* budget,
                           const SectionCheck& sections, const std::uint8_t* base,
                           std::vector<Span>* spans, Status* section_error = nullptr,
                           Gate* gate = nullptr);
  ByteView RecordBytes(std::size_t i) const {
    return ByteView(data_ + spans_[i].offset, spans_[i].size);
  }
  // Keeps `bytes`, or `filled` (`size` bytes), as the payload's bytes.
  void Keep(Bytes bytes) {
    bytes_ = std::move(bytes);
    data_ = bytes_.data();
    size_ = bytes_.size();
  }
  void Keep(std::unique_ptr<std::uint8_t[]> filled, std::size_t size) {
    filled_ = std::move(filled);
    data_ = filled_.get();
    size_ = size;
  }

  // The payload's bytes, at data_: those Check was handed, or the buffer CheckWhileFilled had
  // filled (made without being zeroed first: the fill writes each byte). Either moves with the
  // payload without moving its bytes.
  Bytes bytes_;
  std::unique_ptr<std::uint8_t[]> filled_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  ChunkTables tables_;
  std::vector<Span> spans_;
};

// The subjects of a payload's records in order, for references by record index (an odd varint
// names record (v - 1) / 2): a decoded payload's records or a checked payload's index, or none (a
// reference by record index then has no subject). Holds a pointer: the records outlive it.
class RecordSubjects {
 public:
  RecordSubjects() = default;
  RecordSubjects(const std::vector<Record>* records) : records_(records) {}  // NOLINT: implicit
  RecordSubjects(const CheckedPayload* payload) : checked_(payload) {}       // NOLINT: implicit

  bool known() const { return records_ != nullptr || checked_ != nullptr; }
  // The records after the tables.
  std::size_t size() const { return records_ ? records_->size() : checked_ ? checked_->size() : 0; }
  // The subject of record `index` (from 1, the tables being record 0); index <= size().
  Guid subject(std::size_t index) const {
    return records_ ? (*records_)[index - 1].subject : checked_->subject(index - 1);
  }

 private:
  const std::vector<Record>* records_ = nullptr;
  const CheckedPayload* checked_ = nullptr;
};

// The bytes of a value of a fixed-size saved kind (Float, Guid, Vector3d...); 0 for other kinds.
std::size_t FixedValueSize(SavedKind kind);

// Moves past one value of saved type `type` that the structure check accepted already (applying
// skips values this way). Damaged only when the bytes are not what the check accepted. Owned
// values met are counted in `*owned` (the INLN entries they claim, in order).
Status SkipCheckedValue(ByteReader& in, const ChunkTables& tables, std::uint32_t type,
                        std::uint64_t* owned);

// The structure check of one record (docs/records.md, "The structure check"): PROP against its
// layout, INLN's entries against theirs, EXTR's tagged values, every bound, with what it would make
// counted against `budget` (left as it was on failure). `index` is the record's index in its
// payload and `record_count` the payload's count of records (tables included), for references by
// record index. Damaged naming the record and the field.
Status CheckRecord(const ChunkTables& tables, const Record& record, std::size_t index,
                   std::size_t record_count, FileBudget* budget);
// Charges the chunk-level parts of `tables` (its bag layouts) to `budget`; Damaged past a bound.
Status ChargeTables(const ChunkTables& tables, FileBudget* budget);

namespace record_internal {

// A varint at `p` of bytes the structure check accepted (so whole, in its shortest form); `p`
// moves past it.
inline std::uint64_t CheckedVarint(const std::uint8_t*& p) {
  std::uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const std::uint8_t b = *p++;
    v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if (b < 0x80) return v;
  }
}

}  // namespace record_internal

// Inline: a load runs it for each record of its world, with a few IDs known where it is called.
inline std::uint32_t CheckedPayload::FindEach(std::size_t i, std::span<const SectionId> ids,
                                              ByteView* out) const {
  const Span& span = spans_[i];
  if (!IsKnownObjectKind(span.kind)) return 0;
  // The record was checked (its bytes cannot change since), and its span says where its
  // sections other than PROP begin (each an ID, a size and bytes) and where PROP does. Read
  // without the bounds checks of a ByteReader.
  const std::uint8_t* const record = data_ + span.offset;
  const std::uint8_t* p = record + span.head;
  std::uint32_t found = 0;
  for (std::uint32_t s = 0; s < span.others; ++s) {
    SectionId id;
    std::memcpy(id.data(), p, 4);
    p += 4;
    const auto size = static_cast<std::size_t>(record_internal::CheckedVarint(p));
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (SameSection(id, ids[k])) {
        out[k] = ByteView(p, size);
        found |= std::uint32_t{1} << k;
      }
    }
    p += size;
  }
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (SameSection(ids[k], kPropSection)) {
      out[k] = ByteView(record + span.prop, span.size - span.prop);
      found |= std::uint32_t{1} << k;
    }
  }
  return found;
}

inline CheckedPayload::AppliedParts CheckedPayload::PartsToApply(std::size_t i) const {
  const Span& span = spans_[i];
  AppliedParts parts;
  if (!IsKnownObjectKind(span.kind)) return parts;
  if (span.applied != 0) {
    static constexpr SectionId kOwnedAndExtra[] = {kOwnedSection, kExtraSection};
    ByteView found[2];
    parts.has = FindEach(i, kOwnedAndExtra, found) << 1;
    parts.owned = found[0];
    parts.extra = found[1];
  }
  parts.prop = ByteView(data_ + span.offset + span.prop, span.size - span.prop);
  parts.has |= 1;
  return parts;
}

}  // namespace rolly::record

#endif  // ROLLY_RECORD_RECORD_CODEC_H_
