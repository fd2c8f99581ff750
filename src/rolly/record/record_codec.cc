#include "rolly/record/record_codec.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "rolly/core/utf8.h"
#include "rolly/record/internal/check_program.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::record {
namespace {

// ByteReader's VarintAtMost, SignedVarint and LengthPrefixed, with the varint read through the
// inline Varint (its one-byte form needs no call): the same values and the same refusals. A load
// reads every value, record size and section header of a save through these.
inline bool VarintUpTo(ByteReader& in, std::uint64_t max, std::uint64_t* v) {
  return in.Varint(v) && *v <= max;
}
inline bool ReadSigned(ByteReader& in, std::int64_t* v) {
  std::uint64_t u = 0;
  if (!in.Varint(&u)) return false;
  *v = ZigZagDecode(u);
  return true;
}
inline bool ReadSizedUpTo(ByteReader& in, std::uint64_t max, ByteView* out) {
  std::uint64_t n = 0;
  return VarintUpTo(in, max, &n) && in.Raw(static_cast<std::size_t>(n), out);
}
// LengthPrefixed(in.remaining(), out).
inline bool ReadSized(ByteReader& in, ByteView* out) {
  return ReadSizedUpTo(in, in.remaining(), out);
}

bool ValidSectionId(const SectionId& id) { return IsPrintableSectionId(id); }

std::string IdText(const SectionId& id) { return std::string(id.data(), id.size()); }

// The section rules of docs/records.md over `n` section IDs, `id(k)` the k-th.
template <typename IdAt>
Status CheckSectionIds(std::size_t n, IdAt&& id) {
  if (n == 0 || n > kMaxSections) {
    return InvalidDataError("a record has no sections or more than 64");
  }
  bool prop = false;
  for (std::size_t i = 0; i < n; ++i) {
    const SectionId& at = id(i);
    if (!ValidSectionId(at)) return InvalidDataError("a section ID is not printable");
    for (std::size_t j = 0; j < i; ++j) {
      if (SameSection(id(j), at)) {
        return InvalidDataError("section " + IdText(at) + " appears twice");
      }
    }
    prop = prop || SameSection(at, kPropSection);
  }
  if (!prop) return InvalidDataError("a record has no PROP section");
  return OkStatus();
}

Status CheckSections(const Record& r) {
  return CheckSectionIds(r.sections.size(),
                         [&r](std::size_t k) -> const SectionId& { return r.sections[k].id; });
}

Status Bad(std::string_view what) { return DamagedError(what); }

// Fixed byte sizes of the fixed-size saved kinds; 0 for the others.
std::size_t FixedSize(SavedKind k) {
  switch (k) {
    case SavedKind::kFloat:
      return 4;
    case SavedKind::kDouble:
      return 8;
    case SavedKind::kGuid:
      return 16;
    case SavedKind::kColor:
      return 16;
    case SavedKind::kDateTime:
      return 8;
    case SavedKind::kVector2f:
      return 8;
    case SavedKind::kVector2d:
      return 16;
    case SavedKind::kVector3f:
      return 12;
    case SavedKind::kVector3d:
      return 24;
    case SavedKind::kVector4f:
      return 16;
    case SavedKind::kVector4d:
      return 32;
    case SavedKind::kQuatf:
      return 16;
    case SavedKind::kQuatd:
      return 32;
    case SavedKind::kRotatorf:
      return 12;
    case SavedKind::kRotatord:
      return 24;
    case SavedKind::kTransformf:
      return 40;
    case SavedKind::kTransformd:
      return 80;
    default:
      return 0;
  }
}

}  // namespace

std::size_t FixedValueSize(SavedKind kind) { return FixedSize(kind); }

const Section* Record::Find(SectionId id) const {
  for (const Section& s : sections) {
    if (SameSection(s.id, id)) return &s;
  }
  return nullptr;
}

namespace {

constexpr std::uint64_t kSizeCap = std::uint64_t{1} << 40;

std::uint64_t AddSat(std::uint64_t a, std::uint64_t b) { return std::min(kSizeCap, a + b); }
std::uint64_t MulSat(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSizeCap / b ? kSizeCap : a * b;
}

// Walks values by their saved types: the structure check (`budget` given) and the skip of values
// already checked (no budget). Every rule of docs/records.md "Values" is enforced in both modes.
class Walker {
 public:
  Walker(const ChunkTables& tables, std::size_t record_count, FileBudget* budget)
      : tables_(tables), record_count_(record_count), budget_(budget) {}

  std::uint64_t owned() const { return owned_; }

