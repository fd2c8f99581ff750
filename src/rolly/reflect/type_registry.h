// The type registry: which classes, structs and enums a game saves, their properties, hooks and
// the per-class plans the record codec walks.
//
// A game registers its types once at start-up with a fluent, macro-free builder:
//
//   TypeRegistry& registry = DefaultRegistry();       // or a registry of its own (tests do)
//   registry.Enum<DoorState>("DoorState").Value("Closed", DoorState::kClosed)
//                                        .Value("Open", DoorState::kOpen);
//   registry.Struct<Lock>("Lock").Field("Code", &Lock::code, kSaveGame);
//   registry.Class<Actor>("Actor").Field("Name", &Actor::name, kSaveGame);
//   registry.Class<Door>("Door").Base<Actor>().Interface<Usable>()
//       .Field("State", &Door::state, kSaveGame)
//       .Field("Health", &Door::health, kSaveGame, &Door::SetHealth)   // setter used on apply
//       .Field("DebugColor", &Door::debug_color, kEditorOnly)          // never saved
//       .OnPreSave(&Door::PrepareSave).OnLoaded(&Door::AfterLoad)
//       .SaveExtra(&Door::WriteExtra, &Door::ReadExtra);
//   Status s = registry.Finish();                      // Ok, or the first registration mistake
//
// Types may be mentioned (as field types, bases, pointees) before they are registered; Finish()
// checks that every mentioned class, struct and enum was registered. Mistakes (a duplicate class
// name, a field registered twice, a type registered twice, an unregistered base or pointee...) never
// assert or throw: the first one is kept in status() and returned by Finish(); the registration
// that failed is left out.
//
// What saves: a field saves when its flags hold kSaveGame and neither kTransient nor
// kEditorOnly (editor-only data never saves, in an editor either). In a struct the same rule holds
// for members. A field whose value would save as nothing (a struct none of whose members save, or
// a fixed array of such) is left out: the record format has no struct of no fields. A container
// or optional of such a struct cannot save (capture fails with InvalidData naming the field), nor
// can a property bag's property of one. A class's plan (ClassInfo::Plan) lists its saved fields, its bases' first, with
// the offset of each field from the start of an object of that class: the address of a field in
// a live object is `static_cast<char*>(object) + field.offset`, no call and no allocation. Plans are
// made once per class on first use and then shared.
//
// Save-extra hooks (state that is not a property, written after the properties): a class's hook
// gets an ExtraWriter and must call WriteBase() before writing anything when any of its bases has
// a save-extra hook; WriteBase() runs the nearest such base's hook. A hook that writes before its
// base's part, or never writes it, makes the write fail with InvalidData naming the class, as a
// load could not read it. Reading mirrors writing with ExtraReader and ReadBase(). The bytes are
// self-delimiting tagged values the record codec stores as it is.
//
// Classes have at most one base and any number of interfaces; virtual inheritance is not
// supported. A polymorphic class's live objects are looked up by their dynamic type (typeid), so
// DynamicClass gives the most derived registered class of an object seen through a base pointer.
// Field offsets are taken from pointers to data members, whose representation on the supported
// ABIs (Itanium, MSVC) is the member's offset.
//
// Thread rules: register on one thread at start-up, then call Finish(); after that every look-up,
// plan, hook helper and operation may be called from any thread (plans are made under a once
// flag). A registry must outlive every descriptor, plan and handle taken from it.

#ifndef ROLLY_REFLECT_TYPE_REGISTRY_H_
#define ROLLY_REFLECT_TYPE_REGISTRY_H_

#include <array>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "rolly/core/guid.h"
#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/reflect/redirects.h"
#include "rolly/reflect/type.h"
#include "rolly/reflect/value_types.h"

namespace rolly::reflect {

// Property flags; combine with |.
using PropertyFlags = std::uint32_t;
inline constexpr PropertyFlags kSaveGame = 1u << 0;
inline constexpr PropertyFlags kTransient = 1u << 1;
inline constexpr PropertyFlags kEditorOnly = 1u << 2;

// Whether a field with `flags` saves.
constexpr bool IsSaved(PropertyFlags flags) {
  return (flags & kSaveGame) != 0 && (flags & (kTransient | kEditorOnly)) == 0;
}

// One registered field of a class or struct.
struct Property {
  Name name;
  PropertyFlags flags = 0;
  const Type* type = nullptr;
  // Offset from the start of an object of the declaring class.
  std::uint32_t offset = 0;
  // When set, applying a value calls this with the object (of the declaring class) and the
  // address of a value of `type` it may move from, instead of writing the field. A value that
  // holds owned objects must be moved from (the objects kept): their saved fields are applied
  // after the setter returns, to the objects the value held.
  std::function<void(void* object, void* value)> setter;
};

// One field of a plan: the property and its offset from the start of an object of the planned
// class (the declaring class's offset inside it included).
struct PlanField {
  const Property* property = nullptr;
  std::uint32_t offset = 0;
  // The class that declared it (the planned class or one of its bases).
  const ClassInfo* declared_in = nullptr;

