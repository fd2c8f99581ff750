#include "rolly/record/apply.h"

#include <cstddef>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "rolly/reflect/property_bag.h"
#include "rolly/reflect/value_types.h"

namespace rolly::record {
namespace {

using reflect::Kind;
using reflect::Type;

// Storage for a temporary value of `t` (a set or map key, a value for a setter).
class Temp {
 public:
  explicit Temp(const Type& t) : t_(t) {
    at_ = t.size <= sizeof(small_) && t.align <= alignof(std::max_align_t)
              ? static_cast<void*>(small_)
              : ::operator new(t.size, std::align_val_t(t.align));
    t.construct(at_);
  }
  ~Temp() {
    t_.destroy(at_);
    if (at_ != static_cast<void*>(small_)) ::operator delete(at_, std::align_val_t(t_.align));
  }
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;
  void* get() { return at_; }

 private:
  const Type& t_;
  alignas(std::max_align_t) unsigned char small_[128];
  void* at_;
};

bool ReadF(ByteReader& in, float* f) { return in.F32(f); }
bool ReadF(ByteReader& in, double* f) { return in.F64(f); }
template <typename... F>
bool ReadFloats(ByteReader& in, F*... f) {
  return (ReadF(in, f) && ...);
}

// Whether values of `kind` are read by ReadPlain: no nested value, no hook, no message.
constexpr bool IsPlain(Kind kind) {
  switch (kind) {
    case Kind::kBool: case Kind::kInt8: case Kind::kInt16: case Kind::kInt32: case Kind::kInt64:
    case Kind::kUInt8: case Kind::kUInt16: case Kind::kUInt32: case Kind::kUInt64:
    case Kind::kFloat: case Kind::kDouble: case Kind::kString: case Kind::kName:
    case Kind::kGuid: case Kind::kColor: case Kind::kDateTime:
    case Kind::kVector2f: case Kind::kVector2d: case Kind::kVector3f: case Kind::kVector3d:
    case Kind::kVector4f: case Kind::kVector4d: case Kind::kQuatf: case Kind::kQuatd:
    case Kind::kRotatorf: case Kind::kRotatord: case Kind::kTransformf: case Kind::kTransformd:
    case Kind::kSoftPath:
      return true;
    default:
      return false;
  }
}

// Reads a varint (zigzag for a signed T) into the T at `v`; when the reader fails, 0 is stored.
template <typename T>
bool ReadInteger(ByteReader& in, void* v) {
  bool ok;
  if constexpr (std::is_signed_v<T>) {
    std::int64_t s = 0;
    ok = in.SignedVarint(&s);
    *static_cast<T*>(v) = static_cast<T>(s);
  } else {
    std::uint64_t u = 0;
    ok = in.Varint(&u);
    *static_cast<T*>(v) = static_cast<T>(u);
  }
  return ok;
}

// Reads a value of a plain kind (IsPlain) into `v`, an object of it; false when the bytes end
// first or a length or name index is out of range. `names`: the chunk's names. Inlined where most
// values are read (a class's fields, a vector's elements), so a plain value costs no call and no
// Status.
[[gnu::always_inline]] inline bool ReadPlain(ByteReader& in, Kind kind,
                                             record_internal::NameValues& names, void* v) {
  std::uint64_t u = 0;
  bool ok = false;
  switch (kind) {
    case Kind::kBool: {
      std::uint8_t b = 0;
      ok = in.U8(&b);
      *static_cast<bool*>(v) = b != 0;
      break;
    }
    case Kind::kInt8:
      return ReadInteger<std::int8_t>(in, v);
    case Kind::kInt16:
      return ReadInteger<std::int16_t>(in, v);
    case Kind::kInt32:
      return ReadInteger<std::int32_t>(in, v);
    case Kind::kInt64:
      return ReadInteger<std::int64_t>(in, v);
    case Kind::kUInt8:
      return ReadInteger<std::uint8_t>(in, v);
    case Kind::kUInt16:
      return ReadInteger<std::uint16_t>(in, v);
    case Kind::kUInt32:
      return ReadInteger<std::uint32_t>(in, v);
    case Kind::kUInt64:
      return ReadInteger<std::uint64_t>(in, v);
    case Kind::kFloat:
      ok = in.F32(static_cast<float*>(v));
      break;
    case Kind::kDouble:
      ok = in.F64(static_cast<double*>(v));
      break;
    case Kind::kString:
    case Kind::kSoftPath: {
      std::string_view text;
      ok = in.LengthPrefixed(kMaxStringBytes, &text);
      std::string& out = kind == Kind::kString ? *static_cast<std::string*>(v)
                                               : static_cast<reflect::SoftPath*>(v)->path;
      out.assign(text);
      break;
    }
    case Kind::kName:
      ok = in.VarintAtMost(names.size(), &u);
      if (ok) *static_cast<Name*>(v) = u == 0 ? Name() : names[static_cast<std::uint32_t>(u - 1)];
      break;
    case Kind::kGuid: {
      std::uint64_t high = 0, low = 0;
      ok = in.U64(&high) && in.U64(&low);
      *static_cast<Guid*>(v) = Guid(high, low);
      break;
    }
    case Kind::kColor: {
      auto& c = *static_cast<reflect::Color*>(v);
      ok = ReadFloats(in, &c.r, &c.g, &c.b, &c.a);
      break;
    }
    case Kind::kDateTime:
      ok = in.I64(&static_cast<reflect::DateTime*>(v)->ticks);
      break;
#define ROLLY_VEC(K, T, ...)                \
  case Kind::K: {                           \
    auto& x = *static_cast<reflect::T*>(v); \
    ok = ReadFloats(in, __VA_ARGS__);       \
    break;                                  \
  }
      ROLLY_VEC(kVector2f, Vector2f, &x.x, &x.y)
      ROLLY_VEC(kVector2d, Vector2d, &x.x, &x.y)
      ROLLY_VEC(kVector3f, Vector3f, &x.x, &x.y, &x.z)
      ROLLY_VEC(kVector3d, Vector3d, &x.x, &x.y, &x.z)
      ROLLY_VEC(kVector4f, Vector4f, &x.x, &x.y, &x.z, &x.w)
      ROLLY_VEC(kVector4d, Vector4d, &x.x, &x.y, &x.z, &x.w)
      ROLLY_VEC(kQuatf, Quatf, &x.x, &x.y, &x.z, &x.w)
      ROLLY_VEC(kQuatd, Quatd, &x.x, &x.y, &x.z, &x.w)
      ROLLY_VEC(kRotatorf, Rotatorf, &x.pitch, &x.yaw, &x.roll)
      ROLLY_VEC(kRotatord, Rotatord, &x.pitch, &x.yaw, &x.roll)
      ROLLY_VEC(kTransformf, Transformf, &x.rotation.x, &x.rotation.y, &x.rotation.z, &x.rotation.w,
                &x.translation.x, &x.translation.y, &x.translation.z, &x.scale.x, &x.scale.y,
                &x.scale.z)
      ROLLY_VEC(kTransformd, Transformd, &x.rotation.x, &x.rotation.y, &x.rotation.z, &x.rotation.w,
                &x.translation.x, &x.translation.y, &x.translation.z, &x.scale.x, &x.scale.y,
                &x.scale.z)
#undef ROLLY_VEC
    default:
      break;
  }
  return ok;
}

Status Truncated() { return DamagedError("a checked record did not read back"); }

// Whether a record of `layout` applies to an object of `cls`: its saved class is `cls`, or names
// it through the class redirects. (Asked by ApplyParts, and again by its refusal to say why.)
bool SavedClassIs(const ChunkTables& tables, const reflect::TypeRegistry& registry,
                  std::uint32_t layout, const reflect::ClassInfo& cls) {
  const Name saved = tables.names()[tables.layouts()[layout].name];
  return saved == cls.name() || registry.FindClass(saved) == &cls;
}

}  // namespace

namespace record_internal {

// Out of line and cold: most names are the game's own, interned before the tables were read.
[[gnu::cold, gnu::noinline]] Name NameValues::Made(std::uint32_t index) {
  if (made_.empty()) made_.resize(tables_.names().size());
  if (made_[index].is_none()) made_[index] = Name(tables_.name_text(index));
  return made_[index];
}

}  // namespace record_internal

std::string Applier::PathText(const Path* path) {
  std::string text;
  for (const Path* p = path; p != nullptr; p = p->parent) {
    text = text.empty() ? p->name.str() : p->name.str() + "." + text;
  }
  return text;
}

void Applier::Message(std::string text) {
  if (Keeps()) messages_->push_back(std::move(text));
}

bool Applier::Matches(std::uint32_t saved, const Type& live) {
  auto key = std::make_pair(saved, &live);
  auto it = matches_.find(key);
  if (it != matches_.end()) return it->second;
  const SavedType& t = tables_.types()[saved];
  bool result = t.kind == SavedKindOf(live.kind);
  if (result) {
    switch (t.kind) {
      case SavedKind::kEnum: {
        Name saved_name = tables_.names()[t.a];
        result = saved_name == live.enum_info->name() ||
                 registry_.FindEnum(saved_name) == live.enum_info;
        break;
      }
      case SavedKind::kStruct: {
        Name saved_name = tables_.names()[tables_.layouts()[t.a].name];
        result = saved_name == live.class_info->name() ||
                 registry_.FindStruct(saved_name) == live.class_info;
        break;
      }
      case SavedKind::kArray:
        result = t.count == live.fixed_count && Matches(t.a, *live.element);
        break;
      case SavedKind::kMap:
        result = Matches(t.a, *live.element) && Matches(t.b, *live.mapped);
        break;
      case SavedKind::kVector:
      case SavedKind::kSet:
      case SavedKind::kOptional:
        result = Matches(t.a, *live.element);
        break;
      default:
        break;
    }
  }
  matches_.emplace(key, result);
  return result;
}

// Inline in ReadFields: every record and struct value asks.
[[gnu::always_inline]] inline const Applier::Binding& Applier::Bind(
    std::uint32_t layout, const reflect::ClassInfo& cls, bool whole) {
  // The binding used last for the layout (and `whole`), by index: a chunk's records come in
  // runs of a few layouts taking turns (an actor's, then its components'), each mostly of one
  // class.
  const std::size_t quick = std::size_t{layout} * 2 + (whole ? 1 : 0);
  if (quick < quick_.size() && quick_[quick] != nullptr && quick_[quick]->cls == &cls) {
    return *quick_[quick];
  }
  return BindSlow(layout, cls, whole);
}

const Applier::Binding& Applier::BindSlow(std::uint32_t layout, const reflect::ClassInfo& cls,
                                          bool whole) {
  if (quick_.empty()) quick_.resize(tables_.layouts().size() * 2, nullptr);
  const std::size_t quick = std::size_t{layout} * 2 + (whole ? 1 : 0);
  auto& slot = bindings_[std::make_tuple(layout, &cls, whole)];
  if (quick < quick_.size()) quick_[quick] = slot.get();
  if (slot) return *slot;
  slot = std::make_unique<Binding>();
  slot->cls = &cls;
  for (const LayoutField& f : tables_.layouts()[layout].fields) {
    FieldBinding b;
    b.saved_type = f.type;
    const std::string name(tables_.name_text(f.name));
    b.field = registry_.FindSavedField(cls, tables_.names()[f.name], whole);
    if (b.field == nullptr) {
      b.skip_message =
          "field " + name + " of " + cls.name().str() + " is no longer saved: skipped";
    } else {
      b.matches = Matches(f.type, b.field->type());
      b.kind = b.field->type().kind;
      b.offset = b.field->offset;
      b.plain = b.matches && !b.field->property->setter && IsPlain(b.kind);
      if (!b.matches) {
        b.skip_message = "field " + name + " was saved as " + tables_.Describe(f.type) +
                         " and is now " + reflect::DescribeType(b.field->type()) + ": skipped";
      }
    }
    slot->fields.push_back(std::move(b));
  }
  if (quick < quick_.size()) quick_[quick] = slot.get();
  return *slot;
}

Status Applier::ReadFields(ByteReader& in, std::uint32_t layout, const reflect::ClassInfo& cls,
                           void* object, int depth, const Path* path, bool whole) {
  const Binding& binding = Bind(layout, cls, whole);
  for (const FieldBinding& b : binding.fields) {
    if (b.plain) {
      // Most fields: read straight into the object.
      if (!ReadPlain(in, b.kind, name_values_, static_cast<char*>(object) + b.offset)) {
        return Truncated();
      }
      continue;
    }
    if (!b.matches) {
      if (Keeps()) Message(path ? PathText(path) + ": " + b.skip_message : b.skip_message);
      ROLLY_RETURN_IF_ERROR(Skip(in, b.saved_type));
      continue;
    }
    Path here{path, b.field->name()};
    if (b.field->property->setter) {
      if (no_game_code_) return NeedsGameCode();
      Temp temp(b.field->type());
      ROLLY_RETURN_IF_ERROR(
          Read(in, b.saved_type, b.field->type(), temp.get(), depth, &here, whole));
      b.field->Set(object, temp.get());
    } else {
      ROLLY_RETURN_IF_ERROR(Read(in, b.saved_type, b.field->type(), b.field->Address(object),
                                 depth, &here, whole));
    }
  }
  return OkStatus();
}

Status Applier::Skip(ByteReader& in, std::uint32_t saved) {
  std::uint64_t owned = 0;
  ROLLY_RETURN_IF_ERROR(SkipCheckedValue(in, tables_, saved, &owned));
  // The entries of owned objects inside a skipped value are skipped too.
  targets_.insert(targets_.end(), owned, reflect::ObjectRef{});
  return OkStatus();
}

Status Applier::SkipFields(ByteReader& in, const std::vector<LayoutField>& fields) {
  for (const LayoutField& f : fields) ROLLY_RETURN_IF_ERROR(Skip(in, f.type));
  return OkStatus();
}

Status Applier::Read(ByteReader& in, std::uint32_t saved, const Type& live, void* v, int depth,
                     const Path* path, bool whole) {
  if (IsPlain(live.kind)) {
    return ReadPlain(in, live.kind, name_values_, v) ? OkStatus() : Truncated();
  }
  const SavedType& t = tables_.types()[saved];
  std::uint64_t u = 0;
  bool ok = true;
  switch (live.kind) {
    case Kind::kEnum: {
      ok = in.VarintAtMost(tables_.names().size() - 1, &u);
      if (!ok) break;
      Name value_name = tables_.names()[u];
      std::optional<std::int64_t> number = registry_.FindEnumValue(*live.enum_info, value_name);
      if (number) {
        live.enum_ops->set(v, *number);
      } else if (Keeps()) {
        Message("field " + PathText(path) + ": enum " + live.enum_info->name().str() +
                " has no value " + std::string(tables_.name_text(static_cast<std::uint32_t>(u))) +
                ": left as it was");
      }
      break;
    }
    case Kind::kStruct:
      return ReadFields(in, t.a, *live.class_info, v, depth + 1, path, whole);
    case Kind::kText:
      return ReadText(in, static_cast<reflect::Text*>(v));
    case Kind::kOwned:
      if (no_game_code_) return NeedsGameCode();
      return ReadOwned(in, live, v, path);
    case Kind::kReference:
      return ReadReference(in, live, v, path);
    case Kind::kInstancedStruct:
      if (no_game_code_) return NeedsGameCode();
      return ReadInstanced(in, live, v, depth, path);
    case Kind::kPropertyBag:
      if (no_game_code_) return NeedsGameCode();
      return ReadBag(in, live, v, depth, path);
    case Kind::kOptional: {
      std::uint8_t b = 0;
      if (!in.U8(&b)) return Truncated();
      if (b == 0) {
        live.optional->reset(v);
        return OkStatus();
      }
      return Read(in, t.a, *live.element, live.optional->emplace(v), depth + 1, path, whole);
    }
    case Kind::kArray:
    case Kind::kVector: {
      if (live.kind == Kind::kArray) {
        u = t.count;
      } else {
        if (!in.Varint(&u)) return Truncated();
        live.container->resize(v, u);
      }
      if (u != live.container->size(v)) return Truncated();
      if (u == 0) return OkStatus();
      // The elements sit one after another, `size` bytes apart: walked here, plain ones read
      // inline and structs straight into ReadFields (as Read would), without a call per element
      // to find it.
      const Type& element = *live.element;
      char* at = static_cast<char*>(live.container->element(v, 0));
      if (IsPlain(element.kind)) {
        for (std::uint64_t i = 0; i < u; ++i, at += element.size) {
          if (!ReadPlain(in, element.kind, name_values_, at)) return Truncated();
        }
        return OkStatus();
      }
      if (element.kind == Kind::kStruct) {
        // As Read(element) would: its saved struct's layout, one level for the element and one
        // for the struct.
        const std::uint32_t layout = tables_.types()[t.a].a;
        for (std::uint64_t i = 0; i < u; ++i, at += element.size) {
          ROLLY_RETURN_IF_ERROR(
              ReadFields(in, layout, *element.class_info, at, depth + 2, path, whole));
        }
        return OkStatus();
      }
      for (std::uint64_t i = 0; i < u; ++i, at += element.size) {
        ROLLY_RETURN_IF_ERROR(Read(in, t.a, element, at, depth + 1, path, whole));
      }
      return OkStatus();
    }
    case Kind::kSet:
    case Kind::kMap: {
      if (!in.Varint(&u)) return Truncated();
      live.container->clear(v);
      for (std::uint64_t i = 0; i < u; ++i) {
        Temp key(*live.element);
        const std::size_t owned_before = targets_.size();
        ROLLY_RETURN_IF_ERROR(Read(in, t.a, *live.element, key.get(), depth + 1, path, whole));
        bool inserted = false;
        void* mapped = live.container->insert(v, key.get(), &inserted);
        if (!inserted) {
          // A key saved twice: objects the key owns die with it, so their INLN entries apply
          // to nothing.
          std::fill(targets_.begin() + static_cast<std::ptrdiff_t>(owned_before), targets_.end(),
                    reflect::ObjectRef{});
        }
        if (live.kind == Kind::kMap) {
          if (inserted) {
            ROLLY_RETURN_IF_ERROR(Read(in, t.b, *live.mapped, mapped, depth + 1, path, whole));
          } else {
            ROLLY_RETURN_IF_ERROR(Skip(in, t.b));
          }
        }
        if (!inserted && Keeps()) {
          Message("field " + PathText(path) + ": a key saved twice: kept the first");
        }
      }
      return OkStatus();
    }
    default:
      return NewerVersionError("field " + PathText(path) + ": " + reflect::DescribeType(live) +
                               " is not read by this version");
  }
  return ok ? OkStatus() : Truncated();
}

Status Applier::ReadText(ByteReader& in, reflect::Text* text) {
  std::string_view source, space, key;
  std::uint64_t args = 0;
  if (!in.LengthPrefixed(kMaxStringBytes, &source) || !in.LengthPrefixed(kMaxStringBytes, &space) ||
      !in.LengthPrefixed(kMaxStringBytes, &key) || !in.VarintAtMost(in.remaining(), &args)) {
    return Truncated();
  }
  text->source.assign(source);
  text->localization_namespace.assign(space);
  text->localization_key.assign(key);
  text->arguments.resize(args);
  for (reflect::Text& arg : text->arguments) ROLLY_RETURN_IF_ERROR(ReadText(in, &arg));
  return OkStatus();
}

Status Applier::ReadOwned(ByteReader& in, const Type& live, void* field, const Path* path) {
  std::uint8_t flag = 0;
  if (!in.U8(&flag)) return Truncated();
  if (flag == 0) {
    live.pointer->set(field, nullptr);
    return OkStatus();
  }
  const std::size_t index = targets_.size();
  if (index >= entries_.size()) return Truncated();
  const std::uint32_t saved_name = tables_.layouts()[entries_[index].layout].name;
  const Name saved_class = tables_.names()[saved_name];
  void* current = live.pointer->get(field);
  if (current != nullptr) {
    reflect::ObjectRef ref = registry_.DynamicClass(*live.class_info, current);
    if (ref.cls != nullptr &&
        (ref.cls->name() == saved_class || registry_.FindClass(saved_class) == ref.cls)) {
      targets_.push_back(ref);
      return OkStatus();
    }
  }
  Result<reflect::ObjectRef> made = registry_.CreateOwned(live, field, saved_class);
  if (!made.ok()) {
    Message("field " + PathText(path) + ": an owned object of class " +
            std::string(tables_.name_text(saved_name)) +
            " was not made (" + std::string(made.status().message()) + "): left as it was");
    targets_.push_back({});
    return OkStatus();
  }
  targets_.push_back(*made);
  return OkStatus();
}

Status Applier::ReadReference(ByteReader& in, const Type& live, void* field, const Path* path) {
  std::uint64_t u = 0;
  if (!in.Varint(&u)) return Truncated();
  if (u == 0) {
    live.pointer->set(field, nullptr);
    return OkStatus();
  }
  Guid id;
  std::uint64_t record = 0;  // the record it was saved as, when saved by record index
  if (u % 2 == 1) {
    record = (u - 1) / 2;
    if (record == 0 || record > records_.size()) return Truncated();
    id = records_.subject(record);
  } else {
    std::uint64_t ref = (u - 2) / 2;
    if (ref >= tables_.refs().size()) return Truncated();
    id = tables_.refs()[ref];
  }
  void* target = nullptr;
  if (links_ != nullptr && !id.is_none()) {
    target = record != 0
                 ? links_->ResolveRecord(static_cast<std::size_t>(record), id, *live.class_info)
                 : links_->Resolve(id, *live.class_info);
  }
  if (target == nullptr) {
    Message("field " + PathText(path) + ": the " + live.class_info->name().str() + " saved as " +
            id.ToString() + " was not found: left as it was");
    return OkStatus();
  }
  live.pointer->set(field, target);
  return OkStatus();
}

Status Applier::ReadInstanced(ByteReader& in, const Type& live, void* value, int depth,
                              const Path* path) {
  std::uint64_t u = 0;
  if (!in.VarintAtMost(tables_.layouts().size(), &u)) return Truncated();
  if (u == 0) {
    (void)live.instanced->emplace(value, nullptr);
    return OkStatus();
  }
  const auto layout = static_cast<std::uint32_t>(u - 1);
  const std::uint32_t saved = tables_.layouts()[layout].name;
  const reflect::ClassInfo* cls = registry_.FindStruct(tables_.names()[saved]);
  Status made = OkStatus();
  if (cls == nullptr) {
    made = NotFoundError("no struct " + std::string(tables_.name_text(saved)));
  } else if (live.instanced->get(value) != cls) {
    made = live.instanced->emplace(value, cls);
  }
  if (!made.ok()) {
    Message("field " + PathText(path) + ": an instanced struct " +
            std::string(tables_.name_text(saved)) +
            " was not made (" + std::string(made.message()) + "): left as it was");
    return SkipFields(in, tables_.layouts()[layout].fields);
  }
  return ReadFields(in, layout, *cls, live.instanced->data(value), depth + 1, path, true);
}

const Type* Applier::LiveTypeFor(std::uint32_t saved) {
  auto it = bag_types_.find(saved);
  if (it != bag_types_.end()) return it->second;
  const Type* found = nullptr;
  auto kind = static_cast<Kind>(tables_.types()[saved].kind);
  for (const Type* candidate : registry_.TypesOfKind(kind)) {
    if (Matches(saved, *candidate) && reflect::ReadableInBag(*candidate)) {
      found = candidate;
      break;
    }
  }
  bag_types_.emplace(saved, found);
  return found;
}

Status Applier::ReadBag(ByteReader& in, const Type& live, void* value, int depth,
                        const Path* path) {
  std::uint64_t u = 0;
  if (tables_.bag_layouts().empty() || !in.VarintAtMost(tables_.bag_layouts().size() - 1, &u)) {
    return Truncated();
  }
  live.bag->clear(value);
  for (const LayoutField& f : tables_.bag_layouts()[u].fields) {
    const Type* type = LiveTypeFor(f.type);
    // A property bag's names are the game's data: interned here, after the check passed, for a
    // property the bag may take.
    const Name name = type != nullptr ? name_values_[f.name] : Name();
    Result<void*> at = type != nullptr
                           ? live.bag->add(value, name, type)
                           : Result<void*>(NotFoundError("the game registers no type " +
                                                         tables_.Describe(f.type)));
    if (!at.ok()) {
      Message("field " + PathText(path) + ": bag property " +
              std::string(tables_.name_text(f.name)) + " dropped (" +
              std::string(at.status().message()) + ")");
      ROLLY_RETURN_IF_ERROR(Skip(in, f.type));
      continue;
    }
    Path here{path, name};
    ROLLY_RETURN_IF_ERROR(Read(in, f.type, *type, *at, depth + 1, &here, true));
  }
  return OkStatus();
}

void Applier::ReadExtra(const reflect::ClassInfo& cls, void* object, ByteView bytes) {
  if (!reflect::TypeRegistry::HasExtra(cls)) {
    Message("class " + cls.name().str() +
            " has no save-extra hook now: its saved extra bytes were skipped");
    return;
  }
  // The bytes are well formed (the structure check); a hook that reads otherwise was changed
  // since the save.
  Status s = reflect::TypeRegistry::ReadExtra(cls, object, AsChars(bytes));
  if (!s.ok()) {
    Message("class " + cls.name().str() + ": the save-extra hook did not read what was saved (" +
            std::string(s.message()) + "): the rest was left as it was");
  }
}

// Inlined into both Applys (a load runs it for every record): what most records take stays in
// line, the refusals and the owned objects' entries out of it.
[[gnu::always_inline]] inline Status Applier::ApplyParts(const Parts& record,
                                                         const reflect::ClassInfo& cls,
                                                         void* object,
                                                         std::vector<std::string>* messages) {
  if (!IsKnownObjectKind(record.kind) || record.layout >= tables_.layouts().size() ||
      !(record.sections.has & 1)) {
    return Refusal(record, cls);
  }
  if (!SavedClassIs(tables_, registry_, record.layout, cls)) return Refusal(record, cls);
  if (no_game_code_ && ((record.sections.has & 6) || cls.Plan().owns || cls.Plan().loaded)) {
    return NeedsGameCode();
  }
  if (cls.Plan().owns && !applied_owners_->insert(object).second) return AppliedAlready(cls);
  entries_.clear();
  targets_.clear();
  if (record.sections.has & 2) ROLLY_RETURN_IF_ERROR(ReadEntries(record.sections.owned));
  messages_ = messages;
  ByteReader in(record.sections.prop);
  Status status = ReadFields(in, record.layout, cls, object, 1, nullptr, false);
  if (status.ok() && !entries_.empty()) status = ApplyEntries();
  if (status.ok() && (record.sections.has & 4)) ReadExtra(cls, object, record.sections.extra);
  messages_ = nullptr;
  if (!status.ok()) return status;
  // Only objects whose class has an OnLoaded hook are kept for RunLoadedHooks.
  for (auto it = targets_.rbegin(); it != targets_.rend(); ++it) {
    if (it->cls != nullptr && it->cls->Plan().loaded) loaded_.push_back(*it);
  }
  if (cls.Plan().loaded) loaded_.push_back({&cls, object});
  return OkStatus();
}

Status Applier::NeedsGameCode() { return CancelledError("the record needs the game's code"); }

Status Applier::AppliedAlready(const reflect::ClassInfo& cls) const {
  return InvalidInputError("an object of class " + cls.name().str() +
                           " took a record already in this load: a second could destroy the "
                           "objects the first made before their OnLoaded runs");
}

Status Applier::Refusal(const Parts& record, const reflect::ClassInfo& cls) const {
  if (!IsKnownObjectKind(record.kind)) {
    return InvalidInputError("record of kind " + std::to_string(record.kind) +
                             " is not an object record this version applies");
  }
  if (record.layout >= tables_.layouts().size()) return InvalidInputError("record of other tables");
  if (!SavedClassIs(tables_, registry_, record.layout, cls)) {
    return InvalidInputError("a record of class " +
                             std::string(tables_.name_text(tables_.layouts()[record.layout].name)) +
                             " cannot apply to an object of class " + cls.name().str());
  }
  return InvalidInputError("a record without PROP");
}

Status Applier::ReadEntries(ByteView owned) {
  ByteReader in(owned);
  std::uint64_t count = 0;
  if (!in.Varint(&count)) return Truncated();
  for (std::uint64_t i = 0; i < count; ++i) {
    Entry e;
    std::uint64_t layout = 0;
    if (!in.VarintAtMost(tables_.layouts().size() - 1, &layout) ||
        !in.LengthPrefixed(in.remaining(), &e.prop) ||
        !in.LengthPrefixed(in.remaining(), &e.extra)) {
      return Truncated();
    }
    e.layout = static_cast<std::uint32_t>(layout);
    entries_.push_back(e);
  }
  return OkStatus();
}

Status Applier::ApplyEntries() {
  // Owned objects in INLN order: each entry applies to the object its owned value made or found.
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i >= targets_.size()) return Truncated();
    const Entry& e = entries_[i];
    ByteReader fields(e.prop);
    reflect::ObjectRef target = targets_[i];
    if (target.cls == nullptr) {
      ROLLY_RETURN_IF_ERROR(SkipFields(fields, tables_.layouts()[e.layout].fields));
      continue;
    }
    Path here{nullptr, target.cls->name()};
    void* live = const_cast<void*>(target.object);
    ROLLY_RETURN_IF_ERROR(ReadFields(fields, e.layout, *target.cls, live, 1, &here, false));
    if (!e.extra.empty()) ReadExtra(*target.cls, live, e.extra);
  }
  return OkStatus();
}

