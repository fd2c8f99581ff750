#include "rolly/record/value_tree.h"

#include <map>
#include <string>
#include <utility>

namespace rolly::record {
namespace {

// Decodes a value the record check accepted already.
bool DecodeValue(ByteReader& in, const ChunkTables& tables, std::uint32_t type, Value* out) {
  const SavedType& t = tables.types()[type];
  out->kind = t.kind;
  if (std::size_t fixed = FixedValueSize(t.kind)) {
    ByteView b;
    if (!in.Raw(fixed, &b)) return false;
    out->text.assign(AsChars(b));
    return true;
  }
  std::int64_t s = 0;
  std::uint64_t u = 0;
  switch (t.kind) {
    case SavedKind::kBool: {
      std::uint8_t b = 0;
      if (!in.U8(&b)) return false;
      out->number = b;
      return true;
    }
    case SavedKind::kInt8:
    case SavedKind::kInt16:
    case SavedKind::kInt32:
    case SavedKind::kInt64:
      if (!in.SignedVarint(&s)) return false;
      out->number = static_cast<std::uint64_t>(s);
      return true;
    case SavedKind::kUInt8:
    case SavedKind::kUInt16:
    case SavedKind::kUInt32:
    case SavedKind::kUInt64:
      return in.Varint(&out->number);
    case SavedKind::kString:
    case SavedKind::kSoftPath: {
      std::string_view text;
      if (!in.LengthPrefixed(kMaxStringBytes, &text)) return false;
      out->text.assign(text);
      return true;
    }
    case SavedKind::kName:
      if (!in.VarintAtMost(tables.names().size(), &u)) return false;
      if (u > 0) out->text.assign(tables.names()[u - 1].view());
      return true;
    case SavedKind::kEnum:
      if (!in.VarintAtMost(tables.names().size() - 1, &u)) return false;
      out->text.assign(tables.names()[u].view());
      return true;
    case SavedKind::kStruct: {
      const Layout& layout = tables.layouts()[t.a];
      out->items.resize(layout.fields.size());
      for (std::size_t i = 0; i < layout.fields.size(); ++i) {
        if (!DecodeValue(in, tables, layout.fields[i].type, &out->items[i])) return false;
      }
      return true;
    }
    case SavedKind::kOptional: {
      std::uint8_t b = 0;
      if (!in.U8(&b)) return false;
      out->number = b;
      if (b == 0) return true;
      out->items.resize(1);
      return DecodeValue(in, tables, t.a, &out->items[0]);
    }
    case SavedKind::kVector:
    case SavedKind::kArray:
    case SavedKind::kSet:
    case SavedKind::kMap: {
      if (!in.Varint(&u)) return false;
      for (std::uint64_t i = 0; i < u; ++i) {
        out->items.emplace_back();
        if (!DecodeValue(in, tables, t.a, &out->items.back())) return false;
        if (t.kind == SavedKind::kMap) {
          out->items.emplace_back();
          if (!DecodeValue(in, tables, t.b, &out->items.back())) return false;
        }
      }
      return true;
    }
    default:
      return false;
  }
}

Status Misfit() { return InvalidDataError("a value tree does not fit its saved types"); }

Status EncodeValue(ByteWriter& w, ChunkTables* tables, std::uint32_t type, const Value& v,
                   int depth) {
  if (depth > kMaxValueDepth) return InvalidDataError("a value nests past 64 levels");
  const SavedType t = tables->types()[type];
  if (v.kind != t.kind) return Misfit();
  if (std::size_t fixed = FixedValueSize(t.kind)) {
    if (v.text.size() != fixed) return Misfit();
    w.Raw(v.text);
    return OkStatus();
  }
  switch (t.kind) {
    case SavedKind::kBool:
      if (v.number > 1) return Misfit();
      w.U8(static_cast<std::uint8_t>(v.number));
      return OkStatus();
    case SavedKind::kInt8:
    case SavedKind::kInt16:
    case SavedKind::kInt32:
    case SavedKind::kInt64:
      w.SignedVarint(static_cast<std::int64_t>(v.number));
      return OkStatus();
    case SavedKind::kUInt8:
    case SavedKind::kUInt16:
    case SavedKind::kUInt32:
    case SavedKind::kUInt64:
      w.Varint(v.number);
      return OkStatus();
    case SavedKind::kString:
    case SavedKind::kSoftPath:
      if (v.text.size() > kMaxStringBytes) return Misfit();
      w.LengthPrefixed(v.text);
      return OkStatus();
    case SavedKind::kName:
      if (v.text.empty()) {
        w.Varint(0);
        return OkStatus();
      }
      [[fallthrough]];
    case SavedKind::kEnum: {
      ROLLY_ASSIGN_OR_RETURN(std::uint32_t index, tables->AddName(Name(v.text)));
      w.Varint(t.kind == SavedKind::kName ? std::uint64_t{index} + 1 : index);
      return OkStatus();
    }
    case SavedKind::kStruct: {
      const std::size_t n = tables->layouts()[t.a].fields.size();
      if (v.items.size() != n) return Misfit();
      for (std::size_t i = 0; i < n; ++i) {
        ROLLY_RETURN_IF_ERROR(
            EncodeValue(w, tables, tables->layouts()[t.a].fields[i].type, v.items[i], depth + 1));
      }
      return OkStatus();
    }
    case SavedKind::kOptional:
      if (v.number > 1 || v.items.size() != v.number) return Misfit();
      w.U8(static_cast<std::uint8_t>(v.number));
      return v.number ? EncodeValue(w, tables, t.a, v.items[0], depth + 1) : OkStatus();
    case SavedKind::kVector:
    case SavedKind::kArray:
    case SavedKind::kSet:
    case SavedKind::kMap: {
      const bool map = t.kind == SavedKind::kMap;
      if (map && v.items.size() % 2 != 0) return Misfit();
      const std::size_t count = map ? v.items.size() / 2 : v.items.size();
      if (t.kind == SavedKind::kArray && count != t.count) return Misfit();
      w.Varint(count);
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        std::uint32_t part = map && i % 2 == 1 ? t.b : t.a;
        ROLLY_RETURN_IF_ERROR(EncodeValue(w, tables, part, v.items[i], depth + 1));
      }
      return OkStatus();
    }
    default:
      return NewerVersionError("saved kind not supported by this version");
  }
}

// Adds the saved types and layouts of one chunk's tables to another's, as they are used.
class Translator {
 public:
  Translator(const ChunkTables& from, ChunkTables* to) : from_(from), to_(to) {}

