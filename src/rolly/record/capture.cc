#include "rolly/record/capture.h"

#include <string>
#include <utility>

#include "rolly/core/utf8.h"
#include "rolly/reflect/value_types.h"

namespace rolly::record {
namespace {

using reflect::Kind;
using reflect::Type;

class Writer {
 public:
  Writer(ChunkTables* tables, Bytes* out) : tables_(tables), w_(out) {}

  Status Value(const Type& t, const void* v, int depth) {
    if (depth > kMaxValueDepth) return InvalidDataError("a value nests past 64 levels");
    switch (t.kind) {
      case Kind::kBool:
        w_.U8(*static_cast<const bool*>(v) ? 1 : 0);
        return OkStatus();
      case Kind::kInt8:
        w_.SignedVarint(*static_cast<const std::int8_t*>(v));
        return OkStatus();
      case Kind::kInt16:
        w_.SignedVarint(*static_cast<const std::int16_t*>(v));
        return OkStatus();
      case Kind::kInt32:
        w_.SignedVarint(*static_cast<const std::int32_t*>(v));
        return OkStatus();
      case Kind::kInt64:
        w_.SignedVarint(*static_cast<const std::int64_t*>(v));
        return OkStatus();
      case Kind::kUInt8:
        w_.Varint(*static_cast<const std::uint8_t*>(v));
        return OkStatus();
      case Kind::kUInt16:
        w_.Varint(*static_cast<const std::uint16_t*>(v));
        return OkStatus();
      case Kind::kUInt32:
        w_.Varint(*static_cast<const std::uint32_t*>(v));
        return OkStatus();
      case Kind::kUInt64:
        w_.Varint(*static_cast<const std::uint64_t*>(v));
        return OkStatus();
      case Kind::kFloat:
        w_.F32(*static_cast<const float*>(v));
        return OkStatus();
      case Kind::kDouble:
        w_.F64(*static_cast<const double*>(v));
        return OkStatus();
      case Kind::kString:
        return String(*static_cast<const std::string*>(v));
      case Kind::kSoftPath:
        return String(static_cast<const reflect::SoftPath*>(v)->path);
      case Kind::kName: {
        const Name& name = *static_cast<const Name*>(v);
        if (name.is_none()) {
          w_.Varint(0);
          return OkStatus();
        }
        ROLLY_ASSIGN_OR_RETURN(std::uint32_t index, tables_->AddName(name));
        w_.Varint(std::uint64_t{index} + 1);
        return OkStatus();
      }
      case Kind::kGuid: {
        const auto& g = *static_cast<const Guid*>(v);
        w_.U64(g.high());
        w_.U64(g.low());
        return OkStatus();
      }
      case Kind::kColor: {
        const auto& c = *static_cast<const reflect::Color*>(v);
        Floats(c.r, c.g, c.b, c.a);
        return OkStatus();
      }
      case Kind::kDateTime:
        w_.I64(static_cast<const reflect::DateTime*>(v)->ticks);
        return OkStatus();
      case Kind::kVector2f:
        return Vec2<float>(v);
      case Kind::kVector2d:
        return Vec2<double>(v);
      case Kind::kVector3f:
        return Vec3<float>(v);
      case Kind::kVector3d:
        return Vec3<double>(v);
      case Kind::kVector4f:
        return Vec4<float>(v);
      case Kind::kVector4d:
        return Vec4<double>(v);
      case Kind::kQuatf:
        return Quat<float>(v);
      case Kind::kQuatd:
        return Quat<double>(v);
      case Kind::kRotatorf:
        return Rot<float>(v);
      case Kind::kRotatord:
        return Rot<double>(v);
      case Kind::kTransformf:
        return Xform<float>(v);
      case Kind::kTransformd:
        return Xform<double>(v);
      case Kind::kEnum: {
        std::int64_t number = t.enum_ops->get(v);
        Name name = t.enum_info->NameOf(number);
        if (name.is_none()) {
          return InvalidDataError("number " + std::to_string(number) + " is not a value of enum " +
                                  t.enum_info->name().str());
        }
        ROLLY_ASSIGN_OR_RETURN(std::uint32_t index, tables_->AddName(name));
        w_.Varint(index);
        return OkStatus();
      }
      case Kind::kStruct: {
        for (const reflect::PlanField& f : t.class_info->Plan().fields) {
          Status s = Value(f.type(), f.Address(v), depth + 1);
          if (!s.ok())
            return InvalidDataError("member " + f.name().str() + ": " + std::string(s.message()));
        }
        return OkStatus();
      }
      case Kind::kOptional: {
        bool has = t.optional->has(v);
        w_.U8(has ? 1 : 0);
        if (!has) return OkStatus();
        return Value(*t.element, t.optional->value(const_cast<void*>(v)), depth + 1);
      }
      case Kind::kVector:
      case Kind::kArray:
      case Kind::kSet:
      case Kind::kMap: {
        std::size_t n = t.container->size(v);
        if (n > kMaxElementsPerRecord - elements_) {
          return InvalidDataError("more than 16,777,216 elements in a record");
        }
        elements_ += n;
        w_.Varint(n);
        struct Ctx {
          Writer* self;
          const Type* t;
          int depth;
          Status status;
        } ctx{this, &t, depth, OkStatus()};
        t.container->for_each(v, &ctx, [](void* c, const void* key, const void* mapped) {
          auto* x = static_cast<Ctx*>(c);
          if (!x->status.ok()) return;
          x->status = x->self->Value(*x->t->element, key, x->depth + 1);
          if (x->status.ok() && mapped)
            x->status = x->self->Value(*x->t->mapped, mapped, x->depth + 1);
        });
        return ctx.status;
      }
      default:
        return InvalidDataError("type " + reflect::DescribeType(t) +
                                " is not saved by this version of the record layer");
    }
  }

