// Values whose type is decided at run time: an instanced struct (one value of a registered struct
// chosen at run time) and a property bag (an ordered set of named properties, each of a type
// chosen at run time).
//
// Both own their values, in storage they allocate, made and ended through the descriptors' ops
// (type.h); copies are deep, moves leave the source empty. What they may hold, at any depth, is
// what a load can read through and bound: ReadableInBag (type.h) decides, and Emplace / Add refuse
// anything else with InvalidData before changing the value. So neither ever holds an owned
// pointer, a reference or a struct with a save-extra hook.
//
// A field of either type registers like any other (ClassBuilder::Field); its descriptor has kind
// kInstancedStruct or kPropertyBag and the ops the record codec uses (type.h).
//
//   InstancedStruct s = InstancedStruct::Make<Lock>(registry).value();
//   s.Get<Lock>()->code = 7;
//   PropertyBag bag;
//   Result<void*> gold = bag.Add(Name("Gold"), registry.TypeOf<std::int32_t>());
//   if (gold.ok()) *static_cast<std::int32_t*>(*gold) = 10;
//
// Descriptors and struct classes come from a registry, which must outlive every value holding
// them; take them (TypeOf) during registration and add or emplace after Finish().
//
// Thread rules: plain values. One thread may change a value at a time; const calls (look-ups,
// copies from it) may run on any number of threads while none changes it.

#ifndef ROLLY_REFLECT_PROPERTY_BAG_H_
#define ROLLY_REFLECT_PROPERTY_BAG_H_

#include <cstddef>
#include <optional>
#include <string>
#include <typeinfo>
#include <vector>

#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/reflect/type.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::reflect {

// A value of a registered struct chosen at run time, or nothing.
class InstancedStruct {
 public:
  // Empty.
  InstancedStruct() = default;
  ~InstancedStruct() { Reset(); }
  // Deep copy: a copy of the held value, made by its type's copy op.
  InstancedStruct(const InstancedStruct& other);
  InstancedStruct& operator=(const InstancedStruct& other);
  // Takes the value; `other` is left empty.
  InstancedStruct(InstancedStruct&& other) noexcept;
  InstancedStruct& operator=(InstancedStruct&& other) noexcept;

  // A default value of struct T, which `registry` must have registered. InvalidData when it did
  // not or when T holds a type ReadableInBag refuses.
  template <typename T>
  static Result<InstancedStruct> Make(const TypeRegistry& registry);

  // The struct class held, or null when empty.
  const ClassInfo* struct_info() const { return info_; }
  bool empty() const { return info_ == nullptr; }
  // The held value (an object of struct_info()), or null when empty.
  void* data() { return data_; }
  const void* data() const { return data_; }
  // The held value as T when it holds exactly struct T, else null.
  template <typename T>
  T* Get() { return Holds<T>() ? static_cast<T*>(data_) : nullptr; }
  template <typename T>
  const T* Get() const { return Holds<T>() ? static_cast<const T*>(data_) : nullptr; }

  // Replaces the value with a default value of `cls` (null: Reset). InvalidData, leaving the value
  // unchanged, when `cls` is not a registered struct or holds a type ReadableInBag refuses.
  [[nodiscard]] Status Emplace(const ClassInfo* cls);
  // Ends the held value; empty afterwards.
  void Reset();

 private:
  template <typename T>
  bool Holds() const { return info_ != nullptr && info_->cpp_type() == typeid(T); }

  const ClassInfo* info_ = nullptr;
  void* data_ = nullptr;  // owned; of info_->value_type()
};

// An ordered set of named properties whose types are decided at run time.
class PropertyBag {
 public:
  // The most properties a bag holds (a load refuses a bag of more).
  static constexpr std::size_t kMaxProperties = 1024;

  PropertyBag() = default;
  ~PropertyBag() { Clear(); }
  // Deep copy: each value copied by its type's copy op.
  PropertyBag(const PropertyBag& other);
  PropertyBag& operator=(const PropertyBag& other);
  // Takes the properties; `other` is left empty.
  PropertyBag(PropertyBag&& other) noexcept;
  PropertyBag& operator=(PropertyBag&& other) noexcept;

  // Adds a property named `name` holding a default value of `type` (a descriptor of a registry
  // that outlives the bag) after the others, and returns the value's address, valid until the
  // property is removed or the bag ends. InvalidData, leaving the bag unchanged, for the None
  // name, a name the bag holds already, a bag holding kMaxProperties already, or a type
  // ReadableInBag refuses; InvalidInput for a null type.
  Result<void*> Add(Name name, const Type* type);
  // The value of the property named `name`, or null.
  void* Find(Name name);
  const void* Find(Name name) const;
  // The index of the property named `name`, or nullopt.
  std::optional<std::size_t> IndexOf(Name name) const;
  // Removes the property named `name`, ending its value; the others keep their order. False when
  // there is none.
  bool Remove(Name name);
  // Removes every property.
  void Clear();

  std::size_t size() const { return layout_.size(); }
  bool empty() const { return layout_.empty(); }
  // Property i < size(), in the order added.
  Name name(std::size_t i) const { return layout_[i].name; }
  const Type* type(std::size_t i) const { return layout_[i].type; }
  void* value(std::size_t i) { return values_[i]; }
  const void* value(std::size_t i) const { return values_[i]; }
  // The (name, type) list in order: what a save counts against its bound on bag layouts. Valid
  // until the bag next changes.
  const std::vector<BagField>& layout() const { return layout_; }
  // Whether both bags hold the same names with the same types in the same order.
  bool SameLayout(const PropertyBag& other) const { return layout_ == other.layout_; }

 private:
  std::vector<BagField> layout_;
  std::vector<void*> values_;  // owned; values_[i] is of layout_[i].type
};

template <typename T>
Result<InstancedStruct> InstancedStruct::Make(const TypeRegistry& registry) {
  const ClassInfo* cls = registry.FindClass<T>();
  if (cls == nullptr) return InvalidDataError(std::string("struct ") + typeid(T).name() +
                                              " is not registered");
  InstancedStruct out;
  ROLLY_RETURN_IF_ERROR(out.Emplace(cls));
  return out;
}

}  // namespace rolly::reflect

#endif  // ROLLY_REFLECT_PROPERTY_BAG_H_