  Status Value(ByteReader& in, std::uint32_t type, int depth) {
    if (depth > kMaxValueDepth) return Bad("a value nests past 64 levels");
    const SavedType& t = tables_.types()[type];
    if (std::size_t fixed = FixedSize(t.kind)) {
      return in.Skip(fixed) ? OkStatus() : Bad("truncated value");
    }
    std::uint64_t u = 0;
    std::int64_t s = 0;
    switch (t.kind) {
      case SavedKind::kBool: {
        std::uint8_t b = 0;
        if (!in.U8(&b) || b > 1) return Bad("a bool is not 0 or 1");
        return OkStatus();
      }
      case SavedKind::kInt8:
      case SavedKind::kInt16:
      case SavedKind::kInt32:
      case SavedKind::kInt64: {
        if (!ReadSigned(in, &s)) return Bad("bad signed varint");
        int bits = t.kind == SavedKind::kInt8    ? 8
                   : t.kind == SavedKind::kInt16 ? 16
                   : t.kind == SavedKind::kInt32 ? 32
                                                 : 64;
        if (bits < 64 &&
            (s < -(std::int64_t{1} << (bits - 1)) || s >= (std::int64_t{1} << (bits - 1)))) {
          return Bad("an integer is out of its type's range");
        }
        return OkStatus();
      }
      case SavedKind::kUInt8:
      case SavedKind::kUInt16:
      case SavedKind::kUInt32:
      case SavedKind::kUInt64: {
        std::uint64_t max = t.kind == SavedKind::kUInt8    ? 0xFF
                            : t.kind == SavedKind::kUInt16 ? 0xFFFF
                            : t.kind == SavedKind::kUInt32 ? 0xFFFFFFFFu
                                                           : ~std::uint64_t{0};
        return VarintUpTo(in, max, &u) ? OkStatus() : Bad("an unsigned integer is out of range");
      }
      case SavedKind::kString:
      case SavedKind::kSoftPath:
        return String(in, nullptr);
      case SavedKind::kName:
        if (!VarintUpTo(in, tables_.names().size(), &u))
          return Bad("a name index is past the names table");
        return OkStatus();
      case SavedKind::kEnum:
        if (tables_.names().empty() || !VarintUpTo(in, tables_.names().size() - 1, &u)) {
          return Bad("a name index is past the names table");
        }
        return OkStatus();
      case SavedKind::kText: {
        std::uint64_t display = 0;
        ROLLY_RETURN_IF_ERROR(Text(in, 1, &display));
        return OkStatus();
      }
      case SavedKind::kStruct:
        return Fields(in, tables_.layouts()[t.a].fields, depth + 1);
      case SavedKind::kOptional: {
        std::uint8_t b = 0;
        if (!in.U8(&b) || b > 1) return Bad("an optional's flag is not 0 or 1");
        return b ? Value(in, t.a, depth + 1) : OkStatus();
      }
      case SavedKind::kArray:
        return Elements(in, t, t.count, depth);
      case SavedKind::kVector:
      case SavedKind::kSet:
      case SavedKind::kMap:
        if (!in.Varint(&u)) return Bad("bad element count");
        return Elements(in, t, u, depth);
      case SavedKind::kOwned: {
        std::uint8_t b = 0;
        if (!in.U8(&b) || b > 1) return Bad("an owned object's flag is not 0 or 1");
        if (b == 1) ++owned_;
        return OkStatus();
      }
      case SavedKind::kReference: {
        if (!in.Varint(&u)) return Bad("bad reference");
        if (u == 0) return OkStatus();
        if (u % 2 == 1) {
          std::uint64_t record = (u - 1) / 2;
          if (record == 0 || record >= record_count_) {
            return Bad("a reference names a record past the payload");
          }
        } else if ((u - 2) / 2 >= tables_.refs().size()) {
          return Bad("a reference is past the refs table");
        }
        return OkStatus();
      }
      case SavedKind::kInstancedStruct: {
        if (!in.VarintAtMost(tables_.layouts().size(), &u)) {
          return Bad("an instanced struct's layout is past the table");
        }
        if (u == 0) return OkStatus();
        const std::uint32_t layout = static_cast<std::uint32_t>(u - 1);
        ROLLY_RETURN_IF_ERROR(ChargeBag(LayoutSize(layout, 0)));
        ++in_bag_;
        Status st = Fields(in, tables_.layouts()[layout].fields, depth + 1);
        --in_bag_;
        return st;
      }
      case SavedKind::kPropertyBag: {
        if (tables_.bag_layouts().empty() ||
            !in.VarintAtMost(tables_.bag_layouts().size() - 1, &u)) {
          return Bad("a property bag's layout is past the table");
        }
        const auto& fields = tables_.bag_layouts()[u].fields;
        std::uint64_t size = 0;
        for (const LayoutField& f : fields) size = AddSat(size, TypeSize(f.type, 0));
        ROLLY_RETURN_IF_ERROR(ChargeBag(size));
        ++in_bag_;
        Status st = Fields(in, fields, depth + 1);
        --in_bag_;
        return st;
      }
      default:
        return NewerVersionError("saved kind not supported by this version");
    }
  }

  Status Fields(ByteReader& in, const std::vector<LayoutField>& fields, int depth) {
    for (const LayoutField& f : fields) {
      Status st = Value(in, f.type, depth);
      if (!st.ok()) {
        return Status(st.code(), (depth == 1 ? "field " : "member ") +
                                     std::string(tables_.name_text(f.name)) + ": " +
                                     std::string(st.message()));
      }
    }
    return OkStatus();
  }

  // Charges the displayed size of a formatted text (one with arguments) to the budget.
  Status ChargeText(std::uint64_t display) {
    if (display > FileBudget::kMaxTextDisplayEach) {
      return Bad("a formatted text would display more than 1,048,576 characters");
    }
    if (budget_ != nullptr) {
      if (display > FileBudget::kMaxTextDisplay - budget_->text_display) {
        return Bad("the file's texts would display more than 67,108,864 characters");
      }
      budget_->text_display += display;
    }
    return OkStatus();
  }

  Status ChargeOwned(std::uint64_t count) {
    if (budget_ == nullptr) return OkStatus();
    if (count > FileBudget::kMaxOwned - budget_->owned) {
      return Bad("more than 262,144 owned objects in the file");
    }
    budget_->owned += count;
    return OkStatus();
  }

 private:
  static Status Bad(std::string_view what) { return DamagedError(what); }

  Status String(ByteReader& in, std::uint64_t* size) {
    ByteView bytes;
    const bool read = ReadSizedUpTo(in, kMaxStringBytes, &bytes);
    const std::string_view text = AsChars(bytes);
    if (!read || !IsValidUtf8(text) || text.find('\0') != std::string_view::npos) {
      return Bad("a string is not UTF-8 of at most 1,048,576 bytes");
    }
    if (size != nullptr) *size = text.size();
    if (in_bag_ > 0) return ChargeBag(text.size());
    return OkStatus();
  }

  // A text at nesting level `level`; `display` gets the most characters it may display.
  Status Text(ByteReader& in, int level, std::uint64_t* display) {
    if (level > kMaxTextDepth) return Bad("a text nests past 32 levels");
    std::uint64_t source = 0, args = 0;
    ROLLY_RETURN_IF_ERROR(String(in, &source));
    ROLLY_RETURN_IF_ERROR(String(in, nullptr));
    ROLLY_RETURN_IF_ERROR(String(in, nullptr));
    if (!in.VarintAtMost(in.remaining(), &args)) return Bad("bad text argument count");
    ROLLY_RETURN_IF_ERROR(CountElements(args));
    std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < args; ++i) {
      std::uint64_t d = 0;
      ROLLY_RETURN_IF_ERROR(Text(in, level + 1, &d));
      sum = AddSat(sum, d);
    }
    // Any translation of a pattern of `source` characters may place each argument at each of them.
    *display = args == 0 ? source : AddSat(source, MulSat(source, sum));
    if (args > 0 && level == 1) return ChargeText(*display);
    if (*display > FileBudget::kMaxTextDisplayEach) {
      return Bad("a formatted text would display more than 1,048,576 characters");
    }
    return OkStatus();
  }

  Status CountElements(std::uint64_t n) {
    if (n > kMaxElementsPerRecord - elements_) {
      return Bad("more than 16,777,216 elements in a record");
    }
    elements_ += n;
    return OkStatus();
  }

