#include "rolly/reflect/type_registry.h"

#include <algorithm>
#include <cstring>

namespace rolly::reflect {
namespace {

enum ExtraTag : std::uint8_t { kTagBool = 1, kTagInt = 2, kTagUInt = 3, kTagDouble = 4, kTagString = 5 };

// The nearest base of `cls` with a save-extra hook of its own, or null.
const ClassInfo* NearestBaseWithExtra(const ClassInfo* cls, std::uint32_t* offset) {
  *offset = cls->base_offset();
  for (const ClassInfo* b = cls->base(); b != nullptr; *offset += b->base_offset(), b = b->base()) {
    if (TypeRegistry::HasOwnExtra(*b)) return b;
  }
  return nullptr;
}

}  // namespace

// ---- Plans ----

bool PlanField::Set(void* object, void* value) const {
  if (!property->setter) return false;
  // The setter takes an object of the declaring class.
  property->setter(static_cast<char*>(object) + (offset - property->offset), value);
  return true;
}

const PlanField* ClassPlan::Find(Name name) const {
  for (const PlanField& f : fields) {
    if (f.property->name == name) return &f;
  }
  return nullptr;
}

bool ClassInfo::IsA(const ClassInfo& other) const {
  for (const ClassInfo* c = this; c != nullptr; c = c->base_) {
    if (c == &other) return true;
    for (const Interface& i : c->interfaces_) {
      if (i.cls->IsA(other)) return true;
    }
  }
  return false;
}

// Whether a value of `type` saves as nothing: a struct whose plan (WholePlan when `whole`) has no
// fields, or a fixed array of such. A field of one is left out of its class's plan, since the
// record format refuses a struct type of no fields (its values would take no bytes, and a
// file could then make a load walk values without end).
static bool SavesNothing(const Type& type, bool whole) {
  if (type.kind == Kind::kArray) return SavesNothing(*type.element, whole);
  if (type.kind != Kind::kStruct) return false;
  return (whole ? type.class_info->WholePlan() : type.class_info->Plan()).fields.empty();
}

// Whether a value of `type` may hold objects an apply makes: an owned object, an instanced struct
// or a property bag, at any depth. A struct's fields are walked directly, every one of them (not
// through its plan, which may be the one being made), each struct once.
static bool MayOwn(const Type& type, std::vector<const ClassInfo*>* seen) {
  switch (type.kind) {
    case Kind::kOwned:
    case Kind::kInstancedStruct:
    case Kind::kPropertyBag:
      return true;
    case Kind::kVector:
    case Kind::kArray:
    case Kind::kSet:
    case Kind::kOptional:
      return MayOwn(*type.element, seen);
    case Kind::kMap:
      return MayOwn(*type.element, seen) || MayOwn(*type.mapped, seen);
    case Kind::kStruct: {
      if (std::find(seen->begin(), seen->end(), type.class_info) != seen->end()) return false;
      seen->push_back(type.class_info);
      for (const ClassInfo* c = type.class_info; c != nullptr; c = c->base()) {
        for (const Property& p : c->properties()) {
          if (MayOwn(*p.type, seen)) return true;
        }
      }
      return false;
    }
    default:
      return false;
  }
}

// The fields of `cls` and its bases, bases first, that `keep` accepts and that save something.
static void MakePlan(const ClassInfo* cls, ClassPlan* plan, bool (*keep)(PropertyFlags),
                     bool whole) {
  plan->cls = cls;
  std::vector<std::pair<const ClassInfo*, std::uint32_t>> chain;
  std::uint32_t offset = 0;
  for (const ClassInfo* c = cls; c != nullptr; c = c->base()) {
    chain.push_back({c, offset});
    offset += c->base_offset();
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    for (const Property& p : it->first->properties()) {
      if (keep(p.flags) && !SavesNothing(*p.type, whole)) {
        plan->fields.push_back({&p, it->second + p.offset, it->first});
      }
    }
  }
  // The stretches of saved bytes (fields less than a line apart joined), in offset order.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> spans;  // [begin, end)
  for (const PlanField& f : plan->fields) {
    spans.push_back({f.offset, f.offset + std::max<std::uint32_t>(f.type().size, 1)});
    if (f.type().kind == Kind::kVector && f.type().elements_at >= 0) {
      plan->elements.push_back(f.offset + static_cast<std::uint32_t>(f.type().elements_at));
    }
  }
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 0; i < spans.size();) {
    const std::uint32_t begin = spans[i].first;
    std::uint32_t end = spans[i].second;
    for (++i; i < spans.size() && spans[i].first < end + 64; ++i) {
      end = std::max(end, spans[i].second);
    }
    for (std::uint32_t at = begin; at < end - 1; at += 64) plan->reach.push_back(at);
    plan->reach.push_back(end - 1);
  }
  if (plan->reach.size() > ClassPlan::kMaxReach) plan->reach.resize(ClassPlan::kMaxReach);
  std::vector<const ClassInfo*> seen;
  plan->owns = std::any_of(plan->fields.begin(), plan->fields.end(),
                           [&](const PlanField& f) { return MayOwn(f.type(), &seen); });
  plan->pre_save = TypeRegistry::HasPreSave(*cls);
  plan->saved = TypeRegistry::HasSaved(*cls);
  plan->loaded = TypeRegistry::HasLoaded(*cls);
  plan->extra = TypeRegistry::HasExtra(*cls);
}

