#include "rolly/scene/internal/json_values.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "rolly/core/name.h"

namespace rolly::scene_internal {
namespace {

using nlohmann::json;
using reflect::Kind;
using reflect::Type;

Status Bad(const std::string& where, std::string_view what) {
  return InvalidInputError(where + ": " + std::string(what));
}

std::string_view JsonKind(const json& j) { return j.type_name(); }

Status Expected(const std::string& where, std::string_view expected, const json& j) {
  return Bad(where, "expected " + std::string(expected) + ", got " + std::string(JsonKind(j)));
}

// Storage for a temporary value of a descriptor's type, ended with it.
class Temp {
 public:
  explicit Temp(const Type& type) : type_(type) {
    data_ = ::operator new(type.size == 0 ? 1 : type.size, std::align_val_t(type.align));
    type.construct(data_);
  }
  ~Temp() {
    type_.destroy(data_);
    ::operator delete(data_, std::align_val_t(type_.align));
  }
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;
  void* get() const { return data_; }

 private:
  const Type& type_;
  void* data_;
};

template <typename T>
Status SetInt(void* at, const json& j, const std::string& where) {
  if (!j.is_number_integer()) return Expected(where, "an integer", j);
  if (j.is_number_unsigned()) {
    const std::uint64_t v = j.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
      return Bad(where, "integer out of range");
    *static_cast<T*>(at) = static_cast<T>(v);
    return OkStatus();
  }
  const std::int64_t v = j.get<std::int64_t>();
  if constexpr (std::is_unsigned_v<T>) {
    if (v < 0) return Bad(where, "integer out of range");
    if (static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
      return Bad(where, "integer out of range");
  } else {
    if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        v > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
      return Bad(where, "integer out of range");
  }
  *static_cast<T*>(at) = static_cast<T>(v);
  return OkStatus();
}

// Reads `n` numbers of an array into `out` (as F).
template <typename F>
Status Numbers(const json& j, std::size_t min, std::size_t max, F* out, const std::string& where) {
  if (!j.is_array() || j.size() < min || j.size() > max) {
    return Bad(where, "expected an array of " + std::to_string(min) +
                          (min == max ? "" : " to " + std::to_string(max)) + " numbers");
  }
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number()) return Expected(where + "[" + std::to_string(i) + "]", "a number", j[i]);
    out[i] = static_cast<F>(j[i].get<double>());
  }
  return OkStatus();
}

template <typename V, typename F>
Status SetVector(void* at, const json& j, std::size_t n, const std::string& where) {
  F values[4] = {0, 0, 0, 0};
  ROLLY_RETURN_IF_ERROR(Numbers(j, n, n, values, where));
  auto* v = static_cast<V*>(at);
  F* parts[4] = {};
  if constexpr (requires {
                  v->w;
                  v->z;
                }) {
    F* p[4] = {&v->x, &v->y, &v->z, &v->w};
    for (int i = 0; i < 4; ++i) parts[i] = p[i];
  } else if constexpr (requires { v->z; }) {
    F* p[3] = {&v->x, &v->y, &v->z};
    for (int i = 0; i < 3; ++i) parts[i] = p[i];
  } else {
    F* p[2] = {&v->x, &v->y};
    for (int i = 0; i < 2; ++i) parts[i] = p[i];
  }
  for (std::size_t i = 0; i < n; ++i) *parts[i] = values[i];
  return OkStatus();
}

template <typename F>
Status SetRotator(void* at, const json& j, const std::string& where) {
  F v[3];
  ROLLY_RETURN_IF_ERROR(Numbers(j, 3, 3, v, where));
  auto* r = static_cast<reflect::Rotator<F>*>(at);
  r->pitch = v[0];
  r->yaw = v[1];
  r->roll = v[2];
  return OkStatus();
}

template <typename F>
Status SetTransform(void* at, const json& j, const std::string& where) {
  Result<reflect::Transformd> t = ParseTransform(j, where);
  if (!t.ok()) return t.status();
  auto* out = static_cast<reflect::Transform<F>*>(at);
  out->rotation = {static_cast<F>(t->rotation.x), static_cast<F>(t->rotation.y),
                   static_cast<F>(t->rotation.z), static_cast<F>(t->rotation.w)};
  out->translation = {static_cast<F>(t->translation.x), static_cast<F>(t->translation.y),
                      static_cast<F>(t->translation.z)};
  out->scale = {static_cast<F>(t->scale.x), static_cast<F>(t->scale.y), static_cast<F>(t->scale.z)};
  return OkStatus();
}

// A map key given as an object key's text.
Status SetKeyFromText(const reflect::TypeRegistry& registry, const Type& type, void* at,
                      const std::string& text, const std::string& where) {
  switch (type.kind) {
    case Kind::kString:
    case Kind::kName:
    case Kind::kGuid:
    case Kind::kEnum:
    case Kind::kSoftPath:
      return SetValue(registry, type, at, json(text), where, nullptr);
    case Kind::kBool:
    case Kind::kInt8:
    case Kind::kInt16:
    case Kind::kInt32:
    case Kind::kInt64:
    case Kind::kUInt8:
    case Kind::kUInt16:
    case Kind::kUInt32:
    case Kind::kUInt64:
    case Kind::kFloat:
    case Kind::kDouble: {
      json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded()) return Bad(where, "key \"" + text + "\" is not a number");
      return SetValue(registry, type, at, parsed, where, nullptr);
    }
    default:
      return Bad(where, "a map with " + reflect::DescribeType(type) +
                            " keys is given as an array of [key, value] pairs");
  }
}

}  // namespace