  Status Elements(ByteReader& in, const SavedType& t, std::uint64_t n, int depth) {
    ROLLY_RETURN_IF_ERROR(CountElements(n));
    if (in_bag_ > 0 && t.kind != SavedKind::kArray) {
      // Elements inside bags and instanced structs count at their full size (the array's are in
      // its own size already).
      std::uint64_t each = TypeSize(t.a, 0);
      if (t.kind == SavedKind::kMap) each = AddSat(each, AddSat(TypeSize(t.b, 0), 32));
      if (t.kind == SavedKind::kSet) each = AddSat(each, 32);
      ROLLY_RETURN_IF_ERROR(ChargeBag(MulSat(n, each)));
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      ROLLY_RETURN_IF_ERROR(Value(in, t.a, depth + 1));
      if (t.kind == SavedKind::kMap) ROLLY_RETURN_IF_ERROR(Value(in, t.b, depth + 1));
    }
    return OkStatus();
  }

  Status ChargeBag(std::uint64_t bytes) {
    if (budget_ == nullptr) return OkStatus();
    if (bytes > FileBudget::kMaxBagBytes - budget_->bag_bytes) {
      return Bad("more than 256 MiB of property bag and instanced struct values in the file");
    }
    budget_->bag_bytes += bytes;
    return OkStatus();
  }

  // The bytes a value of saved type `type` takes in memory, as docs/records.md counts them.
  std::uint64_t TypeSize(std::uint32_t type, int depth) {
    if (depth > kMaxValueDepth) return kSizeCap;
    const SavedType& t = tables_.types()[type];
    if (std::size_t fixed = FixedSize(t.kind)) return fixed;
    switch (t.kind) {
      case SavedKind::kBool:
      case SavedKind::kInt8:
      case SavedKind::kUInt8:
        return 1;
      case SavedKind::kInt16:
      case SavedKind::kUInt16:
        return 2;
      case SavedKind::kInt32:
      case SavedKind::kUInt32:
        return 4;
      case SavedKind::kInt64:
      case SavedKind::kUInt64:
      case SavedKind::kName:
      case SavedKind::kEnum:
      case SavedKind::kOwned:
      case SavedKind::kReference:
        return 8;
      case SavedKind::kString:
      case SavedKind::kSoftPath:
        return 32;
      case SavedKind::kText:
        return 120;
      case SavedKind::kStruct:
        return LayoutSize(t.a, depth + 1);
      case SavedKind::kArray:
        return MulSat(t.count, TypeSize(t.a, depth + 1));
      case SavedKind::kOptional:
        return AddSat(TypeSize(t.a, depth + 1), 8);
      case SavedKind::kVector:
        return 24;
      case SavedKind::kInstancedStruct:
        return 16;
      default:  // set, map, property bag
        return 48;
    }
  }

  // `depth` counts levels as the walk does (a struct's fields one level below it), so a value
  // the walk accepts is never refused for its size.
  std::uint64_t LayoutSize(std::uint32_t layout, int depth) {
    if (depth > kMaxValueDepth) return kSizeCap;
    if (layout_sizes_.empty()) layout_sizes_.resize(tables_.layouts().size(), 0);
    if (layout_sizes_[layout] != 0) return layout_sizes_[layout];
    std::uint64_t size = 0;
    for (const LayoutField& f : tables_.layouts()[layout].fields) {
      size = AddSat(size, TypeSize(f.type, depth));
    }
    size = std::max<std::uint64_t>(size, 1);
    layout_sizes_[layout] = size;
    return size;
  }

  const ChunkTables& tables_;
  std::size_t record_count_;
  FileBudget* budget_;
  std::uint64_t elements_ = 0;
  std::uint64_t owned_ = 0;
  int in_bag_ = 0;
  // Each layout's LayoutSize by index, 0 until counted (a size is at least 1); made when first
  // needed (most records need none).
  std::vector<std::uint64_t> layout_sizes_;
};

}  // namespace

Status SkipCheckedValue(ByteReader& in, const ChunkTables& tables, std::uint32_t type,
                        std::uint64_t* owned) {
  Walker walker(tables, kMaxRecords + 1, nullptr);
  ROLLY_RETURN_IF_ERROR(walker.Value(in, type, 1));
  *owned += walker.owned();
  return OkStatus();
}

Status ChargeTables(const ChunkTables& tables, FileBudget* budget) {
  if (budget == nullptr) return OkStatus();
  if (tables.bag_layouts().size() > FileBudget::kMaxBagLayouts - budget->bag_layouts) {
    return DamagedError("more than 4,096 property bag layouts in the file");
  }
  budget->bag_layouts += tables.bag_layouts().size();
  return OkStatus();
}

