#include "rolly/reflect/type_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace rolly::reflect {
namespace {

enum class DoorState : std::uint8_t { kClosed = 0, kOpen = 1, kLocked = 7 };

struct Lock {
  int code = 0;
  std::map<std::string, std::vector<float>> pins;
  friend bool operator==(const Lock&, const Lock&) = default;
};

struct Everything {
  bool b = false;
  std::int8_t i8 = 0;
  std::int16_t i16 = 0;
  std::int32_t i32 = 0;
  std::int64_t i64 = 0;
  std::uint8_t u8 = 0;
  std::uint16_t u16 = 0;
  std::uint32_t u32 = 0;
  std::uint64_t u64 = 0;
  float f = 0;
  double d = 0;
  std::string s;
  Name n;
  Text t;
  Guid g;
  Color c;
  DateTime dt;
  Vector2f v2f;
  Vector2d v2d;
  Vector3f v3f;
  Vector3d v3d;
  Vector4f v4f;
  Vector4d v4d;
  Quatf qf;
  Quatd qd;
  Rotatorf rf;
  Rotatord rd;
  Transformf tf;
  Transformd td;
  SoftPath path;
  DoorState state = DoorState::kClosed;
  Lock lock;
  std::vector<Lock> locks;
  std::array<std::int32_t, 3> arr{};
  std::set<Name> set;
  std::unordered_set<std::int64_t> uset;
  std::unordered_map<std::string, Lock> umap;
  std::optional<Lock> maybe;
  std::optional<std::string> maybe_empty;
  friend bool operator==(const Everything&, const Everything&) = default;
};

class Usable {
 public:
  virtual ~Usable() = default;
  int uses = 0;
};

class Actor {
 public:
  virtual ~Actor() = default;
  std::string label;
  int debug_only = 0;
  int scratch = 0;
  std::vector<std::string>* log = nullptr;
  void PreSave() { if (log) log->push_back("Actor.PreSave"); }
  void Loaded() { if (log) log->push_back("Actor.Loaded"); }
};

class Door : public Usable, public Actor {
 public:
  DoorState state = DoorState::kClosed;
  int health = 100;
  int set_calls = 0;
  Actor* target = nullptr;
  std::unique_ptr<Actor> owned;
  void SetHealth(int h) { health = h; ++set_calls; }
  void DoorPreSave() { if (log) log->push_back("Door.PreSave"); }
  void DoorLoaded() { if (log) log->push_back("Door.Loaded"); }
};

class Registered : public ::testing::Test {
 protected:
  void SetUp() override {
    r.Enum<DoorState>("DoorState")
        .Value("Closed", DoorState::kClosed)
        .Value("Open", DoorState::kOpen)
        .Value("Locked", DoorState::kLocked);
    r.Struct<Lock>("Lock").Field("Code", &Lock::code, kSaveGame).Field("Pins", &Lock::pins, kSaveGame);
    auto e = r.Struct<Everything>("Everything");
    e.Field("b", &Everything::b, kSaveGame).Field("i8", &Everything::i8, kSaveGame)
        .Field("i16", &Everything::i16, kSaveGame).Field("i32", &Everything::i32, kSaveGame)
        .Field("i64", &Everything::i64, kSaveGame).Field("u8", &Everything::u8, kSaveGame)
        .Field("u16", &Everything::u16, kSaveGame).Field("u32", &Everything::u32, kSaveGame)
        .Field("u64", &Everything::u64, kSaveGame).Field("f", &Everything::f, kSaveGame)
        .Field("d", &Everything::d, kSaveGame).Field("s", &Everything::s, kSaveGame)
        .Field("n", &Everything::n, kSaveGame).Field("t", &Everything::t, kSaveGame)
        .Field("g", &Everything::g, kSaveGame).Field("c", &Everything::c, kSaveGame)
        .Field("dt", &Everything::dt, kSaveGame).Field("v2f", &Everything::v2f, kSaveGame)
        .Field("v2d", &Everything::v2d, kSaveGame).Field("v3f", &Everything::v3f, kSaveGame)
        .Field("v3d", &Everything::v3d, kSaveGame).Field("v4f", &Everything::v4f, kSaveGame)
        .Field("v4d", &Everything::v4d, kSaveGame).Field("qf", &Everything::qf, kSaveGame)
        .Field("qd", &Everything::qd, kSaveGame).Field("rf", &Everything::rf, kSaveGame)
        .Field("rd", &Everything::rd, kSaveGame).Field("tf", &Everything::tf, kSaveGame)
        .Field("td", &Everything::td, kSaveGame).Field("path", &Everything::path, kSaveGame)
        .Field("state", &Everything::state, kSaveGame).Field("lock", &Everything::lock, kSaveGame)
        .Field("locks", &Everything::locks, kSaveGame).Field("arr", &Everything::arr, kSaveGame)
        .Field("set", &Everything::set, kSaveGame).Field("uset", &Everything::uset, kSaveGame)
        .Field("umap", &Everything::umap, kSaveGame).Field("maybe", &Everything::maybe, kSaveGame)
        .Field("maybe_empty", &Everything::maybe_empty, kSaveGame);
    r.Class<Usable>("Usable").Field("Uses", &Usable::uses, kSaveGame);
    r.Class<Actor>("Actor")
        .Field("Label", &Actor::label, kSaveGame)
        .Field("DebugOnly", &Actor::debug_only, kSaveGame | kEditorOnly)
        .Field("Scratch", &Actor::scratch, kSaveGame | kTransient)
        .OnPreSave(&Actor::PreSave)
        .OnLoaded(&Actor::Loaded);
    r.Class<Door>("Door")
        .Base<Actor>()
        .Interface<Usable>()
        .Field("State", &Door::state, kSaveGame)
        .Field("Health", &Door::health, kSaveGame, &Door::SetHealth)
        .Field("Target", &Door::target, kSaveGame)
        .Field("Owned", &Door::owned, kSaveGame)
        .OnPreSave(&Door::DoorPreSave)
        .OnLoaded(&Door::DoorLoaded);
    ASSERT_TRUE(r.Finish().ok()) << r.status().ToString();
  }
  TypeRegistry r;
};

// Copies a value of `type` from `src` to `dst` through the type-erased operations only, as the
// record codec will read and write values.
void CopyValue(const TypeRegistry& reg, const Type& type, const void* src, void* dst);

void CopyFields(const TypeRegistry& reg, const ClassInfo& cls, const void* src, void* dst) {
  for (const PlanField& f : cls.Plan().fields) CopyValue(reg, f.type(), f.Address(src), f.Address(dst));
}

template <typename T>
void CopyAs(const void* src, void* dst) { *static_cast<T*>(dst) = *static_cast<const T*>(src); }

struct Temp {
  explicit Temp(const Type& t) : type(t), storage(t.size + t.align) {
    at = storage.data() + (t.align - reinterpret_cast<std::uintptr_t>(storage.data()) % t.align) % t.align;
    type.construct(at);
  }
  ~Temp() { type.destroy(at); }
  const Type& type;
  std::vector<unsigned char> storage;
  void* at;
};

void CopyValue(const TypeRegistry& reg, const Type& type, const void* src, void* dst) {
  switch (type.kind) {
    case Kind::kBool: return CopyAs<bool>(src, dst);
    case Kind::kInt8: return CopyAs<std::int8_t>(src, dst);
    case Kind::kInt16: return CopyAs<std::int16_t>(src, dst);
    case Kind::kInt32: return CopyAs<std::int32_t>(src, dst);
    case Kind::kInt64: return CopyAs<std::int64_t>(src, dst);
    case Kind::kUInt8: return CopyAs<std::uint8_t>(src, dst);
    case Kind::kUInt16: return CopyAs<std::uint16_t>(src, dst);
    case Kind::kUInt32: return CopyAs<std::uint32_t>(src, dst);
    case Kind::kUInt64: return CopyAs<std::uint64_t>(src, dst);
    case Kind::kFloat: return CopyAs<float>(src, dst);
    case Kind::kDouble: return CopyAs<double>(src, dst);
    case Kind::kString: return CopyAs<std::string>(src, dst);
    case Kind::kName: return CopyAs<Name>(src, dst);
    case Kind::kText: return CopyAs<Text>(src, dst);
    case Kind::kGuid: return CopyAs<Guid>(src, dst);
    case Kind::kColor: return CopyAs<Color>(src, dst);
    case Kind::kDateTime: return CopyAs<DateTime>(src, dst);
    case Kind::kVector2f: return CopyAs<Vector2f>(src, dst);
    case Kind::kVector2d: return CopyAs<Vector2d>(src, dst);
    case Kind::kVector3f: return CopyAs<Vector3f>(src, dst);
    case Kind::kVector3d: return CopyAs<Vector3d>(src, dst);
    case Kind::kVector4f: return CopyAs<Vector4f>(src, dst);
    case Kind::kVector4d: return CopyAs<Vector4d>(src, dst);
    case Kind::kQuatf: return CopyAs<Quatf>(src, dst);
    case Kind::kQuatd: return CopyAs<Quatd>(src, dst);
    case Kind::kRotatorf: return CopyAs<Rotatorf>(src, dst);
    case Kind::kRotatord: return CopyAs<Rotatord>(src, dst);
    case Kind::kTransformf: return CopyAs<Transformf>(src, dst);
    case Kind::kTransformd: return CopyAs<Transformd>(src, dst);
    case Kind::kSoftPath: return CopyAs<SoftPath>(src, dst);
    case Kind::kEnum: {
      // Through the name, as saved.
      Name name = type.enum_info->NameOf(type.enum_ops->get(src));
      type.enum_ops->set(dst, *reg.FindEnumValue(*type.enum_info, name));
      return;
    }
    case Kind::kStruct: return CopyFields(reg, *type.class_info, src, dst);
    case Kind::kVector:
    case Kind::kArray: {
      const ContainerOps& ops = *type.container;
      std::size_t n = ops.size(src);
      if (type.kind == Kind::kVector) ops.resize(dst, n);
      for (std::size_t i = 0; i < n; ++i)
        CopyValue(reg, *type.element, ops.element(const_cast<void*>(src), i), ops.element(dst, i));
      return;
    }
    case Kind::kSet:
    case Kind::kMap: {
      struct Ctx { const TypeRegistry* reg; const Type* type; void* dst; } ctx{&reg, &type, dst};
      type.container->clear(dst);
      type.container->for_each(src, &ctx, [](void* c, const void* key, const void* mapped) {
        auto& x = *static_cast<Ctx*>(c);
        Temp k(*x.type->element);
        CopyValue(*x.reg, *x.type->element, key, k.at);
        bool inserted = false;
        void* value = x.type->container->insert(x.dst, k.at, &inserted);
        EXPECT_TRUE(inserted);
        if (mapped) CopyValue(*x.reg, *x.type->mapped, mapped, value);
      });
      return;
    }
    case Kind::kOptional: {
      const OptionalOps& ops = *type.optional;
      if (!ops.has(src)) return ops.reset(dst);
      CopyValue(reg, *type.element, ops.value(const_cast<void*>(src)), ops.emplace(dst));
      return;
    }
    case Kind::kOwned: {
      const void* held = type.pointer->get(src);
      if (!held) return type.pointer->set(dst, nullptr);
      ObjectRef ref = reg.DynamicClass(*type.class_info, held);
      ASSERT_NE(ref.cls, nullptr);
      Result<ObjectRef> made = reg.CreateOwned(type, dst, ref.cls->name());
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      CopyFields(reg, *ref.cls, ref.object, const_cast<void*>(made->object));
      return;
    }
    case Kind::kReference: return type.pointer->set(dst, type.pointer->get(src));
    case Kind::kInstancedStruct:
    case Kind::kPropertyBag:
      ADD_FAILURE() << "covered by property_bag_test.cc";
      return;
  }
}

Everything MakeEverything() {
  Everything e;
  e.b = true; e.i8 = -8; e.i16 = -1600; e.i32 = -320000; e.i64 = -(1ll << 40);
  e.u8 = 200; e.u16 = 60000; e.u32 = 4000000000u; e.u64 = ~0ull;
  e.f = 1.5f; e.d = -2.25; e.s = "hello"; e.n = Name("Gold");
  e.t = Text{"{0} gold", "Hud", "GoldLine", {Text{"12", "", "", {}}}};
  e.g = Guid(1, 2); e.c = Color{0.5f, 0.25f, 1, 1}; e.dt = DateTime{638000000000000000};
  e.v2f = {1, 2}; e.v2d = {3, 4}; e.v3f = {1, 2, 3}; e.v3d = {4, 5, 6};
  e.v4f = {1, 2, 3, 4}; e.v4d = {5, 6, 7, 8}; e.qf = {0, 0, 0.7f, 0.7f}; e.qd = {0.7, 0, 0, 0.7};
  e.rf = {10, 20, 30}; e.rd = {40, 50, 60};
  e.tf.translation = {1, 2, 3}; e.td.scale = {2, 2, 2};
  e.path = SoftPath{"/Game/Maps/Town.Town"}; e.state = DoorState::kLocked;
  e.lock = Lock{42, {{"a", {1, 2}}, {"b", {}}}};
  e.locks = {Lock{1, {{"x", {3}}}}, Lock{2, {}}};
  e.arr = {7, 8, 9}; e.set = {Name("A"), Name("B")}; e.uset = {5, -5};
  e.umap = {{"k", Lock{3, {{"y", {4, 5}}}}}};
  e.maybe = Lock{9, {}};
  return e;
}

TEST_F(Registered, DescriptorsOfEveryValueType) {
  const ClassInfo* cls = r.FindStruct(Name("Everything"));
  ASSERT_NE(cls, nullptr);
  const Kind expected[] = {Kind::kBool, Kind::kInt8, Kind::kInt16, Kind::kInt32, Kind::kInt64,
      Kind::kUInt8, Kind::kUInt16, Kind::kUInt32, Kind::kUInt64, Kind::kFloat, Kind::kDouble,
      Kind::kString, Kind::kName, Kind::kText, Kind::kGuid, Kind::kColor, Kind::kDateTime,
      Kind::kVector2f, Kind::kVector2d, Kind::kVector3f, Kind::kVector3d, Kind::kVector4f,
      Kind::kVector4d, Kind::kQuatf, Kind::kQuatd, Kind::kRotatorf, Kind::kRotatord,
      Kind::kTransformf, Kind::kTransformd, Kind::kSoftPath, Kind::kEnum, Kind::kStruct,
      Kind::kVector, Kind::kArray, Kind::kSet, Kind::kSet, Kind::kMap, Kind::kOptional,
      Kind::kOptional};
  const ClassPlan& plan = cls->Plan();
  ASSERT_EQ(plan.fields.size(), std::size(expected));
  for (std::size_t i = 0; i < plan.fields.size(); ++i)
    EXPECT_EQ(plan.fields[i].type().kind, expected[i]) << plan.fields[i].name().view();
  EXPECT_EQ(DescribeType(plan.Find(Name("locks"))->type()), "Vector<Struct Lock>");
  EXPECT_EQ(DescribeType(plan.Find(Name("umap"))->type()), "Map<String, Struct Lock>");
  EXPECT_EQ(DescribeType(plan.Find(Name("arr"))->type()), "Array<Int32, 3>");
  EXPECT_EQ(DescribeType(plan.Find(Name("state"))->type()), "Enum DoorState");
  EXPECT_EQ(plan.Find(Name("arr"))->type().fixed_count, 3u);
  Everything probe;
  EXPECT_EQ(plan.Find(Name("i64"))->Address(static_cast<void*>(&probe)), &probe.i64);
  EXPECT_EQ(r.TypeOf<std::vector<Lock>>(), &plan.Find(Name("locks"))->type());
  const EnumInfo* e = r.FindEnum(Name("DoorState"));
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->Find(Name("Locked")), 7);
  EXPECT_EQ(e->NameOf(1), Name("Open"));
}