void ClassInfo::NoteHooksRead() const {
  for (const ClassInfo* c = this; c != nullptr; c = c->base()) c->hooks_read_.store(true);
}

const ClassPlan& ClassInfo::MakePlanOnce() const {
  std::call_once(plan_once_, [this] {
    NoteHooksRead();
    MakePlan(this, &plan_, &IsSaved, /*whole=*/false);
    plan_ready_.store(true, std::memory_order_release);
  });
  return plan_;
}

const ClassPlan& ClassInfo::WholePlan() const {
  std::call_once(whole_plan_once_, [this] {
    NoteHooksRead();
    MakePlan(
        this, &whole_plan_, [](PropertyFlags f) { return (f & kEditorOnly) == 0; }, /*whole=*/true);
  });
  return whole_plan_;
}

std::optional<std::int64_t> EnumInfo::Find(Name name) const {
  for (const Value& v : values_) {
    if (v.name == name) return v.number;
  }
  return std::nullopt;
}

Name EnumInfo::NameOf(std::int64_t number) const {
  for (const Value& v : values_) {
    if (v.number == number) return v.name;
  }
  return Name();
}

// ---- Registry ----

TypeRegistry::TypeRegistry() = default;
TypeRegistry::~TypeRegistry() = default;

TypeRegistry& DefaultRegistry() {
  static TypeRegistry* registry = new TypeRegistry();
  return *registry;
}

void TypeRegistry::Fail(Status status) {
  if (status_.ok()) status_ = std::move(status);
}

std::int32_t TypeRegistry::FindPointer(const void* object, std::size_t size,
                                       const void* target) {
  for (std::size_t word = 0; word + sizeof(void*) <= size; word += sizeof(void*)) {
    const void* held = nullptr;
    std::memcpy(&held, static_cast<const char*>(object) + word, sizeof held);
    if (held == target) return static_cast<std::int32_t>(word);
  }
  return -1;
}

Type* TypeRegistry::NewType(std::type_index type, bool* fresh) {
  auto& slot = types_[type];
  *fresh = slot == nullptr;
  if (*fresh) {
    slot = std::make_unique<Type>();
    type_order_.push_back(slot.get());
  }
  return slot.get();
}

std::vector<const Type*> TypeRegistry::TypesOfKind(Kind kind) const {
  std::vector<const Type*> out;
  for (const Type* t : type_order_) {
    if (t->kind == kind) out.push_back(t);
  }
  return out;
}

ClassInfo* TypeRegistry::ClassSlot(std::type_index type) {
  auto& slot = classes_[type];
  if (!slot) {
    slot = std::make_unique<ClassInfo>(type);
    slot->registry_ = this;
  }
  return slot.get();
}

EnumInfo* TypeRegistry::EnumSlot(std::type_index type) {
  auto& slot = enums_[type];
  if (!slot) slot = std::make_unique<EnumInfo>();
  return slot.get();
}

const ClassInfo* TypeRegistry::Find(std::type_index type) const {
  auto it = classes_.find(type);
  return it != classes_.end() && it->second->registered_ ? it->second.get() : nullptr;
}