namespace {

// The parts of a record the structure check reads, viewed where they sit (a Record's sections,
// or a payload's bytes); a null view: the record has no such section.
struct CheckedParts {
  std::uint8_t kind = 0;
  std::uint32_t layout = 0;
  const ByteView* prop = nullptr;
  const ByteView* extra = nullptr;
  const ByteView* owned = nullptr;
};

// CheckRecord over a record's parts. The record's name for messages ("record 12") is made only
// when a message is.
// `programs` (may be null) passes the values of a record with no INLN section without walking
// them, when its layout has a program; the rest is checked as usual.
Status CheckParts(const ChunkTables& tables, const CheckedParts& record, std::size_t index,
                  std::size_t record_count, FileBudget* budget, CheckPrograms* programs) {
  if (!IsKnownObjectKind(record.kind)) return OkStatus();
  auto where = [index] { return "record " + std::to_string(index); };
  if (record.layout >= tables.layouts().size()) return Bad(where() + ": layout past the table");
  if (record.prop == nullptr) return Bad(where() + ": no PROP section");
  auto fail = [&](const Status& st, std::string_view part) {
    return Status(st.code(), where() + " " + std::string(part) + std::string(st.message()));
  };
  // Most records: plain values passed by their layout's program, no owned object, and so nothing
  // charged to the budget.
  if (programs != nullptr && record.owned == nullptr &&
      programs->Passes(record.layout, *record.prop)) {
    if (record.extra != nullptr) {
      Status st = reflect::TypeRegistry::CheckExtra(AsChars(*record.extra));
      if (!st.ok()) return fail(st, "EXTR: ");
    }
    return OkStatus();
  }
  FileBudget local = budget ? *budget : FileBudget{};
  Walker walker(tables, record_count, &local);
  ByteReader in(*record.prop);
  Status st = walker.Fields(in, tables.layouts()[record.layout].fields, 1);
  if (!st.ok()) return fail(st, "");
  if (!in.empty()) return Bad(where() + ": bytes after the last field in PROP");
  if (record.extra != nullptr) {
    st = reflect::TypeRegistry::CheckExtra(AsChars(*record.extra));
    if (!st.ok()) return fail(st, "EXTR: ");
  }
  // INLN: one entry per owned value met, in order (PROP's first, then each entry's own), each
  // nested at most 64 owned objects deep.
  std::uint64_t entries = 0;
  if (record.owned != nullptr) {
    ByteReader owned(*record.owned);
    if (!owned.VarintAtMost(std::min<std::uint64_t>(FileBudget::kMaxOwned, owned.remaining()),
                            &entries) ||
        entries == 0) {
      return Bad(where() + " INLN: bad entry count");
    }
    st = walker.ChargeOwned(entries);
    if (!st.ok()) return fail(st, "INLN: ");
    // depth[i]: how deep entry i is nested; entries PROP names are at depth 1.
    std::vector<std::uint8_t> depths;
    depths.reserve(entries);
    depths.insert(depths.end(), std::min<std::uint64_t>(walker.owned(), entries), 1);
    for (std::uint64_t i = 0; i < entries; ++i) {
      if (i >= depths.size()) return Bad(where() + " INLN: more entries than owned values");
      auto entry = [i] { return "INLN entry " + std::to_string(i) + ": "; };
      std::uint64_t layout = 0;
      ByteView body, bytes;
      if (!owned.VarintAtMost(tables.layouts().size() - 1, &layout) ||
          !owned.LengthPrefixed(owned.remaining(), &body) ||
          !owned.LengthPrefixed(owned.remaining(), &bytes)) {
        return Bad(where() + " " + entry() + "truncated");
      }
      std::uint64_t before = walker.owned();
      ByteReader fields(body);
      st = walker.Fields(fields, tables.layouts()[layout].fields, 1);
      if (!st.ok()) return fail(st, entry());
      if (!fields.empty()) return Bad(where() + " " + entry() + "bytes after the last field");
      if (!bytes.empty()) {
        st = reflect::TypeRegistry::CheckExtra(AsChars(bytes));
        if (!st.ok()) return fail(st, entry());
      }
      std::uint64_t children = walker.owned() - before;
      if (children > 0 && depths[i] >= kMaxValueDepth) {
        return Bad(where() + " " + entry() + "owned objects nest past 64 levels");
      }
      if (children > entries - depths.size()) {
        return Bad(where() + " INLN: fewer entries than owned values");
      }
      depths.insert(depths.end(), children, static_cast<std::uint8_t>(depths[i] + 1));
    }
    if (!owned.empty()) return Bad(where() + " INLN: bytes after the last entry");
  }
  if (walker.owned() != entries) return Bad(where() + ": owned values and INLN entries differ");
  if (budget != nullptr) *budget = local;
  return OkStatus();
}

}  // namespace

Status CheckRecord(const ChunkTables& tables, const Record& record, std::size_t index,
                   std::size_t record_count, FileBudget* budget) {
  CheckedParts parts;
  parts.kind = record.kind;
  parts.layout = record.layout;
  const Section* prop = record.Find(kPropSection);
  const Section* extra = record.Find(kExtraSection);
  const Section* owned = record.Find(kOwnedSection);
  const ByteView prop_bytes = prop ? ByteView(prop->bytes) : ByteView();
  const ByteView extra_bytes = extra ? ByteView(extra->bytes) : ByteView();
  const ByteView owned_bytes = owned ? ByteView(owned->bytes) : ByteView();
  if (prop != nullptr) parts.prop = &prop_bytes;
  if (extra != nullptr) parts.extra = &extra_bytes;
  if (owned != nullptr) parts.owned = &owned_bytes;
  return CheckParts(tables, parts, index, record_count, budget, nullptr);
}

namespace {

Status WriteRecord(const Record& r, ByteWriter& w) {
  w.U8(r.kind);
  if (!IsKnownObjectKind(r.kind)) {
    if (r.kind == 0) return InvalidDataError("only record 0 may be a TABLES record");
    w.Raw(r.unknown);
    return OkStatus();
  }
  ROLLY_RETURN_IF_ERROR(CheckSections(r));
  w.U64(r.subject.high());
  w.U64(r.subject.low());
  w.Varint(r.layout);
  w.Varint(r.sections.size() - 1);
  const Section* prop = nullptr;
  for (const Section& s : r.sections) {
    if (SameSection(s.id, kPropSection)) {
      prop = &s;
      continue;
    }
    w.Raw(std::string_view(s.id.data(), s.id.size()));
    w.LengthPrefixed(s.bytes);
  }
  w.Raw(prop->bytes);
  return OkStatus();
}

}  // namespace

Result<Bytes> EncodeRecord(const Record& record) {
  Bytes out;
  ByteWriter w(&out);
  ROLLY_RETURN_IF_ERROR(WriteRecord(record, w));
  return out;
}

Result<Bytes> EncodePayload(const Payload& payload) {
  Bytes out;
  ByteWriter w(&out);
  w.Varint(payload.records.size() + 1);
  Bytes record;
  ByteWriter rw(&record);
  payload.tables.Encode(rw);
  w.LengthPrefixed(record);
  for (const Record& r : payload.records) {
    record.clear();
    ROLLY_RETURN_IF_ERROR(WriteRecord(r, rw));
    w.LengthPrefixed(record);
  }
  return out;
}