TEST_F(Registered, EveryValueTypeRoundTripsThroughOps) {
  Everything src = MakeEverything();
  Everything dst;
  dst.uset = {99};  // cleared by the copy
  CopyFields(r, *r.FindStruct(Name("Everything")), &src, &dst);
  EXPECT_TRUE(src == dst);
  EXPECT_EQ(dst.t.arguments.size(), 1u);
  EXPECT_EQ(TextNestingDepth(dst.t), 2);
}

TEST_F(Registered, PlanHasBasesFirstAndNoEditorOnlyOrTransient) {
  const ClassInfo* door = r.FindClass(Name("Door"));
  ASSERT_NE(door, nullptr);
  const ClassPlan& plan = door->Plan();
  std::vector<std::string> names;
  for (const PlanField& f : plan.fields) names.push_back(f.name().str());
  EXPECT_EQ(names, (std::vector<std::string>{"Label", "State", "Health", "Target", "Owned"}));
  EXPECT_EQ(&door->Plan(), &plan);  // made once
  EXPECT_EQ(door->properties().size(), 4u);
  EXPECT_EQ(r.FindClass(Name("Actor"))->properties().size(), 3u);
  Door d;
  d.label = "front";
  EXPECT_EQ(plan.Find(Name("Label"))->Address(static_cast<void*>(&d)), &d.label);
  EXPECT_EQ(plan.Find(Name("Health"))->Address(static_cast<void*>(&d)), &d.health);
}

