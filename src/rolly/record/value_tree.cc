#include "rolly/record/value_tree.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace rolly::record {
namespace {

// Decodes values the record check accepted already. Owned values met are queued; their INLN
// entries decode in that order.
class Decoder {
 public:
  Decoder(const ChunkTables& tables, RecordSubjects records)
      : tables_(tables), records_(records) {}
  std::vector<Value*>& owned() { return owned_; }

  bool Fields(ByteReader& in, const std::vector<LayoutField>& fields, Value* out) {
    out->kind = SavedKind::kStruct;
    out->items.resize(fields.size());
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (!Decode(in, fields[i].type, &out->items[i])) return false;
    }
    return true;
  }

  bool Decode(ByteReader& in, std::uint32_t type, Value* out) {
    const SavedType& t = tables_.types()[type];
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
      case SavedKind::kSoftPath:
        return String(in, &out->text);
      case SavedKind::kName:
        if (!in.VarintAtMost(tables_.names().size(), &u)) return false;
        if (u > 0) out->text.assign(tables_.name_text(static_cast<std::uint32_t>(u - 1)));
        return true;
      case SavedKind::kEnum:
        if (!in.VarintAtMost(tables_.names().size() - 1, &u)) return false;
        out->text.assign(tables_.name_text(static_cast<std::uint32_t>(u)));
        return true;
      case SavedKind::kText:
        return Text(in, out);
      case SavedKind::kStruct:
        return Fields(in, tables_.layouts()[t.a].fields, out);
      case SavedKind::kOptional: {
        std::uint8_t b = 0;
        if (!in.U8(&b)) return false;
        out->number = b;
        if (b == 0) return true;
        out->items.resize(1);
        return Decode(in, t.a, &out->items[0]);
      }
      case SavedKind::kVector:
      case SavedKind::kArray:
      case SavedKind::kSet:
      case SavedKind::kMap: {
        if (t.kind == SavedKind::kArray) {
          u = t.count;
        } else if (!in.VarintAtMost(in.remaining(), &u)) {
          return false;
        }
        const bool map = t.kind == SavedKind::kMap;
        out->items.resize(map ? 2 * u : u);
        for (std::uint64_t i = 0; i < u; ++i) {
          if (!Decode(in, t.a, &out->items[map ? 2 * i : i])) return false;
          if (map && !Decode(in, t.b, &out->items[2 * i + 1])) return false;
        }
        return true;
      }
      case SavedKind::kOwned: {
        std::uint8_t b = 0;
        if (!in.U8(&b)) return false;
        out->number = b;
        if (b == 1) owned_.push_back(out);
        return true;
      }
      case SavedKind::kReference:
        if (!in.Varint(&out->number)) return false;
        if (out->number != 0) {
          Guid id;
          if (out->number % 2 == 0) {
            id = tables_.refs()[(out->number - 2) / 2];
          } else if (records_.known() && (out->number - 1) / 2 <= records_.size()) {
            id = records_.subject((out->number - 1) / 2);
          } else {
            return true;
          }
          Bytes bytes;
          ByteWriter w(&bytes);
          w.U64(id.high());
          w.U64(id.low());
          out->text.assign(AsChars(bytes));
        }
        return true;
      case SavedKind::kInstancedStruct:
        if (!in.Varint(&out->number)) return false;
        if (out->number == 0) return true;
        out->items.resize(1);
        return Fields(in, tables_.layouts()[out->number - 1].fields, &out->items[0]);
      case SavedKind::kPropertyBag: {
        if (!in.Varint(&out->number)) return false;
        const auto& fields = tables_.bag_layouts()[out->number].fields;
        out->items.resize(fields.size());
        for (std::size_t i = 0; i < fields.size(); ++i) {
          if (!Decode(in, fields[i].type, &out->items[i])) return false;
        }
        return true;
      }
      default:
        return false;
    }
  }

 private:
  static bool String(ByteReader& in, std::string* out) {
    std::string_view text;
    if (!in.LengthPrefixed(kMaxStringBytes, &text)) return false;
    out->assign(text);
    return true;
  }

  bool Text(ByteReader& in, Value* out) {
    out->kind = SavedKind::kText;
    out->items.resize(3);
    for (Value& part : out->items) {
      part.kind = SavedKind::kString;
      if (!String(in, &part.text)) return false;
    }
    std::uint64_t args = 0;
    if (!in.VarintAtMost(in.remaining(), &args)) return false;
    out->items.resize(3 + args);
    for (std::uint64_t i = 0; i < args; ++i) {
      if (!Text(in, &out->items[3 + i])) return false;
    }
    return true;
  }

  const ChunkTables& tables_;
  RecordSubjects records_;
  std::vector<Value*> owned_;
};

