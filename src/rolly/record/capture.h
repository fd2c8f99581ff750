// Capturing objects into records of a chunk (docs/records.md).
//
// A ChunkWriter builds one record chunk's payload: the chunk's tables, and its records encoded one
// after another into one buffer. A Capturer turns live objects into records of a ChunkWriter
// through their classes' plans: PROP with every saved field in plan order, INLN with the objects
// they own (their classes saved with them), EXTR with the save-extra hooks' bytes. Values are
// written straight from the fields' addresses by their descriptors, or from a copy of them
// (ObjectCopies: a capture in two halves).
//
// What a load would refuse, a capture refuses (InvalidData, naming the class and field): strings
// past 1,048,576 bytes or not UTF-8, enum numbers without a registered name, values nested past 64
// levels, texts nested past 32, and every bound of the file's budget. A refused capture leaves the
// chunk, its tables and the budget as they were. To be sure of that, a record holding a text, an
// owned object, a property bag or an instanced struct is checked after it is written by the same
// structure check a load runs, against a copy of the budget.
//
// Hooks (docs/records.md, "Hooks"): Capture (and Copy) runs OnPreSave on the object before
// reading it, and Capture on each object it owns before reading that one; RunSavedHooks runs
// OnSaved on the objects captured, owned ones too, and is the caller's to call once the file
// holding the records was written (never after a failed write). Only objects whose class (or a
// base) has an OnSaved hook are remembered for it, by address: a caller whose objects may go
// before the write ends says which captures are still there (RunSavedHooks' `keep`).
//
// Thread rules: a ChunkWriter and its Capturer are used by one thread at a time; captured objects
// must not change during Capture or Copy (their hooks may change them before).

#ifndef ROLLY_RECORD_CAPTURE_H_
#define ROLLY_RECORD_CAPTURE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/status.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/links.h"
#include "rolly/record/record_codec.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::record {

class ChunkWriter {
 public:
  // `budget` (the file's, may be null for none) must outlive the writer.
  explicit ChunkWriter(FileBudget* budget = nullptr) : budget_(budget) {}

  ChunkTables& tables() { return tables_; }
  const ChunkTables& tables() const { return tables_; }
  FileBudget* budget() const { return budget_; }
  // The number of records added (the tables record not counted); the next record's index in the
  // payload is record_count() + 1.
  std::uint32_t record_count() const { return count_; }

  // Appends a record as it is (one kept for an absent object, or moved from another chunk with
  // MoveRecord into these tables): runs the structure check on it against the file's budget (and
  // charges the tables' new bag layouts), so a chunk never holds what its load would refuse.
  // InvalidData, adding and charging nothing, when it breaks a rule or a bound.
  Status Add(const Record& record);
  // Appends a record's encoded bytes (kind byte first) as they are: no check (Add checks).
  void AddEncoded(ByteView record);
  // The payload: count, tables, records. The writer is empty afterwards.
  Bytes Finish();

 private:
  friend class Capturer;
  // Counts a record of `size` bytes and writes its size into the current block (a new one when
  // it lacks room), which it returns: the caller appends exactly `size` bytes to it.
  ByteSink& BeginRecord(std::size_t size);
  // Checks `record` against a copy of the budget charged with the tables' bag layouts not charged
  // yet; on success commits the copy.
  Status CheckAndCharge(const Record& record, std::uint32_t index);

  // The records are kept in blocks of kBlock bytes (a longer record gets a block of its own), so
  // the chunk grows without copies and without room reserved ahead; Finish joins them into the
  // payload, letting each block go once copied.
  static constexpr std::size_t kBlock = std::size_t{1} << 18;
  FileBudget* budget_;
  ChunkTables tables_;
  std::vector<ByteSink> blocks_;
  std::size_t records_size_ = 0;
  std::uint32_t count_ = 0;
  std::size_t charged_bag_layouts_ = 0;
};

// Sections a layer above adds to a record, already in the record's form (docs/records.md): each a
// 4-byte ID, its size as a varint, its bytes; `count` of them, nothing after. AppendSection, or
// BeginSection and EndSection, write them.
struct EncodedSections {
  ByteView bytes;
  std::uint32_t count = 0;
};
// Appends section `id` holding `bytes` to `out`, in that form.
void AppendSection(ByteSink* out, SectionId id, ByteView bytes);
// The same, for a section written in place: BeginSection writes the ID and room for the size and
// returns where the section begins; the caller appends the section's bytes to `out`; EndSection
// fills the size in (moving the bytes up when the size takes more than one byte).
// Inline: a save writes a section or two for each of its subjects this way.
inline std::size_t BeginSection(ByteSink* out, SectionId id) {
  const std::size_t begun = out->size();
  std::uint8_t* p = out->Extend(5);
  std::memcpy(p, id.data(), 4);
  p[4] = 0;  // the size's first byte, filled in by EndSection
  return begun;
}
inline void EndSection(ByteSink* out, std::size_t begun) {
  const std::size_t body = begun + 5;
  const std::size_t size = out->size() - body;
  const std::size_t room = VarintSize(size);
  if (room > 1) {
    // A section of 128 bytes or more: its bytes move up to make room for the longer size.
    out->Extend(room - 1);
    std::uint8_t* p = out->data();
    std::memmove(p + body + room - 1, p + body, size);
  }
  std::uint8_t* p = out->data() + begun + 4;
  std::uint64_t v = size;
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p = static_cast<std::uint8_t>(v);
}

