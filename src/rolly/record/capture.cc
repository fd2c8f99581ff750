#include "rolly/record/capture.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "rolly/core/utf8.h"
#include "rolly/reflect/property_bag.h"
#include "rolly/reflect/value_types.h"

namespace rolly::record {
namespace {

using reflect::Kind;
using reflect::Type;

// A copy (ObjectCopies) is its head (its size in bytes, or 0 for a copy past 4 GiB, which fills a
// block of its own; then its class's program's number; 4 bytes each), its image (the bytes of
// the object that hold its saved fields), then its side items, in the order writing meets their
// fields: a string or soft path is its size (4 bytes) and bytes; a vector its element count (4
// bytes), then its elements as they lie in memory, from the next 8-byte boundary; a reference a
// tag, then the record index (4 bytes, kSameChunk), the subject ID (16 bytes, kOtherChunk) or the
// address ObjectLinks::Identify gave (8 bytes, kIdentified: located when the record is written).
// Copies begin at 8-byte boundaries.
constexpr std::uint8_t kNoTarget = 0;
constexpr std::uint8_t kSameChunk = 1;
constexpr std::uint8_t kOtherChunk = 2;
constexpr std::uint8_t kIdentified = 3;
constexpr std::size_t kCopyAlign = 8;
constexpr std::size_t kCopyHead = 8;

inline std::size_t RoundCopy(std::size_t n) { return (n + kCopyAlign - 1) & ~(kCopyAlign - 1); }
template <typename P>
inline P* AlignCopy(P* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  return p + (RoundCopy(at) - at);
}

// Whether a string can be saved: UTF-8 of at most kMaxStringBytes, without NUL.
bool Savable(std::string_view s) {
  return s.size() <= kMaxStringBytes && IsValidUtf8(s) && s.find('\0') == std::string::npos;
}

// The kinds Writer::Fixed writes: a copy holds them as they lie in memory.
bool IsFixedForm(Kind kind) {
  switch (kind) {
    case Kind::kBool: case Kind::kInt8: case Kind::kInt16: case Kind::kInt32:
    case Kind::kInt64: case Kind::kUInt8: case Kind::kUInt16: case Kind::kUInt32:
    case Kind::kUInt64: case Kind::kFloat: case Kind::kDouble: case Kind::kGuid:
    case Kind::kColor: case Kind::kDateTime: case Kind::kVector2f: case Kind::kVector2d:
    case Kind::kVector3f: case Kind::kVector3d: case Kind::kVector4f: case Kind::kVector4d:
    case Kind::kQuatf: case Kind::kQuatd: case Kind::kRotatorf: case Kind::kRotatord:
    case Kind::kTransformf: case Kind::kTransformd:
      return true;
    default:
      return false;
  }
}

// Writes values by their descriptors. Owned objects met are queued (INLN is written in the order
// they are met, PROP's first); `needs_check` tells whether the record holds a value the file's
// budget counts.
class Writer {
 public:
  Writer(ChunkTables* tables, ObjectLinks* links) : tables_(tables), links_(links) {}

  // Starts writing into `out`; the record's element count goes on across calls.
  void Start(ByteSink* out) { w_ = out; }
  // Writes from a copy (ObjectCopies): fields are read from the copy's image, and strings,
  // vectors and references from `side`, in the order they are met.
  void StartCopy(ByteSink* out, const std::uint8_t* side) {
    w_ = out;
    side_ = side;
  }
  // Where the copy's side items read so far end.
  const std::uint8_t* side() const { return side_; }
  bool needs_check() const { return needs_check_; }
  std::vector<reflect::ObjectRef>& owned() { return owned_; }

  // `places` (a copy's): where each field is in `object` (the copy's image), instead of its
  // offset.
  Status Fields(const reflect::ClassPlan& plan, const void* object, int depth, bool whole,
                const std::uint32_t* places = nullptr) {
    for (std::size_t i = 0; i < plan.fields.size(); ++i) {
      const reflect::PlanField& f = plan.fields[i];
      const void* v = places == nullptr ? f.Address(object)
                                        : static_cast<const char*>(object) + places[i];
      // Most fields: a fixed-form value, written here without a call or a Status; the others
      // go straight to Composite (Value would ask the depth and Fixed again).
      Status s;
      if (depth > kMaxValueDepth) {
        s = Value(f.type(), v, depth, whole);
      } else if (Fixed(f.type().kind, v)) {
        continue;
      } else {
        s = Composite(f.type(), v, depth, whole);
      }
      if (!s.ok()) {
        return InvalidDataError("field " + f.name().str() + ": " + std::string(s.message()));
      }
    }
    return OkStatus();
  }

  // Writes a value of a fixed-form kind (a bool or number, a GUID, a colour, a time, a math type:
  // no table entry, no failure) and returns true; false, writing nothing, for any other kind.
  [[gnu::always_inline]] bool Fixed(Kind kind, const void* v) {
    switch (kind) {
      case Kind::kBool:
        w_->U8(*static_cast<const bool*>(v) ? 1 : 0);
        return true;
      case Kind::kInt8:
        w_->SignedVarint(*static_cast<const std::int8_t*>(v));
        return true;
      case Kind::kInt16:
        w_->SignedVarint(*static_cast<const std::int16_t*>(v));
        return true;
      case Kind::kInt32:
        w_->SignedVarint(*static_cast<const std::int32_t*>(v));
        return true;
      case Kind::kInt64:
        w_->SignedVarint(*static_cast<const std::int64_t*>(v));
        return true;
      case Kind::kUInt8:
        w_->Varint(*static_cast<const std::uint8_t*>(v));
        return true;
      case Kind::kUInt16:
        w_->Varint(*static_cast<const std::uint16_t*>(v));
        return true;
      case Kind::kUInt32:
        w_->Varint(*static_cast<const std::uint32_t*>(v));
        return true;
      case Kind::kUInt64:
        w_->Varint(*static_cast<const std::uint64_t*>(v));
        return true;
      case Kind::kFloat:
        w_->F32(*static_cast<const float*>(v));
        return true;
      case Kind::kDouble:
        w_->F64(*static_cast<const double*>(v));
        return true;
      case Kind::kGuid: {
        const auto& g = *static_cast<const Guid*>(v);
        w_->U64(g.high());
        w_->U64(g.low());
        return true;
      }
      case Kind::kColor: {
        const auto& c = *static_cast<const reflect::Color*>(v);
        Floats(c.r, c.g, c.b, c.a);
        return true;
      }
      case Kind::kDateTime:
        w_->I64(static_cast<const reflect::DateTime*>(v)->ticks);
        return true;
      case Kind::kVector2f:
        Vec2<float>(v);
        return true;
      case Kind::kVector2d:
        Vec2<double>(v);
        return true;
      case Kind::kVector3f:
        Vec3<float>(v);
        return true;
      case Kind::kVector3d:
        Vec3<double>(v);
        return true;
      case Kind::kVector4f:
        Vec4<float>(v);
        return true;
      case Kind::kVector4d:
        Vec4<double>(v);
        return true;
      case Kind::kQuatf:
        Quat<float>(v);
        return true;
      case Kind::kQuatd:
        Quat<double>(v);
        return true;
      case Kind::kRotatorf:
        Rot<float>(v);
        return true;
      case Kind::kRotatord:
        Rot<double>(v);
        return true;
      case Kind::kTransformf:
        Xform<float>(v);
        return true;
      case Kind::kTransformd:
        Xform<double>(v);
        return true;
      default:
        return false;
    }
  }