Status Misfit() { return InvalidDataError("a value tree does not fit its saved types"); }

class Encoder {
 public:
  explicit Encoder(ChunkTables* tables) : tables_(tables) {}
  std::vector<const Value*>& owned() { return owned_; }

  Status Fields(ByteWriter& w, std::uint32_t layout, const Value& v, int depth) {
    if (layout >= tables_->layouts().size()) return Misfit();
    const std::size_t n = tables_->layouts()[layout].fields.size();
    if (v.kind != SavedKind::kStruct || v.items.size() != n) return Misfit();
    for (std::size_t i = 0; i < n; ++i) {
      ROLLY_RETURN_IF_ERROR(
          Encode(w, tables_->layouts()[layout].fields[i].type, v.items[i], depth));
    }
    return OkStatus();
  }

  Status Encode(ByteWriter& w, std::uint32_t type, const Value& v, int depth) {
    if (depth > kMaxValueDepth) return InvalidDataError("a value nests past 64 levels");
    const SavedType t = tables_->types()[type];
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
        ROLLY_ASSIGN_OR_RETURN(std::uint32_t index, tables_->AddName(std::string_view(v.text)));
        w.Varint(t.kind == SavedKind::kName ? std::uint64_t{index} + 1 : index);
        return OkStatus();
      }
      case SavedKind::kText:
        return Text(w, v, 1);
      case SavedKind::kStruct:
        return Fields(w, t.a, v, depth + 1);
      case SavedKind::kOptional:
        if (v.number > 1 || v.items.size() != v.number) return Misfit();
        w.U8(static_cast<std::uint8_t>(v.number));
        return v.number ? Encode(w, t.a, v.items[0], depth + 1) : OkStatus();
      case SavedKind::kVector:
      case SavedKind::kArray:
      case SavedKind::kSet:
      case SavedKind::kMap: {
        const bool map = t.kind == SavedKind::kMap;
        if (map && v.items.size() % 2 != 0) return Misfit();
        const std::size_t count = map ? v.items.size() / 2 : v.items.size();
        if (t.kind == SavedKind::kArray) {
          if (count != t.count) return Misfit();
        } else {
          w.Varint(count);
        }
        for (std::size_t i = 0; i < v.items.size(); ++i) {
          std::uint32_t part = map && i % 2 == 1 ? t.b : t.a;
          ROLLY_RETURN_IF_ERROR(Encode(w, part, v.items[i], depth + 1));
        }
        return OkStatus();
      }
      case SavedKind::kOwned:
        if (v.number == 0) {
          w.U8(0);
          return OkStatus();
        }
        if (v.number > tables_->layouts().size() || v.items.size() != 1) return Misfit();
        w.U8(1);
        owned_.push_back(&v);
        return OkStatus();
      case SavedKind::kReference:
        if (v.number == 0 || v.number % 2 == 1) {
          w.Varint(v.number);
          return OkStatus();
        } else {
          if (v.text.size() != 16) return Misfit();
          ByteReader r(AsBytes(v.text));
          std::uint64_t high = 0, low = 0;
          r.U64(&high);
          r.U64(&low);
          ROLLY_ASSIGN_OR_RETURN(std::uint32_t index, tables_->AddRef(Guid(high, low)));
          w.Varint(std::uint64_t{index} * 2 + 2);
          return OkStatus();
        }
      case SavedKind::kInstancedStruct:
        if (v.number == 0) {
          w.Varint(0);
          return OkStatus();
        }
        if (v.items.size() != 1) return Misfit();
        w.Varint(v.number);
        return Fields(w, static_cast<std::uint32_t>(v.number - 1), v.items[0], depth + 1);
      case SavedKind::kPropertyBag: {
        if (v.number >= tables_->bag_layouts().size()) return Misfit();
        const auto fields = tables_->bag_layouts()[v.number].fields;
        if (v.items.size() != fields.size()) return Misfit();
        w.Varint(v.number);
        for (std::size_t i = 0; i < fields.size(); ++i) {
          ROLLY_RETURN_IF_ERROR(Encode(w, fields[i].type, v.items[i], depth + 1));
        }
        return OkStatus();
      }
      default:
        return NewerVersionError("saved kind not supported by this version");
    }
  }

 private:
  Status Text(ByteWriter& w, const Value& v, int level) {
    if (level > kMaxTextDepth) return InvalidDataError("a text nests past 32 levels");
    if (v.kind != SavedKind::kText || v.items.size() < 3) return Misfit();
    for (std::size_t i = 0; i < 3; ++i) {
      if (v.items[i].kind != SavedKind::kString || v.items[i].text.size() > kMaxStringBytes) {
        return Misfit();
      }
      w.LengthPrefixed(v.items[i].text);
    }
    w.Varint(v.items.size() - 3);
    for (std::size_t i = 3; i < v.items.size(); ++i) {
      ROLLY_RETURN_IF_ERROR(Text(w, v.items[i], level + 1));
    }
    return OkStatus();
  }

  ChunkTables* tables_;
  std::vector<const Value*> owned_;
};

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
        ROLLY_ASSIGN_OR_RETURN(t.a, to_->AddName(from_.name_text(t.a)));
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

  Result<std::uint32_t> BagLayoutOf(std::uint32_t index) {
    BagLayout layout;
    for (const LayoutField& f : from_.bag_layouts()[index].fields) {
      LayoutField field;
      ROLLY_ASSIGN_OR_RETURN(field.name, to_->AddName(from_.name_text(f.name)));
      ROLLY_ASSIGN_OR_RETURN(field.type, Type(f.type));
      layout.fields.push_back(field);
    }
    return to_->AddSavedBagLayout(layout);
  }

  // Rewrites the table indexes a value tree holds (owned and instanced layouts, bag layouts) from
  // `from`'s to `to`'s, and references by record index to references by subject ID.
  Status Translate(Value& v) {
    switch (v.kind) {
      case SavedKind::kOwned:
      case SavedKind::kInstancedStruct:
        if (v.number != 0) {
          ROLLY_ASSIGN_OR_RETURN(std::uint32_t layout,
                                 LayoutOf(static_cast<std::uint32_t>(v.number - 1)));
          v.number = std::uint64_t{layout} + 1;
        }
        break;
      case SavedKind::kPropertyBag: {
        ROLLY_ASSIGN_OR_RETURN(std::uint32_t layout,
                               BagLayoutOf(static_cast<std::uint32_t>(v.number)));
        v.number = layout;
        break;
      }
      case SavedKind::kReference:
        if (v.number != 0) {
          if (v.text.size() != 16) {
            return InvalidInputError("a reference by record index moves only with its records");
          }
          v.number = 2;
        }
        break;
      default:
        break;
    }
    for (Value& item : v.items) ROLLY_RETURN_IF_ERROR(Translate(item));
    return OkStatus();
  }

  // The layout of `to` equal to layout `index` of `from`, added when `to` has none. A layout
  // reached again while it is being translated (a struct holding a container of itself) gets a
  // slot reserved then, filled when its translation ends.
  Result<std::uint32_t> LayoutOf(std::uint32_t index) {
    auto it = layouts_.find(index);
    if (it != layouts_.end()) return it->second;
    if (in_progress_.count(index)) {
      if (to_->layouts().size() >= kMaxLayouts) return InvalidDataError("more than 65,536 layouts");
      std::uint32_t reserved = to_->AppendLayout(Layout{});
      layouts_.emplace(index, reserved);
      return reserved;
    }
    in_progress_.insert(index);
    const Layout& source = from_.layouts()[index];
    Layout layout;
    Status status = [&]() -> Status {
      ROLLY_ASSIGN_OR_RETURN(layout.name, to_->AddName(from_.name_text(source.name)));
      for (const LayoutField& f : source.fields) {
        LayoutField field;
        ROLLY_ASSIGN_OR_RETURN(field.name, to_->AddName(from_.name_text(f.name)));
        ROLLY_ASSIGN_OR_RETURN(field.type, Type(f.type));
        layout.fields.push_back(field);
      }
      return OkStatus();
    }();
    in_progress_.erase(index);
    ROLLY_RETURN_IF_ERROR(status);
    auto reserved = layouts_.find(index);
    if (reserved != layouts_.end()) {
      to_->SetLayout(reserved->second, std::move(layout));
      return reserved->second;
    }
    std::uint32_t result;
    if (std::optional<std::uint32_t> existing = to_->FindLayout(layout)) {
      result = *existing;
    } else {
      if (to_->layouts().size() >= kMaxLayouts) return InvalidDataError("more than 65,536 layouts");
      result = to_->AppendLayout(std::move(layout));
    }
    layouts_.emplace(index, result);
    return result;
  }

 private:
  const ChunkTables& from_;
  ChunkTables* to_;
  std::map<std::uint32_t, std::uint32_t> types_;
  std::map<std::uint32_t, std::uint32_t> layouts_;
  std::set<std::uint32_t> in_progress_;
};

}  // namespace

