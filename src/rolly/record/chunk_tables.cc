#include "rolly/record/chunk_tables.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "rolly/core/utf8.h"

namespace rolly::record {
namespace {

using reflect::Kind;
static_assert(static_cast<int>(Kind::kBool) == static_cast<int>(SavedKind::kBool));
static_assert(static_cast<int>(Kind::kSoftPath) == static_cast<int>(SavedKind::kSoftPath));
static_assert(static_cast<int>(Kind::kStruct) == static_cast<int>(SavedKind::kStruct));
static_assert(static_cast<int>(Kind::kOptional) == static_cast<int>(SavedKind::kOptional));
static_assert(static_cast<int>(Kind::kPropertyBag) == static_cast<int>(SavedKind::kPropertyBag));

constexpr std::uint8_t kLastKind = static_cast<std::uint8_t>(SavedKind::kPropertyBag);

bool HasElement(SavedKind k) {
  return k == SavedKind::kVector || k == SavedKind::kArray || k == SavedKind::kSet ||
         k == SavedKind::kMap || k == SavedKind::kOptional;
}

}  // namespace

SavedKind SavedKindOf(reflect::Kind kind) { return static_cast<SavedKind>(kind); }

std::string_view SavedKindName(SavedKind kind) {
  if (static_cast<std::uint8_t>(kind) > kLastKind) return "Unknown";
  return reflect::KindName(static_cast<reflect::Kind>(kind));
}

bool IsSupported(SavedKind kind) { return static_cast<std::uint8_t>(kind) <= kLastKind; }

namespace {
// Whether `text` may be a name in a save: 1 to 1,024 bytes of UTF-8 without NUL.
bool IsNameText(std::string_view text) {
  return !text.empty() && text.size() <= kMaxNameBytes && IsValidUtf8(text) &&
         text.find('\0') == std::string_view::npos;
}

Status BadName(std::string_view text) {
  return InvalidDataError("name \"" + std::string(text.substr(0, 64)) +
                          "\" cannot be saved: names are 1 to 1,024 bytes of UTF-8");
}

template <typename Map>
void EraseFrom(Map& map, std::size_t size) {
  for (auto it = map.begin(); it != map.end();) {
    if (it->second >= size) {
      it = map.erase(it);
    } else {
      ++it;
    }
  }
}
}  // namespace

void ChunkTables::Rollback(const Mark& mark) {
  if (names_.size() > mark.names) {
    for (std::size_t i = mark.names; i < names_.size(); ++i) {
      if (names_[i].id() < name_slot_.size()) name_slot_[names_[i].id()] = 0;
    }
    names_.resize(mark.names);
    while (!unfound_.empty() && unfound_.back().first >= mark.names) unfound_.pop_back();
    unfound_text_.resize(unfound_.empty() ? 0 : unfound_.back().second);
    EraseFrom(unfound_index_, mark.names);
    EraseFrom(name_index_, mark.names);
  }
  if (types_.size() > mark.types) {
    types_.resize(mark.types);
    depths_.resize(mark.types);
    EraseFrom(type_index_, mark.types);
    EraseFrom(live_type_index_[0], mark.types);
    EraseFrom(live_type_index_[1], mark.types);
  }
  if (layouts_.size() > mark.layouts) {
    for (auto& hits : layout_hits_) std::fill(std::begin(hits), std::end(hits), LayoutHit{});
    layouts_.resize(mark.layouts);
    EraseFrom(layout_content_, mark.layouts);
    EraseFrom(layout_index_[0], mark.layouts);
    EraseFrom(layout_index_[1], mark.layouts);
  }
  // A layout reserved by a failed AddLayout is gone from the index already; types may name
  // layouts past the mark only if they were added after it, and those went above.
  if (bag_layouts_.size() > mark.bag_layouts) {
    bag_layouts_.resize(mark.bag_layouts);
    EraseFrom(live_bag_index_, mark.bag_layouts);
    EraseFrom(bag_index_, mark.bag_layouts);
  }
  if (refs_.size() > mark.refs) {
    refs_.resize(mark.refs);
    EraseFrom(ref_index_, mark.refs);
  }
}

Result<std::uint32_t> ChunkTables::AddBagLayout(const std::vector<reflect::BagField>& fields) {
  std::vector<std::pair<Name, const reflect::Type*>> key;
  key.reserve(fields.size());
  for (const reflect::BagField& f : fields) key.emplace_back(f.name, f.type);
  auto it = live_bag_index_.find(key);
  if (it != live_bag_index_.end()) return it->second;
  if (fields.size() > kMaxBagProperties) {
    return InvalidDataError("a property bag of more than 1,024 properties cannot be saved");
  }
  BagLayout layout;
  layout.fields.reserve(fields.size());
  for (const reflect::BagField& f : fields) {
    LayoutField field;
    ROLLY_ASSIGN_OR_RETURN(field.name, AddName(f.name));
    ROLLY_ASSIGN_OR_RETURN(field.type, AddLiveType(*f.type, true));
    layout.fields.push_back(field);
  }
  ROLLY_ASSIGN_OR_RETURN(std::uint32_t index, AddSavedBagLayout(layout));
  live_bag_index_.emplace(std::move(key), index);
  return index;
}

Result<std::uint32_t> ChunkTables::AddSavedBagLayout(const BagLayout& layout) {
  auto it = bag_index_.find(layout.fields);
  if (it != bag_index_.end()) return it->second;
  if (bag_layouts_.size() >= kMaxBagLayoutsPerChunk) {
    return InvalidDataError("more than 4,096 property bag layouts");
  }
  auto index = static_cast<std::uint32_t>(bag_layouts_.size());
  bag_layouts_.push_back(layout);
  bag_index_.emplace(layout.fields, index);
  return index;
}

Result<std::uint32_t> ChunkTables::AddRef(Guid id) {
  auto it = ref_index_.find(id);
  if (it != ref_index_.end()) return it->second;
  if (refs_.size() >= kMaxRefs) return InvalidDataError("more than 4,194,304 referred subjects");
  auto index = static_cast<std::uint32_t>(refs_.size());
  refs_.push_back(id);
  ref_index_.emplace(id, index);
  return index;
}

Result<std::uint32_t> ChunkTables::AddName(Name name) {
  const std::uint32_t id = name.id();
  if (id < name_slot_.size() && name_slot_[id] != 0) return name_slot_[id] - 1;
  auto it = name_index_.find(name);
  if (it != name_index_.end()) {
    if (id >= name_slot_.size()) name_slot_.resize(id + 1, 0);
    name_slot_[id] = it->second + 1;
    return it->second;
  }
  if (!IsNameText(name.view())) return BadName(name.view());
  std::uint32_t index = 0;
  auto unfound = unfound_.empty() ? unfound_index_.end() : unfound_index_.find(name.str());
  if (unfound != unfound_index_.end()) {
    // Added by its text before the process had the name: the same entry, now known as a Name.
    index = unfound->second;
    names_[index] = name;
  } else {
    index = static_cast<std::uint32_t>(names_.size());
    names_.push_back(name);
  }
  name_index_.emplace(name, index);
  if (id >= name_slot_.size()) name_slot_.resize(id + 1, 0);
  name_slot_[id] = index + 1;
  return index;
}

Result<std::uint32_t> ChunkTables::AddName(std::string_view text) {
  if (std::optional<Name> name = Name::Find(text)) return AddName(*name);
  auto it = unfound_index_.find(std::string(text));
  if (it != unfound_index_.end()) return it->second;
  if (!IsNameText(text)) return BadName(text);
  return PushUnfound(text);
}

std::uint32_t ChunkTables::PushUnfound(std::string_view text) {
  const auto index = static_cast<std::uint32_t>(names_.size());
  names_.push_back(Name());
  unfound_text_.append(text);
  unfound_.emplace_back(index, static_cast<std::uint32_t>(unfound_text_.size()));
  unfound_index_.emplace(std::string(text), index);
  return index;
}

std::string_view ChunkTables::name_text(std::uint32_t index) const {
  if (!names_[index].is_none()) return names_[index].view();
  auto it = std::lower_bound(unfound_.begin(), unfound_.end(), index,
                             [](const auto& entry, std::uint32_t i) { return entry.first < i; });
  const std::uint32_t begin = it == unfound_.begin() ? 0 : std::prev(it)->second;
  return std::string_view(unfound_text_).substr(begin, it->second - begin);
}

std::optional<std::uint32_t> ChunkTables::FindName(Name name) const {
  auto it = name_index_.find(name);
  if (it == name_index_.end()) return std::nullopt;
  return it->second;
}

std::uint32_t ChunkTables::Push(const SavedType& type) {
  int depth = 1;
  if (HasElement(type.kind)) depth = depths_[type.a] + 1;
  if (type.kind == SavedKind::kMap) depth = std::max(depth, depths_[type.b] + 1);
  auto index = static_cast<std::uint32_t>(types_.size());
  types_.push_back(type);
  depths_.push_back(depth);
  return index;
}

std::uint32_t ChunkTables::AddType(const SavedType& type) {
  auto key = std::make_tuple(static_cast<std::uint8_t>(type.kind), type.a, type.b, type.count);
  auto it = type_index_.find(key);
  if (it != type_index_.end()) return it->second;
  std::uint32_t index = Push(type);
  type_index_.emplace(key, index);
  return index;
}

Result<std::uint32_t> ChunkTables::AddLiveType(const reflect::Type& type, bool whole) {
  return AddLiveType(type, 1, whole);
}

Result<std::uint32_t> ChunkTables::AddLiveType(const reflect::Type& type, int depth, bool whole) {
  auto& index_of = live_type_index_[whole ? 1 : 0];
  auto it = index_of.find(&type);
  if (it != index_of.end()) return it->second;
  if (depth > kMaxTypeDepth) return InvalidDataError("a saved type nests past 64 levels");
  SavedType saved;
  saved.kind = SavedKindOf(type.kind);
  if (!IsSupported(saved.kind)) {
    return InvalidDataError("type " + reflect::DescribeType(type) +
                            " is not saved by this version of the record layer");
  }
  switch (saved.kind) {
    case SavedKind::kEnum: {
      ROLLY_ASSIGN_OR_RETURN(saved.a, AddName(type.enum_info->name()));
      break;
    }
    case SavedKind::kStruct: {
      // Asked of the plan, not the layout: a struct holding containers of itself meets its own
      // layout here while it is still being filled.
      const reflect::ClassInfo& cls = *type.class_info;
      if ((whole ? cls.WholePlan() : cls.Plan()).fields.empty()) {
        return InvalidDataError("struct " + cls.name().str() +
                                " saves no fields, so a container of it cannot be saved");
      }
      ROLLY_ASSIGN_OR_RETURN(saved.a, AddLayout(cls, whole));
      break;
    }
    case SavedKind::kMap: {
      ROLLY_ASSIGN_OR_RETURN(saved.a, AddLiveType(*type.element, depth + 1, whole));
      ROLLY_ASSIGN_OR_RETURN(saved.b, AddLiveType(*type.mapped, depth + 1, whole));
      break;
    }
    case SavedKind::kArray:
      if (type.fixed_count == 0 || type.fixed_count > kMaxArrayCount) {
        return InvalidDataError("an array of " + std::to_string(type.fixed_count) +
                                " elements cannot be saved (1 to 1,048,576)");
      }
      saved.count = static_cast<std::uint32_t>(type.fixed_count);
      [[fallthrough]];
    case SavedKind::kVector:
    case SavedKind::kSet:
    case SavedKind::kOptional: {
      ROLLY_ASSIGN_OR_RETURN(saved.a, AddLiveType(*type.element, depth + 1, whole));
      break;
    }
    default:
      break;
  }
  if (HasElement(saved.kind) &&
      std::max(depths_[saved.a], saved.kind == SavedKind::kMap ? depths_[saved.b] : 0) >=
          kMaxTypeDepth) {
    return InvalidDataError("a saved type nests past 64 levels");
  }
  std::uint32_t index = AddType(saved);
  index_of.emplace(&type, index);
  return index;
}

Result<std::uint32_t> ChunkTables::AddLayoutSlow(const reflect::ClassInfo& cls, bool whole) {
  LayoutHit& hit = layout_hits_[whole ? 1 : 0][LayoutHitSlot(cls)];
  auto& index_of = layout_index_[whole ? 1 : 0];
  auto it = index_of.find(&cls);
  if (it != index_of.end()) {
    hit = {&cls, it->second};
    return it->second;
  }
  const reflect::ClassPlan& plan = whole ? cls.WholePlan() : cls.Plan();
  if (plan.fields.size() > kMaxLayoutFields) {
    return InvalidDataError("class " + cls.name().str() + " has more than 4,096 saved fields");
  }
  if (layouts_.size() >= kMaxLayouts)
    return InvalidDataError("more than 65,536 layouts in a chunk");
  // Reserve the slot first so a struct holding containers of itself finds its layout.
  auto index = static_cast<std::uint32_t>(layouts_.size());
  layouts_.emplace_back();
  index_of.emplace(&cls, index);
  Layout layout;
  auto fail = [&](Status s) {
    index_of.erase(&cls);
    // A struct holding containers of itself found its reserved layout through the cache too.
    if (hit.cls == &cls) hit = LayoutHit{};
    return s;
  };
  Result<std::uint32_t> name = AddName(cls.name());
  if (!name.ok()) return fail(name.status());
  layout.name = *name;
  for (const reflect::PlanField& f : plan.fields) {
    Result<std::uint32_t> field_name = AddName(f.name());
    if (!field_name.ok()) return fail(field_name.status());
    Result<std::uint32_t> field_type = AddLiveType(f.type(), whole);
    if (!field_type.ok()) {
      return fail(InvalidDataError("class " + cls.name().str() + " field " + f.name().str() + ": " +
                                   std::string(field_type.status().message())));
    }
    layout.fields.push_back({*field_name, *field_type});
  }
  SetLayout(index, std::move(layout));
  layout_hits_[whole ? 1 : 0][LayoutHitSlot(cls)] = {&cls, index};
  return index;
}

std::uint32_t ChunkTables::AppendLayout(Layout layout) {
  auto index = static_cast<std::uint32_t>(layouts_.size());
  layout_content_.emplace(layout, index);
  layouts_.push_back(std::move(layout));
  return index;
}

void ChunkTables::SetLayout(std::uint32_t index, Layout layout) {
  // The layout it replaces (one reserved empty) no longer names this index.
  auto old = layout_content_.find(layouts_[index]);
  if (old != layout_content_.end() && old->second == index) layout_content_.erase(old);
  layout_content_.emplace(layout, index);
  layouts_[index] = std::move(layout);
}

std::optional<std::uint32_t> ChunkTables::FindLayout(const Layout& layout) const {
  auto it = layout_content_.find(layout);
  if (it == layout_content_.end()) return std::nullopt;
  return it->second;
}

std::string ChunkTables::Describe(std::uint32_t index) const {
  std::string out;
  if (!DescribeInto(index, &out)) out.append("...");
  return out;
}

// Appends type `index`'s description to `out`; false, appending nothing more, once `out` holds
// kMaxDescription bytes. A file's types may nest maps of maps whose whole text doubles at each
// level: the walk stops where the text does, so it visits about as many types as it names.
bool ChunkTables::DescribeInto(std::uint32_t index, std::string* out) const {
  if (out->size() >= kMaxDescription) return false;
  if (index >= types_.size()) {
    out->append("?");
    return true;
  }
  const SavedType& t = types_[index];
  const std::string_view kind = SavedKindName(t.kind);
  switch (t.kind) {
    case SavedKind::kEnum:
      out->append("Enum ").append(name_text(t.a).substr(0, kMaxDescription));
      return true;
    case SavedKind::kStruct:
      out->append("Struct ").append(name_text(layouts_[t.a].name).substr(0, kMaxDescription));
      return true;
    case SavedKind::kMap:
      out->append(kind).append("<");
      if (!DescribeInto(t.a, out)) return false;
      out->append(", ");
      if (!DescribeInto(t.b, out)) return false;
      out->append(">");
      return true;
    case SavedKind::kArray:
      out->append(kind).append("<");
      if (!DescribeInto(t.a, out)) return false;
      out->append(", ").append(std::to_string(t.count)).append(">");
      return true;
    case SavedKind::kVector:
    case SavedKind::kSet:
    case SavedKind::kOptional:
      out->append(kind).append("<");
      if (!DescribeInto(t.a, out)) return false;
      out->append(">");
      return true;
    default:
      out->append(kind);
      return true;
  }
}

void ChunkTables::Encode(ByteWriter& out) const {
  out.U8(0);
  out.Varint(names_.size());
  for (std::uint32_t i = 0; i < names_.size(); ++i) out.LengthPrefixed(name_text(i));
  out.Varint(types_.size());
  for (const SavedType& t : types_) {
    out.U8(static_cast<std::uint8_t>(t.kind));
    switch (t.kind) {
      case SavedKind::kEnum:
      case SavedKind::kStruct:
      case SavedKind::kVector:
      case SavedKind::kSet:
      case SavedKind::kOptional:
        out.Varint(t.a);
        break;
      case SavedKind::kArray:
        out.Varint(t.a);
        out.Varint(t.count);
        break;
      case SavedKind::kMap:
        out.Varint(t.a);
        out.Varint(t.b);
        break;
      default:
        break;
    }
  }
  out.Varint(layouts_.size());
  for (const Layout& l : layouts_) {
    out.Varint(l.name);
    out.Varint(l.fields.size());
    for (const LayoutField& f : l.fields) {
      out.Varint(f.name);
      out.Varint(f.type);
    }
  }
  out.Varint(bag_layouts_.size());
  for (const BagLayout& l : bag_layouts_) {
    out.Varint(l.fields.size());
    for (const LayoutField& f : l.fields) {
      out.Varint(f.name);
      out.Varint(f.type);
    }
  }
  out.Varint(refs_.size());
  for (const Guid& g : refs_) {
    out.U64(g.high());
    out.U64(g.low());
  }
}

Result<ChunkTables> DecodeTables(ByteView record) {
  ByteReader in(record);
  auto damaged = [](std::string_view what) {
    return DamagedError("record 0 (tables): " + std::string(what));
  };
  std::uint8_t kind = 0;
  if (!in.U8(&kind) || kind != 0) return damaged("not a TABLES record");
  ChunkTables tables;
  std::uint64_t count = 0;
  if (!in.VarintAtMost(std::min<std::uint64_t>(kMaxNames, in.remaining()), &count)) {
    return damaged("bad name count");
  }
  tables.names_.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string_view text;
    if (!in.LengthPrefixed(kMaxNameBytes, &text) || !IsNameText(text)) {
      return damaged("name " + std::to_string(i) + " is not 1 to 1,024 bytes of UTF-8");
    }
    // Not interned: a name the process does not have is kept as text (see names()).
    const std::optional<Name> name = Name::Find(text);
    // A name found may have been interned by another thread since an earlier copy of it was
    // not: both are looked for.
    const bool repeated =
        (name && !tables.name_index_.emplace(*name, static_cast<std::uint32_t>(i)).second) ||
        (!tables.unfound_index_.empty() && tables.unfound_index_.contains(std::string(text)));
    if (repeated) return damaged("name " + std::to_string(i) + " repeats an earlier name");
    if (name) {
      tables.names_.push_back(*name);
    } else {
      tables.PushUnfound(text);
    }
  }
  if (!in.VarintAtMost(std::min<std::uint64_t>(kMaxTypes, in.remaining()), &count)) {
    return damaged("bad type count");
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> struct_layouts;  // (type, layout)
  tables.types_.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint8_t k = 0;
    if (!in.U8(&k)) return damaged("truncated type " + std::to_string(i));
    SavedType t;
    t.kind = static_cast<SavedKind>(k);
    if (!IsSupported(t.kind)) {
      return NewerVersionError("record 0 (tables): saved kind " + std::to_string(k) + " of type " +
                               std::to_string(i) + " is not supported by this version");
    }
    std::uint64_t a = 0, b = 0, n = 0;
    bool ok = true;
    switch (t.kind) {
      case SavedKind::kEnum:
        ok = in.VarintAtMost(tables.names_.empty() ? 0 : tables.names_.size() - 1, &a) &&
             !tables.names_.empty();
        break;
      case SavedKind::kStruct:
        ok = in.VarintAtMost(kMaxLayouts - 1, &a);
        struct_layouts.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(a));
        break;
      case SavedKind::kVector:
      case SavedKind::kSet:
      case SavedKind::kOptional:
        ok = i > 0 && in.VarintAtMost(i - 1, &a);
        break;
      case SavedKind::kArray:
        ok = i > 0 && in.VarintAtMost(i - 1, &a) && in.VarintAtMost(kMaxArrayCount, &n) && n > 0;
        break;
      case SavedKind::kMap:
        ok = i > 0 && in.VarintAtMost(i - 1, &a) && in.VarintAtMost(i - 1, &b);
        break;
      default:
        break;
    }
    if (!ok) return damaged("type " + std::to_string(i) + " has a bad parameter");
    t.a = static_cast<std::uint32_t>(a);
    t.b = static_cast<std::uint32_t>(b);
    t.count = static_cast<std::uint32_t>(n);
    tables.type_index_.emplace(std::make_tuple(k, t.a, t.b, t.count),
                               static_cast<std::uint32_t>(i));
    tables.Push(t);
    if (tables.depths_.back() > kMaxTypeDepth) {
      return damaged("type " + std::to_string(i) + " nests past 64 levels");
    }
  }
  if (!in.VarintAtMost(std::min<std::uint64_t>(kMaxLayouts, in.remaining()), &count)) {
    return damaged("bad layout count");
  }
  tables.layouts_.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    Layout layout;
    std::uint64_t name = 0, fields = 0;
    if (tables.names_.empty() || !in.VarintAtMost(tables.names_.size() - 1, &name) ||
        !in.VarintAtMost(std::min<std::uint64_t>(kMaxLayoutFields, in.remaining()), &fields)) {
      return damaged("layout " + std::to_string(i) + " has a bad name or field count");
    }
    layout.name = static_cast<std::uint32_t>(name);
    layout.fields.reserve(fields);
    for (std::uint64_t f = 0; f < fields; ++f) {
      std::uint64_t fname = 0, ftype = 0;
      if (!in.VarintAtMost(tables.names_.size() - 1, &fname) || tables.types_.empty() ||
          !in.VarintAtMost(tables.types_.size() - 1, &ftype)) {
        return damaged("layout " + std::to_string(i) + " field " + std::to_string(f) +
                       " has a bad name or type");
      }
      for (const LayoutField& other : layout.fields) {
        if (other.name == fname) {
          return damaged("layout " + std::to_string(i) + " names field " +
                         std::string(tables.name_text(static_cast<std::uint32_t>(fname))) +
                         " twice");
        }
      }
      layout.fields.push_back(
          {static_cast<std::uint32_t>(fname), static_cast<std::uint32_t>(ftype)});
    }
    tables.layout_content_.emplace(layout, static_cast<std::uint32_t>(i));
    tables.layouts_.push_back(std::move(layout));
  }
  for (auto [type, layout] : struct_layouts) {
    if (layout >= tables.layouts_.size()) {
      return damaged("type " + std::to_string(type) + " names a layout past the table");
    }
    // Every value then takes at least one byte, so walking a record's values costs at most a
    // few steps per byte (a struct of structs of no fields would cost steps without bytes).
    if (tables.layouts_[layout].fields.empty()) {
      return damaged("type " + std::to_string(type) + " is a struct of no fields");
    }
  }
  if (!in.VarintAtMost(std::min<std::uint64_t>(kMaxBagLayoutsPerChunk, in.remaining()), &count)) {
    return damaged("bad bag layout count");
  }
  tables.bag_layouts_.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    BagLayout layout;
    std::uint64_t fields = 0;
    if (!in.VarintAtMost(std::min<std::uint64_t>(kMaxBagProperties, in.remaining()), &fields)) {
      return damaged("bag layout " + std::to_string(i) + " has a bad property count");
    }
    layout.fields.reserve(fields);
    for (std::uint64_t f = 0; f < fields; ++f) {
      std::uint64_t fname = 0, ftype = 0;
      if (tables.names_.empty() || !in.VarintAtMost(tables.names_.size() - 1, &fname) ||
          tables.types_.empty() || !in.VarintAtMost(tables.types_.size() - 1, &ftype)) {
        return damaged("bag layout " + std::to_string(i) + " property " + std::to_string(f) +
                       " has a bad name or type");
      }
      for (const LayoutField& other : layout.fields) {
        if (other.name == fname) {
          return damaged("bag layout " + std::to_string(i) + " names property " +
                         std::string(tables.name_text(static_cast<std::uint32_t>(fname))) +
                         " twice");
        }
      }
      layout.fields.push_back(
          {static_cast<std::uint32_t>(fname), static_cast<std::uint32_t>(ftype)});
    }
    if (!tables.bag_index_.emplace(layout.fields, static_cast<std::uint32_t>(i)).second) {
      return damaged("bag layout " + std::to_string(i) + " repeats an earlier one");
    }
    tables.bag_layouts_.push_back(std::move(layout));
  }
  if (!in.VarintAtMost(std::min<std::uint64_t>(kMaxRefs, in.remaining() / 16), &count)) {
    return damaged("bad ref count");
  }
  tables.refs_.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t high = 0, low = 0;
    if (!in.U64(&high) || !in.U64(&low)) return damaged("truncated ref");
    Guid id(high, low);
    if (!tables.ref_index_.emplace(id, static_cast<std::uint32_t>(i)).second) {
      return damaged("ref " + std::to_string(i) + " repeats an earlier one");
    }
    tables.refs_.push_back(id);
  }
  if (!in.ok() || !in.empty()) return damaged("bytes after the refs");
  return tables;
}

}  // namespace rolly::record