bool TypeRegistry::SetName(ClassInfo* cls, std::string_view name, bool is_struct) {
  const char* what = is_struct ? "struct " : "class ";
  if (name.empty()) {
    Fail(InvalidInputError(std::string("a ") + what + "with an empty name"));
    return false;
  }
  rolly::Name n(name);
  auto& by_name = is_struct ? structs_by_name_ : classes_by_name_;
  if (cls->registered_) {
    Fail(InvalidInputError(what + std::string(name) + ": the C++ type is registered already as " +
                           cls->name_.str()));
    return false;
  }
  if (by_name.count(n)) {
    Fail(InvalidInputError(what + std::string(name) + " registered twice"));
    return false;
  }
  cls->name_ = n;
  cls->is_struct_ = is_struct;
  cls->registered_ = true;
  by_name[n] = cls;
  return true;
}

Status TypeRegistry::Finish() {
  if (!status_.ok()) return status_;
  for (const auto& [type, cls] : classes_) {
    (void)type;
    if (!cls->registered_) {
      Fail(InvalidInputError(std::string("a class, struct, base or pointee type (") +
                             type.name() + ") is used but not registered"));
      return status_;
    }
  }
  for (const auto& [type, info] : enums_) {
    if (!info->registered_) {
      Fail(InvalidInputError(std::string("an enum (") + type.name() +
                             ") is used but not registered"));
      return status_;
    }
  }
  for (const auto& [type, t] : types_) {
    (void)type;
    const ClassInfo* c = t->class_info;
    if (!c) continue;
    if (t->kind == Kind::kStruct && !c->is_struct_) {
      Fail(InvalidInputError("class " + c->name_.str() + " is held by value; register it as a struct"));
      return status_;
    }
    if ((t->kind == Kind::kOwned || t->kind == Kind::kReference) && c->is_struct_) {
      Fail(InvalidInputError("struct " + c->name_.str() + " is pointed to; register it as a class"));
      return status_;
    }
  }
  for (const auto& [type, cls] : classes_) {
    (void)type;
    if (cls->base_ && cls->base_->is_struct_ != cls->is_struct_) {
      Fail(InvalidInputError(cls->name_.str() + " and its base " + cls->base_->name_.str() +
                             " must both be classes or both structs"));
      return status_;
    }
  }
  by_type_info_.clear();
  for (const auto& [type, cls] : classes_) {
    if (cls->type_info_ != nullptr) by_type_info_.emplace(cls->type_info_, cls.get());
  }
  return status_;
}

const ClassInfo* TypeRegistry::FindClass(rolly::Name name) const {
  auto it = classes_by_name_.find(redirects_.ResolveClass(name));
  return it == classes_by_name_.end() ? nullptr : it->second;
}

const ClassInfo* TypeRegistry::FindStruct(rolly::Name name) const {
  auto it = structs_by_name_.find(redirects_.ResolveStruct(name));
  return it == structs_by_name_.end() ? nullptr : it->second;
}

const EnumInfo* TypeRegistry::FindEnum(rolly::Name name) const {
  auto it = enums_by_name_.find(name);
  return it == enums_by_name_.end() ? nullptr : it->second;
}

const PlanField* TypeRegistry::FindSavedField(const ClassInfo& cls, rolly::Name saved_name,
                                              bool whole) const {
  const ClassPlan& plan = whole ? cls.WholePlan() : cls.Plan();
  if (const PlanField* f = plan.Find(saved_name)) return f;
  RedirectKind kind = cls.is_struct() ? RedirectKind::kMember : RedirectKind::kProperty;
  for (const ClassInfo* c = &cls; c != nullptr; c = c->base()) {
    rolly::Name now = redirects_.Resolve(kind, c->name(), saved_name);
    if (now == saved_name) continue;
    if (const PlanField* f = plan.Find(now)) return f;
  }
  return nullptr;
}

std::optional<std::int64_t> TypeRegistry::FindEnumValue(const EnumInfo& info,
                                                        rolly::Name saved_name) const {
  if (auto n = info.Find(saved_name)) return n;
  return info.Find(redirects_.ResolveEnumValue(info.name(), saved_name));
}

const void* TypeRegistry::Upcast(const ClassInfo& from, const void* object, const ClassInfo& to) {
  return Upcast(from, const_cast<void*>(object), to);
}