// A plan's reach asks for every cache line that holds a byte of a saved field, wherever the
// object lies (at any address: some allocators align to 8 bytes only, and a base part sits inside
// its derived object at any offset), and stays within the saved fields' bytes; `elements` has
// one entry per saved vector, where the vector keeps the address of its elements.
TEST_F(Registered, PlanReachCoversEveryLineOfEverySavedField) {
  for (const char* name : {"Door", "Actor"}) {
    const ClassPlan& plan = r.FindClass(Name(name))->Plan();
    ASSERT_FALSE(plan.reach.empty()) << name;
  }
  for (const ClassInfo* cls : {r.FindStruct(Name("Everything")), r.FindClass(Name("Door")),
                               r.FindClass(Name("Actor"))}) {
    const ClassPlan& plan = cls->Plan();
    std::uint32_t lowest = UINT32_MAX, highest = 0;
    std::size_t vectors = 0;
    for (const PlanField& f : plan.fields) {
      lowest = std::min(lowest, f.offset);
      highest = std::max(highest, f.offset + f.type().size);
      if (f.type().kind == Kind::kVector) ++vectors;
    }
    EXPECT_EQ(plan.elements.size(), vectors) << cls->name().view();
    for (std::uint32_t at : plan.reach) {
      EXPECT_GE(at, lowest) << cls->name().view();
      EXPECT_LT(at, highest) << cls->name().view();
    }
    for (std::uint32_t start = 0; start < 64; ++start) {  // where the object lies in its line
      std::set<std::uint32_t> asked;
      for (std::uint32_t at : plan.reach) asked.insert((start + at) / 64);
      for (const PlanField& f : plan.fields) {
        for (std::uint32_t b = f.offset; b < f.offset + f.type().size; ++b) {
          ASSERT_EQ(asked.count((start + b) / 64), 1u)
              << cls->name().view() << "." << f.name().view() << " byte " << b - f.offset
              << ", the object " << start << " bytes into a line";
        }
      }
    }
  }
  // Everything's fields lie together: fewer offsets than fields reach them all.
  const ClassPlan& everything = r.FindStruct(Name("Everything"))->Plan();
  EXPECT_LT(everything.reach.size(), everything.fields.size());
  // Its one vector keeps the address of its elements where the plan says, moved or not.
  ASSERT_EQ(everything.elements.size(), 1u);
  Everything e = MakeEverything();
  const void* first = nullptr;
  std::memcpy(&first, reinterpret_cast<const char*>(&e) + everything.elements[0], sizeof first);
  EXPECT_EQ(first, e.locks.data());
  e.locks.assign(40, Lock{});  // moved
  std::memcpy(&first, reinterpret_cast<const char*>(&e) + everything.elements[0], sizeof first);
  EXPECT_EQ(first, e.locks.data());
}

