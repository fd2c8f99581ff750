// Saved-type descriptors and the type-erased operations on values of each saved type.
//
// Every C++ type a saved property holds is described once per registry by a `Type`: its saved
// kind, its size, and, by kind, the descriptors of its parts (element, key, mapped value, pointee
// class, enum) and a table of operations on a value of it given only its address. The record codec
// walks these descriptors; it never looks a type up by name or allocates to reach a value.
//
// How the codec reads and writes a value at `void* v` of type `t`, by `t.kind`:
//   - kBool .. kDouble: a bool, intN_t, uintN_t, float or double at `v`; cast and read or write.
//   - kString: std::string. kName: rolly::Name. kText: reflect::Text. kGuid: rolly::Guid.
//     kColor, kDateTime, kVector2f .. kTransformd, kSoftPath: the struct of value_types.h.
//   - kEnum: t.enum_ops->get/set as int64 (any underlying type); t.enum_info gives value names.
//   - kStruct: a registered struct; t.class_info->Plan() gives its saved fields.
//   - kVector, kArray: t.element; t.container->size / element(i); vector also resize / clear.
//     Their elements are contiguous, t.element->size bytes apart (the codec walks them so).
//   - kSet: t.element; iterate with for_each; clear; insert(key) moves a key in.
//   - kMap: t.element is the key, t.mapped the value; for_each; clear; insert(key) returns the
//     address of the mapped value (default-constructed when new).
//   - kOptional: t.element; t.optional->has / value / emplace / reset.
//   - kOwned (std::unique_ptr<C>) and kReference (C*): t.class_info is C; t.pointer->get gives the
//     C* held (as void*); set stores one (an owned pointer takes ownership of it and deletes what it
//     held). TypeRegistry::DynamicClass gives the class of a live pointee, CreateOwned makes one.
//   - kInstancedStruct (reflect::InstancedStruct, property_bag.h): t.instanced->get gives the
//     struct's ClassInfo (null when empty), data the address of its value (write its fields
//     through the class's Plan); emplace makes a default value of a struct class read from the
//     file (InvalidData when that class may not be held there, see ReadableInBag).
//   - kPropertyBag (reflect::PropertyBag, property_bag.h): t.bag->size properties, each with a
//     name, a type and a value address; read a bag by clear, then add(name, type) per property
//     (InvalidData on a duplicate, past 1,024 properties or for a type ReadableInBag refuses) and
//     read into the address it returns. t.bag->layout gives the (name, type) list the codec counts
//     against the file's bound on bag layouts.
// Temporary values (a set key, a map key, a value for a setter) are made in caller-provided
// storage of t.size / t.align with t.construct and ended with t.destroy.
//
// Inside a property bag or an instanced struct, at any depth, only types ReadableInBag accepts may
// appear: no owned pointers, no references, no struct with a save-extra hook, nothing without a
// copy operation. The answer is computed once per descriptor, on first ask.
//
// Thread rules: descriptors are immutable once the registry's registration finished; read them
// from any thread (ReadableInBag's cache is atomic). The operations touch only the value they are
// given.

#ifndef ROLLY_REFLECT_TYPE_H_
#define ROLLY_REFLECT_TYPE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rolly/core/name.h"
#include "rolly/core/status.h"