void* TypeRegistry::Upcast(const ClassInfo& from, void* object, const ClassInfo& to) {
  if (object == nullptr) return nullptr;
  char* at = static_cast<char*>(object);
  for (const ClassInfo* c = &from; c != nullptr; c = c->base_) {
    if (c == &to) return at;
    for (const ClassInfo::Interface& i : c->interfaces_) {
      if (void* p = Upcast(*i.cls, at + i.offset, to)) return p;
    }
    at += c->base_offset_;
  }
  return nullptr;
}

ObjectRef TypeRegistry::DynamicClass(const ClassInfo& static_class, const void* object) const {
  if (object == nullptr) return {};
  if (!static_class.dynamic_type_) return {&static_class, object};
  const std::type_info& dynamic = static_class.dynamic_type_(object);
  auto fast = by_type_info_.find(&dynamic);
  const ClassInfo* cls = fast != by_type_info_.end() ? fast->second : Find(dynamic);
  if (cls == nullptr || !cls->IsA(static_class)) return {};
  return {cls, static_class.most_derived_(object)};
}

void* TypeRegistry::CreateObject(const ClassInfo& cls) {
  return cls.create_ ? cls.create_() : nullptr;
}

void TypeRegistry::DeleteObject(const ClassInfo& cls, void* object) {
  if (object && cls.delete_) cls.delete_(object);
}

Result<ObjectRef> TypeRegistry::CreateOwned(const Type& field_type, void* field,
                                            rolly::Name class_name) const {
  if (field_type.kind != Kind::kOwned) return InvalidInputError("not an owned-pointer field");
  const ClassInfo* cls = FindClass(class_name);
  if (cls == nullptr) return NotFoundError("no class " + class_name.str());
  const ClassInfo& pointee = *field_type.class_info;
  if (!cls->IsA(pointee)) {
    return InvalidDataError("class " + cls->name().str() + " is not a " + pointee.name().str());
  }
  void* object = CreateObject(*cls);
  if (object == nullptr) return InvalidDataError("class " + cls->name().str() + " cannot be made");
  field_type.pointer->set(field, Upcast(*cls, object, pointee));
  return ObjectRef{cls, object};
}

// Runs `hook` of each class of the chain, bases first, on the object as that class.
static void RunChain(const ClassInfo& cls, void* object,
                     const std::function<void(void*)>& (*hook_of)(const ClassInfo&)) {
  const ClassInfo* chain[64];
  void* objects[64];
  std::size_t n = 0;
  char* at = static_cast<char*>(object);
  for (const ClassInfo* c = &cls; c != nullptr && n < 64; at += c->base_offset(), c = c->base()) {
    chain[n] = c;
    objects[n] = at;
    ++n;
  }
  while (n-- > 0) {
    const auto& hook = hook_of(*chain[n]);
    if (hook) hook(objects[n]);
  }
}

void TypeRegistry::RunPreSave(const ClassInfo& cls, void* object) {
  RunChain(cls, object, [](const ClassInfo& c) -> const std::function<void(void*)>& { return c.pre_save_; });
}
void TypeRegistry::RunSaved(const ClassInfo& cls, void* object) {
  RunChain(cls, object, [](const ClassInfo& c) -> const std::function<void(void*)>& { return c.saved_; });
}
void TypeRegistry::RunLoaded(const ClassInfo& cls, void* object) {
  RunChain(cls, object, [](const ClassInfo& c) -> const std::function<void(void*)>& { return c.loaded_; });
}

bool TypeRegistry::HasPreSave(const ClassInfo& cls) {
  for (const ClassInfo* c = &cls; c != nullptr; c = c->base()) {
    if (c->pre_save_) return true;
  }
  return false;
}

bool TypeRegistry::HasSaved(const ClassInfo& cls) {
  for (const ClassInfo* c = &cls; c != nullptr; c = c->base()) {
    if (c->saved_) return true;
  }
  return false;
}

bool TypeRegistry::HasLoaded(const ClassInfo& cls) {
  for (const ClassInfo* c = &cls; c != nullptr; c = c->base()) {
    if (c->loaded_) return true;
  }
  return false;
}

bool TypeRegistry::HasOwnExtra(const ClassInfo& cls) { return static_cast<bool>(cls.write_extra_); }