// Fields registered out of their order in memory, with unsaved gaps of a line or more between
// them, make stretches of their own; a class whose saved bytes take more lines than kMaxReach is
// asked for in its first kMaxReach offsets.
struct Scattered {
  std::int32_t first = 0;
  char unsaved[100] = {};
  std::array<std::int32_t, 40> wide{};
  char more_unsaved[70] = {};
  std::int16_t last = 0;
};
struct Huge {
  std::int32_t head = 0;
  std::array<std::uint8_t, 4096> body{};
};
TEST(PlanReachTest, StretchesApartAndAtMostKMaxReach) {
  TypeRegistry reg;
  reg.Struct<Scattered>("Scattered")
      .Field("Last", &Scattered::last, kSaveGame)
      .Field("Wide", &Scattered::wide, kSaveGame)
      .Field("First", &Scattered::first, kSaveGame);
  reg.Struct<Huge>("Huge").Field("Body", &Huge::body, kSaveGame).Field("Head", &Huge::head,
                                                                        kSaveGame);
  ASSERT_TRUE(reg.Finish().ok());
  const std::uint32_t first = offsetof(Scattered, first);
  const std::uint32_t wide = offsetof(Scattered, wide);
  const std::uint32_t last = offsetof(Scattered, last);
  const std::uint32_t wide_end = wide + sizeof(Scattered::wide);
  // Three stretches, in memory order: each its first byte, every 64th after it, its last byte.
  std::vector<std::uint32_t> expected = {first, first + 3};
  for (std::uint32_t at = wide; at < wide_end - 1; at += 64) expected.push_back(at);
  expected.push_back(wide_end - 1);
  expected.push_back(last);
  expected.push_back(last + 1);
  EXPECT_EQ(reg.FindStruct(Name("Scattered"))->Plan().reach, expected);
  const ClassPlan& huge = reg.FindStruct(Name("Huge"))->Plan();
  ASSERT_EQ(huge.reach.size(), ClassPlan::kMaxReach);
  for (std::size_t i = 0; i < huge.reach.size(); ++i) {
    EXPECT_EQ(huge.reach[i], offsetof(Huge, head) + 64 * i) << i;
  }
}