Status Applier::Apply(const Record& record, const reflect::ClassInfo& cls, void* object,
                      std::vector<std::string>* messages) {
  Parts parts;
  parts.kind = record.kind;
  parts.layout = record.layout;
  auto find = [&](SectionId id, std::uint32_t bit, ByteView* out) {
    if (const Section* s = record.Find(id)) {
      *out = s->bytes;
      parts.sections.has |= bit;
    }
  };
  find(kPropSection, 1, &parts.sections.prop);
  find(kOwnedSection, 2, &parts.sections.owned);
  find(kExtraSection, 4, &parts.sections.extra);
  return ApplyParts(parts, cls, object, messages);
}

Status Applier::Apply(std::size_t index, const reflect::ClassInfo& cls, void* object,
                      std::vector<std::string>* messages) {
  if (checked_ == nullptr) return InvalidInputError("an applier of a decoded payload");
  if (index >= checked_->size()) return InvalidInputError("no such record");
  // The three sections, the record walked only when it has INLN or XTRA.
  const Parts parts{checked_->kind(index), checked_->layout(index),
                    checked_->PartsToApply(index)};
  return ApplyParts(parts, cls, object, messages);
}

void Applier::RunLoadedHooks() {
  for (const reflect::ObjectRef& ref : loaded_) {
    reflect::TypeRegistry::RunLoaded(*ref.cls, const_cast<void*>(ref.object));
  }
  loaded_.clear();
  applied_owners_->clear();
}

}  // namespace rolly::record