  Name name() const { return property->name; }
  const Type& type() const { return *property->type; }
  void* Address(void* object) const { return static_cast<char*>(object) + offset; }
  const void* Address(const void* object) const {
    return static_cast<const char*>(object) + offset;
  }
  // Calls the setter (given the planned object) when there is one; false when there is none.
  bool Set(void* object, void* value) const;
};

// The saved fields of a class, bases first, made once per class.
struct ClassPlan {
  const ClassInfo* cls = nullptr;
  std::vector<PlanField> fields;
  // Whether the class or a base has an OnPreSave hook, an OnSaved hook, an OnLoaded hook, a
  // save-extra hook (the TypeRegistry::Has* answers, found once with the plan: hooks are
  // registered before Finish).
  bool pre_save = false;
  bool saved = false;
  bool loaded = false;
  bool extra = false;
  // Whether a saved field may hold objects an apply makes (an owned object, an instanced struct
  // or a property bag, at any depth): applying into the object again may destroy them.
  bool owns = false;
  // Where the saved fields lie, for a pass over many objects that asks the next objects' memory
  // into cache before it reads or writes them. `reach`: offsets from the object's start such that
  // every 64-byte cache line holding a byte of a saved field holds one of them, wherever the
  // object lies (fields less than 64 bytes apart count as one stretch: the stretch's first byte,
  // every 64th after it, and its last byte); at most kMaxReach of them, the first, for a class
  // whose saved bytes take more lines than that. `elements`: for each saved vector, in field
  // order, the offset from the object's start of the pointer it keeps to its first element,
  // which lies elsewhere (the pointer may be null, or point at memory it no longer uses, when the
  // vector is empty: ask for it into cache, never read through it); see Type::elements_at.
  static constexpr std::size_t kMaxReach = 32;
  std::vector<std::uint32_t> reach;
  std::vector<std::uint32_t> elements;
  // The field named `name` (its current name), or null.
  const PlanField* Find(Name name) const;
};

class ExtraWriter;
class ExtraReader;
class TypeRegistry;
class InstancedStruct;  // property_bag.h
class PropertyBag;      // property_bag.h

// A registered class or struct. Handles are stable for the registry's life.
class ClassInfo {
 public:
  Name name() const { return name_; }
  bool is_struct() const { return is_struct_; }
  bool registered() const { return registered_; }
  // The base class, or null.
  const ClassInfo* base() const { return base_; }
  // Offset of the base part inside an object of this class.
  std::uint32_t base_offset() const { return base_offset_; }
  // Every registered property, saved or not, in registration order (this class's own only).
  const std::vector<Property>& properties() const { return properties_; }
  // Whether objects of this class can be made by the registry (default-constructible, concrete).
  bool can_create() const { return create_ != nullptr; }
  bool is_polymorphic() const { return dynamic_type_ != nullptr; }
  // Whether this is `other` or derives from it (through bases or interfaces).
  bool IsA(const ClassInfo& other) const;
  // The plan; made on first call, the same object afterwards (then one load: every captured and
  // applied object asks).
  const ClassPlan& Plan() const {
    return plan_ready_.load(std::memory_order_acquire) ? plan_ : MakePlanOnce();
  }
  // Every registered field but editor-only ones, bases first: how a struct saves inside a
  // property bag or an instanced struct, which save their values whole.
  const ClassPlan& WholePlan() const;
  // A struct's descriptor as a value (size, construct, copy...); null for a class.
  const Type* value_type() const { return value_type_; }
  // The C++ type registered.
  std::type_index cpp_type() const { return type_; }
  // The registry this class belongs to.
  const TypeRegistry& registry() const { return *registry_; }

 private:
  friend class TypeRegistry;
  template <typename T>
  friend class ClassBuilder;
  friend class ExtraWriter;
  friend class ExtraReader;

  struct Interface {
    const ClassInfo* cls;
    std::uint32_t offset;
  };
  // Makes the plan, once (Plan's first call).
  const ClassPlan& MakePlanOnce() const;
  // Sets hooks_read_ on this class and its bases.
  void NoteHooksRead() const;