TEST_F(Registered, OwnedReferencesAndDynamicClass) {
  const ClassInfo* door = r.FindClass(Name("Door"));
  const ClassInfo* actor = r.FindClass(Name("Actor"));
  Door other;
  Door src;
  src.label = "a";
  src.target = &other;
  auto inner = std::make_unique<Door>();
  inner->label = "inner";
  inner->health = 5;
  src.owned = std::move(inner);
  // The dynamic class of a Door seen as an Actor.
  Actor* as_actor = src.owned.get();
  ObjectRef ref = r.DynamicClass(*actor, as_actor);
  EXPECT_EQ(ref.cls, door);
  EXPECT_EQ(ref.object, static_cast<const void*>(static_cast<Door*>(as_actor)));
  EXPECT_EQ(TypeRegistry::Upcast(*door, static_cast<void*>(&src), *actor),
            static_cast<void*>(static_cast<Actor*>(&src)));
  Door dst;
  CopyFields(r, *door, &src, &dst);
  EXPECT_EQ(dst.target, &other);
  ASSERT_NE(dst.owned, nullptr);
  ASSERT_NE(dynamic_cast<Door*>(dst.owned.get()), nullptr);
  EXPECT_EQ(dst.owned->label, "inner");
  EXPECT_EQ(static_cast<Door*>(dst.owned.get())->health, 5);
}

