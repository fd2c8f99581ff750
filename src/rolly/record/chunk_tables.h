// The tables of a record chunk (docs/records.md, "The TABLES record"): the names, the saved types
// and the layouts every other record of the chunk refers to by index.
//
// Capture fills a ChunkTables as it meets classes, types and names (each added once, looked up by
// pointer); DecodeTables reads one back from record 0 of a payload, checking every index and
// bound. The numbers of SavedKind are permanent (docs/records.md, "Saved types").
//
// Thread rules: a ChunkTables is used by one thread at a time; decoded tables are immutable
// values and may be read from any thread.

#ifndef ROLLY_RECORD_CHUNK_TABLES_H_
#define ROLLY_RECORD_CHUNK_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/reflect/type.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::record {

// Saved kinds as written in the types table. Permanent numbers; never reused.
enum class SavedKind : std::uint8_t {
  kBool = 0,
  kInt8 = 1,
  kInt16 = 2,
  kInt32 = 3,
  kInt64 = 4,
  kUInt8 = 5,
  kUInt16 = 6,
  kUInt32 = 7,
  kUInt64 = 8,
  kFloat = 9,
  kDouble = 10,
  kString = 11,
  kName = 12,
  kText = 13,
  kGuid = 14,
  kColor = 15,
  kDateTime = 16,
  kVector2f = 17,
  kVector2d = 18,
  kVector3f = 19,
  kVector3d = 20,
  kVector4f = 21,
  kVector4d = 22,
  kQuatf = 23,
  kQuatd = 24,
  kRotatorf = 25,
  kRotatord = 26,
  kTransformf = 27,
  kTransformd = 28,
  kSoftPath = 29,
  kEnum = 30,
  kStruct = 31,
  kVector = 32,
  kArray = 33,
  kSet = 34,
  kMap = 35,
  kOptional = 36,
  kOwned = 37,
  kReference = 38,
  kInstancedStruct = 39,
  kPropertyBag = 40,
};

// Bounds of docs/records.md.
inline constexpr std::size_t kMaxBagLayoutsPerChunk = 4096;
inline constexpr std::size_t kMaxBagProperties = 1024;
inline constexpr std::size_t kMaxRefs = 1u << 22;
inline constexpr int kMaxTextDepth = 32;
inline constexpr std::size_t kMaxNameBytes = 1024;
inline constexpr std::size_t kMaxNames = 1u << 20;
inline constexpr std::size_t kMaxTypes = 1u << 20;
inline constexpr std::size_t kMaxLayouts = 1u << 16;
inline constexpr std::size_t kMaxLayoutFields = 4096;
inline constexpr std::size_t kMaxArrayCount = 1u << 20;
inline constexpr int kMaxTypeDepth = 64;
inline constexpr int kMaxValueDepth = 64;
inline constexpr std::size_t kMaxStringBytes = 1u << 20;
inline constexpr std::uint64_t kMaxElementsPerRecord = 1u << 24;

// The saved kind of a live kind (the numbers are the same by design; see the static_asserts).
SavedKind SavedKindOf(reflect::Kind kind);
// "Int32", "Vector"... for messages.
std::string_view SavedKindName(SavedKind kind);
// Whether this version reads and writes values of `kind`.
bool IsSupported(SavedKind kind);

// One entry of the types table. `a` is the element / key type, the enum's name index or the
// struct's layout index by kind; `b` the mapped type of a map; `count` an array's count.
struct SavedType {
  SavedKind kind = SavedKind::kBool;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint32_t count = 0;
  friend bool operator==(const SavedType&, const SavedType&) = default;
};

struct LayoutField {
  std::uint32_t name = 0;
  std::uint32_t type = 0;
  friend auto operator<=>(const LayoutField&, const LayoutField&) = default;
};

struct Layout {
  std::uint32_t name = 0;
  std::vector<LayoutField> fields;
  friend auto operator<=>(const Layout&, const Layout&) = default;
};

// A property bag's layout: its (name, saved type) list in order.
struct BagLayout {
  std::vector<LayoutField> fields;
  friend bool operator==(const BagLayout&, const BagLayout&) = default;
};

class ChunkTables {
 public:
  // The names table as Names, for comparing with the names of live classes, fields and enums.
  // Tables read from a file intern none of its names (a file would otherwise pin its texts for
  // the process's life, refused or not): a name the process had not interned when the tables
  // were read is None here, as no live class, field or enum bears it. name_text gives the text
  // of every name; ask it for messages, and intern it only to hand a name to the game.
  const std::vector<Name>& names() const { return names_; }
  std::string_view name_text(std::uint32_t index) const;
  const std::vector<SavedType>& types() const { return types_; }
  const std::vector<Layout>& layouts() const { return layouts_; }
  const std::vector<BagLayout>& bag_layouts() const { return bag_layouts_; }
  // Subjects referred to by GUID (references to objects saved in other chunks or files).
  const std::vector<Guid>& refs() const { return refs_; }