// Objects captured in two halves (Capturer::Copy, then Capturer::CaptureCopy), so that the thread
// that owns them only copies: each copy holds the bytes of the object's saved fields as they lie
// in the object, then its strings, its vectors' elements and its references (located, or only
// named when the links locate in two steps: ObjectLinks::Identify), until its record is written
// from it on any thread, byte for byte the record Capture would have written when the copy was
// made. Records are written from the copies in the order the copies were made; a block of copies
// is let go of once every copy in it was passed.
//
// A copy reads the object's saved fields and nothing else of it; each whole, so the members of a
// saved struct (and of a saved vector's elements) that are not saved are read too.
//
// Only objects of a plain class are copied (CanCopy): no alignment past 8 bytes, structs nested
// at most 32 deep, at most 64 KiB of fields held in place, and every saved field (at any depth of
// structs) a bool, number, GUID, colour, time, math type, name, enum, string, soft path or
// reference, a struct of those, or a vector or array whose elements are bools, numbers, GUIDs,
// colours, times, math types, names, enums or structs of those (no strings, vectors or references
// in elements). Texts, maps, sets, optionals, owned objects, instanced structs and property bags
// are captured whole by Capture. A save-extra hook runs at the copy, its bytes kept with it.
//
// Thread rules: used by one thread at a time (copies made on one thread are written on another
// once handed over with the usual happens-before, such as a queue or a join).
class ObjectCopies {
 public:
  ObjectCopies();
  ~ObjectCopies();
  ObjectCopies(const ObjectCopies&) = delete;
  ObjectCopies& operator=(const ObjectCopies&) = delete;

  // Whether objects of `cls` (as `cls`) can be copied. Found once per class.
  bool CanCopy(const reflect::ClassInfo& cls) { return ProgramOf(cls) != nullptr; }
  // The copies made whose records were not written yet.
  std::size_t pending() const { return made_ - passed_; }

 private:
  friend class Capturer;
  struct Program;
  // Copies are kept in blocks of bytes (new[] aligns them past the copies' 8 bytes).
  struct Block {
    std::unique_ptr<std::byte[]> bytes;
    std::size_t size = 0;
    std::size_t used = 0;
    std::uint8_t* data() const { return reinterpret_cast<std::uint8_t*>(bytes.get()); }
  };

  // How objects of `cls` are copied; null when they are not. Inline: a save asks once per subject
  // when it lists them, and again when it copies them. Kept in pairs of slots, so that two classes
  // whose hashes meet (more likely than not among a dozen classes in 64 slots) do not push each
  // other out at every subject.
  const Program* ProgramOf(const reflect::ClassInfo& cls) {
    const std::uint64_t hash = reinterpret_cast<std::uintptr_t>(&cls) * 0x9E3779B97F4A7C15ull;
    const std::size_t slot = static_cast<std::size_t>(hash >> 58);
    if (recent_cls_[slot] == &cls) return recent_[slot];
    if (recent_cls_[slot ^ 1] == &cls) return recent_[slot ^ 1];
    return FindProgram(cls, slot);
  }
  // Finds or makes the program, kept at `slot` (or its pair's other slot, when that is free).
  const Program* FindProgram(const reflect::ClassInfo& cls, std::size_t slot);
  // Room for a copy of `size` bytes (a multiple of 8) after the last; nothing is counted as used
  // until Commit.
  // A copy past 4 GiB always gets a block of its own, which it fills (its head cannot hold its
  // size: CaptureCopy passes it by going to its block's end).
  std::uint8_t* Room(std::size_t size) {
    if (size > UINT32_MAX || blocks_.empty() || blocks_.back().size - blocks_.back().used < size) {
      NewBlock(size);
    }
    return blocks_.back().data() + blocks_.back().used;
  }
  void Commit(std::size_t size) {
    blocks_.back().used += size;
    ++made_;
  }
  void NewBlock(std::size_t size);
  // The oldest copy not passed (there must be one); Pass goes past it, letting go of each block
  // once every copy in it is passed.
  const std::uint8_t* Oldest();
  void Pass(std::size_t size);

  std::vector<Block> blocks_;
  // The oldest copy not passed: in block read_block_, at read_at_.
  std::size_t read_block_ = 0;
  std::size_t read_at_ = 0;
  std::size_t made_ = 0;
  std::size_t passed_ = 0;
  std::vector<std::unique_ptr<Program>> programs_;
  // The programs found last, in 64 slots by a hash of their class's address (null for a class
  // not copied), paired as slot and slot ^ 1.
  const reflect::ClassInfo* recent_cls_[64] = {};
  const Program* recent_[64] = {};
};