TEST_F(Registered, CreateOwnedChecksTheClassFirst) {
  const Type* owned = r.TypeOf<std::unique_ptr<Actor>>();
  std::unique_ptr<Actor> field;
  EXPECT_EQ(r.CreateOwned(*owned, &field, Name("Nope")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.CreateOwned(*owned, &field, Name("Usable")).status().code(), StatusCode::kInvalidData);
  EXPECT_EQ(field, nullptr);
  Result<ObjectRef> made = r.CreateOwned(*owned, &field, Name("Door"));
  ASSERT_TRUE(made.ok());
  EXPECT_NE(dynamic_cast<Door*>(field.get()), nullptr);
  r.redirects().AddClass("OldDoor", "Door").IgnoreError();
  EXPECT_TRUE(r.CreateOwned(*owned, &field, Name("OldDoor")).ok());
}

TEST_F(Registered, SetterUsedWhenSet) {
  const ClassPlan& plan = r.FindClass(Name("Door"))->Plan();
  Door d;
  int v = 30;
  EXPECT_TRUE(plan.Find(Name("Health"))->Set(&d, &v));
  EXPECT_EQ(d.health, 30);
  EXPECT_EQ(d.set_calls, 1);
  std::string label = "x";
  EXPECT_FALSE(plan.Find(Name("Label"))->Set(&d, &label));
}

TEST_F(Registered, HooksRunBaseFirst) {
  std::vector<std::string> log;
  Door d;
  d.log = &log;
  const ClassInfo* door = r.FindClass(Name("Door"));
  TypeRegistry::RunPreSave(*door, &d);
  TypeRegistry::RunSaved(*door, &d);
  TypeRegistry::RunLoaded(*door, &d);
  EXPECT_EQ(log, (std::vector<std::string>{"Actor.PreSave", "Door.PreSave", "Actor.Loaded",
                                           "Door.Loaded"}));
}

TEST_F(Registered, PlansKnowTheChainsHooks) {
  const ClassPlan& door = r.FindClass(Name("Door"))->Plan();
  EXPECT_TRUE(door.pre_save);
  EXPECT_FALSE(door.saved);
  EXPECT_TRUE(door.loaded);
  EXPECT_FALSE(door.extra);
  const ClassPlan& usable = r.FindClass(Name("Usable"))->Plan();
  EXPECT_FALSE(usable.pre_save);
  EXPECT_FALSE(usable.saved);
  EXPECT_FALSE(usable.loaded);
  EXPECT_FALSE(usable.extra);
}

// An allocator that counts what it hands out, as a game's own (an engine's arrays, the scene's
// pool) would take it from elsewhere.
template <typename T>
struct CountingAllocator {
  using value_type = T;
  static inline int live = 0;
  CountingAllocator() = default;
  template <typename U>
  CountingAllocator(const CountingAllocator<U>&) noexcept {}  // NOLINT: converts implicitly
  T* allocate(std::size_t n) {
    ++live;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    --live;
    std::allocator<T>().deallocate(p, n);
  }
  friend bool operator==(CountingAllocator, CountingAllocator) { return true; }
};
struct Stock {
  std::vector<std::int32_t, CountingAllocator<std::int32_t>> counts;
};

TEST(VectorAllocatorTest, AVectorWithItsOwnAllocatorIsAVector) {
  TypeRegistry reg;
  reg.Struct<Stock>("Stock").Field("Counts", &Stock::counts, kSaveGame);
  ASSERT_TRUE(reg.Finish().ok()) << reg.status().ToString();
  const PlanField* counts = reg.FindStruct(Name("Stock"))->Plan().Find(Name("Counts"));
  ASSERT_NE(counts, nullptr);
  EXPECT_EQ(counts->type().kind, Kind::kVector);
  EXPECT_EQ(DescribeType(counts->type()), "Vector<Int32>");
  // Where it keeps its elements was found at registration, and nothing it took is still held.
  const ClassPlan& plan = reg.FindStruct(Name("Stock"))->Plan();
  EXPECT_EQ(CountingAllocator<std::int32_t>::live, 0);
  ASSERT_EQ(plan.elements.size(), 1u);
  {
    Stock probe;
    probe.counts = {1, 2};
    const void* first = nullptr;
    std::memcpy(&first, reinterpret_cast<const char*>(&probe) + plan.elements[0], sizeof first);
    EXPECT_EQ(first, probe.counts.data());
  }
  {
    Stock src, dst;
    src.counts = {4, 5, 6};
    CopyFields(reg, *reg.FindStruct(Name("Stock")), &src, &dst);  // resized through its ops
    EXPECT_EQ(dst.counts, src.counts);
    EXPECT_EQ(CountingAllocator<std::int32_t>::live, 2);  // each vector's elements: its own
  }
  EXPECT_EQ(CountingAllocator<std::int32_t>::live, 0);
}

TEST(RegistryHooks, APlanSeesTheHooksOfItsBasesAlone) {
  // Only the base has an OnLoaded hook; the derived class's plan knows it.
  TypeRegistry reg;
  reg.Class<Actor>("Actor").OnLoaded(&Actor::Loaded);
  reg.Class<Door>("Door").Base<Actor>();
  reg.Class<Usable>("Usable");
  ASSERT_TRUE(reg.Finish().ok()) << reg.status().ToString();
  EXPECT_TRUE(reg.FindClass(Name("Door"))->Plan().loaded);
  EXPECT_FALSE(reg.FindClass(Name("Door"))->Plan().saved);
}

TEST(RegistryHooksDeathTest, AHookAddedAfterADerivedClassPlanIsADebugError) {
  // The derived class's plan noted its base's hooks: one added to the base afterwards would be
  // missed, so debug builds stop there.
  TypeRegistry reg;
  auto actor = reg.Class<Actor>("Actor");
  reg.Class<Door>("Door").Base<Actor>();
  reg.Class<Usable>("Usable");
  ASSERT_TRUE(reg.Finish().ok()) << reg.status().ToString();
  EXPECT_FALSE(reg.FindClass(Name("Door"))->Plan().loaded);
  EXPECT_DEBUG_DEATH(actor.OnLoaded(&Actor::Loaded), "hooks_read_");
}

TEST_F(Registered, RedirectsGiveSavedValuesToRenamedFields) {
  ASSERT_TRUE(r.redirects().Parse("property Door.Hp Health\nproperty Actor.Name Label\n"
                                  "member Lock.Pin Code\nenum DoorState.Shut Closed\n"
                                  "struct OldLock Lock\nclass OldDoor Door\n").ok());
  const ClassInfo* door = r.FindClass(Name("OldDoor"));
  ASSERT_NE(door, nullptr);
  EXPECT_EQ(door->name(), Name("Door"));
  EXPECT_EQ(r.FindSavedField(*door, Name("Hp"))->name(), Name("Health"));
  EXPECT_EQ(r.FindSavedField(*door, Name("Name"))->name(), Name("Label"));
  EXPECT_EQ(r.FindSavedField(*door, Name("Nothing")), nullptr);
  const ClassInfo* lock = r.FindStruct(Name("OldLock"));
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(r.FindSavedField(*lock, Name("Pin"))->name(), Name("Code"));
  EXPECT_EQ(r.FindEnumValue(*r.FindEnum(Name("DoorState")), Name("Shut")), 0);
}

// Save-extra hooks.
struct Base1 {
  virtual ~Base1() = default;
  int a = 1;
  void Write(ExtraWriter& w) const { w.WriteBase(); w.WriteInt(a); }
  void Read(ExtraReader& r) { r.ReadBase(); std::int64_t v = 0; r.ReadInt(&v); a = static_cast<int>(v); }
};
struct Good : Base1 {
  std::string s = "x";
  void Write(ExtraWriter& w) const { w.WriteBase(); w.WriteString(s); w.WriteDouble(0.5); }
  void Read(ExtraReader& r) { r.ReadBase(); r.ReadString(&s); double d; r.ReadDouble(&d); }
};
struct WritesFirst : Base1 {
  void Write(ExtraWriter& w) const { w.WriteBool(true); w.WriteBase(); }
  void Read(ExtraReader& r) { r.ReadBase(); }
};
struct SkipsBase : Base1 {
  void Write(ExtraWriter& w) const { w.WriteBool(true); }
  void Read(ExtraReader& r) { r.ReadBase(); }
};

TEST(SaveExtraTest, BaseFirstRule) {
  TypeRegistry reg;
  reg.Class<Base1>("Base1").SaveExtra(&Base1::Write, &Base1::Read);
  reg.Class<Good>("Good").Base<Base1>().SaveExtra(&Good::Write, &Good::Read);
  reg.Class<WritesFirst>("WritesFirst").Base<Base1>().SaveExtra(&WritesFirst::Write, &WritesFirst::Read);
  reg.Class<SkipsBase>("SkipsBase").Base<Base1>().SaveExtra(&SkipsBase::Write, &SkipsBase::Read);
  ASSERT_TRUE(reg.Finish().ok()) << reg.status().ToString();
  // A hook of a base counts for its derived classes' plans.
  EXPECT_TRUE(reg.FindClass(Name("Good"))->Plan().extra);
  EXPECT_TRUE(reg.FindClass(Name("SkipsBase"))->Plan().extra);
  Good g;
  g.a = 77;
  g.s = "saved";
  Result<std::string> bytes = TypeRegistry::WriteExtra(*reg.FindClass(Name("Good")), &g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  Good back;
  ASSERT_TRUE(TypeRegistry::ReadExtra(*reg.FindClass(Name("Good")), &back, *bytes).ok());
  EXPECT_EQ(back.a, 77);
  EXPECT_EQ(back.s, "saved");
  EXPECT_EQ(TypeRegistry::ReadExtra(*reg.FindClass(Name("Good")), &back, bytes->substr(1)).code(),
            StatusCode::kDamaged);
  WritesFirst w;
  Result<std::string> refused = TypeRegistry::WriteExtra(*reg.FindClass(Name("WritesFirst")), &w);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidData);
  EXPECT_NE(refused.status().message().find("before its base"), std::string_view::npos);
  SkipsBase s;
  EXPECT_EQ(TypeRegistry::WriteExtra(*reg.FindClass(Name("SkipsBase")), &s).status().code(),
            StatusCode::kInvalidData);
}

struct Plain { int x = 0; int y = 0; };
struct Holder { Plain p; std::unique_ptr<Actor> a; };

TEST(RegistrationTest, MistakesAreStatuses) {
  {
    TypeRegistry reg;
    reg.Struct<Plain>("Plain").Field("X", &Plain::x, kSaveGame).Field("X", &Plain::y, kSaveGame);
    EXPECT_EQ(reg.Finish().code(), StatusCode::kInvalidInput);
    EXPECT_NE(reg.status().message().find("registered twice"), std::string_view::npos);
  }
  {
    TypeRegistry reg;
    reg.Struct<Plain>("Plain").Field("X", &Plain::x, kSaveGame).Field("Y", &Plain::x, kSaveGame);
    EXPECT_EQ(reg.Finish().code(), StatusCode::kInvalidInput);
  }
  {
    TypeRegistry reg;
    reg.Struct<Plain>("Same");
    reg.Struct<Holder>("Same");
    EXPECT_EQ(reg.Finish().code(), StatusCode::kInvalidInput);
  }
  {
    TypeRegistry reg;
    reg.Class<Door>("Door").Base<Actor>();  // Actor never registered
    EXPECT_EQ(reg.Finish().code(), StatusCode::kInvalidInput);
  }
  {
    TypeRegistry reg;  // an owned pointer to an unregistered class
    reg.Struct<Plain>("Plain");
    reg.Struct<Holder>("Holder").Field("P", &Holder::p, kSaveGame).Field("A", &Holder::a, kSaveGame);
    EXPECT_EQ(reg.Finish().code(), StatusCode::kInvalidInput);
  }
  {
    TypeRegistry reg;
    reg.Enum<DoorState>("DoorState").Value("A", DoorState::kOpen).Value("A", DoorState::kClosed);
    EXPECT_EQ(reg.Finish().code(), StatusCode::kInvalidInput);
  }
  EXPECT_EQ(&DefaultRegistry(), &DefaultRegistry());
}

}  // namespace
}  // namespace rolly::reflect