Result<reflect::Transformd> ParseTransform(const json& j, const std::string& where) {
  reflect::Transformd t;
  if (j.is_null()) return t;
  if (j.is_array()) {
    double v[10];
    ROLLY_RETURN_IF_ERROR(Numbers(j, 10, 10, v, where));
    t.rotation = {v[0], v[1], v[2], v[3]};
    t.translation = {v[4], v[5], v[6]};
    t.scale = {v[7], v[8], v[9]};
    return t;
  }
  if (!j.is_object()) return Expected(where, "a transform object", j);
  for (auto it = j.begin(); it != j.end(); ++it) {
    double v[4] = {0, 0, 0, 0};
    if (it.key() == "translation") {
      ROLLY_RETURN_IF_ERROR(Numbers(it.value(), 3, 3, v, where + ".translation"));
      t.translation = {v[0], v[1], v[2]};
    } else if (it.key() == "rotation") {
      ROLLY_RETURN_IF_ERROR(Numbers(it.value(), 4, 4, v, where + ".rotation"));
      t.rotation = {v[0], v[1], v[2], v[3]};
    } else if (it.key() == "scale") {
      ROLLY_RETURN_IF_ERROR(Numbers(it.value(), 3, 3, v, where + ".scale"));
      t.scale = {v[0], v[1], v[2]};
    } else {
      return Bad(where, "unknown transform key \"" + it.key() + "\"");
    }
  }
  return t;
}