  Name name_;
  std::type_index type_;
  const TypeRegistry* registry_ = nullptr;
  // The class's own type_info (classes only): DynamicClass finds a class by its address.
  const std::type_info* type_info_ = nullptr;
  bool is_struct_ = false;
  bool registered_ = false;
  const ClassInfo* base_ = nullptr;
  std::uint32_t base_offset_ = 0;
  const Type* value_type_ = nullptr;
  std::vector<Interface> interfaces_;
  std::vector<Property> properties_;
  void* (*create_)() = nullptr;
  void (*delete_)(void*) = nullptr;
  const std::type_info& (*dynamic_type_)(const void*) = nullptr;
  const void* (*most_derived_)(const void*) = nullptr;
  std::function<void(void*)> pre_save_, saved_, loaded_;
  std::function<void(const void*, ExtraWriter&)> write_extra_;
  std::function<void(void*, ExtraReader&)> read_extra_;
  mutable std::once_flag plan_once_;
  // Set once plan_ is made.
  mutable std::atomic<bool> plan_ready_{false};
  // Set once a plan of this class or of a class derived from it was made: the plan noted this
  // class's hooks then, so none may be added after (checked in debug builds).
  mutable std::atomic<bool> hooks_read_{false};
  mutable ClassPlan plan_;
  mutable std::once_flag whole_plan_once_;
  mutable ClassPlan whole_plan_;

 public:
  explicit ClassInfo(std::type_index type) : type_(type) {}
};

// A registered enum and its named values.
class EnumInfo {
 public:
  struct Value {
    Name name;
    std::int64_t number;
  };
  Name name() const { return name_; }
  bool registered() const { return registered_; }
  const std::vector<Value>& values() const { return values_; }
  // The number of the value named `name`, or nullopt.
  std::optional<std::int64_t> Find(Name name) const;
  // The name of `number`, or none.
  Name NameOf(std::int64_t number) const;

 private:
  friend class TypeRegistry;
  template <typename E>
  friend class EnumBuilder;
  Name name_;
  bool registered_ = false;
  std::vector<Value> values_;
};

// A live object and its dynamic class.
struct ObjectRef {
  const ClassInfo* cls = nullptr;
  // The object as its class `cls` (offset-adjusted from the pointer asked about).
  const void* object = nullptr;
};

// Writes a class's save-extra state (see the header comment for the base-first rule).
class ExtraWriter {
 public:
  // Runs the save-extra part of the nearest base with one; must come before any write when there
  // is such a base. A no-op when there is none.
  void WriteBase();
  void WriteBool(bool value);
  void WriteInt(std::int64_t value);
  void WriteUInt(std::uint64_t value);
  void WriteDouble(double value);
  void WriteString(std::string_view value);

 private:
  friend class TypeRegistry;
  struct Frame {
    const ClassInfo* cls;
    const void* object;
    const ClassInfo* base_with_extra;
    bool base_done;
  };
  bool BeginValue();
  void RunHook(const ClassInfo* cls, const void* object);

  std::vector<Frame> frames_;
  std::string bytes_;
  Status status_;
};

// Reads what an ExtraWriter wrote, in the same order. Reads after a failure do nothing.
class ExtraReader {
 public:
  void ReadBase();
  void ReadBool(bool* value);
  void ReadInt(std::int64_t* value);
  void ReadUInt(std::uint64_t* value);
  void ReadDouble(double* value);
  void ReadString(std::string* value);

 private:
  friend class TypeRegistry;
  struct Frame {
    const ClassInfo* cls;
    void* object;
    const ClassInfo* base_with_extra;
    bool base_done;
  };
  bool Take(std::uint8_t tag, std::size_t size, const char** at);
  void RunHook(const ClassInfo* cls, void* object);