namespace {

// A record's parts where they sit in its payload's bytes: what the walk of a payload reads
// without copying a section out.
struct RecordView {
  std::uint8_t kind = 0;
  Guid subject;
  std::uint32_t layout = 0;
  ByteView prop;
  // The sections other than PROP, in order (`others` of them).
  std::size_t others = 0;
  std::array<SectionId, kMaxSections> ids;
  std::array<ByteView, kMaxSections> bodies;
};

// ViewRecordBytes for the usual record, read straight from its bytes: a known kind, a layout
// index, a section count and section sizes of one byte each, sections that pass the rules. True
// when it viewed the record as ViewRecordBytes would; false for any other record, which
// ViewRecordBytes then reads (and refuses with its message, when it is damaged).
bool ViewUsualRecord(ByteView record, const ChunkTables& tables, RecordView* v) {
  const std::uint8_t* p = record.data();
  const std::uint8_t* const end = p + record.size();
  if (end - p < 1 + 16 + 2 || !IsKnownObjectKind(p[0])) return false;
  const std::uint8_t kind = p[0];
  const std::uint64_t high = LoadU64(p + 1);
  const std::uint64_t low = LoadU64(p + 9);
  const std::uint8_t layout = p[17];
  const std::uint8_t others = p[18];
  p += 19;
  if (layout >= 0x80 || layout >= tables.layouts().size() || others > kMaxSections - 1) {
    return false;
  }
  for (std::size_t s = 0; s < others; ++s) {
    if (end - p < 5 || p[4] >= 0x80 || p[4] > end - p - 5) return false;
    std::memcpy(v->ids[s].data(), p, 4);
    const SectionId& id = v->ids[s];
    if (!IsPrintableSectionId(id) || SameSection(id, kPropSection)) return false;
    for (std::size_t j = 0; j < s; ++j) {
      if (SameSection(v->ids[j], id)) return false;
    }
    v->bodies[s] = ByteView(p + 5, p[4]);
    p += 5 + p[4];
  }
  v->kind = kind;
  v->subject = Guid(high, low);
  v->layout = layout;
  v->others = others;
  v->prop = ByteView(p, static_cast<std::size_t>(end - p));
  return true;
}

// Views record `i` of a payload in its bytes into `v` (the structure check is the caller's).
// Damaged naming the record.
Status ViewRecordBytes(ByteView record, std::uint64_t i, const ChunkTables& tables, RecordView* v) {
  if (ViewUsualRecord(record, tables, v)) return OkStatus();
  ByteReader rr(record);
  v->kind = 0;
  rr.U8(&v->kind);
  if (v->kind == 0) return DamagedError("record " + std::to_string(i) + ": a second TABLES record");
  if (!IsKnownObjectKind(v->kind)) return OkStatus();
  auto bad = [i](std::string_view what) {
    return DamagedError("record " + std::to_string(i) + ": " + std::string(what));
  };
  std::uint64_t high = 0, low = 0, layout = 0, others = 0;
  if (!rr.U64(&high) || !rr.U64(&low) || !rr.Varint(&layout) || layout >= tables.layouts().size()) {
    return bad("bad subject or layout");
  }
  v->subject = Guid(high, low);
  v->layout = static_cast<std::uint32_t>(layout);
  if (!rr.Varint(&others) || others > kMaxSections - 1) return bad("bad section count");
  v->others = others;
  for (std::uint64_t s = 0; s < others; ++s) {
    ByteView id;
    if (!rr.Raw(4, &id) || !ReadSized(rr, &v->bodies[s])) {
      return bad("truncated section");
    }
    std::memcpy(v->ids[s].data(), id.data(), 4);
  }
  if (!rr.ok()) return bad("truncated section");
  rr.Raw(rr.remaining(), &v->prop);
  // PROP first, then the others in order, as a decoded record lists them.
  Status sections_ok = CheckSectionIds(others + 1, [v](std::size_t k) -> const SectionId& {
    return k == 0 ? kPropSection : v->ids[k - 1];
  });
  if (!sections_ok.ok()) return bad(sections_ok.message());
  return OkStatus();
}

// A viewed record copied into `r`, reusing `r`'s buffers; `record` is its bytes.
void CopyRecord(const RecordView& v, ByteView record, Record* r) {
  r->kind = v.kind;
  if (!IsKnownObjectKind(v.kind)) {
    r->subject = Guid();
    r->layout = 0;
    r->sections.clear();
    r->unknown.assign(record.begin() + 1, record.end());
    return;
  }
  r->unknown.clear();
  r->subject = v.subject;
  r->layout = v.layout;
  r->sections.resize(v.others + 1);
  r->sections[0].id = kPropSection;
  r->sections[0].bytes.assign(v.prop.begin(), v.prop.end());
  for (std::size_t s = 0; s < v.others; ++s) {
    r->sections[s + 1].id = v.ids[s];
    r->sections[s + 1].bytes.assign(v.bodies[s].begin(), v.bodies[s].end());
  }
}

// The structure check of a viewed record (CheckRecord's, in place).
Status CheckViewed(const ChunkTables& tables, const RecordView& v, std::size_t index,
                   std::size_t record_count, FileBudget* budget, CheckPrograms* programs) {
  CheckedParts parts;
  parts.kind = v.kind;
  parts.layout = v.layout;
  parts.prop = &v.prop;
  for (std::size_t s = 0; s < v.others; ++s) {
    if (SameSection(v.ids[s], kExtraSection)) parts.extra = &v.bodies[s];
    if (SameSection(v.ids[s], kOwnedSection)) parts.owned = &v.bodies[s];
  }
  return CheckParts(tables, parts, index, record_count, budget, programs);
}

// A payload's record count and tables (record 0), read from `in`.
Status ReadHead(ByteReader& in, std::uint64_t* count, ChunkTables* tables) {
  if (!in.VarintAtMost(std::min<std::uint64_t>(kMaxRecords, in.remaining()), count) ||
      *count == 0) {
    return DamagedError("payload: bad record count");
  }
  ByteView record;
  if (!in.LengthPrefixed(in.remaining(), &record) || record.empty()) {
    return DamagedError("record 0 (tables): truncated");
  }
  ROLLY_ASSIGN_OR_RETURN(*tables, DecodeTables(record));
  return OkStatus();
}

}  // namespace

// How far the bytes of a payload being filled have arrived (CheckWhileFilled): the filling thread
// publishes, the following one waits.
class Arrival {
 public:
  static constexpr std::size_t kStopped = ~std::size_t{0};

  void Publish(std::size_t n) {
    at_.store(n, std::memory_order_release);
    at_.notify_all();
  }
  // The filling ended before every byte arrived (it failed, or it threw).
  void Stop() {
    at_.store(kStopped, std::memory_order_release);
    at_.notify_all();
  }
  // Waits until at least the first `n` bytes arrived, and returns how many have; 0 when the
  // filling stopped first.
  std::size_t WaitFor(std::size_t n) {
    for (;;) {
      const std::size_t now = at_.load(std::memory_order_acquire);
      if (now == kStopped) return 0;
      if (now >= n) return now;
      at_.wait(now, std::memory_order_acquire);
    }
  }

 private:
  std::atomic<std::size_t> at_{0};
};

// The records the following thread checks, agreed under a lock (CheckWhileFilled): it claims them
// a batch at a time, up to `stop`, which the filling thread sets once it is done filling, at a
// record the follower has not claimed.
struct FollowerShare {
  static constexpr std::uint64_t kBatch = 256;
  std::mutex mutex;
  std::uint64_t stop = ~std::uint64_t{0};
  // The last batch claimed: records [from, to), record `from` at byte `at` (0: none claimed).
  std::uint64_t from = 1;
  std::size_t at = 0;
  std::uint64_t to = 1;
};