Status SetValue(const reflect::TypeRegistry& registry, const Type& type, void* at, const json& j,
                const std::string& where, std::vector<PendingReference>* refs) {
  switch (type.kind) {
    case Kind::kBool:
      if (!j.is_boolean()) return Expected(where, "a boolean", j);
      *static_cast<bool*>(at) = j.get<bool>();
      return OkStatus();
    case Kind::kInt8:
      return SetInt<std::int8_t>(at, j, where);
    case Kind::kInt16:
      return SetInt<std::int16_t>(at, j, where);
    case Kind::kInt32:
      return SetInt<std::int32_t>(at, j, where);
    case Kind::kInt64:
      return SetInt<std::int64_t>(at, j, where);
    case Kind::kUInt8:
      return SetInt<std::uint8_t>(at, j, where);
    case Kind::kUInt16:
      return SetInt<std::uint16_t>(at, j, where);
    case Kind::kUInt32:
      return SetInt<std::uint32_t>(at, j, where);
    case Kind::kUInt64:
      return SetInt<std::uint64_t>(at, j, where);
    case Kind::kFloat:
      if (!j.is_number()) return Expected(where, "a number", j);
      *static_cast<float*>(at) = static_cast<float>(j.get<double>());
      return OkStatus();
    case Kind::kDouble:
      if (!j.is_number()) return Expected(where, "a number", j);
      *static_cast<double*>(at) = j.get<double>();
      return OkStatus();
    case Kind::kString:
      if (!j.is_string()) return Expected(where, "a string", j);
      *static_cast<std::string*>(at) = j.get<std::string>();
      return OkStatus();
    case Kind::kName:
      if (!j.is_string()) return Expected(where, "a string", j);
      *static_cast<Name*>(at) = Name(j.get_ref<const std::string&>());
      return OkStatus();
    case Kind::kText: {
      auto* text = static_cast<reflect::Text*>(at);
      if (j.is_string()) {
        *text = reflect::Text{j.get<std::string>(), "", "", {}};
        return OkStatus();
      }
      if (!j.is_object()) return Expected(where, "a string or a text object", j);
      *text = reflect::Text{};
      for (auto it = j.begin(); it != j.end(); ++it) {
        std::string* slot = it.key() == "source"      ? &text->source
                            : it.key() == "namespace" ? &text->localization_namespace
                            : it.key() == "key"       ? &text->localization_key
                                                      : nullptr;
        if (slot == nullptr) return Bad(where, "unknown text key \"" + it.key() + "\"");
        if (!it.value().is_string())
          return Expected(where + "." + it.key(), "a string", it.value());
        *slot = it.value().get<std::string>();
      }
      return OkStatus();
    }
    case Kind::kGuid: {
      if (!j.is_string()) return Expected(where, "a GUID string", j);
      std::optional<Guid> g = Guid::Parse(j.get_ref<const std::string&>());
      if (!g) return Bad(where, "\"" + j.get<std::string>() + "\" is not a GUID");
      *static_cast<Guid*>(at) = *g;
      return OkStatus();
    }
    case Kind::kColor: {
      float v[4] = {0, 0, 0, 1};
      ROLLY_RETURN_IF_ERROR(Numbers(j, 3, 4, v, where));
      *static_cast<reflect::Color*>(at) = {v[0], v[1], v[2], v[3]};
      return OkStatus();
    }
    case Kind::kDateTime:
      return SetInt<std::int64_t>(&static_cast<reflect::DateTime*>(at)->ticks, j, where);
    case Kind::kVector2f:
      return SetVector<reflect::Vector2f, float>(at, j, 2, where);
    case Kind::kVector2d:
      return SetVector<reflect::Vector2d, double>(at, j, 2, where);
    case Kind::kVector3f:
      return SetVector<reflect::Vector3f, float>(at, j, 3, where);
    case Kind::kVector3d:
      return SetVector<reflect::Vector3d, double>(at, j, 3, where);
    case Kind::kVector4f:
      return SetVector<reflect::Vector4f, float>(at, j, 4, where);
    case Kind::kVector4d:
      return SetVector<reflect::Vector4d, double>(at, j, 4, where);
    case Kind::kQuatf:
      return SetVector<reflect::Quatf, float>(at, j, 4, where);
    case Kind::kQuatd:
      return SetVector<reflect::Quatd, double>(at, j, 4, where);
    case Kind::kRotatorf:
      return SetRotator<float>(at, j, where);
    case Kind::kRotatord:
      return SetRotator<double>(at, j, where);
    case Kind::kTransformf:
      return SetTransform<float>(at, j, where);
    case Kind::kTransformd:
      return SetTransform<double>(at, j, where);
    case Kind::kSoftPath:
      if (!j.is_string()) return Expected(where, "a string", j);
      static_cast<reflect::SoftPath*>(at)->path = j.get<std::string>();
      return OkStatus();
    case Kind::kEnum: {
      if (!j.is_string()) return Expected(where, "an enum value name", j);
      const std::string& text = j.get_ref<const std::string&>();
      std::optional<Name> n = Name::Find(text);
      std::optional<std::int64_t> number;
      if (n && type.enum_info != nullptr) number = type.enum_info->Find(*n);
      if (!number) return Bad(where, "\"" + text + "\" is not a value of this enum");
      type.enum_ops->set(at, *number);
      return OkStatus();
    }
    case Kind::kStruct:
      if (!j.is_object()) return Expected(where, "an object", j);
      return SetFields(registry, *type.class_info, at, j, where, refs);
    case Kind::kVector:
    case Kind::kArray: {
      if (!j.is_array()) return Expected(where, "an array", j);
      if (type.kind == Kind::kArray && j.size() != type.fixed_count)
        return Bad(where, "expected " + std::to_string(type.fixed_count) + " elements");
      if (type.kind == Kind::kVector) type.container->resize(at, j.size());
      for (std::size_t i = 0; i < j.size(); ++i) {
        ROLLY_RETURN_IF_ERROR(SetValue(registry, *type.element, type.container->element(at, i),
                                       j[i], where + "[" + std::to_string(i) + "]", refs));
      }
      return OkStatus();
    }
    case Kind::kSet: {
      if (!j.is_array()) return Expected(where, "an array", j);
      type.container->clear(at);
      for (std::size_t i = 0; i < j.size(); ++i) {
        Temp key(*type.element);
        ROLLY_RETURN_IF_ERROR(SetValue(registry, *type.element, key.get(), j[i],
                                       where + "[" + std::to_string(i) + "]", nullptr));
        bool inserted = false;
        type.container->insert(at, key.get(), &inserted);
        if (!inserted) return Bad(where, "element " + std::to_string(i) + " is a duplicate");
      }
      return OkStatus();
    }
    case Kind::kMap: {
      if (!j.is_object() && !j.is_array()) return Expected(where, "an object or an array", j);
      type.container->clear(at);
      auto put = [&](const json* key_json, const std::string& key_text, const json& value,
                     const std::string& at_where) -> Status {
        Temp key(*type.element);
        ROLLY_RETURN_IF_ERROR(
            key_json ? SetValue(registry, *type.element, key.get(), *key_json, at_where, nullptr)
                     : SetKeyFromText(registry, *type.element, key.get(), key_text, at_where));
        bool inserted = false;
        void* mapped = type.container->insert(at, key.get(), &inserted);
        if (!inserted) return Bad(at_where, "duplicate key");
        return SetValue(registry, *type.mapped, mapped, value, at_where, refs);
      };
      if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
          ROLLY_RETURN_IF_ERROR(put(nullptr, it.key(), it.value(), where + "[" + it.key() + "]"));
        return OkStatus();
      }
      for (std::size_t i = 0; i < j.size(); ++i) {
        const std::string w = where + "[" + std::to_string(i) + "]";
        if (!j[i].is_array() || j[i].size() != 2) return Bad(w, "expected a [key, value] pair");
        ROLLY_RETURN_IF_ERROR(put(&j[i][0], "", j[i][1], w));
      }
      return OkStatus();
    }
    case Kind::kOptional:
      if (j.is_null()) {
        type.optional->reset(at);
        return OkStatus();
      }
      return SetValue(registry, *type.element, type.optional->emplace(at), j, where, refs);
    case Kind::kOwned: {
      if (j.is_null()) {
        type.pointer->set(at, nullptr);
        return OkStatus();
      }
      if (!j.is_object() || !j.contains("class") || !j["class"].is_string())
        return Bad(where, "expected an object with a \"class\" (or null)");
      Result<reflect::ObjectRef> made =
          registry.CreateOwned(type, at, Name(j["class"].get_ref<const std::string&>()));
      if (!made.ok()) return Bad(where, made.status().message());
      return SetFields(registry, *made->cls, const_cast<void*>(made->object), j, where, refs,
                       "class");
    }
    case Kind::kReference: {
      if (j.is_null()) {
        type.pointer->set(at, nullptr);
        return OkStatus();
      }
      if (refs == nullptr) return Bad(where, "a reference cannot be set here");
      if (!j.is_string()) return Expected(where, "an actor ID (or null)", j);
      std::optional<Guid> g = Guid::Parse(j.get_ref<const std::string&>());
      if (!g || g->is_none())
        return Bad(where, "\"" + j.get<std::string>() + "\" is not an actor ID");
      refs->push_back({at, &type, *g, where});
      return OkStatus();
    }
    case Kind::kInstancedStruct:
    case Kind::kPropertyBag:
      return Bad(where, reflect::DescribeType(type) + " values cannot be set from a map");
  }
  return Bad(where, "unsupported type");
}