  Status Value(const Type& t, const void* v, int depth, bool whole) {
    if (depth > kMaxValueDepth) return InvalidDataError("a value nests past 64 levels");
    if (Fixed(t.kind, v)) return OkStatus();
    return Composite(t, v, depth, whole);
  }

  // A value of a kind Fixed does not write, at a depth Value allowed.
  Status Composite(const Type& t, const void* v, int depth, bool whole) {
    switch (t.kind) {
      case Kind::kString:
        if (side_ != nullptr) return CopiedString();
        return String(*static_cast<const std::string*>(v));
      case Kind::kSoftPath:
        if (side_ != nullptr) return CopiedString();
        return String(static_cast<const reflect::SoftPath*>(v)->path);
      case Kind::kName: {
        const Name& name = *static_cast<const Name*>(v);
        if (name.is_none()) {
          w_->Varint(0);
          return OkStatus();
        }
        ROLLY_ASSIGN_OR_RETURN(std::uint32_t index, tables_->AddName(name));
        w_->Varint(std::uint64_t{index} + 1);
        return OkStatus();
      }
      case Kind::kText:
        needs_check_ = true;
        return Text(*static_cast<const reflect::Text*>(v), 1);
      case Kind::kEnum: {
        std::int64_t number = t.enum_ops->get(v);
        Name name = t.enum_info->NameOf(number);
        if (name.is_none()) {
          return InvalidDataError("number " + std::to_string(number) + " is not a value of enum " +
                                  t.enum_info->name().str());
        }
        ROLLY_ASSIGN_OR_RETURN(std::uint32_t index, tables_->AddName(name));
        w_->Varint(index);
        return OkStatus();
      }
      case Kind::kStruct: {
        const reflect::ClassInfo& cls = *t.class_info;
        for (const reflect::PlanField& f : whole ? cls.WholePlan().fields : cls.Plan().fields) {
          if (depth + 1 <= kMaxValueDepth && Fixed(f.type().kind, f.Address(v))) continue;
          Status s = depth + 1 <= kMaxValueDepth
                         ? Composite(f.type(), f.Address(v), depth + 1, whole)
                         : Value(f.type(), f.Address(v), depth + 1, whole);
          if (!s.ok())
            return InvalidDataError("member " + f.name().str() + ": " + std::string(s.message()));
        }
        return OkStatus();
      }
      case Kind::kOptional: {
        bool has = t.optional->has(v);
        w_->U8(has ? 1 : 0);
        if (!has) return OkStatus();
        return Value(*t.element, t.optional->value(const_cast<void*>(v)), depth + 1, whole);
      }
      case Kind::kVector:
      case Kind::kArray:
      case Kind::kSet:
      case Kind::kMap: {
        if (side_ != nullptr && t.kind == Kind::kVector) return CopiedVector(t, depth, whole);
        std::size_t n = t.container->size(v);
        ROLLY_RETURN_IF_ERROR(CountElements(n));
        if (t.kind != Kind::kArray) w_->Varint(n);
        if (n == 0) return OkStatus();
        if (t.kind == Kind::kVector || t.kind == Kind::kArray) {
          return Elements(*t.element, t.container->element(const_cast<void*>(v), 0), n, depth,
                          whole);
        }
        struct Ctx {
          Writer* self;
          const Type* t;
          int depth;
          bool whole;
          Status status;
        } ctx{this, &t, depth, whole, OkStatus()};
        t.container->for_each(v, &ctx, [](void* c, const void* key, const void* mapped) {
          auto* x = static_cast<Ctx*>(c);
          if (!x->status.ok()) return;
          x->status = x->self->Value(*x->t->element, key, x->depth + 1, x->whole);
          if (x->status.ok() && mapped)
            x->status = x->self->Value(*x->t->mapped, mapped, x->depth + 1, x->whole);
        });
        return std::move(ctx.status);
      }
      case Kind::kOwned: {
        const void* p = t.pointer->get(v);
        if (p == nullptr) {
          w_->U8(0);
          return OkStatus();
        }
        reflect::ObjectRef ref = t.class_info->registry().DynamicClass(*t.class_info, p);
        if (ref.cls == nullptr) {
          return InvalidDataError("an owned object's class is not registered as a " +
                                  t.class_info->name().str());
        }
        if (owned_.size() >= FileBudget::kMaxOwned) {
          return InvalidDataError("more than 262,144 owned objects in a record");
        }
        needs_check_ = true;
        w_->U8(1);
        owned_.push_back(ref);
        return OkStatus();
      }
      case Kind::kReference: {
        if (side_ != nullptr) return CopiedReference();
        const void* p = t.pointer->get(v);
        if (p == nullptr) {
          w_->Varint(0);
          return OkStatus();
        }
        if (links_ == nullptr) return NoLinks();
        return WriteTarget(links_->Locate(*t.class_info, p));
      }
      case Kind::kInstancedStruct: {
        needs_check_ = true;
        const reflect::ClassInfo* cls = t.instanced->get(v);
        if (cls == nullptr) {
          w_->Varint(0);
          return OkStatus();
        }
        ROLLY_ASSIGN_OR_RETURN(std::uint32_t layout, tables_->AddLayout(*cls, true));
        w_->Varint(std::uint64_t{layout} + 1);
        const void* data = t.instanced->data(const_cast<void*>(v));
        for (const reflect::PlanField& f : cls->WholePlan().fields) {
          Status s = Value(f.type(), f.Address(data), depth + 1, true);
          if (!s.ok())
            return InvalidDataError("member " + f.name().str() + ": " + std::string(s.message()));
        }
        return OkStatus();
      }
      case Kind::kPropertyBag: {
        needs_check_ = true;
        ROLLY_ASSIGN_OR_RETURN(std::uint32_t layout, tables_->AddBagLayout(t.bag->layout(v)));
        w_->Varint(layout);
        void* bag = const_cast<void*>(v);
        for (std::size_t i = 0; i < t.bag->size(v); ++i) {
          Status s = Value(*t.bag->type(v, i), t.bag->value(bag, i), depth + 1, true);
          if (!s.ok()) {
            return InvalidDataError("property " + t.bag->name(v, i).str() + ": " +
                                    std::string(s.message()));
          }
        }
        return OkStatus();
      }
      case Kind::kBool: case Kind::kInt8: case Kind::kInt16: case Kind::kInt32:
      case Kind::kInt64: case Kind::kUInt8: case Kind::kUInt16: case Kind::kUInt32:
      case Kind::kUInt64: case Kind::kFloat: case Kind::kDouble: case Kind::kGuid:
      case Kind::kColor: case Kind::kDateTime: case Kind::kVector2f: case Kind::kVector2d:
      case Kind::kVector3f: case Kind::kVector3d: case Kind::kVector4f: case Kind::kVector4d:
      case Kind::kQuatf: case Kind::kQuatd: case Kind::kRotatorf: case Kind::kRotatord:
      case Kind::kTransformf: case Kind::kTransformd:
        break;  // written by Fixed, asked first; listed so a new kind is a warning here
    }
    return InvalidDataError("type " + reflect::DescribeType(t) + " is not saved by this version");
  }