bool TypeRegistry::HasExtra(const ClassInfo& cls) {
  for (const ClassInfo* c = &cls; c != nullptr; c = c->base()) {
    if (HasOwnExtra(*c)) return true;
  }
  return false;
}

// ---- Save-extra ----

Result<std::string> TypeRegistry::WriteExtra(const ClassInfo& cls, const void* object) {
  ExtraWriter writer;
  const char* at = static_cast<const char*>(object);
  for (const ClassInfo* c = &cls; c != nullptr; at += c->base_offset(), c = c->base()) {
    if (HasOwnExtra(*c)) {
      writer.RunHook(c, at);
      break;
    }
  }
  if (!writer.status_.ok()) return writer.status_;
  return std::move(writer.bytes_);
}

Status TypeRegistry::ReadExtra(const ClassInfo& cls, void* object, std::string_view bytes) {
  ExtraReader reader;
  reader.bytes_ = bytes;
  char* at = static_cast<char*>(object);
  for (const ClassInfo* c = &cls; c != nullptr; at += c->base_offset(), c = c->base()) {
    if (HasOwnExtra(*c)) {
      reader.RunHook(c, at);
      break;
    }
  }
  if (reader.status_.ok() && reader.pos_ != bytes.size()) {
    reader.status_ = DamagedError("save-extra of " + cls.name().str() + " has bytes left over");
  }
  return reader.status_;
}

void ExtraWriter::RunHook(const ClassInfo* cls, const void* object) {
  std::uint32_t offset = 0;
  const ClassInfo* base = NearestBaseWithExtra(cls, &offset);
  frames_.push_back({cls, object, base, false});
  cls->write_extra_(object, *this);
  if (status_.ok() && base != nullptr && !frames_.back().base_done) {
    status_ = InvalidDataError("the save-extra hook of " + cls->name().str() +
                               " never wrote its base " + base->name().str() + "'s part");
  }
  frames_.pop_back();
}

void ExtraWriter::WriteBase() {
  if (!status_.ok() || frames_.empty()) return;
  Frame& f = frames_.back();
  if (f.base_done) {
    status_ = InvalidDataError("the save-extra hook of " + f.cls->name().str() +
                               " wrote its base's part twice");
    return;
  }
  f.base_done = true;
  if (f.base_with_extra == nullptr) return;
  std::uint32_t offset = 0;
  NearestBaseWithExtra(f.cls, &offset);
  RunHook(f.base_with_extra, static_cast<const char*>(f.object) + offset);
}

bool ExtraWriter::BeginValue() {
  if (!status_.ok() || frames_.empty()) return false;
  Frame& f = frames_.back();
  if (f.base_with_extra != nullptr && !f.base_done) {
    status_ = InvalidDataError("the save-extra hook of " + f.cls->name().str() +
                               " wrote before its base " + f.base_with_extra->name().str() +
                               "'s part; a load could not read it");
    return false;
  }
  return true;
}

namespace {
void AppendRaw(std::string& out, std::uint8_t tag, const void* data, std::size_t size) {
  out.push_back(static_cast<char>(tag));
  out.append(static_cast<const char*>(data), size);
}
std::uint64_t ToLittle(std::uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  std::uint64_t out;
  std::memcpy(&out, b, 8);
  return out;
}
std::uint64_t FromLittle(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
}  // namespace

void ExtraWriter::WriteBool(bool value) {
  if (!BeginValue()) return;
  char b = value ? 1 : 0;
  AppendRaw(bytes_, kTagBool, &b, 1);
}
void ExtraWriter::WriteInt(std::int64_t value) {
  if (!BeginValue()) return;
  std::uint64_t v = ToLittle(static_cast<std::uint64_t>(value));
  AppendRaw(bytes_, kTagInt, &v, 8);
}
void ExtraWriter::WriteUInt(std::uint64_t value) {
  if (!BeginValue()) return;
  std::uint64_t v = ToLittle(value);
  AppendRaw(bytes_, kTagUInt, &v, 8);
}
void ExtraWriter::WriteDouble(double value) {
  if (!BeginValue()) return;
  std::uint64_t bits;
  std::memcpy(&bits, &value, 8);
  std::uint64_t v = ToLittle(bits);
  AppendRaw(bytes_, kTagDouble, &v, 8);
}
void ExtraWriter::WriteString(std::string_view value) {
  if (!BeginValue()) return;
  std::uint64_t v = ToLittle(value.size());
  AppendRaw(bytes_, kTagString, &v, 8);
  bytes_.append(value);
}

Status TypeRegistry::CheckExtra(std::string_view bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    auto tag = static_cast<std::uint8_t>(bytes[pos++]);
    std::size_t left = bytes.size() - pos;
    switch (tag) {
      case kTagBool:
        if (left < 1 || static_cast<std::uint8_t>(bytes[pos]) > 1) {
          return DamagedError("save-extra: a bool is not 0 or 1");
        }
        pos += 1;
        break;
      case kTagInt:
      case kTagUInt:
      case kTagDouble:
        if (left < 8) return DamagedError("save-extra: a truncated number");
        pos += 8;
        break;
      case kTagString: {
        if (left < 8) return DamagedError("save-extra: a truncated string length");
        std::uint64_t size = FromLittle(bytes.data() + pos);
        pos += 8;
        if (size > bytes.size() - pos) return DamagedError("save-extra: a truncated string");
        pos += size;
        break;
      }
      default:
        return DamagedError("save-extra: an unknown value tag");
    }
  }
  return OkStatus();
}