  std::vector<Frame> frames_;
  std::string_view bytes_;
  std::size_t pos_ = 0;
  Status status_;
};

namespace registry_internal {

template <typename T>
struct IsStdArray : std::false_type {};
template <typename E, std::size_t N>
struct IsStdArray<std::array<E, N>> : std::true_type {};

template <typename T, template <typename...> class Tmpl>
struct IsInstance : std::false_type {};
template <template <typename...> class Tmpl, typename... A>
struct IsInstance<Tmpl<A...>, Tmpl> : std::true_type {};
template <typename T, template <typename...> class Tmpl>
inline constexpr bool kIsInstance = IsInstance<T, Tmpl>::value;

template <typename T>
inline constexpr bool kIsSet = kIsInstance<T, std::set> || kIsInstance<T, std::unordered_set>;
template <typename T>
inline constexpr bool kIsMap = kIsInstance<T, std::map> || kIsInstance<T, std::unordered_map>;

// The fixed kind of a non-template value type, or none (kReference is used as "none").
template <typename T> inline constexpr Kind kFixedKind = Kind::kReference;
template <> inline constexpr Kind kFixedKind<bool> = Kind::kBool;
template <> inline constexpr Kind kFixedKind<std::int8_t> = Kind::kInt8;
template <> inline constexpr Kind kFixedKind<std::int16_t> = Kind::kInt16;
template <> inline constexpr Kind kFixedKind<std::int32_t> = Kind::kInt32;
template <> inline constexpr Kind kFixedKind<std::int64_t> = Kind::kInt64;
template <> inline constexpr Kind kFixedKind<std::uint8_t> = Kind::kUInt8;
template <> inline constexpr Kind kFixedKind<std::uint16_t> = Kind::kUInt16;
template <> inline constexpr Kind kFixedKind<std::uint32_t> = Kind::kUInt32;
template <> inline constexpr Kind kFixedKind<std::uint64_t> = Kind::kUInt64;
template <> inline constexpr Kind kFixedKind<float> = Kind::kFloat;
template <> inline constexpr Kind kFixedKind<double> = Kind::kDouble;
template <> inline constexpr Kind kFixedKind<std::string> = Kind::kString;
template <> inline constexpr Kind kFixedKind<Name> = Kind::kName;
template <> inline constexpr Kind kFixedKind<Text> = Kind::kText;
template <> inline constexpr Kind kFixedKind<Guid> = Kind::kGuid;
template <> inline constexpr Kind kFixedKind<Color> = Kind::kColor;
template <> inline constexpr Kind kFixedKind<DateTime> = Kind::kDateTime;
template <> inline constexpr Kind kFixedKind<Vector2f> = Kind::kVector2f;
template <> inline constexpr Kind kFixedKind<Vector2d> = Kind::kVector2d;
template <> inline constexpr Kind kFixedKind<Vector3f> = Kind::kVector3f;
template <> inline constexpr Kind kFixedKind<Vector3d> = Kind::kVector3d;
template <> inline constexpr Kind kFixedKind<Vector4f> = Kind::kVector4f;
template <> inline constexpr Kind kFixedKind<Vector4d> = Kind::kVector4d;
template <> inline constexpr Kind kFixedKind<Quatf> = Kind::kQuatf;
template <> inline constexpr Kind kFixedKind<Quatd> = Kind::kQuatd;
template <> inline constexpr Kind kFixedKind<Rotatorf> = Kind::kRotatorf;
template <> inline constexpr Kind kFixedKind<Rotatord> = Kind::kRotatord;
template <> inline constexpr Kind kFixedKind<Transformf> = Kind::kTransformf;
template <> inline constexpr Kind kFixedKind<Transformd> = Kind::kTransformd;
template <> inline constexpr Kind kFixedKind<SoftPath> = Kind::kSoftPath;
template <> inline constexpr Kind kFixedKind<InstancedStruct> = Kind::kInstancedStruct;
template <> inline constexpr Kind kFixedKind<PropertyBag> = Kind::kPropertyBag;

// Whether T can really be copied: std::is_copy_constructible says yes for a container of
// move-only elements, whose copy then fails to compile, so containers look at their elements.
template <typename T> struct Copyable : std::is_copy_constructible<T> {};
template <typename T, typename... R> struct Copyable<std::vector<T, R...>> : Copyable<T> {};
template <typename T, std::size_t N> struct Copyable<std::array<T, N>> : Copyable<T> {};
template <typename T> struct Copyable<std::optional<T>> : Copyable<T> {};
template <typename K, typename... R> struct Copyable<std::set<K, R...>> : Copyable<K> {};
template <typename K, typename... R>
struct Copyable<std::unordered_set<K, R...>> : Copyable<K> {};
template <typename K, typename V, typename... R>
struct Copyable<std::map<K, V, R...>> : std::conjunction<Copyable<K>, Copyable<V>> {};
template <typename K, typename V, typename... R>
struct Copyable<std::unordered_map<K, V, R...>> : std::conjunction<Copyable<K>, Copyable<V>> {};

template <typename>
inline constexpr bool kAlwaysFalse = false;

// The offset of a data member, from its pointer-to-member representation (an offset on the
// supported ABIs; checked by size).
template <typename M, typename C>
std::uint32_t MemberOffset(M C::*member) {
  if constexpr (sizeof(member) == sizeof(std::ptrdiff_t)) {
    std::ptrdiff_t offset;
    std::memcpy(&offset, &member, sizeof(offset));
    return static_cast<std::uint32_t>(offset);
  } else {
    static_assert(sizeof(member) == sizeof(std::int32_t), "unsupported member pointer layout");
    std::int32_t offset;
    std::memcpy(&offset, &member, sizeof(offset));
    return static_cast<std::uint32_t>(offset);
  }
}

// The offset of base B inside D (non-virtual bases), from an upcast of a pointer into storage.
template <typename D, typename B>
std::uint32_t BaseOffset() {
  alignas(D) static unsigned char storage[sizeof(D)];
  D* d = reinterpret_cast<D*>(storage);
  B* b = static_cast<B*>(d);
  return static_cast<std::uint32_t>(reinterpret_cast<unsigned char*>(b) - storage);
}

}  // namespace registry_internal

template <typename T>
class ClassBuilder;
template <typename E>
class EnumBuilder;

class TypeRegistry {
 public:
  TypeRegistry();
  ~TypeRegistry();
  TypeRegistry(const TypeRegistry&) = delete;
  TypeRegistry& operator=(const TypeRegistry&) = delete;