 private:
  // The side items of a copy (ObjectCopies::Program says how Capturer::Copy writes them).
  Status CopiedString() {
    const std::uint32_t n = LoadLE<std::uint32_t>(side_);
    w_->LengthPrefixed(ByteView(side_ + 4, n));
    side_ += 4 + n;
    return OkStatus();
  }
  Status CopiedVector(const Type& t, int depth, bool whole) {
    const std::uint32_t n = LoadLE<std::uint32_t>(side_);
    side_ += 4;
    ROLLY_RETURN_IF_ERROR(CountElements(n));
    w_->Varint(n);
    if (n == 0) return OkStatus();
    const std::uint8_t* at = AlignCopy(side_);
    side_ = at + n * t.element->size;
    return Elements(*t.element, at, n, depth, whole);
  }
  // The `n` elements of a vector or array from `first` on: they sit one after another, `size`
  // bytes apart, walked here, a fixed-form element written inline, without a call per element.
  Status Elements(const Type& element, const void* first, std::size_t n, int depth, bool whole) {
    const char* at = static_cast<const char*>(first);
    if (depth + 1 > kMaxValueDepth) return Value(element, at, depth + 1, whole);  // nests
    for (std::size_t i = 0; i < n; ++i, at += element.size) {
      if (Fixed(element.kind, at)) continue;
      ROLLY_RETURN_IF_ERROR(Composite(element, at, depth + 1, whole));
    }
    return OkStatus();
  }
  Status CopiedReference() {
    const std::uint8_t tag = *side_++;
    std::optional<LinkTarget> target;
    if (tag == kSameChunk) {
      target = LinkTarget{Guid(), LoadLE<std::uint32_t>(side_)};
      side_ += 4;
    } else if (tag == kOtherChunk) {
      target = LinkTarget{Guid(LoadLE<std::uint64_t>(side_), LoadLE<std::uint64_t>(side_ + 8)), 0};
      side_ += 16;
    } else if (tag == kIdentified) {
      const auto identity = reinterpret_cast<const void*>(
          static_cast<std::uintptr_t>(LoadLE<std::uint64_t>(side_)));
      side_ += 8;
      if (links_ == nullptr) return NoLinks();
      target = links_->LocateIdentified(identity);
    }
    return WriteTarget(target);
  }
  // A reference to `target`: null (none: not saved), its record index in this chunk, or its
  // subject ID through the refs table.
  Status WriteTarget(const std::optional<LinkTarget>& target) {
    if (!target) {
      w_->Varint(0);
    } else if (target->record != 0) {
      w_->Varint(std::uint64_t{target->record} * 2 + 1);
    } else {
      ROLLY_ASSIGN_OR_RETURN(std::uint32_t index, tables_->AddRef(target->id));
      w_->Varint(std::uint64_t{index} * 2 + 2);
    }
    return OkStatus();
  }
  static Status NoLinks() {
    return InvalidDataError("a reference is set but nothing says where objects are saved");
  }

  Status CountElements(std::uint64_t n) {
    if (n > kMaxElementsPerRecord - elements_) {
      return InvalidDataError("more than 16,777,216 elements in a record");
    }
    elements_ += n;
    return OkStatus();
  }

  Status Text(const reflect::Text& text, int level) {
    if (level > kMaxTextDepth) return InvalidDataError("a text nests past 32 levels");
    ROLLY_RETURN_IF_ERROR(String(text.source));
    ROLLY_RETURN_IF_ERROR(String(text.localization_namespace));
    ROLLY_RETURN_IF_ERROR(String(text.localization_key));
    ROLLY_RETURN_IF_ERROR(CountElements(text.arguments.size()));
    w_->Varint(text.arguments.size());
    for (const reflect::Text& arg : text.arguments) ROLLY_RETURN_IF_ERROR(Text(arg, level + 1));
    return OkStatus();
  }

  Status String(const std::string& s) {
    if (!Savable(s)) {
      return InvalidDataError("a string of " + std::to_string(s.size()) +
                              " bytes is not UTF-8 of at most 1,048,576 bytes without NUL");
    }
    w_->LengthPrefixed(s);
    return OkStatus();
  }
  template <typename... F>
  void Floats(F... f) {
    (Float(f), ...);
  }
  void Float(float f) { w_->F32(f); }
  void Float(double f) { w_->F64(f); }
  template <typename F>
  void Vec2(const void* v) {
    const auto& x = *static_cast<const reflect::Vector2<F>*>(v);
    Floats(x.x, x.y);
  }
  template <typename F>
  void Vec3(const void* v) {
    const auto& x = *static_cast<const reflect::Vector3<F>*>(v);
    Floats(x.x, x.y, x.z);
  }
  template <typename F>
  void Vec4(const void* v) {
    const auto& x = *static_cast<const reflect::Vector4<F>*>(v);
    Floats(x.x, x.y, x.z, x.w);
  }
  template <typename F>
  void Quat(const void* v) {
    const auto& x = *static_cast<const reflect::Quat<F>*>(v);
    Floats(x.x, x.y, x.z, x.w);
  }
  template <typename F>
  void Rot(const void* v) {
    const auto& x = *static_cast<const reflect::Rotator<F>*>(v);
    Floats(x.pitch, x.yaw, x.roll);
  }
  template <typename F>
  void Xform(const void* v) {
    const auto& x = *static_cast<const reflect::Transform<F>*>(v);
    Floats(x.rotation.x, x.rotation.y, x.rotation.z, x.rotation.w, x.translation.x, x.translation.y,
           x.translation.z, x.scale.x, x.scale.y, x.scale.z);
  }