  Result<std::uint32_t> Type(std::uint32_t index) {
    auto it = types_.find(index);
    if (it != types_.end()) return it->second;
    SavedType t = from_.types()[index];
    switch (t.kind) {
      case SavedKind::kEnum: {
        ROLLY_ASSIGN_OR_RETURN(t.a, to_->AddName(from_.names()[t.a]));
        break;
      }
      case SavedKind::kStruct: {
        ROLLY_ASSIGN_OR_RETURN(t.a, LayoutOf(t.a));
        break;
      }
      case SavedKind::kMap: {
        ROLLY_ASSIGN_OR_RETURN(t.b, Type(t.b));
        ROLLY_ASSIGN_OR_RETURN(t.a, Type(t.a));
        break;
      }
      case SavedKind::kVector:
      case SavedKind::kArray:
      case SavedKind::kSet:
      case SavedKind::kOptional: {
        ROLLY_ASSIGN_OR_RETURN(t.a, Type(t.a));
        break;
      }
      default:
        break;
    }
    std::uint32_t result = to_->AddType(t);
    types_.emplace(index, result);
    return result;
  }

  Result<std::uint32_t> LayoutOf(std::uint32_t index) {
    auto it = layouts_.find(index);
    if (it != layouts_.end()) return it->second;
    if (to_->layouts().size() >= kMaxLayouts) return InvalidDataError("more than 65,536 layouts");
    std::uint32_t result = to_->AppendLayout(Layout{});
    layouts_.emplace(index, result);
    const Layout& source = from_.layouts()[index];
    Layout layout;
    ROLLY_ASSIGN_OR_RETURN(layout.name, to_->AddName(from_.names()[source.name]));
    for (const LayoutField& f : source.fields) {
      LayoutField field;
      ROLLY_ASSIGN_OR_RETURN(field.name, to_->AddName(from_.names()[f.name]));
      ROLLY_ASSIGN_OR_RETURN(field.type, Type(f.type));
      layout.fields.push_back(field);
    }
    to_->SetLayout(result, std::move(layout));
    return result;
  }

 private:
  const ChunkTables& from_;
  ChunkTables* to_;
  std::map<std::uint32_t, std::uint32_t> types_;
  std::map<std::uint32_t, std::uint32_t> layouts_;
};

}  // namespace

Result<Value> DecodeProp(const ChunkTables& tables, const Record& record) {
  if (!IsKnownObjectKind(record.kind)) {
    return InvalidInputError("record of kind " + std::to_string(record.kind) +
                             " is not known to this version");
  }
  ROLLY_RETURN_IF_ERROR(CheckRecord(tables, record, 0));
  ByteReader in(record.Find(kPropSection)->bytes);
  Value root;
  root.kind = SavedKind::kStruct;
  const Layout& layout = tables.layouts()[record.layout];
  root.items.resize(layout.fields.size());
  for (std::size_t i = 0; i < layout.fields.size(); ++i) {
    if (!DecodeValue(in, tables, layout.fields[i].type, &root.items[i])) {
      return DamagedError("record: a checked value did not decode");
    }
  }
  return root;
}

Result<Bytes> EncodeProp(ChunkTables* tables, std::uint32_t layout, const Value& root) {
  if (layout >= tables->layouts().size()) return InvalidInputError("layout past the table");
  const std::size_t n = tables->layouts()[layout].fields.size();
  if (root.kind != SavedKind::kStruct || root.items.size() != n) return Misfit();
  Bytes out;
  ByteWriter w(&out);
  for (std::size_t i = 0; i < n; ++i) {
    ROLLY_RETURN_IF_ERROR(
        EncodeValue(w, tables, tables->layouts()[layout].fields[i].type, root.items[i], 1));
  }
  return out;
}

Result<Record> MoveRecord(const ChunkTables& from, const Record& record, ChunkTables* to) {
  if (!IsKnownObjectKind(record.kind)) {
    return NewerVersionError("a record of kind " + std::to_string(record.kind) +
                             " cannot be moved by this version");
  }
  for (const Section& s : record.sections) {
    if (s.id != kPropSection && s.id != kExtraSection) {
      return NewerVersionError("a record with section " + std::string(s.id.data(), 4) +
                               " cannot be moved by this version");
    }
  }
  ROLLY_ASSIGN_OR_RETURN(Value root, DecodeProp(from, record));
  Translator translator(from, to);
  Record moved = record;
  ROLLY_ASSIGN_OR_RETURN(moved.layout, translator.LayoutOf(record.layout));
  for (Section& s : moved.sections) {
    if (s.id == kPropSection) {
      ROLLY_ASSIGN_OR_RETURN(s.bytes, EncodeProp(to, moved.layout, root));
    }
  }
  return moved;
}

}  // namespace rolly::record