  // Registers class T under `name` (a class is saved by reference or owned pointer, and may have a
  // base, interfaces, a factory and hooks). Struct<T> registers a value type held by value; its
  // descriptor (ClassInfo::value_type) copies it when T is copy-constructible, so a struct whose
  // copy constructor exists but cannot compile (a member std::vector<std::unique_ptr<C>>, say)
  // must delete it explicitly to be registered.
  template <typename T>
  ClassBuilder<T> Class(std::string_view name);
  template <typename T>
  ClassBuilder<T> Struct(std::string_view name);
  template <typename E>
  EnumBuilder<E> Enum(std::string_view name);

  // Checks every type mentioned was registered; returns status(). Call once registration ended.
  Status Finish();
  // Ok, or the first registration mistake.
  const Status& status() const { return status_; }

  // The descriptor of C++ type T (made on first use; registration time only).
  template <typename T>
  const Type* TypeOf();

  // Look-ups; null when unknown. By name, the registry's redirects apply first.
  const ClassInfo* FindClass(Name name) const;
  const ClassInfo* FindStruct(Name name) const;
  const EnumInfo* FindEnum(Name name) const;
  template <typename T>
  const ClassInfo* FindClass() const { return Find(typeid(T)); }

  // The saved field of `cls` (or its bases) that a value saved under `saved_name` goes to, through
  // property (member, for a struct) redirects of the class and its bases; null when none.
  // `whole`: among WholePlan's fields (a struct inside a property bag or instanced struct).
  const PlanField* FindSavedField(const ClassInfo& cls, Name saved_name, bool whole = false) const;
  // The enum value a value saved as `saved_name` means now, through enum value redirects.
  std::optional<std::int64_t> FindEnumValue(const EnumInfo& info, Name saved_name) const;

  // Every descriptor of kind `kind` this registry made, in the order made (registration time):
  // what a load picks from to hold a property bag's value of a saved type.
  std::vector<const Type*> TypesOfKind(Kind kind) const;

  // Redirects for renamed types, fields and values (see redirects.h). Fill at start-up.
  Redirects& redirects() { return redirects_; }
  const Redirects& redirects() const { return redirects_; }

  // `object` (an object of class `from`) as its base or interface `to`; null when `from` is not a `to`.
  static const void* Upcast(const ClassInfo& from, const void* object, const ClassInfo& to);
  static void* Upcast(const ClassInfo& from, void* object, const ClassInfo& to);

  // The most derived registered class of a live object seen as `static_class`. For a polymorphic
  // class, its typeid; an object whose dynamic type is not registered gives {null, null}.
  ObjectRef DynamicClass(const ClassInfo& static_class, const void* object) const;

  // A new default object of `cls`, as `cls`; null when it cannot be made. DeleteObject ends one.
  static void* CreateObject(const ClassInfo& cls);
  static void DeleteObject(const ClassInfo& cls, void* object);

  // For an owned-pointer field of type `field_type` at `field`: makes an object of the class
  // named `class_name` (redirects applied), checking first that it is a class of the field's
  // pointee, stores it in the field, and returns it as its own class. NotFound for an unknown
  // class, InvalidData for one of another hierarchy or one that cannot be made.
  Result<ObjectRef> CreateOwned(const Type& field_type, void* field, Name class_name) const;

  // Hooks of `cls` and its bases, bases first, on `object` (an object of `cls`).
  static void RunPreSave(const ClassInfo& cls, void* object);
  static void RunSaved(const ClassInfo& cls, void* object);
  static void RunLoaded(const ClassInfo& cls, void* object);
  // Whether `cls` or a base has an OnPreSave hook; an OnSaved hook; an OnLoaded hook. (ClassPlan
  // holds the answers, found once.)
  static bool HasPreSave(const ClassInfo& cls);
  static bool HasSaved(const ClassInfo& cls);
  static bool HasLoaded(const ClassInfo& cls);
  // Whether `cls` or a base has a save-extra hook; HasOwnExtra: `cls` itself.
  static bool HasExtra(const ClassInfo& cls);
  static bool HasOwnExtra(const ClassInfo& cls);
  // The save-extra bytes of `object` (of `cls`); InvalidData when a hook broke the base-first rule.
  static Result<std::string> WriteExtra(const ClassInfo& cls, const void* object);
  // Applies bytes WriteExtra made; Damaged when they do not read as the hooks expect.
  static Status ReadExtra(const ClassInfo& cls, void* object, std::string_view bytes);
  // Whether `bytes` are a well-formed sequence of save-extra values (what any WriteExtra can make),
  // without running a hook: Damaged otherwise. A load checks this before anything applies.
  static Status CheckExtra(std::string_view bytes);