 private:
  Status String(const std::string& s) {
    if (s.size() > kMaxStringBytes || !IsValidUtf8(s) || s.find('\0') != std::string::npos) {
      return InvalidDataError("a string of " + std::to_string(s.size()) +
                              " bytes is not UTF-8 of at most 1,048,576 bytes without NUL");
    }
    w_.LengthPrefixed(s);
    return OkStatus();
  }
  template <typename... F>
  void Floats(F... f) {
    (Float(f), ...);
  }
  void Float(float f) { w_.F32(f); }
  void Float(double f) { w_.F64(f); }
  template <typename F>
  Status Vec2(const void* v) {
    const auto& x = *static_cast<const reflect::Vector2<F>*>(v);
    Floats(x.x, x.y);
    return OkStatus();
  }
  template <typename F>
  Status Vec3(const void* v) {
    const auto& x = *static_cast<const reflect::Vector3<F>*>(v);
    Floats(x.x, x.y, x.z);
    return OkStatus();
  }
  template <typename F>
  Status Vec4(const void* v) {
    const auto& x = *static_cast<const reflect::Vector4<F>*>(v);
    Floats(x.x, x.y, x.z, x.w);
    return OkStatus();
  }
  template <typename F>
  Status Quat(const void* v) {
    const auto& x = *static_cast<const reflect::Quat<F>*>(v);
    Floats(x.x, x.y, x.z, x.w);
    return OkStatus();
  }
  template <typename F>
  Status Rot(const void* v) {
    const auto& x = *static_cast<const reflect::Rotator<F>*>(v);
    Floats(x.pitch, x.yaw, x.roll);
    return OkStatus();
  }
  template <typename F>
  Status Xform(const void* v) {
    const auto& x = *static_cast<const reflect::Transform<F>*>(v);
    Floats(x.rotation.x, x.rotation.y, x.rotation.z, x.rotation.w, x.translation.x, x.translation.y,
           x.translation.z, x.scale.x, x.scale.y, x.scale.z);
    return OkStatus();
  }

  ChunkTables* tables_;
  ByteWriter w_;
  std::uint64_t elements_ = 0;
};

}  // namespace

Result<Record> CaptureObject(const reflect::ClassInfo& cls, const void* object, Guid subject,
                             RecordKind kind, ChunkTables* tables) {
  if (!IsKnownObjectKind(static_cast<std::uint8_t>(kind))) {
    return InvalidInputError("records of kind TABLES are not captured");
  }
  Record record;
  record.kind = static_cast<std::uint8_t>(kind);
  record.subject = subject;
  ROLLY_ASSIGN_OR_RETURN(record.layout, tables->AddLayout(cls));
  Section prop;
  prop.id = kPropSection;
  Writer writer(tables, &prop.bytes);
  for (const reflect::PlanField& f : cls.Plan().fields) {
    Status s = writer.Value(f.type(), f.Address(object), 1);
    if (!s.ok()) {
      return InvalidDataError("class " + cls.name().str() + " field " + f.name().str() + ": " +
                              std::string(s.message()));
    }
  }
  record.sections.push_back(std::move(prop));
  if (reflect::TypeRegistry::HasExtra(cls)) {
    ROLLY_ASSIGN_OR_RETURN(std::string extra, reflect::TypeRegistry::WriteExtra(cls, object));
    Section section;
    section.id = kExtraSection;
    section.bytes.assign(extra.begin(), extra.end());
    record.sections.push_back(std::move(section));
  }
  return record;
}

}  // namespace rolly::record