Status SetFields(const reflect::TypeRegistry& registry, const reflect::ClassInfo& cls, void* object,
                 const json& values, const std::string& where, std::vector<PendingReference>* refs,
                 const char* skip) {
  if (!values.is_object()) return Expected(where, "an object of field values", values);
  for (auto it = values.begin(); it != values.end(); ++it) {
    if (skip != nullptr && it.key() == skip) continue;
    const std::string field_where = where + " field " + it.key();
    std::optional<Name> name = Name::Find(it.key());
    const reflect::Property* found = nullptr;
    char* part = static_cast<char*>(object);
    // Walk the class and its bases: a property's offset is from its declaring class's start.
    for (const reflect::ClassInfo* c = &cls; c != nullptr && found == nullptr; c = c->base()) {
      if (name) {
        for (const reflect::Property& p : c->properties()) {
          if (p.name == *name) {
            found = &p;
            break;
          }
        }
      }
      if (found == nullptr) part += c->base_offset();
    }
    if (found == nullptr)
      return Bad(where, cls.name().str() + " has no field \"" + it.key() + "\"");
    if (found->setter) {
      Temp value(*found->type);
      ROLLY_RETURN_IF_ERROR(
          SetValue(registry, *found->type, value.get(), it.value(), field_where, nullptr));
      found->setter(part, value.get());
    } else {
      ROLLY_RETURN_IF_ERROR(
          SetValue(registry, *found->type, part + found->offset, it.value(), field_where, refs));
    }
  }
  return OkStatus();
}

}  // namespace rolly::scene_internal