 private:
  template <typename T>
  friend class ClassBuilder;
  template <typename E>
  friend class EnumBuilder;

  template <typename T>
  void Describe(Type& type);
  // The (possibly not yet registered) class / enum slot of a C++ type.
  ClassInfo* ClassSlot(std::type_index type);
  EnumInfo* EnumSlot(std::type_index type);
  const ClassInfo* Find(std::type_index type) const;
  // The offset of the first pointer-sized word of the `size` bytes at `object` that holds
  // `target`, or -1 when none does.
  static std::int32_t FindPointer(const void* object, std::size_t size, const void* target);
  // Gives a class slot its name; false (and an error) on a duplicate.
  bool SetName(ClassInfo* cls, std::string_view name, bool is_struct);
  void Fail(Status status);
  Type* NewType(std::type_index type, bool* fresh);

  Status status_;
  Redirects redirects_;
  std::unordered_map<std::type_index, std::unique_ptr<Type>> types_;
  std::vector<const Type*> type_order_;
  // Registered classes by the address of their type_info, made by Finish(): a look-up without
  // hashing the type's name (the usual case: one copy of each type_info in the program).
  std::unordered_map<const std::type_info*, const ClassInfo*> by_type_info_;
  std::unordered_map<std::type_index, std::unique_ptr<ClassInfo>> classes_;
  std::unordered_map<std::type_index, std::unique_ptr<EnumInfo>> enums_;
  std::unordered_map<rolly::Name, ClassInfo*> classes_by_name_;
  std::unordered_map<rolly::Name, ClassInfo*> structs_by_name_;
  std::unordered_map<rolly::Name, EnumInfo*> enums_by_name_;
};

// The process's registry, for games that need only one.
TypeRegistry& DefaultRegistry();

// The builder Class<T>() / Struct<T>() return. Every call returns the builder; mistakes go to the
// registry's status.
template <typename T>
class ClassBuilder {
 public:
  // The base class (at most one; registered before Finish).
  template <typename B>
  ClassBuilder& Base() {
    static_assert(std::is_base_of_v<B, T> && !std::is_same_v<B, T>, "not a base of the class");
    if (!cls_) return *this;
    if (cls_->base_) {
      registry_->Fail(InvalidInputError("class " + cls_->name_.str() + " has a base already"));
      return *this;
    }
    cls_->base_ = registry_->ClassSlot(typeid(B));
    cls_->base_offset_ = registry_internal::BaseOffset<T, B>();
    return *this;
  }
  // An interface the class implements (a registered class, usually without fields).
  template <typename I>
  ClassBuilder& Interface() {
    static_assert(std::is_base_of_v<I, T> && !std::is_same_v<I, T>, "not a base of the class");
    if (cls_)
      cls_->interfaces_.push_back(
          {registry_->ClassSlot(typeid(I)), registry_internal::BaseOffset<T, I>()});
    return *this;
  }
  // A field (a data member of T or of a base of T).
  template <typename M, typename C>
  ClassBuilder& Field(std::string_view name, M C::*member, PropertyFlags flags) {
    return AddField<M>(name, OffsetOf(member), flags, nullptr);
  }
  // A field with a setter (a member function of T taking M by value or reference), used when
  // applying a saved value instead of writing the field.
  template <typename M, typename C, typename S>
  ClassBuilder& Field(std::string_view name, M C::*member, PropertyFlags flags, S setter) {
    return AddField<M>(name, OffsetOf(member), flags, [setter](void* object, void* value) {
      (static_cast<T*>(object)->*setter)(std::move(*static_cast<M*>(value)));
    });
  }
  // Hooks: member functions of T (or a base) taking nothing. Run through TypeRegistry::Run*.
  template <typename C>
  ClassBuilder& OnPreSave(void (C::*fn)()) { return Hook(&ClassInfo::pre_save_, fn); }
  template <typename C>
  ClassBuilder& OnSaved(void (C::*fn)()) { return Hook(&ClassInfo::saved_, fn); }
  template <typename C>
  ClassBuilder& OnLoaded(void (C::*fn)()) { return Hook(&ClassInfo::loaded_, fn); }
  // The save-extra hooks: `write` is `void (T::*)(ExtraWriter&) const`, `read` is
  // `void (T::*)(ExtraReader&)`.
  template <typename C1, typename C2>
  ClassBuilder& SaveExtra(void (C1::*write)(ExtraWriter&) const, void (C2::*read)(ExtraReader&)) {
    if (!cls_) return *this;
    // Plans note the hooks of a class and its bases when made (after Finish): hooks are
    // registered before.
    assert(!cls_->hooks_read_.load());
    if (cls_->write_extra_) {
      registry_->Fail(InvalidInputError("class " + cls_->name_.str() + " has a save-extra hook already"));
      return *this;
    }
    cls_->write_extra_ = [write](const void* o, ExtraWriter& w) { (static_cast<const T*>(o)->*write)(w); };
    cls_->read_extra_ = [read](void* o, ExtraReader& r) { (static_cast<T*>(o)->*read)(r); };
    return *this;
  }