// Before each record of a walk over bytes still arriving: waits until the record's bytes are
// there, and claims records in batches, ending the walk at the share's stop.
class CheckedPayload::Gate {
 public:
  enum Pass { kGo, kStop, kLost };
  Gate(Arrival& arrival, FollowerShare& share, std::size_t size)
      : arrival_(arrival), share_(share), size_(size) {}

  Pass Before(std::uint64_t i, const ByteReader& in) {
    if (i >= claimed_to_ && !Claim(i, in.position())) return kStop;
    // The record's size (a varint of at most 10 bytes), then its bytes.
    const std::size_t pos = in.position();
    if (pos + 10 > arrived_ && !Await(std::min(size_, pos + 10))) return kLost;
    ByteReader peek = in;
    std::uint64_t n = 0;
    if (!peek.Varint(&n)) return kGo;  // the walk refuses it
    const std::size_t end =
        peek.position() + static_cast<std::size_t>(std::min<std::uint64_t>(n, peek.remaining()));
    if (end > arrived_ && !Await(end)) return kLost;
    return kGo;
  }

  // Waits for the first `n` bytes; false when they will not come.
  bool Await(std::size_t n) {
    arrived_ = arrival_.WaitFor(n);
    return arrived_ != 0;
  }
  std::size_t arrived() const { return arrived_; }

 private:
  bool Claim(std::uint64_t i, std::size_t at) {
    std::lock_guard lock(share_.mutex);
    claimed_to_ = std::min(i + FollowerShare::kBatch, share_.stop);
    if (claimed_to_ <= i) return false;
    share_.from = i;
    share_.at = at;
    share_.to = claimed_to_;
    return true;
  }

  Arrival& arrival_;
  FollowerShare& share_;
  const std::size_t size_;
  std::size_t arrived_ = 0;
  std::uint64_t claimed_to_ = 0;
};

namespace {

// What a walk asks before each record when nothing waits (every byte is there).
struct AllThere {
  int operator()(std::uint64_t, const ByteReader&) const { return 0; }
};

// Records [from, to) of a payload of `count`, read from `in`: each viewed in place and checked
// against `budget`, then `each(i, record_bytes, view)`, which may refuse it. `before(i, in)` runs
// before each record: 0 goes on, 1 ends the walk there (Ok), 2 ends it Cancelled (the bytes of a
// payload being filled stopped arriving).
template <typename Each, typename Before = AllThere>
Status WalkRecords(ByteReader& in, std::uint64_t from, std::uint64_t to, std::uint64_t count,
                   const ChunkTables& tables, FileBudget* budget, Each&& each,
                   Before&& before = AllThere()) {
  RecordView v;
  ByteView record;
  CheckPrograms programs(tables, count);
  for (std::uint64_t i = from; i < to; ++i) {
    if (const int pass = before(i, in); pass != 0) {
      return pass == 1 ? OkStatus() : CancelledError("the payload's bytes stopped arriving");
    }
    if (!ReadSized(in, &record) || record.empty()) {
      return DamagedError("record " + std::to_string(i) + ": truncated");
    }
    ROLLY_RETURN_IF_ERROR(ViewRecordBytes(record, i, tables, &v));
    if (IsKnownObjectKind(v.kind)) {
      ROLLY_RETURN_IF_ERROR(CheckViewed(tables, v, i, count, budget, &programs));
    }
    ROLLY_RETURN_IF_ERROR(each(i, record, v));
  }
  return OkStatus();
}

// Walks a payload: its count and tables, then each record, viewed in place and checked against
// a copy of `budget` (committed only when every record passed). `each(i, count, record_bytes,
// view)` keeps what it needs of each.
template <typename Each>
Status WalkPayload(ByteView bytes, FileBudget* budget, ChunkTables* tables, Each&& each) {
  ByteReader in(bytes);
  std::uint64_t count = 0;
  ROLLY_RETURN_IF_ERROR(ReadHead(in, &count, tables));
  FileBudget local = budget ? *budget : FileBudget{};
  ROLLY_RETURN_IF_ERROR(ChargeTables(*tables, &local));
  ROLLY_RETURN_IF_ERROR(WalkRecords(in, 1, count, count, *tables, &local,
                                    [&](std::uint64_t i, ByteView record, const RecordView& v) {
                                      each(i, count, record, v);
                                      return OkStatus();
                                    }));
  if (!in.ok() || !in.empty()) return DamagedError("payload: bytes after the last record");
  if (budget != nullptr) *budget = local;
  return OkStatus();
}

}  // namespace

Result<Payload> DecodePayload(ByteView bytes, FileBudget* budget) {
  Payload payload;
  ROLLY_RETURN_IF_ERROR(WalkPayload(
      bytes, budget, &payload.tables,
      [&](std::uint64_t, std::uint64_t count, ByteView record, const RecordView& v) {
        if (payload.records.empty()) payload.records.reserve(count - 1);
        CopyRecord(v, record, &payload.records.emplace_back());
      }));
  return payload;
}

Result<CheckedPayload> CheckedPayload::Check(Bytes bytes, FileBudget* budget) {
  return Check(std::move(bytes), budget, SectionCheck{});
}

Result<CheckedPayload> CheckedPayload::Check(Bytes bytes, FileBudget* budget,
                                             const SectionCheck& sections) {
  CheckedPayload out;
  ByteReader in(bytes);
  std::uint64_t count = 0;
  ROLLY_RETURN_IF_ERROR(ReadHead(in, &count, &out.tables_));
  FileBudget local = budget ? *budget : FileBudget{};
  ROLLY_RETURN_IF_ERROR(ChargeTables(out.tables_, &local));
  // The sections' first failure waits for the structure check of every record: a payload that
  // fails that fails with its status.
  Status section_error;
  out.spans_.reserve(count - 1);
  ROLLY_RETURN_IF_ERROR(CheckRange(in, 1, count, count, out.tables_, &local, sections,
                                   bytes.data(), &out.spans_, &section_error));
  if (!in.ok() || !in.empty()) return DamagedError("payload: bytes after the last record");
  ROLLY_RETURN_IF_ERROR(section_error);
  if (budget != nullptr) *budget = local;
  out.Keep(std::move(bytes));
  return out;
}