class Capturer {
 public:
  // `links` resolves references (null: a non-null reference is refused with InvalidData). Both
  // must outlive the capturer.
  explicit Capturer(ChunkWriter* chunk, ObjectLinks* links = nullptr)
      : chunk_(chunk), links_(links) {}

  // Runs OnPreSave, then captures `object` (an object of `cls`, as `cls`) as a record of `kind`
  // for `subject`, appended to the chunk. Returns its index in the payload.
  // `sections`: more sections for the record (a layer above's own, such as an actor's placement),
  // written as they are; their IDs must differ from PROP, INLN, EXTR and each other.
  Result<std::uint32_t> Capture(const reflect::ClassInfo& cls, void* object, Guid subject,
                                RecordKind kind, const std::vector<Section>* sections = nullptr);
  // The same, with the added sections already encoded (copied once, into the chunk); InvalidInput
  // when `more` is not `count` sections in the record's form, an ID is not printable (0x21 to
  // 0x7E), repeats or is PROP, INLN or EXTR, or there are more than 61.
  Result<std::uint32_t> Capture(const reflect::ClassInfo& cls, void* object, Guid subject,
                                RecordKind kind, const EncodedSections& more);
  // The first half of a capture in two halves (ObjectCopies), on the thread that may read
  // `object` (of `cls`): runs OnPreSave, then the save-extra hooks, copies what the record needs
  // into `copies` (references located through the links now, or named by Identify to be located
  // when the record is written), and remembers the object for OnSaved as Capture does. A
  // save-extra hook's failure is returned as it is, as Capture returns it.
  // InvalidInput for a class copies->CanCopy refuses. InvalidData, copying nothing, for a string
  // Capture would refuse, vectors holding more elements than a record holds, or a reference set
  // when the capturer has no links, with Capture's message. What else Capture would refuse (an
  // enum number without a name, arrays' elements past that bound, a bound of the chunk's tables)
  // CaptureCopy refuses.
  Status Copy(const reflect::ClassInfo& cls, void* object, ObjectCopies* copies);
  // The second half, on any thread: writes the record of the oldest copy in `copies` not written
  // yet, for `subject`, appended to the chunk as Capture would have written it when the copy was
  // made (`more` as for Capture); no hook runs. A reference the copy holds named is located now,
  // through this capturer's links (LocateIdentified; InvalidData, with the message Capture gives
  // for a reference set without links, when it has none). The copy is passed, refused or not (a
  // block of copies all passed is let go of at a later call). Returns the record's index in the
  // payload. InvalidInput when no copy is pending, or as Capture for `kind` and `more`; a refusal
  // leaves the chunk as it was.
  Result<std::uint32_t> CaptureCopy(ObjectCopies* copies, Guid subject, RecordKind kind,
                                    const EncodedSections& more);
  // Runs OnSaved on the objects captured since the last call (owned objects first, then their
  // owner, in capture order) and forgets them. Call only after the write succeeded. `keep` (may be
  // null: all are kept) is asked right before each capture's hooks run, with its number among the
  // captures that remembered objects (from 0, in capture order; see last_remembered); false skips
  // that capture's hooks. A hook may destroy objects of captures not run yet: `keep` sees that.
  void RunSavedHooks(const std::function<bool(std::size_t)>& keep = nullptr);
  // Forgets the captured objects without running hooks (the write failed).
  void ForgetCaptured() {
    captured_.clear();
    ends_.clear();
  }
  // Whether the last successful Capture or Copy remembered objects for OnSaved (its object or one
  // it owns has the hook): a caller that may lose objects before the write ends notes which.
  bool last_remembered() const { return last_remembered_; }

 private:
  // Notes `object` and the objects it owns (in INLN order) for OnSaved, as a capture does.
  void Remember(const reflect::ClassInfo& cls, void* object,
                const std::vector<reflect::ObjectRef>& owned);

  ChunkWriter* chunk_;
  ObjectLinks* links_;
  // The objects with OnSaved hooks, in the order their hooks run.
  std::vector<reflect::ObjectRef> captured_;
  // For each Capture that remembered objects: where they end in captured_.
  std::vector<std::uint32_t> ends_;
  bool last_remembered_ = false;
  // Buffers reused from one capture to the next: PROP, added sections.
  ByteSink scratch_;
  ByteSink more_scratch_;
};

// The record of `object` with no hooks run and no links (a non-null reference is refused), its
// layout, types and names added to `tables`. For tools and tests; games capture through Capturer.
Result<Record> CaptureObject(const reflect::ClassInfo& cls, const void* object, Guid subject,
                             RecordKind kind, ChunkTables* tables);

}  // namespace rolly::record

#endif  // ROLLY_RECORD_CAPTURE_H_