 private:
  friend class TypeRegistry;
  ClassBuilder(TypeRegistry* registry, ClassInfo* cls) : registry_(registry), cls_(cls) {}

  template <typename M, typename C>
  static std::uint32_t OffsetOf(M C::*member) {
    static_assert(std::is_same_v<C, T> || std::is_base_of_v<C, T>, "not a member of the class");
    std::uint32_t offset = registry_internal::MemberOffset(member);
    if constexpr (!std::is_same_v<C, T>) offset += registry_internal::BaseOffset<T, C>();
    return offset;
  }
  template <typename M>
  ClassBuilder& AddField(std::string_view name, std::uint32_t offset, PropertyFlags flags,
                         std::function<void(void*, void*)> setter);
  template <typename C>
  ClassBuilder& Hook(std::function<void(void*)> ClassInfo::*slot, void (C::*fn)()) {
    static_assert(std::is_same_v<C, T> || std::is_base_of_v<C, T>, "not a member of the class");
    if (!cls_) return *this;
    // Plans note the hooks of a class and its bases when made (after Finish): hooks are
    // registered before.
    assert(!cls_->hooks_read_.load());
    cls_->*slot = [fn](void* o) { (static_cast<T*>(o)->*fn)(); };
    return *this;
  }

  TypeRegistry* registry_;
  ClassInfo* cls_;  // null after a failed start; calls then do nothing
};

template <typename E>
class EnumBuilder {
 public:
  EnumBuilder& Value(std::string_view name, E value);

