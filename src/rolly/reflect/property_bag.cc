#include "rolly/reflect/property_bag.h"

#include <cassert>
#include <new>
#include <string>
#include <utility>

namespace rolly::reflect {
namespace {

// Storage for one value of `type`, made by its construct or copy op.
void* Allocate(const Type& type) {
  return ::operator new(type.size == 0 ? 1 : type.size, std::align_val_t(type.align));
}

void Free(const Type& type, void* at) {
  type.destroy(at);
  ::operator delete(at, std::align_val_t(type.align));
}

void* NewDefault(const Type& type) {
  void* at = Allocate(type);
  type.construct(at);
  return at;
}

void* NewCopy(const Type& type, const void* from) {
  // Values held here passed ReadableInBag, which requires a copy op.
  assert(type.copy != nullptr);
  void* at = Allocate(type);
  type.copy(at, from);
  return at;
}

}  // namespace

// ---- InstancedStruct ----

InstancedStruct::InstancedStruct(const InstancedStruct& other) : info_(other.info_) {
  if (info_ != nullptr) data_ = NewCopy(*info_->value_type(), other.data_);
}

InstancedStruct& InstancedStruct::operator=(const InstancedStruct& other) {
  if (this != &other) {
    InstancedStruct copy(other);
    *this = std::move(copy);
  }
  return *this;
}

InstancedStruct::InstancedStruct(InstancedStruct&& other) noexcept
    : info_(std::exchange(other.info_, nullptr)), data_(std::exchange(other.data_, nullptr)) {}

InstancedStruct& InstancedStruct::operator=(InstancedStruct&& other) noexcept {
  if (this != &other) {
    Reset();
    info_ = std::exchange(other.info_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

Status InstancedStruct::Emplace(const ClassInfo* cls) {
  if (cls == nullptr) {
    Reset();
    return OkStatus();
  }
  if (!cls->registered() || !cls->is_struct() || cls->value_type() == nullptr) {
    return InvalidDataError("an instanced struct holds registered structs only, not " +
                            cls->name().str());
  }
  const Type& type = *cls->value_type();
  if (!ReadableInBag(type)) {
    return InvalidDataError("struct " + cls->name().str() +
                            " holds a type a save cannot read inside an instanced struct");
  }
  void* at = NewDefault(type);
  Reset();
  info_ = cls;
  data_ = at;
  return OkStatus();
}

void InstancedStruct::Reset() {
  if (info_ != nullptr) Free(*info_->value_type(), data_);
  info_ = nullptr;
  data_ = nullptr;
}

// ---- PropertyBag ----

PropertyBag::PropertyBag(const PropertyBag& other) : layout_(other.layout_) {
  values_.reserve(layout_.size());
  for (std::size_t i = 0; i < layout_.size(); ++i) {
    values_.push_back(NewCopy(*layout_[i].type, other.values_[i]));
  }
}

PropertyBag& PropertyBag::operator=(const PropertyBag& other) {
  if (this != &other) {
    PropertyBag copy(other);
    *this = std::move(copy);
  }
  return *this;
}

PropertyBag::PropertyBag(PropertyBag&& other) noexcept
    : layout_(std::exchange(other.layout_, {})), values_(std::exchange(other.values_, {})) {}

PropertyBag& PropertyBag::operator=(PropertyBag&& other) noexcept {
  if (this != &other) {
    Clear();
    layout_ = std::exchange(other.layout_, {});
    values_ = std::exchange(other.values_, {});
  }
  return *this;
}

Result<void*> PropertyBag::Add(Name name, const Type* type) {
  if (type == nullptr) return InvalidInputError("a property bag property needs a type");
  if (name.is_none()) return InvalidDataError("a property bag property needs a name");
  if (IndexOf(name).has_value()) {
    return InvalidDataError("the property bag holds a property " + name.str() + " already");
  }
  if (layout_.size() >= kMaxProperties) {
    return InvalidDataError("a property bag holds at most " + std::to_string(kMaxProperties) +
                            " properties");
  }
  if (!ReadableInBag(*type)) {
    return InvalidDataError("property " + name.str() + " of type " + DescribeType(*type) +
                            " cannot be read inside a property bag");
  }
  void* at = NewDefault(*type);
  layout_.push_back({name, type});
  values_.push_back(at);
  return at;
}

std::optional<std::size_t> PropertyBag::IndexOf(Name name) const {
  for (std::size_t i = 0; i < layout_.size(); ++i) {
    if (layout_[i].name == name) return i;
  }
  return std::nullopt;
}

void* PropertyBag::Find(Name name) {
  std::optional<std::size_t> i = IndexOf(name);
  return i ? values_[*i] : nullptr;
}

const void* PropertyBag::Find(Name name) const {
  std::optional<std::size_t> i = IndexOf(name);
  return i ? values_[*i] : nullptr;
}

bool PropertyBag::Remove(Name name) {
  std::optional<std::size_t> i = IndexOf(name);
  if (!i) return false;
  Free(*layout_[*i].type, values_[*i]);
  layout_.erase(layout_.begin() + static_cast<std::ptrdiff_t>(*i));
  values_.erase(values_.begin() + static_cast<std::ptrdiff_t>(*i));
  return true;
}

void PropertyBag::Clear() {
  for (std::size_t i = 0; i < layout_.size(); ++i) Free(*layout_[i].type, values_[i]);
  layout_.clear();
  values_.clear();
}

// ---- Ops for the record codec ----

namespace type_internal {

const InstancedStructOps kInstancedStructOps = {
    [](const void* s) { return static_cast<const InstancedStruct*>(s)->struct_info(); },
    [](void* s, const ClassInfo* cls) { return static_cast<InstancedStruct*>(s)->Emplace(cls); },
    [](void* s) { return static_cast<InstancedStruct*>(s)->data(); },
};

const PropertyBagOps kPropertyBagOps = {
    [](const void* b) { return static_cast<const PropertyBag*>(b)->size(); },
    [](const void* b, std::size_t i) { return static_cast<const PropertyBag*>(b)->name(i); },
    [](const void* b, std::size_t i) { return static_cast<const PropertyBag*>(b)->type(i); },
    [](void* b, std::size_t i) { return static_cast<PropertyBag*>(b)->value(i); },
    [](const void* b) -> const std::vector<BagField>& {
      return static_cast<const PropertyBag*>(b)->layout();
    },
    [](void* b, Name name, const Type* type) { return static_cast<PropertyBag*>(b)->Add(name, type); },
    [](void* b) { static_cast<PropertyBag*>(b)->Clear(); },
};

}  // namespace type_internal
}  // namespace rolly::reflect