  ChunkTables* tables_;
  ObjectLinks* links_;
  ByteSink* w_ = nullptr;
  const std::uint8_t* side_ = nullptr;
  std::uint64_t elements_ = 0;
  bool needs_check_ = false;
  std::vector<reflect::ObjectRef> owned_;
};

// The parts of one captured record, before they are put together.
struct Parts {
  ByteSink* prop = nullptr;
  ByteSink inln;
  std::string extra;
  bool has_inln = false;
  bool has_extra = false;
  EncodedSections more;
};

// Writes PROP (into parts->prop), INLN and EXTR of `object`. `pre_save` runs OnPreSave on each
// owned object before it is read; `owned_out` gets the owned objects in INLN order. Inline in
// its two callers: Capturer::Capture runs it for every record.
[[gnu::always_inline]] inline Status WriteParts(const reflect::ClassInfo& cls, const void* object,
                                                ChunkTables* tables, ObjectLinks* links,
                                                bool pre_save, Parts* parts, bool* needs_check,
                                                std::vector<reflect::ObjectRef>* owned_out) {
  const reflect::ClassPlan& plan = cls.Plan();
  Writer writer(tables, links);
  writer.Start(parts->prop);
  Status s = writer.Fields(plan, object, 1, false);
  if (!s.ok())
    return InvalidDataError("class " + cls.name().str() + " " + std::string(s.message()));
  if (plan.extra) {
    ROLLY_ASSIGN_OR_RETURN(parts->extra, reflect::TypeRegistry::WriteExtra(cls, object));
    parts->has_extra = true;
  }
  // Owned objects, in the order met; each may own more, appended as met.
  std::vector<reflect::ObjectRef>& owned = writer.owned();
  if (!owned.empty()) {
    ByteSink entries;
    ByteSink body;
    std::size_t done = 0;
    for (; done < owned.size(); ++done) {
      reflect::ObjectRef ref = owned[done];
      void* live = const_cast<void*>(ref.object);
      const reflect::ClassPlan& owned_plan = ref.cls->Plan();
      if (pre_save && owned_plan.pre_save) reflect::TypeRegistry::RunPreSave(*ref.cls, live);
      ROLLY_ASSIGN_OR_RETURN(std::uint32_t layout, tables->AddLayout(*ref.cls));
      body.clear();
      writer.Start(&body);
      s = writer.Fields(owned_plan, ref.object, 1, false);
      if (!s.ok()) {
        return InvalidDataError("owned object of class " + ref.cls->name().str() + " " +
                                std::string(s.message()));
      }
      std::string extra;
      if (owned_plan.extra) {
        ROLLY_ASSIGN_OR_RETURN(extra, reflect::TypeRegistry::WriteExtra(*ref.cls, ref.object));
      }
      entries.Varint(layout);
      entries.LengthPrefixed(body.view());
      entries.LengthPrefixed(std::string_view(extra));
    }
    parts->inln.Varint(owned.size());
    parts->inln.Raw(entries.view());
    parts->has_inln = true;
    if (owned_out != nullptr) *owned_out = owned;
  }
  *needs_check = writer.needs_check();
  return OkStatus();
}

// The sections of `more`, as Sections (they were checked by WalkSections).
void AppendDecoded(const EncodedSections& more, std::vector<Section>* out) {
  ByteReader r(more.bytes);
  for (std::uint32_t i = 0; i < more.count; ++i) {
    Section section;
    ByteView id, bytes;
    const bool read = r.Raw(4, &id) && r.LengthPrefixed(more.bytes.size(), &bytes);
    assert(read);  // WalkSections checked them
    if (!read) return;
    std::memcpy(section.id.data(), id.data(), 4);
    section.bytes.assign(bytes.begin(), bytes.end());
    out->push_back(std::move(section));
  }
}

// The size of what WriteHeader writes.
std::size_t HeaderSize(std::uint32_t layout, const Parts& parts) {
  std::size_t size = 1 + 16 + VarintSize(layout) +
                     VarintSize((parts.has_inln ? 1 : 0) + (parts.has_extra ? 1 : 0) +
                                parts.more.count) +
                     parts.more.bytes.size();
  if (parts.has_inln) size += 4 + VarintSize(parts.inln.size()) + parts.inln.size();
  if (parts.has_extra) size += 4 + VarintSize(parts.extra.size()) + parts.extra.size();
  return size;
}

// Helpers of WriteHeader: each writes at `p`, into room made before, and returns the end.
std::uint8_t* PutVarint(std::uint8_t* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}
std::uint8_t* PutRaw(std::uint8_t* p, ByteView bytes) {
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  return p + bytes.size();
}
std::uint8_t* PutSection(std::uint8_t* p, SectionId id, ByteView bytes) {
  std::memcpy(p, id.data(), 4);
  return PutRaw(PutVarint(p + 4, bytes.size()), bytes);
}

// A record's kind, subject, layout and sections other than PROP: HeaderSize bytes at `p`, written
// in place (a record is written once per subject, so without a size check per value). Returns
// the end, where PROP follows.
std::uint8_t* WriteHeader(std::uint8_t* p, RecordKind kind, Guid subject, std::uint32_t layout,
                          const Parts& parts) {
  *p++ = static_cast<std::uint8_t>(kind);
  StoreLE(p, subject.high());
  StoreLE(p + 8, subject.low());
  p = PutVarint(p + 16, layout);
  p = PutVarint(p, (parts.has_inln ? 1 : 0) + (parts.has_extra ? 1 : 0) + parts.more.count);
  if (parts.has_inln) p = PutSection(p, kOwnedSection, parts.inln.view());
  if (parts.has_extra) p = PutSection(p, kExtraSection, AsBytes(std::string_view(parts.extra)));
  return PutRaw(p, parts.more.bytes);
}

// Writes the record (head, then PROP) into `out`, whose record BeginRecord began with the size
// HeaderSize and PROP's make.
void WriteRecord(ByteSink& out, RecordKind kind, Guid subject, std::uint32_t layout,
                 const Parts& parts) {
  const std::size_t head = HeaderSize(layout, parts);
  std::uint8_t* const begun = out.Extend(head + parts.prop->size());
  std::uint8_t* const prop = WriteHeader(begun, kind, subject, layout, parts);
  assert(prop == begun + head);
  PutRaw(prop, parts.prop->view());
}

Record ToRecord(RecordKind kind, Guid subject, std::uint32_t layout, const Parts& parts) {
  Record record;
  record.kind = static_cast<std::uint8_t>(kind);
  record.subject = subject;
  record.layout = layout;
  record.sections.push_back({kPropSection, parts.prop->ToBytes()});
  if (parts.has_inln) record.sections.push_back({kOwnedSection, parts.inln.ToBytes()});
  if (parts.has_extra) {
    record.sections.push_back({kExtraSection, Bytes(parts.extra.begin(), parts.extra.end())});
  }
  AppendDecoded(parts.more, &record.sections);
  return record;
}

// Checks that `more` holds `count` sections in the record's form whose IDs are printable and
// differ from PROP, INLN, EXTR and each other, and no bytes after them: what a load would refuse.
Status WalkSections(const EncodedSections& more) {
  auto bad = [] {
    return InvalidInputError(
        "sections added to a record must be in the record's form, with printable IDs that differ, "
        "and be at most 61");
  };
  if (more.count > kMaxSections - 3) return bad();
  SectionId ids[kMaxSections];
  ByteReader r(more.bytes);
  for (std::uint32_t i = 0; i < more.count; ++i) {
    ByteView id, bytes;
    if (!r.Raw(4, &id) || !r.LengthPrefixed(r.remaining(), &bytes)) return bad();
    std::memcpy(ids[i].data(), id.data(), 4);
    if (!IsPrintableSectionId(ids[i]) || SameSection(ids[i], kPropSection) ||
        SameSection(ids[i], kOwnedSection) ||
        SameSection(ids[i], kExtraSection)) {
      return bad();
    }
    for (std::uint32_t k = 0; k < i; ++k) {
      if (SameSection(ids[k], ids[i])) return bad();
    }
  }
  return r.empty() ? OkStatus() : bad();
}

}  // namespace

Status ChunkWriter::CheckAndCharge(const Record& record, std::uint32_t index) {
  FileBudget budget = budget_ ? *budget_ : FileBudget{};
  const std::size_t new_layouts = tables_.bag_layouts().size() - charged_bag_layouts_;
  if (new_layouts > FileBudget::kMaxBagLayouts - budget.bag_layouts) {
    return InvalidDataError("more than 4,096 property bag layouts in the file");
  }
  budget.bag_layouts += new_layouts;
  ROLLY_RETURN_IF_ERROR(CheckRecord(tables_, record, index, kMaxRecords + 1, &budget));
  if (budget_) *budget_ = budget;
  charged_bag_layouts_ = tables_.bag_layouts().size();
  return OkStatus();
}

Status ChunkWriter::Add(const Record& record) {
  ROLLY_ASSIGN_OR_RETURN(Bytes bytes, EncodeRecord(record));
  Status checked = CheckAndCharge(record, count_ + 1);
  if (!checked.ok()) {
    return InvalidDataError("a record added to a chunk: " + std::string(checked.message()));
  }
  AddEncoded(bytes);
  return OkStatus();
}

void ChunkWriter::AddEncoded(ByteView record) { BeginRecord(record.size()).Raw(record); }

ByteSink& ChunkWriter::BeginRecord(std::size_t size) {
  // The record, its size (a varint of at most 10 bytes), and the 10 bytes a varint written last
  // asks room for: a block never grows.
  const std::size_t most = size + 20;
  if (blocks_.empty() || blocks_.back().capacity() - blocks_.back().size() < most) {
    blocks_.emplace_back().Reserve(std::max(kBlock, most));
  }
  ByteSink& block = blocks_.back();
  block.Varint(size);
  records_size_ += VarintSize(size) + size;
  ++count_;
  return block;
}

Bytes ChunkWriter::Finish() {
  Bytes tables;
  ByteWriter tw(&tables);
  tables_.Encode(tw);
  Bytes head;
  ByteWriter w(&head);
  w.Varint(std::uint64_t{count_} + 1);
  w.LengthPrefixed(tables);
  // The blocks are copied after the count and tables, each let go of once copied: the chunk is
  // held about twice only at the start of the copy, and never as a grown buffer's two sizes.
  Bytes out;
  out.reserve(head.size() + records_size_);
  out.insert(out.end(), head.begin(), head.end());
  for (ByteSink& block : blocks_) {
    out.insert(out.end(), block.data(), block.data() + block.size());
    block = ByteSink();
  }
  tables_ = ChunkTables();
  blocks_ = std::vector<ByteSink>();
  records_size_ = 0;
  count_ = 0;
  charged_bag_layouts_ = 0;
  return out;
}

void AppendSection(ByteSink* out, SectionId id, ByteView bytes) {
  out->Raw(ByteView(reinterpret_cast<const std::uint8_t*>(id.data()), 4));
  out->LengthPrefixed(bytes);
}

Result<std::uint32_t> Capturer::Capture(const reflect::ClassInfo& cls, void* object, Guid subject,
                                        RecordKind kind, const std::vector<Section>* sections) {
  if (sections == nullptr || sections->empty()) {
    return Capture(cls, object, subject, kind, EncodedSections{});
  }
  if (sections->size() > kMaxSections - 3) {
    return InvalidInputError("sections added to a record must differ and be at most 61");
  }
  more_scratch_.clear();
  for (const Section& section : *sections) AppendSection(&more_scratch_, section.id, section.bytes);
  const EncodedSections more{more_scratch_.view(), static_cast<std::uint32_t>(sections->size())};
  return Capture(cls, object, subject, kind, more);
}

Result<std::uint32_t> Capturer::Capture(const reflect::ClassInfo& cls, void* object, Guid subject,
                                        RecordKind kind, const EncodedSections& more) {
  if (!IsKnownObjectKind(static_cast<std::uint8_t>(kind))) {
    return InvalidInputError("records of kind TABLES are not captured");
  }
  if (more.count != 0 || !more.bytes.empty()) ROLLY_RETURN_IF_ERROR(WalkSections(more));
  ChunkTables& tables = chunk_->tables();
  const ChunkTables::Mark mark = tables.GetMark();
  const reflect::ClassPlan& plan = cls.Plan();
  if (plan.pre_save) reflect::TypeRegistry::RunPreSave(cls, object);
  Parts parts;
  parts.more = more;
  scratch_.clear();
  parts.prop = &scratch_;
  bool needs_check = false;
  std::vector<reflect::ObjectRef> owned;
  auto fail = [&](Status s) {
    tables.Rollback(mark);
    return s;
  };
  Result<std::uint32_t> added = tables.AddLayout(cls);
  if (!added.ok()) return fail(added.status());
  const std::uint32_t layout = *added;
  Status s = WriteParts(cls, object, &tables, links_, true, &parts, &needs_check, &owned);
  if (!s.ok()) return fail(s);
  if (needs_check) {
    // The same check a load runs, against a copy of the budget: a save never writes what its
    // load would refuse, and a refused capture charges nothing.
    Record record = ToRecord(kind, subject, layout, parts);
    s = chunk_->CheckAndCharge(record, chunk_->record_count() + 1);
    if (!s.ok()) {
      return fail(InvalidDataError("class " + cls.name().str() +
                                   ": a load would refuse it: " + std::string(s.message())));
    }
  }
  WriteRecord(chunk_->BeginRecord(HeaderSize(layout, parts) + scratch_.size()), kind, subject,
              layout, parts);
  Remember(cls, object, owned);
  return chunk_->record_count();
}

void Capturer::Remember(const reflect::ClassInfo& cls, void* object,
                        const std::vector<reflect::ObjectRef>& owned) {
  const std::size_t before = captured_.size();
  for (auto it = owned.rbegin(); it != owned.rend(); ++it) {
    if (it->cls->Plan().saved) captured_.push_back(*it);
  }
  if (cls.Plan().saved) captured_.push_back({&cls, object});
  last_remembered_ = captured_.size() != before;
  if (last_remembered_) ends_.push_back(static_cast<std::uint32_t>(captured_.size()));
}

// ---------------------------------------------------------------------------------------------
// Captures in two halves

namespace {
// A field a copy's image does not hold: a string, soft path, vector or reference.
struct SideItem {
  std::uint32_t offset = 0;  // in the object
  const Type* type = nullptr;
};
}  // namespace

// How a class's objects are copied.
struct ObjectCopies::Program {
  const reflect::ClassInfo* cls = nullptr;
  std::uint32_t number = 0;  // in programs_
  bool copyable = false;
  // The image: runs of the object's bytes (its saved fields, those that touch in one run), each
  // at the same offset modulo 8 in the image as in the object (so fields keep their alignment),
  // `size` bytes in all.
  struct Run {
    std::uint32_t from = 0;
    std::uint32_t to = 0;
    std::uint32_t size = 0;
  };
  std::vector<Run> runs;
  std::uint32_t size = 0;
  // Where each of the plan's fields is in the image (0 for one held wholly by a side item).
  std::vector<std::uint32_t> places;
  std::vector<SideItem> side;
  // The class (or a base) has a save-extra hook: its bytes follow the side items.
  bool extra = false;
};

namespace {

// Copies are kept in blocks of this size (a larger copy gets a block of its own).
constexpr std::size_t kCopyBlock = std::size_t{1} << 18;
// Struct nesting past this, or an image larger than this, is captured whole.
constexpr int kMaxCopyDepth = 32;
constexpr std::size_t kMaxImage = std::size_t{1} << 16;

// Whether a value of `t` lies wholly in its own bytes, so that a copy's image holds it.
bool InPlace(const Type& t, int depth) {
  if (depth > kMaxCopyDepth || t.align > kCopyAlign) return false;
  if (IsFixedForm(t.kind) || t.kind == Kind::kEnum || t.kind == Kind::kName) return true;
  if (t.kind == Kind::kArray) return InPlace(*t.element, depth + 1);
  if (t.kind != Kind::kStruct) return false;
  for (const reflect::PlanField& f : t.class_info->Plan().fields) {
    if (!InPlace(f.type(), depth + 1)) return false;
  }
  return true;
}

// Adds the side items of a value of `t` at `offset` in its object; false when it is not copied.
bool AddSide(const Type& t, std::uint32_t offset, int depth, std::vector<SideItem>* side) {
  if (InPlace(t, depth)) return true;
  if (depth > kMaxCopyDepth || t.align > kCopyAlign) return false;
  switch (t.kind) {
    case Kind::kString:
    case Kind::kSoftPath:
    case Kind::kReference:
      side->push_back({offset, &t});
      return true;
    case Kind::kVector:
      if (!InPlace(*t.element, depth + 1)) return false;
      side->push_back({offset, &t});
      return true;
    case Kind::kStruct:
      for (const reflect::PlanField& f : t.class_info->Plan().fields) {
        if (!AddSide(f.type(), offset + f.offset, depth + 1, side)) return false;
      }
      return true;
    default:
      return false;
  }
}

// Whether a field is held wholly by a side item (the image need not hold its bytes).
bool WhollySide(Kind kind) {
  return kind == Kind::kString || kind == Kind::kSoftPath || kind == Kind::kVector ||
         kind == Kind::kReference;
}

// memcpy, inline for the few bytes most runs are: up to 32 bytes as two loads from each end,
// overlapping in the middle (never outside the n bytes).
template <typename Word>
[[gnu::always_inline]] inline void CopyEnds(std::uint8_t* to, const char* from, std::size_t n) {
  Word head, tail;
  std::memcpy(&head, from, sizeof head);
  std::memcpy(&tail, from + n - sizeof tail, sizeof tail);
  std::memcpy(to, &head, sizeof head);
  std::memcpy(to + n - sizeof tail, &tail, sizeof tail);
}
[[gnu::always_inline]] inline void CopyBytes(std::uint8_t* to, const char* from, std::size_t n) {
  if (n < 8) {
    if (n >= 4) {
      CopyEnds<std::uint32_t>(to, from, n);
    } else if (n >= 2) {
      CopyEnds<std::uint16_t>(to, from, n);
    } else if (n == 1) {
      *to = static_cast<std::uint8_t>(*from);
    }
  } else if (n <= 16) {
    CopyEnds<std::uint64_t>(to, from, n);
  } else if (n <= 32) {
    struct Words {
      std::uint64_t w[2];
    };
    CopyEnds<Words>(to, from, n);
  } else {
    std::memcpy(to, from, n);
  }
}

const std::string& StringAt(const Type& t, const void* at) {
  return t.kind == Kind::kSoftPath ? static_cast<const reflect::SoftPath*>(at)->path
                                   : *static_cast<const std::string*>(at);
}

// Why Capture would refuse `object`, in its words: its writer is run on the object (into
// throwaway tables) to find the field.
[[gnu::cold, gnu::noinline]] Status Refusal(const reflect::ClassInfo& cls, const void* object,
                                            ObjectLinks* links) {
  ChunkTables tables;
  ByteSink sink;
  Writer writer(&tables, links);
  writer.Start(&sink);
  Status s = writer.Fields(cls.Plan(), object, 1, false);
  return InvalidDataError("class " + cls.name().str() + " " +
                          (s.ok() ? std::string("cannot be copied") : std::string(s.message())));
}

}  // namespace

ObjectCopies::ObjectCopies() = default;
ObjectCopies::~ObjectCopies() = default;

const ObjectCopies::Program* ObjectCopies::FindProgram(const reflect::ClassInfo& cls,
                                                       std::size_t slot) {
  if (recent_cls_[slot] != nullptr && recent_cls_[slot ^ 1] == nullptr) slot ^= 1;
  recent_cls_[slot] = &cls;
  const Program*& recent = recent_[slot];
  for (const auto& p : programs_) {
    if (p->cls == &cls) return recent = p->copyable ? p.get() : nullptr;
  }
  auto program = std::make_unique<Program>();
  program->cls = &cls;
  program->number = static_cast<std::uint32_t>(programs_.size());
  const reflect::ClassPlan& plan = cls.Plan();
  bool copyable = true;
  program->extra = plan.extra;
  // The fields the image holds, by offset, made into runs of fields that touch: a copy reads
  // the object's saved fields and nothing else of it (another thread may write its other
  // members meanwhile).
  std::vector<std::size_t> held;
  for (std::size_t i = 0; i < plan.fields.size(); ++i) {
    const reflect::PlanField& f = plan.fields[i];
    copyable = copyable && AddSide(f.type(), f.offset, 1, &program->side);
    if (!WhollySide(f.type().kind)) held.push_back(i);
  }
  std::sort(held.begin(), held.end(), [&](std::size_t x, std::size_t y) {
    return plan.fields[x].offset < plan.fields[y].offset;
  });
  program->places.assign(plan.fields.size(), 0);
  std::size_t image = 0;
  for (std::size_t i : held) {
    const reflect::PlanField& f = plan.fields[i];
    const std::size_t end = std::size_t{f.offset} + f.type().size;
    Program::Run* run = program->runs.empty() ? nullptr : &program->runs.back();
    if (run == nullptr || f.offset > std::size_t{run->from} + run->size) {
      // A new run, where the image keeps the field's offset modulo 8 (so its alignment).
      image += (f.offset - image) & (kCopyAlign - 1);
      program->runs.push_back({f.offset, static_cast<std::uint32_t>(image), 0});
      run = &program->runs.back();
    }
    const std::size_t size = std::max<std::size_t>(run->size, end - run->from);
    image += size - run->size;
    run->size = static_cast<std::uint32_t>(size);
    program->places[i] = static_cast<std::uint32_t>(run->to + (f.offset - run->from));
  }
  if (copyable && image <= kMaxImage) {
    program->copyable = true;
    program->size = static_cast<std::uint32_t>(image);
  } else {
    program->runs.clear();
    program->places.clear();
    program->side.clear();
  }
  programs_.push_back(std::move(program));
  return recent = programs_.back()->copyable ? programs_.back().get() : nullptr;
}

void ObjectCopies::NewBlock(std::size_t size) {
  Block block;
  block.size = RoundCopy(std::max(kCopyBlock, size));
  block.bytes.reset(new std::byte[block.size]);
  blocks_.push_back(std::move(block));
}

const std::uint8_t* ObjectCopies::Oldest() {
  // Past the end of a block: on to the next, letting the passed one go.
  while (read_at_ == blocks_[read_block_].used) {
    blocks_[read_block_++] = Block();
    read_at_ = 0;
  }
  return blocks_[read_block_].data() + read_at_;
}

void ObjectCopies::Pass(std::size_t size) {
  read_at_ = size != 0 ? read_at_ + size : blocks_[read_block_].used;
  ++passed_;
}

Status Capturer::Copy(const reflect::ClassInfo& cls, void* object, ObjectCopies* copies) {
  const ObjectCopies::Program* const program = copies->ProgramOf(cls);
  if (program == nullptr) {
    return InvalidInputError("objects of class " + cls.name().str() + " are not copied");
  }
  if (cls.Plan().pre_save) reflect::TypeRegistry::RunPreSave(cls, object);
  const char* const base = static_cast<const char*>(object);
  // The save-extra hooks' bytes, as Capture would write them (the object does not change between
  // them and the fields).
  std::string extra;
  if (program->extra) {
    ROLLY_ASSIGN_OR_RETURN(extra, reflect::TypeRegistry::WriteExtra(cls, object));
  }
  // The room it takes: the head, the image, the side items, the extra bytes.
  std::size_t size = kCopyHead + RoundCopy(program->size) + (program->extra ? 8 + extra.size() : 0);
  std::uint64_t elements = 0;
  for (const SideItem& item : program->side) {
    const void* at = base + item.offset;
    switch (item.type->kind) {
      case Kind::kVector: {
        const std::size_t n = item.type->container->size(at);
        elements += n;
        if (elements > kMaxElementsPerRecord) return Refusal(cls, object, links_);
        size += 4 + kCopyAlign + n * item.type->element->size;
        break;
      }
      case Kind::kReference:
        size += 17;
        break;
      default: {
        const std::string& s = StringAt(*item.type, at);
        if (s.size() > kMaxStringBytes) return Refusal(cls, object, links_);
        size += 4 + s.size();
        break;
      }
    }
  }
  size = RoundCopy(size);
  std::uint8_t* const begun = copies->Room(size);
  // A copy past 4 GiB has a block of its own (Room), which it fills: its head says 0.
  StoreLE<std::uint32_t>(begun, size <= UINT32_MAX ? static_cast<std::uint32_t>(size) : 0);
  StoreLE<std::uint32_t>(begun + 4, program->number);
  for (const ObjectCopies::Program::Run& run : program->runs) {
    CopyBytes(begun + kCopyHead + run.to, base + run.from, run.size);
  }
  std::uint8_t* p = begun + kCopyHead + RoundCopy(program->size);
  for (const SideItem& item : program->side) {
    const void* at = base + item.offset;
    const Type& t = *item.type;
    if (t.kind == Kind::kVector) {
      const std::size_t n = t.container->size(at);
      StoreLE<std::uint32_t>(p, static_cast<std::uint32_t>(n));
      p += 4;
      if (n == 0) continue;
      p = AlignCopy(p);
      const std::size_t bytes = n * t.element->size;
      std::memcpy(p, t.container->element(const_cast<void*>(at), 0), bytes);
      p += bytes;
    } else if (t.kind == Kind::kReference) {
      const void* target = t.pointer->get(at);
      std::optional<LinkTarget> found;
      if (target != nullptr) {
        if (links_ == nullptr) return Refusal(cls, object, links_);
        // Named now, found where it is saved when the record is written (off this thread), when
        // the links can; otherwise found now.
        if (const void* identity = links_->Identify(*t.class_info, target)) {
          *p++ = kIdentified;
          StoreLE<std::uint64_t>(p, reinterpret_cast<std::uintptr_t>(identity));
          p += 8;
          continue;
        }
        found = links_->Locate(*t.class_info, target);
      }
      if (!found) {
        *p++ = kNoTarget;
      } else if (found->record != 0) {
        *p++ = kSameChunk;
        StoreLE<std::uint32_t>(p, found->record);
        p += 4;
      } else {
        *p++ = kOtherChunk;
        StoreLE<std::uint64_t>(p, found->id.high());
        StoreLE<std::uint64_t>(p + 8, found->id.low());
        p += 16;
      }
    } else {
      const std::string& s = StringAt(t, at);
      if (!Savable(s)) return Refusal(cls, object, links_);
      StoreLE<std::uint32_t>(p, static_cast<std::uint32_t>(s.size()));
      if (!s.empty()) std::memcpy(p + 4, s.data(), s.size());
      p += 4 + s.size();
    }
  }
  if (program->extra) {
    StoreLE<std::uint64_t>(p, extra.size());
    if (!extra.empty()) std::memcpy(p + 8, extra.data(), extra.size());
    p += 8 + extra.size();
  }
  assert(p <= begun + size);
  copies->Commit(size);
  if (cls.Plan().saved) {
    Remember(cls, object, {});
  } else {
    last_remembered_ = false;
  }
  return OkStatus();
}

Result<std::uint32_t> Capturer::CaptureCopy(ObjectCopies* copies, Guid subject, RecordKind kind,
                                            const EncodedSections& more) {
  if (copies->pending() == 0) return InvalidInputError("no copy is pending");
  const std::uint8_t* const begun = copies->Oldest();
  const std::uint32_t size = LoadLE<std::uint32_t>(begun);
  const std::uint32_t number = LoadLE<std::uint32_t>(begun + 4);
  assert(number < copies->programs_.size());
  const ObjectCopies::Program& program = *copies->programs_[number];
  // Passed whatever happens: the next call reads the next copy.
  copies->Pass(size);
  if (!IsKnownObjectKind(static_cast<std::uint8_t>(kind))) {
    return InvalidInputError("records of kind TABLES are not captured");
  }
  if (more.count != 0 || !more.bytes.empty()) ROLLY_RETURN_IF_ERROR(WalkSections(more));
  const reflect::ClassInfo& cls = *program.cls;
  const std::uint8_t* const image = begun + kCopyHead;
  ChunkTables& tables = chunk_->tables();
  const ChunkTables::Mark mark = tables.GetMark();
  Result<std::uint32_t> layout = tables.AddLayout(cls);
  if (!layout.ok()) {
    tables.Rollback(mark);
    return layout.status();
  }
  scratch_.clear();
  Writer writer(&tables, links_);
  writer.StartCopy(&scratch_, image + RoundCopy(program.size));
  Status s = writer.Fields(cls.Plan(), image, 1, false, program.places.data());
  if (!s.ok()) {
    tables.Rollback(mark);
    return InvalidDataError("class " + cls.name().str() + " " + std::string(s.message()));
  }
  assert(!writer.needs_check());  // nothing a copy holds is counted by the file's budget
  Parts parts;
  parts.prop = &scratch_;
  parts.more = more;
  if (program.extra) {
    const std::uint8_t* at = writer.side();
    const std::uint64_t n = LoadLE<std::uint64_t>(at);
    parts.extra.assign(reinterpret_cast<const char*>(at + 8), n);
    parts.has_extra = true;
  }
  WriteRecord(chunk_->BeginRecord(HeaderSize(*layout, parts) + scratch_.size()), kind, subject,
              *layout, parts);
  return chunk_->record_count();
}

void Capturer::RunSavedHooks(const std::function<bool(std::size_t)>& keep) {
  // Taken first: a hook may start another capture, or lead the caller to ask about the next.
  const std::vector<reflect::ObjectRef> captured = std::move(captured_);
  const std::vector<std::uint32_t> ends = std::move(ends_);
  captured_.clear();
  ends_.clear();
  std::uint32_t begin = 0;
  for (std::size_t k = 0; k < ends.size(); ++k) {
    if (!keep || keep(k)) {
      for (std::uint32_t i = begin; i < ends[k]; ++i) {
        reflect::TypeRegistry::RunSaved(*captured[i].cls, const_cast<void*>(captured[i].object));
      }
    }
    begin = ends[k];
  }
}

Result<Record> CaptureObject(const reflect::ClassInfo& cls, const void* object, Guid subject,
                             RecordKind kind, ChunkTables* tables) {
  if (!IsKnownObjectKind(static_cast<std::uint8_t>(kind))) {
    return InvalidInputError("records of kind TABLES are not captured");
  }
  const ChunkTables::Mark mark = tables->GetMark();
  Result<std::uint32_t> layout = tables->AddLayout(cls);
  ByteSink prop;
  Parts parts;
  parts.prop = &prop;
  bool needs_check = false;
  Status s = layout.ok()
                 ? WriteParts(cls, object, tables, nullptr, false, &parts, &needs_check, nullptr)
                 : layout.status();
  Record record;
  if (s.ok()) {
    record = ToRecord(kind, subject, *layout, parts);
    if (needs_check) {
      FileBudget budget;
      s = CheckRecord(*tables, record, 1, kMaxRecords + 1, &budget);
      if (!s.ok()) {
        s = InvalidDataError("class " + cls.name().str() +
                             ": a load would refuse it: " + std::string(s.message()));
      }
    }
  }
  if (!s.ok()) {
    tables->Rollback(mark);
    return s;
  }
  return record;
}

}  // namespace rolly::record