namespace rolly::reflect {

class ClassInfo;
class EnumInfo;
struct Type;

// The saved kind of a type. Numbers are not written to saves (the codec writes its own tags).
enum class Kind : std::uint8_t {
  kBool, kInt8, kInt16, kInt32, kInt64, kUInt8, kUInt16, kUInt32, kUInt64, kFloat, kDouble,
  kString, kName, kText, kGuid, kColor, kDateTime,
  kVector2f, kVector2d, kVector3f, kVector3d, kVector4f, kVector4d,
  kQuatf, kQuatd, kRotatorf, kRotatord, kTransformf, kTransformd,
  kSoftPath, kEnum, kStruct,
  kVector, kArray, kSet, kMap, kOptional, kOwned, kReference,
  kInstancedStruct, kPropertyBag,
};

// "Int32", "Vector", "Struct"...
std::string_view KindName(Kind kind);

// Operations on a container (vector, array, set, map). Entries a kind lacks are null.
struct ContainerOps {
  // The number of elements.
  std::size_t (*size)(const void* container);
  // Removes every element (null for std::array).
  void (*clear)(void* container);
  // Resizes to `n` elements, new ones default-constructed (vector only).
  void (*resize)(void* container, std::size_t n);
  // The address of element `i` < size (vector and array only: contiguous elements, so element
  // i is element 0 plus i times the element type's size).
  void* (*element)(void* container, std::size_t i);
  // Set and map only: moves the key at `key` in (the key is left moved-from; the caller still
  // destroys it). Sets `*inserted` to false when the key was already there. Returns the address of
  // the mapped value for a map, null for a set.
  void* (*insert)(void* container, void* key, bool* inserted);
  // Calls visit(context, key, mapped) for each element in the container's order; `mapped` is null
  // except for maps. For vectors and arrays `key` is the element.
  void (*for_each)(const void* container, void* context,
                   void (*visit)(void* context, const void* key, const void* mapped));
};

// Operations on a std::optional.
struct OptionalOps {
  bool (*has)(const void* optional);
  // The address of the held value; only when has().
  void* (*value)(void* optional);
  // Makes the optional hold a default-constructed value (replacing any) and returns its address.
  void* (*emplace)(void* optional);
  void (*reset)(void* optional);
};

// Operations on an enum field, whatever its underlying type.
struct EnumOps {
  std::int64_t (*get)(const void* value);
  void (*set)(void* value, std::int64_t number);
};

// Operations on an owned pointer (std::unique_ptr<C>) or a reference (C*). Pointers are C* as
// void*, that is already cast to the field's class C (see TypeRegistry::Upcast).
struct PointerOps {
  void* (*get)(const void* field);
  // Stores `object`; an owned pointer takes ownership and deletes what it held. Null clears.
  void (*set)(void* field, void* object);
};

// Operations on an InstancedStruct (property_bag.h).
struct InstancedStructOps {
  // The struct class held, or null when empty.
  const ClassInfo* (*get)(const void* instanced);
  // Replaces the value with a default-constructed value of struct class `cls` (null empties it).
  // InvalidData, leaving the value as it was, when `cls` is not a registered struct or holds a
  // type ReadableInBag refuses.
  Status (*emplace)(void* instanced, const ClassInfo* cls);
  // The address of the held struct value; null when empty.
  void* (*data)(void* instanced);
};

// One entry of a property bag's layout.
struct BagField {
  Name name;
  const Type* type = nullptr;
  friend bool operator==(const BagField&, const BagField&) = default;
};

// Operations on a PropertyBag (property_bag.h). Properties are indexed 0 .. size-1 in order.
struct PropertyBagOps {
  std::size_t (*size)(const void* bag);
  Name (*name)(const void* bag, std::size_t i);
  const Type* (*type)(const void* bag, std::size_t i);
  // The address of property i's value.
  void* (*value)(void* bag, std::size_t i);
  // The bag's layout: its (name, type) list in order, valid until the bag next changes.
  const std::vector<BagField>& (*layout)(const void* bag);
  // Adds a property holding a default value of `type` and returns its address; InvalidData on a
  // duplicate name, past the property bound, or for a type ReadableInBag refuses.
  Result<void*> (*add)(void* bag, Name name, const Type* type);
  // Removes every property.
  void (*clear)(void* bag);
};

// The descriptor of one C++ type as saved. Owned by its registry; never copied.
struct Type {
  Kind kind = Kind::kBool;
  std::uint32_t size = 0;
  std::uint32_t align = 0;
  // Default-construct at / destroy at an address of `size` bytes aligned to `align`.
  void (*construct)(void* at) = nullptr;
  void (*destroy)(void* at) = nullptr;
  // Copy-constructs at `at` (as construct) from the value at `from`; null for a type that cannot
  // be copied (an owned pointer, or anything holding one).
  void (*copy)(void* at, const void* from) = nullptr;
  // Element of vector/array/set/optional; key of map.
  const Type* element = nullptr;
  // Mapped value of a map.
  const Type* mapped = nullptr;
  // Element count of a std::array.
  std::size_t fixed_count = 0;
  // Vector: the offset in the vector of the pointer it keeps to its first element (whatever its
  // allocator), -1 when none was found. Found at registration, in a vector given room for one.
  std::int32_t elements_at = -1;
  const ContainerOps* container = nullptr;
  const OptionalOps* optional = nullptr;
  const EnumOps* enum_ops = nullptr;
  const PointerOps* pointer = nullptr;
  const InstancedStructOps* instanced = nullptr;
  const PropertyBagOps* bag = nullptr;
  // kEnum: the enum's names.
  const EnumInfo* enum_info = nullptr;
  // kStruct: the struct; kOwned/kReference: the static class of the pointee.
  const ClassInfo* class_info = nullptr;
  // ReadableInBag's cached answer: 0 not computed yet, 1 readable, 2 refused.
  mutable std::atomic<std::uint8_t> readable_in_bag{0};
};

// Whether a value of `type` may be held inside a property bag or an instanced struct, at any
// depth: primitives, strings, names, texts, GUIDs, colours, date-times, the math types, soft
// paths, enums, instanced structs, property bags, containers and optionals of such, and
// registered structs each of whose registered members (of its bases too, flags aside, as a bag
// saves its structs whole; editor-only members excepted) is such, without a save-extra hook of
// their own or of a base. Owned pointers, references and types without a copy operation are
// refused. Call once registration finished (Finish()); computed once per descriptor.
bool ReadableInBag(const Type& type);

// "Vector<Map<Name, Struct Door>>" for logs and setup messages.
std::string DescribeType(const Type& type);

// Per-C++-type operation tables: one small constant per type used.
namespace type_internal {

template <typename T>
void Construct(void* at) { new (at) T(); }
template <typename T>
void Destroy(void* at) { static_cast<T*>(at)->~T(); }
template <typename T>
void Copy(void* at, const void* from) { new (at) T(*static_cast<const T*>(from)); }

// The operations of InstancedStruct and PropertyBag, defined in property_bag.cc.
extern const InstancedStructOps kInstancedStructOps;
extern const PropertyBagOps kPropertyBagOps;

template <typename C>
void ForEachSequence(const void* c, void* ctx, void (*visit)(void*, const void*, const void*)) {
  for (const auto& e : *static_cast<const C*>(c)) visit(ctx, &e, nullptr);
}

template <typename C>
inline constexpr ContainerOps kVectorOps = {
    [](const void* c) { return static_cast<const C*>(c)->size(); },
    [](void* c) { static_cast<C*>(c)->clear(); },
    [](void* c, std::size_t n) { static_cast<C*>(c)->resize(n); },
    [](void* c, std::size_t i) -> void* { return &(*static_cast<C*>(c))[i]; },
    nullptr,
    &ForEachSequence<C>,
};

template <typename C>
inline constexpr ContainerOps kArrayOps = {
    [](const void* c) { return static_cast<const C*>(c)->size(); },
    nullptr,
    nullptr,
    [](void* c, std::size_t i) -> void* { return &(*static_cast<C*>(c))[i]; },
    nullptr,
    &ForEachSequence<C>,
};

template <typename C>
inline constexpr ContainerOps kSetOps = {
    [](const void* c) { return static_cast<const C*>(c)->size(); },
    [](void* c) { static_cast<C*>(c)->clear(); },
    nullptr,
    nullptr,
    [](void* c, void* key, bool* inserted) -> void* {
      *inserted = static_cast<C*>(c)->insert(std::move(*static_cast<typename C::key_type*>(key)))
                      .second;
      return nullptr;
    },
    &ForEachSequence<C>,
};

template <typename C>
inline constexpr ContainerOps kMapOps = {
    [](const void* c) { return static_cast<const C*>(c)->size(); },
    [](void* c) { static_cast<C*>(c)->clear(); },
    nullptr,
    nullptr,
    [](void* c, void* key, bool* inserted) -> void* {
      auto [it, fresh] =
          static_cast<C*>(c)->try_emplace(std::move(*static_cast<typename C::key_type*>(key)));
      *inserted = fresh;
      return &it->second;
    },
    [](const void* c, void* ctx, void (*visit)(void*, const void*, const void*)) {
      for (const auto& [k, v] : *static_cast<const C*>(c)) visit(ctx, &k, &v);
    },
};

template <typename O>
inline constexpr OptionalOps kOptionalOps = {
    [](const void* o) { return static_cast<const O*>(o)->has_value(); },
    [](void* o) -> void* { return &**static_cast<O*>(o); },
    [](void* o) -> void* { return &static_cast<O*>(o)->emplace(); },
    [](void* o) { static_cast<O*>(o)->reset(); },
};

template <typename E>
inline constexpr EnumOps kEnumOps = {
    [](const void* v) { return static_cast<std::int64_t>(*static_cast<const E*>(v)); },
    [](void* v, std::int64_t n) { *static_cast<E*>(v) = static_cast<E>(n); },
};

// P is std::unique_ptr<C>.
template <typename P>
inline constexpr PointerOps kOwnedOps = {
    [](const void* f) -> void* { return static_cast<const P*>(f)->get(); },
    [](void* f, void* object) {
      static_cast<P*>(f)->reset(static_cast<typename P::element_type*>(object));
    },
};

// C is the pointee class.
template <typename C>
inline constexpr PointerOps kReferenceOps = {
    [](const void* f) -> void* { return *static_cast<C* const*>(f); },
    [](void* f, void* object) { *static_cast<C**>(f) = static_cast<C*>(object); },
};

}  // namespace type_internal
}  // namespace rolly::reflect

#endif  // ROLLY_REFLECT_TYPE_H_