Result<Value> DecodeProp(const ChunkTables& tables, const Record& record,
                         RecordSubjects records) {
  if (!IsKnownObjectKind(record.kind)) {
    return InvalidInputError("record of kind " + std::to_string(record.kind) +
                             " is not known to this version");
  }
  const std::size_t count = records.known() ? records.size() + 1 : kMaxRecords + 1;
  ROLLY_RETURN_IF_ERROR(CheckRecord(tables, record, 0, count, nullptr));
  Decoder decoder(tables, records);
  ByteReader in(record.Find(kPropSection)->bytes);
  Value root;
  if (!decoder.Fields(in, tables.layouts()[record.layout].fields, &root)) {
    return DamagedError("record: a checked value did not decode");
  }
  if (const Section* inln = record.Find(kOwnedSection)) {
    ByteReader entries(inln->bytes);
    std::uint64_t n = 0;
    entries.Varint(&n);
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t layout = 0;
      ByteView body, extra;
      if (!entries.Varint(&layout) || !entries.LengthPrefixed(entries.remaining(), &body) ||
          !entries.LengthPrefixed(entries.remaining(), &extra) || i >= decoder.owned().size()) {
        return DamagedError("record: a checked INLN did not decode");
      }
      Value* owner = decoder.owned()[i];
      owner->number = layout + 1;
      owner->extra.assign(AsChars(extra));
      owner->items.resize(1);
      ByteReader fields(body);
      if (!decoder.Fields(fields, tables.layouts()[layout].fields, &owner->items[0])) {
        return DamagedError("record: a checked INLN entry did not decode");
      }
    }
  }
  return root;
}