  // The index of `name`, adding it when new. InvalidData for a name empty or past 1,024 bytes.
  Result<std::uint32_t> AddName(Name name);
  // The same for a name by its text, interning nothing: a name the process does not have is
  // added as None with its text kept (moving a record read from a file keeps its names so).
  Result<std::uint32_t> AddName(std::string_view text);
  // The index of an equal saved type, adding it when new (its parts must be added already).
  std::uint32_t AddType(const SavedType& type);
  // The index of the saved type of live type `type`, adding it and its parts (structs' layouts
  // too). InvalidData for a kind this version does not save, or a type nested past 64 levels.
  // `whole`: the type as it saves inside a property bag or instanced struct (structs by their
  // WholePlan).
  Result<std::uint32_t> AddLiveType(const reflect::Type& type, bool whole = false);
  // The layout index of class or struct `cls` (its plan's fields, or its WholePlan's when
  // `whole`), adding it when new.
  Result<std::uint32_t> AddLayout(const reflect::ClassInfo& cls, bool whole = false) {
    // Inline for the common case: a capture asks once per record, mostly for a class it met.
    const LayoutHit& hit = layout_hits_[whole ? 1 : 0][LayoutHitSlot(cls)];
    if (hit.cls == &cls) return hit.index;
    return AddLayoutSlow(cls, whole);
  }
  // Appends a layout as it is (its indexes must be valid); used when moving records.
  std::uint32_t AppendLayout(Layout layout);
  // Replaces layout `index` (appended before); used when moving records.
  void SetLayout(std::uint32_t index, Layout layout);
  // The index of a layout equal to `layout`, when there is one.
  std::optional<std::uint32_t> FindLayout(const Layout& layout) const;
  // The bag layout index of a live bag's (name, type) list, adding it (and its types and names)
  // when new. InvalidData past 1,024 properties or 4,096 bag layouts in the chunk.
  Result<std::uint32_t> AddBagLayout(const std::vector<reflect::BagField>& fields);
  // Appends a bag layout as it is; used when moving records. InvalidData past 4,096.
  Result<std::uint32_t> AddSavedBagLayout(const BagLayout& layout);
  // The refs index of subject `id`, adding it when new. InvalidData past 4,194,304 refs.
  Result<std::uint32_t> AddRef(Guid id);

  // A point to roll back to: everything added after it is forgotten by Rollback, so a capture
  // that fails leaves the tables as they were.
  struct Mark {
    std::size_t names, types, layouts, bag_layouts, refs;
  };
  Mark GetMark() const {
    return {names_.size(), types_.size(), layouts_.size(), bag_layouts_.size(), refs_.size()};
  }
  void Rollback(const Mark& mark);

  // The index of `name` when present.
  std::optional<std::uint32_t> FindName(Name name) const;

  // Saved-type nesting depth of type `index` (1 for a scalar or struct).
  int Depth(std::uint32_t index) const { return depths_[index]; }
  // "Vector<Map<Name, Struct Lock>>", for messages: cut with "..." once past kMaxDescription
  // bytes (a file's types may nest deeply enough that the whole text would not fit in memory).
  std::string Describe(std::uint32_t type) const;
  static constexpr std::size_t kMaxDescription = 256;

  // Writes the TABLES record (kind byte included).
  void Encode(ByteWriter& out) const;

 private:
  bool DescribeInto(std::uint32_t type, std::string* out) const;
  friend Result<ChunkTables> DecodeTables(ByteView record);
  Result<std::uint32_t> AddLiveType(const reflect::Type& type, int depth, bool whole);
  std::uint32_t Push(const SavedType& type);

  std::vector<Name> names_;
  // The texts of names that are None in names_, one after another in `unfound_text_`; each
  // entry is (index in names_, end of its text), in index order; and their indexes by text.
  std::string unfound_text_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> unfound_;
  std::unordered_map<std::string, std::uint32_t> unfound_index_;
  // Appends `text`, a name the process does not have, as None.
  std::uint32_t PushUnfound(std::string_view text);
  std::vector<SavedType> types_;
  std::vector<int> depths_;
  std::vector<Layout> layouts_;
  std::map<Layout, std::uint32_t> layout_content_;
  std::vector<BagLayout> bag_layouts_;
  std::vector<Guid> refs_;
  std::map<std::vector<std::pair<Name, const reflect::Type*>>, std::uint32_t> live_bag_index_;
  std::map<std::vector<LayoutField>, std::uint32_t> bag_index_;
  std::unordered_map<Guid, std::uint32_t> ref_index_;
  std::unordered_map<Name, std::uint32_t> name_index_;
  // name_slot_[name.id()]: 1 + the name's index, 0 when not in the table; a look-up without
  // hashing for capture's hot path.
  std::vector<std::uint32_t> name_slot_;
  std::map<std::tuple<std::uint8_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::uint32_t>
      type_index_;
  std::unordered_map<const reflect::Type*, std::uint32_t> live_type_index_[2];
  std::unordered_map<const reflect::ClassInfo*, std::uint32_t> layout_index_[2];
  // AddLayout past its table of hits: the index, or a new layout.
  Result<std::uint32_t> AddLayoutSlow(const reflect::ClassInfo& cls, bool whole);
  // The last layouts AddLayout answered, by class address: a capture asks for one class's layout
  // per record, mostly of a few classes in turn. 32 slots, so that fewer of a world chunk's
  // dozen classes share one than at 8 (where a quarter of the sample world's asks missed).
  // Emptied by Rollback.
  struct LayoutHit {
    const reflect::ClassInfo* cls = nullptr;
    std::uint32_t index = 0;
  };
  static constexpr std::size_t kLayoutHits = 32;
  LayoutHit layout_hits_[2][kLayoutHits] = {};
  static std::size_t LayoutHitSlot(const reflect::ClassInfo& cls) {
    // The address's bits mixed into the top five (class records often sit at a fixed stride).
    static_assert(kLayoutHits == 32);
    const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&cls));
    return static_cast<std::size_t>((address * 0x9E3779B97F4A7C15ull) >> 59);
  }
};

// Reads the TABLES record (its kind byte included). Damaged for bytes not in the one form or past
// a bound; NewerVersion for a saved kind this version does not support.
Result<ChunkTables> DecodeTables(ByteView record);

}  // namespace rolly::record

#endif  // ROLLY_RECORD_CHUNK_TABLES_H_