 private:
  friend class TypeRegistry;
  EnumBuilder(TypeRegistry* registry, EnumInfo* info) : registry_(registry), info_(info) {}
  TypeRegistry* registry_;
  EnumInfo* info_;
};

// ---- Template definitions ----

template <typename T>
ClassBuilder<T> TypeRegistry::Class(std::string_view name) {
  static_assert(std::is_class_v<T>, "Class<T> needs a class type");
  ClassInfo* cls = ClassSlot(typeid(T));
  if (!SetName(cls, name, /*is_struct=*/false)) return ClassBuilder<T>(this, nullptr);
  cls->type_info_ = &typeid(T);
  if constexpr (std::is_default_constructible_v<T> && !std::is_abstract_v<T>) {
    cls->create_ = []() -> void* { return new T(); };
  }
  cls->delete_ = [](void* o) { delete static_cast<T*>(o); };
  if constexpr (std::is_polymorphic_v<T>) {
    cls->dynamic_type_ = [](const void* o) -> const std::type_info& {
      return typeid(*static_cast<const T*>(o));
    };
    cls->most_derived_ = [](const void* o) {
      return dynamic_cast<const void*>(static_cast<const T*>(o));
    };
  }
  return ClassBuilder<T>(this, cls);
}

template <typename T>
ClassBuilder<T> TypeRegistry::Struct(std::string_view name) {
  static_assert(std::is_class_v<T> && std::is_default_constructible_v<T>,
                "Struct<T> needs a default-constructible class type");
  ClassInfo* cls = ClassSlot(typeid(T));
  if (!SetName(cls, name, /*is_struct=*/true)) return ClassBuilder<T>(this, nullptr);
  cls->value_type_ = TypeOf<T>();
  return ClassBuilder<T>(this, cls);
}

template <typename E>
EnumBuilder<E> TypeRegistry::Enum(std::string_view name) {
  static_assert(std::is_enum_v<E>, "Enum<E> needs an enum type");
  EnumInfo* info = EnumSlot(typeid(E));
  rolly::Name n(name);
  if (name.empty() || info->registered_ || enums_by_name_.count(n)) {
    Fail(InvalidInputError(name.empty() ? std::string("an enum with an empty name")
                                        : "enum " + std::string(name) + " registered twice"));
    return EnumBuilder<E>(this, nullptr);
  }
  info->name_ = n;
  info->registered_ = true;
  enums_by_name_[n] = info;
  return EnumBuilder<E>(this, info);
}

template <typename E>
EnumBuilder<E>& EnumBuilder<E>::Value(std::string_view name, E value) {
  if (!info_) return *this;
  rolly::Name n(name);
  for (const auto& v : info_->values_) {
    if (v.name == n || v.number == static_cast<std::int64_t>(value)) {
      registry_->Fail(InvalidInputError("enum " + info_->name_.str() + " value " +
                                        std::string(name) + " registered twice"));
      return *this;
    }
  }
  info_->values_.push_back({n, static_cast<std::int64_t>(value)});
  return *this;
}

template <typename T>
template <typename M>
ClassBuilder<T>& ClassBuilder<T>::AddField(std::string_view name, std::uint32_t offset,
                                           PropertyFlags flags,
                                           std::function<void(void*, void*)> setter) {
  if (!cls_) return *this;
  rolly::Name n(name);
  if (name.empty()) {
    registry_->Fail(InvalidInputError("class " + cls_->name_.str() + " has a field with no name"));
    return *this;
  }
  for (const Property& p : cls_->properties_) {
    if (p.name == n || p.offset == offset) {
      registry_->Fail(InvalidInputError("class " + cls_->name_.str() + " field " +
                                        std::string(name) + " registered twice"));
      return *this;
    }
  }
  cls_->properties_.push_back({n, flags, registry_->TypeOf<M>(), offset, std::move(setter)});
  return *this;
}

template <typename T>
const Type* TypeRegistry::TypeOf() {
  static_assert(!std::is_const_v<T> && !std::is_reference_v<T>, "save a plain type");
  bool fresh = false;
  Type* type = NewType(typeid(T), &fresh);
  if (!fresh) return type;
  type->size = sizeof(T);
  type->align = alignof(T);
  type->construct = &type_internal::Construct<T>;
  type->destroy = &type_internal::Destroy<T>;
  if constexpr (registry_internal::Copyable<T>::value) type->copy = &type_internal::Copy<T>;
  Describe<T>(*type);
  return type;
}

template <typename T>
void TypeRegistry::Describe(Type& type) {
  using namespace registry_internal;
  if constexpr (kFixedKind<T> != Kind::kReference) {
    type.kind = kFixedKind<T>;
    if constexpr (std::is_same_v<T, InstancedStruct>) {
      type.instanced = &type_internal::kInstancedStructOps;
    } else if constexpr (std::is_same_v<T, PropertyBag>) {
      type.bag = &type_internal::kPropertyBagOps;
    }
  } else if constexpr (std::is_enum_v<T>) {
    type.kind = Kind::kEnum;
    type.enum_ops = &type_internal::kEnumOps<T>;
    type.enum_info = EnumSlot(typeid(T));
  } else if constexpr (kIsInstance<T, std::vector>) {
    static_assert(!std::is_same_v<T, std::vector<bool>>, "std::vector<bool> has no element addresses");
    type.kind = Kind::kVector;
    type.element = TypeOf<typename T::value_type>();
    type.container = &type_internal::kVectorOps<T>;
    {
      // Zeroed first, so no padding is read unset.
      alignas(T) unsigned char room[sizeof(T)] = {};
      T* probe = new (room) T();
      probe->reserve(1);  // room for one element, none made
      type.elements_at = FindPointer(room, sizeof(T), probe->data());
      probe->~T();
    }
  } else if constexpr (IsStdArray<T>::value) {
    type.kind = Kind::kArray;
    type.element = TypeOf<typename T::value_type>();
    type.fixed_count = std::tuple_size_v<T>;
    type.container = &type_internal::kArrayOps<T>;
  } else if constexpr (kIsSet<T>) {
    type.kind = Kind::kSet;
    type.element = TypeOf<typename T::key_type>();
    type.container = &type_internal::kSetOps<T>;
  } else if constexpr (kIsMap<T>) {
    type.kind = Kind::kMap;
    type.element = TypeOf<typename T::key_type>();
    type.mapped = TypeOf<typename T::mapped_type>();
    type.container = &type_internal::kMapOps<T>;
  } else if constexpr (kIsInstance<T, std::optional>) {
    type.kind = Kind::kOptional;
    type.element = TypeOf<typename T::value_type>();
    type.optional = &type_internal::kOptionalOps<T>;
  } else if constexpr (kIsInstance<T, std::unique_ptr>) {
    static_assert(std::is_class_v<typename T::element_type>, "owned pointers hold a registered class");
    type.kind = Kind::kOwned;
    type.class_info = ClassSlot(typeid(typename T::element_type));
    type.pointer = &type_internal::kOwnedOps<T>;
  } else if constexpr (std::is_pointer_v<T>) {
    using C = std::remove_pointer_t<T>;
    static_assert(std::is_class_v<C> && !std::is_const_v<C>, "references point to a registered class");
    type.kind = Kind::kReference;
    type.class_info = ClassSlot(typeid(C));
    type.pointer = &type_internal::kReferenceOps<C>;
  } else if constexpr (std::is_class_v<T>) {
    type.kind = Kind::kStruct;
    type.class_info = ClassSlot(typeid(T));
  } else {
    static_assert(kAlwaysFalse<T>, "this type cannot be saved");
  }
}

}  // namespace rolly::reflect

#endif  // ROLLY_REFLECT_TYPE_REGISTRY_H_