Result<EncodedValues> EncodeProp(ChunkTables* tables, std::uint32_t layout, const Value& root) {
  if (layout >= tables->layouts().size()) return InvalidInputError("layout past the table");
  EncodedValues out;
  Encoder encoder(tables);
  ByteWriter w(&out.prop);
  ROLLY_RETURN_IF_ERROR(encoder.Fields(w, layout, root, 1));
  if (encoder.owned().empty()) return out;
  Bytes entries;
  ByteWriter e(&entries);
  std::size_t done = 0;
  for (; done < encoder.owned().size(); ++done) {
    if (done >= FileBudget::kMaxOwned) return InvalidDataError("more than 262,144 owned objects");
    const Value& owned = *encoder.owned()[done];
    Bytes body;
    ByteWriter b(&body);
    const auto entry_layout = static_cast<std::uint32_t>(owned.number - 1);
    ROLLY_RETURN_IF_ERROR(encoder.Fields(b, entry_layout, owned.items[0], 1));
    e.Varint(entry_layout);
    e.LengthPrefixed(body);
    e.LengthPrefixed(std::string_view(owned.extra));
  }
  out.owned.emplace();
  ByteWriter inln(&*out.owned);
  inln.Varint(done);
  inln.Raw(entries);
  return out;
}

Result<Record> MoveRecord(const ChunkTables& from, const Record& record, ChunkTables* to,
                          RecordSubjects records,
                          const std::vector<SectionId>& table_free) {
  if (!IsKnownObjectKind(record.kind)) {
    return NewerVersionError("a record of kind " + std::to_string(record.kind) +
                             " cannot be moved by this version");
  }
  for (const Section& s : record.sections) {
    if (s.id != kPropSection && s.id != kExtraSection && s.id != kOwnedSection &&
        std::find(table_free.begin(), table_free.end(), s.id) == table_free.end()) {
      return NewerVersionError("a record with section " + std::string(s.id.data(), 4) +
                               " cannot be moved by this version");
    }
  }
  ROLLY_ASSIGN_OR_RETURN(Value root, DecodeProp(from, record, records));
  const ChunkTables::Mark mark = to->GetMark();
  Translator translator(from, to);
  Record moved = record;
  auto encode = [&]() -> Status {
    ROLLY_ASSIGN_OR_RETURN(moved.layout, translator.LayoutOf(record.layout));
    ROLLY_RETURN_IF_ERROR(translator.Translate(root));
    ROLLY_ASSIGN_OR_RETURN(EncodedValues values, EncodeProp(to, moved.layout, root));
    moved.sections.clear();
    moved.sections.push_back({kPropSection, std::move(values.prop)});
    if (values.owned) moved.sections.push_back({kOwnedSection, std::move(*values.owned)});
    for (const Section& s : record.sections) {
      if (s.id != kPropSection && s.id != kOwnedSection) moved.sections.push_back(s);
    }
    return OkStatus();
  };
  Status status = encode();
  if (!status.ok()) {
    to->Rollback(mark);
    return status;
  }
  return moved;
}

}  // namespace rolly::record
