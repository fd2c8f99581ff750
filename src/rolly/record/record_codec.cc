#include "rolly/record/record_codec.h"

#include <algorithm>
#include <string>
#include <utility>

#include "rolly/core/utf8.h"

namespace rolly::record {
namespace {

bool ValidSectionId(const SectionId& id) {
  return std::all_of(id.begin(), id.end(), [](char c) { return c >= 0x21 && c <= 0x7E; });
}

std::string IdText(const SectionId& id) { return std::string(id.data(), id.size()); }

Status CheckSections(const Record& r) {
  if (r.sections.empty() || r.sections.size() > kMaxSections) {
    return InvalidDataError("a record has no sections or more than 64");
  }
  bool prop = false;
  for (std::size_t i = 0; i < r.sections.size(); ++i) {
    if (!ValidSectionId(r.sections[i].id)) return InvalidDataError("a section ID is not printable");
    for (std::size_t j = 0; j < i; ++j) {
      if (r.sections[j].id == r.sections[i].id) {
        return InvalidDataError("section " + IdText(r.sections[i].id) + " appears twice");
      }
    }
    prop = prop || r.sections[i].id == kPropSection;
  }
  if (!prop) return InvalidDataError("a record has no PROP section");
  return OkStatus();
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

bool IsKnownObjectKind(std::uint8_t kind) { return kind >= 1 && kind <= 4; }

const Section* Record::Find(SectionId id) const {
  for (const Section& s : sections) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

Status SkipValue(ByteReader& in, const ChunkTables& tables, std::uint32_t type, int depth,
                 std::uint64_t* elements) {
  if (depth > kMaxValueDepth) return Bad("a value nests past 64 levels");
  const SavedType& t = tables.types()[type];
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
      if (!in.SignedVarint(&s)) return Bad("bad signed varint");
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
      return in.VarintAtMost(max, &u) ? OkStatus() : Bad("an unsigned integer is out of range");
    }
    case SavedKind::kString:
    case SavedKind::kSoftPath: {
      std::string_view text;
      if (!in.LengthPrefixed(kMaxStringBytes, &text) || !IsValidUtf8(text) ||
          text.find('\0') != std::string_view::npos) {
        return Bad("a string is not UTF-8 of at most 1,048,576 bytes");
      }
      return OkStatus();
    }
    case SavedKind::kName:
      if (!in.VarintAtMost(tables.names().size(), &u))
        return Bad("a name index is past the names table");
      return OkStatus();
    case SavedKind::kEnum: {
      if (tables.names().empty() || !in.VarintAtMost(tables.names().size() - 1, &u)) {
        return Bad("a name index is past the names table");
      }
      return OkStatus();
    }
    case SavedKind::kStruct: {
      for (const LayoutField& f : tables.layouts()[t.a].fields) {
        Status st = SkipValue(in, tables, f.type, depth + 1, elements);
        if (!st.ok()) {
          return Bad("member " + tables.names()[f.name].str() + ": " + std::string(st.message()));
        }
      }
      return OkStatus();
    }
    case SavedKind::kOptional: {
      std::uint8_t b = 0;
      if (!in.U8(&b) || b > 1) return Bad("an optional's flag is not 0 or 1");
      return b ? SkipValue(in, tables, t.a, depth + 1, elements) : OkStatus();
    }
    case SavedKind::kVector:
    case SavedKind::kArray:
    case SavedKind::kSet:
    case SavedKind::kMap: {
      if (!in.Varint(&u)) return Bad("bad element count");
      if (t.kind == SavedKind::kArray && u != t.count)
        return Bad("an array's count is not its type's");
      if (u > kMaxElementsPerRecord - *elements)
        return Bad("more than 16,777,216 elements in a record");
      *elements += u;
      for (std::uint64_t i = 0; i < u; ++i) {
        ROLLY_RETURN_IF_ERROR(SkipValue(in, tables, t.a, depth + 1, elements));
        if (t.kind == SavedKind::kMap) {
          ROLLY_RETURN_IF_ERROR(SkipValue(in, tables, t.b, depth + 1, elements));
        }
      }
      return OkStatus();
    }
    default:
      return NewerVersionError("saved kind not supported by this version");
  }
}

Status CheckRecord(const ChunkTables& tables, const Record& record, std::size_t index) {
  if (!IsKnownObjectKind(record.kind)) return OkStatus();
  std::string where = "record " + std::to_string(index);
  if (record.layout >= tables.layouts().size()) return Bad(where + ": layout past the table");
  const Section* prop = record.Find(kPropSection);
  if (prop == nullptr) return Bad(where + ": no PROP section");
  ByteReader in(prop->bytes);
  std::uint64_t elements = 0;
  for (const LayoutField& f : tables.layouts()[record.layout].fields) {
    Status st = SkipValue(in, tables, f.type, 1, &elements);
    if (!st.ok()) {
      return Status(st.code(), where + " field " + tables.names()[f.name].str() + ": " +
                                   std::string(st.message()));
    }
  }
  if (!in.empty()) return Bad(where + ": bytes after the last field in PROP");
  return OkStatus();
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
    rw.U8(r.kind);
    if (!IsKnownObjectKind(r.kind)) {
      if (r.kind == 0) return InvalidDataError("only record 0 may be a TABLES record");
      rw.Raw(r.unknown);
    } else {
      ROLLY_RETURN_IF_ERROR(CheckSections(r));
      rw.U64(r.subject.high());
      rw.U64(r.subject.low());
      rw.Varint(r.layout);
      rw.Varint(r.sections.size());
      for (const Section& s : r.sections) {
        rw.Raw(std::string_view(s.id.data(), s.id.size()));
        rw.LengthPrefixed(s.bytes);
      }
    }
    w.LengthPrefixed(record);
  }
  return out;
}

Result<Payload> DecodePayload(ByteView bytes) {
  ByteReader in(bytes);
  std::uint64_t count = 0;
  if (!in.VarintAtMost(std::min<std::uint64_t>(kMaxRecords, in.remaining()), &count) ||
      count == 0) {
    return DamagedError("payload: bad record count");
  }
  Payload payload;
  ByteView record;
  if (!in.LengthPrefixed(in.remaining(), &record) || record.empty()) {
    return DamagedError("record 0 (tables): truncated");
  }
  ROLLY_ASSIGN_OR_RETURN(payload.tables, DecodeTables(record));
  for (std::uint64_t i = 1; i < count; ++i) {
    std::string where = "record " + std::to_string(i);
    if (!in.LengthPrefixed(in.remaining(), &record) || record.empty()) {
      return DamagedError(where + ": truncated");
    }
    ByteReader rr(record);
    Record r;
    rr.U8(&r.kind);
    if (r.kind == 0) return DamagedError(where + ": a second TABLES record");
    if (!IsKnownObjectKind(r.kind)) {
      r.unknown.assign(record.begin() + 1, record.end());
      payload.records.push_back(std::move(r));
      continue;
    }
    std::uint64_t high = 0, low = 0, layout = 0, sections = 0;
    if (!rr.U64(&high) || !rr.U64(&low) || !rr.Varint(&layout) ||
        layout >= payload.tables.layouts().size()) {
      return DamagedError(where + ": bad subject or layout");
    }
    r.subject = Guid(high, low);
    r.layout = static_cast<std::uint32_t>(layout);
    if (!rr.VarintAtMost(kMaxSections, &sections) || sections == 0) {
      return DamagedError(where + ": bad section count");
    }
    for (std::uint64_t s = 0; s < sections; ++s) {
      ByteView id, body;
      if (!rr.Raw(4, &id) || !rr.LengthPrefixed(rr.remaining(), &body)) {
        return DamagedError(where + ": truncated section");
      }
      Section section;
      std::copy(id.begin(), id.end(), section.id.begin());
      section.bytes.assign(body.begin(), body.end());
      r.sections.push_back(std::move(section));
    }
    if (!rr.ok() || !rr.empty()) return DamagedError(where + ": bytes after the last section");
    Status sections_ok = CheckSections(r);
    if (!sections_ok.ok()) return DamagedError(where + ": " + std::string(sections_ok.message()));
    ROLLY_RETURN_IF_ERROR(CheckRecord(payload.tables, r, i));
    payload.records.push_back(std::move(r));
  }
  if (!in.ok() || !in.empty()) return DamagedError("payload: bytes after the last record");
  return payload;
}

}  // namespace rolly::record