void ExtraReader::RunHook(const ClassInfo* cls, void* object) {
  std::uint32_t offset = 0;
  const ClassInfo* base = NearestBaseWithExtra(cls, &offset);
  frames_.push_back({cls, object, base, false});
  cls->read_extra_(object, *this);
  if (status_.ok() && base != nullptr && !frames_.back().base_done) {
    status_ = InvalidDataError("the save-extra hook of " + cls->name().str() +
                               " never read its base " + base->name().str() + "'s part");
  }
  frames_.pop_back();
}

void ExtraReader::ReadBase() {
  if (!status_.ok() || frames_.empty()) return;
  Frame& f = frames_.back();
  if (f.base_done) return;
  f.base_done = true;
  if (f.base_with_extra == nullptr) return;
  std::uint32_t offset = 0;
  NearestBaseWithExtra(f.cls, &offset);
  RunHook(f.base_with_extra, static_cast<char*>(f.object) + offset);
}

bool ExtraReader::Take(std::uint8_t tag, std::size_t size, const char** at) {
  if (!status_.ok() || frames_.empty()) return false;
  Frame& f = frames_.back();
  if (f.base_with_extra != nullptr && !f.base_done) {
    status_ = InvalidDataError("the save-extra hook of " + f.cls->name().str() +
                               " read before its base's part");
    return false;
  }
  if (pos_ >= bytes_.size() || static_cast<std::uint8_t>(bytes_[pos_]) != tag ||
      bytes_.size() - pos_ - 1 < size) {
    status_ = DamagedError("save-extra of " + f.cls->name().str() +
                           " does not hold the value its hook reads");
    return false;
  }
  *at = bytes_.data() + pos_ + 1;
  pos_ += 1 + size;
  return true;
}

void ExtraReader::ReadBool(bool* value) {
  const char* at;
  if (Take(kTagBool, 1, &at)) *value = *at != 0;
}
void ExtraReader::ReadInt(std::int64_t* value) {
  const char* at;
  if (Take(kTagInt, 8, &at)) *value = static_cast<std::int64_t>(FromLittle(at));
}
void ExtraReader::ReadUInt(std::uint64_t* value) {
  const char* at;
  if (Take(kTagUInt, 8, &at)) *value = FromLittle(at);
}
void ExtraReader::ReadDouble(double* value) {
  const char* at;
  if (!Take(kTagDouble, 8, &at)) return;
  std::uint64_t bits = FromLittle(at);
  std::memcpy(value, &bits, 8);
}
void ExtraReader::ReadString(std::string* value) {
  const char* at;
  if (!Take(kTagString, 8, &at)) return;
  std::uint64_t size = FromLittle(at);
  if (size > bytes_.size() - pos_) {
    status_ = DamagedError("save-extra string runs past the bytes");
    return;
  }
  value->assign(bytes_.data() + pos_, static_cast<std::size_t>(size));
  pos_ += static_cast<std::size_t>(size);
}

}  // namespace rolly::reflect