Result<CheckedPayload> CheckedPayload::Check(Bytes bytes, FileBudget* budget,
                                             const SectionCheck& sections, const Post& post,
                                             std::size_t split_bytes) {
  if (post && bytes.size() >= split_bytes) {
    CheckedPayload out;
    if (CheckSplit(bytes, budget, sections, post, &out)) {
      out.Keep(std::move(bytes));  // the spans' offsets stay valid: the buffer moves whole
      return out;
    }
  }
  return Check(std::move(bytes), budget, sections);
}

Status CheckedPayload::CheckRange(ByteReader& in, std::uint64_t from, std::uint64_t to,
                                  std::uint64_t count, const ChunkTables& tables,
                                  FileBudget* budget, const SectionCheck& sections,
                                  const std::uint8_t* base, std::vector<Span>* spans,
                                  Status* section_error, Gate* gate) {
  auto each = [&](std::uint64_t i, ByteView record, const RecordView& v) {
    // Filled in place: a span made aside and copied in was read back whole before its narrow
    // fields' stores had landed, which stalled the copy (a tenth of the check's time).
    Span& span = spans->emplace_back();
    span.offset = static_cast<std::uint64_t>(record.data() - base);
    span.size = static_cast<std::uint32_t>(record.size());
    span.kind = v.kind;
    if (IsKnownObjectKind(v.kind)) {
      span.layout = v.layout;
      span.subject = v.subject;
      // The kind, subject, layout and count take at most 1 + 16 + 5 + 1 bytes, and a record
      // holds at most 63 sections besides PROP (so both fit a byte); PROP starts within the
      // record, whose size fits 32 bits.
      span.others = static_cast<std::uint8_t>(v.others);
      span.prop = static_cast<std::uint32_t>(v.prop.data() - record.data());
      span.head = static_cast<std::uint8_t>(
          v.others == 0 ? span.prop
                        : v.bodies[0].data() - record.data() - 4 - VarintSize(v.bodies[0].size()));
      for (std::size_t s = 0; s < v.others; ++s) {
        if (SameSection(v.ids[s], kOwnedSection)) span.applied |= 1;
        if (SameSection(v.ids[s], kExtraSection)) span.applied |= 2;
      }
      // In `ids` order; each ID appears once in a record (ViewRecordBytes checked).
      bool asking = section_error == nullptr || section_error->ok();
      for (std::size_t k = 0; asking && k < sections.ids.size() && v.others > 0; ++k) {
        for (std::size_t s = 0; s < v.others; ++s) {
          if (!SameSection(v.ids[s], sections.ids[k])) continue;
          if (span.first_checked == 0 && k < kMaxFirstChecked) {
            span.first_checked = static_cast<std::uint8_t>(k + 1);
          }
          Status checked = sections.check(i, k, v.bodies[s]);
          if (!checked.ok()) {
            if (section_error == nullptr) {
              spans->pop_back();  // the record is refused
              return checked;
            }
            *section_error = std::move(checked);
            asking = false;  // nothing more is asked, of this record or any after it
          }
          break;
        }
      }
    }
    return OkStatus();
  };
  if (gate == nullptr) return WalkRecords(in, from, to, count, tables, budget, each);
  return WalkRecords(in, from, to, count, tables, budget, each,
                     [gate](std::uint64_t i, const ByteReader& at) {
                       return static_cast<int>(gate->Before(i, at));
                     });
}

namespace {

// The budgets of two shares of one check added into `sum`; false when the sum passes a bound.
// Each bound is on a running total that only grows, so a sum within them is the check in order
// passing them.
bool AddShares(const FileBudget& a, const FileBudget& b, FileBudget* sum) {
  *sum = FileBudget{a.owned + b.owned, a.bag_layouts + b.bag_layouts, a.bag_bytes + b.bag_bytes,
                    a.text_display + b.text_display};
  return sum->owned <= FileBudget::kMaxOwned && sum->bag_layouts <= FileBudget::kMaxBagLayouts &&
         sum->bag_bytes <= FileBudget::kMaxBagBytes &&
         sum->text_display <= FileBudget::kMaxTextDisplay;
}

}  // namespace

bool CheckedPayload::CheckSplit(const Bytes& bytes, FileBudget* budget,
                                const SectionCheck& sections, const Post& post,
                                CheckedPayload* out) {
  ByteReader in(bytes);
  std::uint64_t count = 0;
  ChunkTables tables;
  if (!ReadHead(in, &count, &tables).ok() || count < 3) return false;
  FileBudget first = budget ? *budget : FileBudget{};
  if (!ChargeTables(tables, &first).ok()) return false;
  // The second half starts at record `mid`. Its thread first walks the sizes of the records
  // before it to find where (a varint each), while this thread checks them from the start, so
  // the first half is the larger by about what that walk costs.
  const std::uint64_t mid = 1 + (count - 1) * kSplitFirstShare / 100;
  const ByteReader at_first = in;
  std::size_t split_at = 0;  // where the second half starts, once its thread walked there

  FileBudget second_budget;
  std::vector<Span> second_spans;
  second_spans.reserve(count - mid);
  Status second_status;
  // The second half's check, run by whichever thread claims it first (SideTask).
  SideTask second(post, [&] {
    ByteReader rest = at_first;
    ByteView record;
    for (std::uint64_t i = 1; i < mid; ++i) {
      if (!ReadSized(rest, &record)) {
        second_status = DamagedError("split");  // the check in order says why
        return;
      }
    }
    split_at = rest.position();
    second_status = CheckRange(rest, mid, count, count, tables, &second_budget, sections,
                               bytes.data(), &second_spans);
    if (second_status.ok() && !(rest.ok() && rest.empty())) {
      second_status = DamagedError("payload: bytes after the last record");
    }
  });

  std::vector<Span> spans;
  spans.reserve(count - 1);
  Status first_status = CheckRange(in, 1, mid, count, tables, &first, sections, bytes.data(),
                                   &spans);
  if (!first_status.ok()) {
    second.Withdraw();  // the check in order says why
    return false;
  }
  try {
    second.Join();
  } catch (...) {
    return false;  // the half threw (an allocation failed): the check in order runs it again
  }
  if (in.position() != split_at || !second_status.ok()) return false;
  FileBudget total;
  if (!AddShares(first, second_budget, &total)) return false;
  spans.insert(spans.end(), second_spans.begin(), second_spans.end());
  out->tables_ = std::move(tables);
  out->spans_ = std::move(spans);
  if (budget != nullptr) *budget = total;
  return true;
}

Result<CheckedPayload> CheckedPayload::CheckWhileFilled(std::uint64_t size, const Fill& fill,
                                                        FileBudget* budget,
                                                        const SectionCheck& sections,
                                                        const Post& post,
                                                        std::size_t split_bytes) {
  if (!post || size < split_bytes) {
    Bytes bytes(static_cast<std::size_t>(size));
    ROLLY_RETURN_IF_ERROR(fill(bytes, [](std::size_t) {}));
    return Check(std::move(bytes), budget, sections, post, split_bytes);
  }
  // Not zeroed first (about a millisecond for a chunk of 12 MB, before the fill could start):
  // the fill writes every byte, and nothing reads one before it has arrived.
  std::unique_ptr<std::uint8_t[]> buffer(new std::uint8_t[static_cast<std::size_t>(size)]);
  const std::span<std::uint8_t> bytes(buffer.get(), static_cast<std::size_t>(size));
  Arrival arrival;
  FollowerShare share;
  // The follower: the head once it arrived, then records in claimed batches as they arrive.
  FileBudget follower_budget = budget ? *budget : FileBudget{};
  std::vector<Span> follower_spans;
  Status follower_status;
  std::uint64_t follower_stopped = 0;  // the record its walk ended at
  std::size_t follower_end = 0;        // and where that record starts
  SideTask follower(post, [&] {
    Gate gate(arrival, share, bytes.size());
    std::uint64_t count = 0;
    ChunkTables tables;
    ByteReader in(bytes);
    // The head is tried on what has arrived, on twice as much each time it is cut short (a
    // prefix that holds it reads as the whole would).
    for (std::size_t want = std::min<std::size_t>(bytes.size(), 4096);;) {
      if (!gate.Await(want)) {
        follower_status = CancelledError("the payload's bytes stopped arriving");
        return;
      }
      ByteReader head(ByteView(bytes.data(), gate.arrived()));
      if (ReadHead(head, &count, &tables).ok()) {
        in.Skip(head.position());
        break;
      }
      if (gate.arrived() == bytes.size()) {
        follower_status = DamagedError("the head");  // the check in order says why
        return;
      }
      want = std::min(bytes.size(), std::max(want, gate.arrived()) * 2);
    }
    follower_status = ChargeTables(tables, &follower_budget);
    if (!follower_status.ok()) return;
    follower_spans.reserve(count - 1);
    follower_status = CheckRange(in, 1, count, count, tables, &follower_budget, sections,
                                 bytes.data(), &follower_spans, nullptr, &gate);
    follower_stopped = 1 + follower_spans.size();
    follower_end = in.position();
  });
  // Should filling end early (or anything here throw), the follower stops waiting for bytes.
  struct StopUnlessFilled {
    Arrival& arrival;
    bool filled = false;
    ~StopUnlessFilled() {
      if (!filled) arrival.Stop();
    }
  } stop_unless_filled{arrival};
  const Status filled = fill(bytes, [&arrival](std::size_t n) { arrival.Publish(n); });
  if (!filled.ok()) return filled;  // (the follower stops, and is withdrawn)
  stop_unless_filled.filled = true;
  arrival.Publish(bytes.size());

  // About half of what the follower has not claimed is this thread's: from record `mid`, found
  // by walking the sizes of the records from the follower's last claim.
  bool shared = false;
  std::vector<Span> spans;
  FileBudget own_budget;
  ChunkTables tables;
  std::uint64_t count = 0;
  std::uint64_t mid = 0;
  std::size_t mid_at = 0;
  ByteReader in(bytes);
  if (ReadHead(in, &count, &tables).ok() && count >= 3) {
    std::uint64_t from = 1;
    std::size_t at = 0;
    {
      std::lock_guard lock(share.mutex);
      const std::uint64_t claimed = std::min(count, share.to);
      mid = claimed + (count - claimed) / 2;
      share.stop = mid;
      from = share.from;
      at = share.at != 0 ? share.at : in.position();
    }
    // (Walked with the lock let go: the follower claims nothing past `mid` now.)
    shared = at <= bytes.size();
    ByteReader walk = in;
    shared = shared && walk.Skip(at - std::min(at, in.position()));
    ByteView record;
    for (std::uint64_t i = from; shared && i < mid; ++i) shared = ReadSized(walk, &record);
    mid_at = walk.position();
    in = walk;
  }
  Status own_status = shared ? OkStatus() : DamagedError("the head");
  if (shared) {
    spans.reserve(count - std::min(count, mid));
    own_status = CheckRange(in, mid, count, count, tables, &own_budget, sections, bytes.data(),
                            &spans);
    if (own_status.ok() && !(in.ok() && in.empty())) {
      own_status = DamagedError("payload: bytes after the last record");
    }
  } else {
    // No share of its own (a payload too short to split, or one whose head fails): the follower
    // is told to stop at once, and the check in order decides.
    std::lock_guard lock(share.mutex);
    share.stop = 0;
  }
  bool joined = true;
  try {
    if (own_status.ok()) {
      follower.Join();
    } else {
      follower.Withdraw();
    }
  } catch (...) {
    joined = false;  // the follower threw (an allocation failed): the check in order runs again
  }
  const bool passed = joined && own_status.ok() && follower_status.ok() &&
                      follower_stopped == mid && follower_end == mid_at;
  FileBudget total;
  if (passed && AddShares(follower_budget, own_budget, &total)) {
    CheckedPayload out;
    follower_spans.insert(follower_spans.end(), spans.begin(), spans.end());
    out.tables_ = std::move(tables);
    out.spans_ = std::move(follower_spans);
    out.Keep(std::move(buffer), bytes.size());
    if (budget != nullptr) *budget = total;
    return out;
  }
  // (A copy: the check in order keeps a Bytes. Only for a payload refused, or a share lost.)
  return Check(Bytes(bytes.begin(), bytes.end()), budget, sections);
}

bool CheckedPayload::Find(std::size_t i, SectionId id, ByteView* out) const {
  return FindEach(i, std::span<const SectionId>(&id, 1), out) != 0;
}

Record CheckedPayload::Get(std::size_t i) const {
  Record r;
  Read(i, &r);
  return r;
}

void CheckedPayload::Read(std::size_t i, Record* out) const {
  // Checked already: this view does not fail.
  RecordView v;
  ViewRecordBytes(RecordBytes(i), i + 1, tables_, &v).IgnoreError();
  CopyRecord(v, RecordBytes(i), out);
}

}  // namespace rolly::record
