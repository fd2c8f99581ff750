#include "rolly/reflect/property_bag.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rolly/core/status_matchers.h"

namespace rolly::reflect {
namespace {

struct Lock {
  std::int32_t code = 0;
  std::vector<float> pins;
  friend bool operator==(const Lock&, const Lock&) = default;
};

struct Item {
  Name id;
  InstancedStruct payload;
  PropertyBag bag;
  std::map<std::string, Lock> locks;
};

struct Wrapper {
  PropertyBag bag;
};

struct Node {
  std::int32_t value = 0;
  std::vector<Node> children;
};

class Actor {
 public:
  virtual ~Actor() = default;
  int hp = 0;
};

struct Inner {
  Actor* target = nullptr;
};
struct Deep {
  std::vector<std::map<std::string, Inner>> inners;
};
struct OwnsOne {
  std::unique_ptr<Actor> actor;
};
struct DeepBag {
  std::vector<InstancedStruct> items;  // fine: what they hold is checked when emplaced
};
struct WithExtra {
  std::int32_t n = 0;
  void Write(ExtraWriter& w) const { w.WriteInt(n); }
  void Read(ExtraReader& r) {
    std::int64_t v = 0;
    r.ReadInt(&v);
    n = static_cast<std::int32_t>(v);
  }
};
struct EditorOnlyRef {
  std::int32_t n = 0;
  Actor* debug = nullptr;
};

// Copies a value through the type-erased ops only, as the record codec will.
void CopyValue(const Type& type, const void* src, void* dst);

void CopyFields(const ClassInfo& cls, const void* src, void* dst) {
  for (const PlanField& f : cls.Plan().fields) CopyValue(f.type(), f.Address(src), f.Address(dst));
}

template <typename T>
void CopyAs(const void* src, void* dst) { *static_cast<T*>(dst) = *static_cast<const T*>(src); }

struct Temp {
  explicit Temp(const Type& t) : type(t), storage(t.size + t.align) {
    at = storage.data() +
         (t.align - reinterpret_cast<std::uintptr_t>(storage.data()) % t.align) % t.align;
    type.construct(at);
  }
  ~Temp() { type.destroy(at); }
  const Type& type;
  std::vector<unsigned char> storage;
  void* at;
};

struct MapCopy {
  const Type* type;
  void* dst;
};

void CopyValue(const Type& type, const void* src, void* dst) {
  switch (type.kind) {
    case Kind::kInt32: return CopyAs<std::int32_t>(src, dst);
    case Kind::kFloat: return CopyAs<float>(src, dst);
    case Kind::kString: return CopyAs<std::string>(src, dst);
    case Kind::kName: return CopyAs<Name>(src, dst);
    case Kind::kGuid: return CopyAs<Guid>(src, dst);
    case Kind::kStruct: return CopyFields(*type.class_info, src, dst);
    case Kind::kVector: {
      std::size_t n = type.container->size(src);
      type.container->resize(dst, n);
      for (std::size_t i = 0; i < n; ++i) {
        CopyValue(*type.element, type.container->element(const_cast<void*>(src), i),
                  type.container->element(dst, i));
      }
      return;
    }
    case Kind::kMap: {
      type.container->clear(dst);
      MapCopy ctx{&type, dst};
      type.container->for_each(src, &ctx, [](void* c, const void* key, const void* mapped) {
        auto* m = static_cast<MapCopy*>(c);
        Temp k(*m->type->element);
        CopyValue(*m->type->element, key, k.at);
        bool inserted = false;
        void* v = m->type->container->insert(m->dst, k.at, &inserted);
        CopyValue(*m->type->mapped, mapped, v);
      });
      return;
    }
    case Kind::kInstancedStruct: {
      const ClassInfo* cls = type.instanced->get(src);
      ASSERT_THAT(type.instanced->emplace(dst, cls), IsOk());
      if (cls != nullptr) {
        CopyFields(*cls, type.instanced->data(const_cast<void*>(src)), type.instanced->data(dst));
      }
      return;
    }
    case Kind::kPropertyBag: {
      type.bag->clear(dst);
      for (std::size_t i = 0; i < type.bag->size(src); ++i) {
        const Type* t = type.bag->type(src, i);
        Result<void*> at = type.bag->add(dst, type.bag->name(src, i), t);
        ASSERT_THAT(at, IsOk());
        CopyValue(*t, type.bag->value(const_cast<void*>(src), i), *at);
      }
      return;
    }
    default:
      ADD_FAILURE() << "kind not used in these tests: " << KindName(type.kind);
  }
}

class PropertyBagTest : public ::testing::Test {
 protected:
  void SetUp() override {
    r.Struct<Lock>("Lock").Field("Code", &Lock::code, kSaveGame).Field("Pins", &Lock::pins, kSaveGame);
    r.Struct<Item>("Item")
        .Field("Id", &Item::id, kSaveGame)
        .Field("Payload", &Item::payload, kSaveGame)
        .Field("Bag", &Item::bag, kSaveGame)
        .Field("Locks", &Item::locks, kSaveGame);
    r.Struct<Wrapper>("Wrapper").Field("Bag", &Wrapper::bag, kSaveGame);
    r.Struct<Node>("Node").Field("Value", &Node::value, kSaveGame)
        .Field("Children", &Node::children, kSaveGame);
    r.Class<Actor>("Actor").Field("Hp", &Actor::hp, kSaveGame);
    r.Struct<Inner>("Inner").Field("Target", &Inner::target, kSaveGame);
    r.Struct<Deep>("Deep").Field("Inners", &Deep::inners, kSaveGame);
    r.Struct<OwnsOne>("OwnsOne").Field("Actor", &OwnsOne::actor, kSaveGame);
    r.Struct<DeepBag>("DeepBag").Field("Items", &DeepBag::items, kSaveGame);
    r.Struct<WithExtra>("WithExtra").Field("N", &WithExtra::n, kSaveGame)
        .SaveExtra(&WithExtra::Write, &WithExtra::Read);
    // Not saved (no kSaveGame) still counts: a bag saves its structs whole.
    r.Struct<EditorOnlyRef>("EditorOnlyRef").Field("N", &EditorOnlyRef::n, 0)
        .Field("Debug", &EditorOnlyRef::debug, kSaveGame | kEditorOnly);
    i32 = r.TypeOf<std::int32_t>();
    str = r.TypeOf<std::string>();
    locks = r.TypeOf<std::vector<Lock>>();
    bag_type = r.TypeOf<PropertyBag>();
    instanced_type = r.TypeOf<InstancedStruct>();
    item_type = r.TypeOf<Item>();
    ASSERT_THAT(r.Finish(), IsOk());
  }

  // A bag holding a bag holding a vector of structs, and an instanced struct holding a bag.
  Item MakeItem() {
    Item item;
    item.id = Name("Sword");
    item.locks["gate"] = Lock{3, {1.5f}};
    Wrapper* w = nullptr;
    EXPECT_THAT(item.payload.Emplace(r.FindStruct(Name("Wrapper"))), IsOk());
    w = item.payload.Get<Wrapper>();
    *static_cast<std::int32_t*>(*w->bag.Add(Name("Depth"), i32)) = 2;
    *static_cast<std::int32_t*>(*item.bag.Add(Name("Gold"), i32)) = 12;
    *static_cast<std::string*>(*item.bag.Add(Name("Owner"), str)) = "Ann";
    auto* inner = static_cast<PropertyBag*>(*item.bag.Add(Name("Inner"), bag_type));
    *static_cast<std::vector<Lock>*>(*inner->Add(Name("Locks"), locks)) = {Lock{1, {0.5f, 2}},
                                                                          Lock{2, {}}};
    auto* inst = static_cast<InstancedStruct*>(*inner->Add(Name("One"), instanced_type));
    EXPECT_THAT(inst->Emplace(r.FindStruct(Name("Lock"))), IsOk());
    inst->Get<Lock>()->code = 9;
    return item;
  }

  void ExpectSameItem(const Item& a, const Item& b) {
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.locks, b.locks);
    ASSERT_TRUE(a.bag.SameLayout(b.bag));
    EXPECT_EQ(*static_cast<const std::int32_t*>(b.bag.Find(Name("Gold"))), 12);
    EXPECT_EQ(*static_cast<const std::string*>(b.bag.Find(Name("Owner"))), "Ann");
    const auto* ia = static_cast<const PropertyBag*>(a.bag.Find(Name("Inner")));
    const auto* ib = static_cast<const PropertyBag*>(b.bag.Find(Name("Inner")));
    ASSERT_TRUE(ia->SameLayout(*ib));
    EXPECT_EQ(*static_cast<const std::vector<Lock>*>(ia->Find(Name("Locks"))),
              *static_cast<const std::vector<Lock>*>(ib->Find(Name("Locks"))));
    const auto* one = static_cast<const InstancedStruct*>(ib->Find(Name("One")));
    ASSERT_NE(one->Get<Lock>(), nullptr);
    EXPECT_EQ(one->Get<Lock>()->code, 9);
    ASSERT_NE(b.payload.Get<Wrapper>(), nullptr);
    EXPECT_EQ(b.payload.struct_info(), a.payload.struct_info());
    EXPECT_EQ(*static_cast<const std::int32_t*>(b.payload.Get<Wrapper>()->bag.Find(Name("Depth"))),
              2);
  }

  TypeRegistry r;
  const Type* i32 = nullptr;
  const Type* str = nullptr;
  const Type* locks = nullptr;
  const Type* bag_type = nullptr;
  const Type* instanced_type = nullptr;
  const Type* item_type = nullptr;
};

TEST_F(PropertyBagTest, DescriptorsHaveTheirKindsAndOps) {
  EXPECT_EQ(bag_type->kind, Kind::kPropertyBag);
  EXPECT_NE(bag_type->bag, nullptr);
  EXPECT_EQ(instanced_type->kind, Kind::kInstancedStruct);
  EXPECT_NE(instanced_type->instanced, nullptr);
  EXPECT_EQ(KindName(Kind::kPropertyBag), "PropertyBag");
  EXPECT_EQ(KindName(Kind::kInstancedStruct), "InstancedStruct");
  EXPECT_EQ(DescribeType(*r.TypeOf<std::vector<PropertyBag>>()), "Vector<PropertyBag>");
  EXPECT_EQ(DescribeType(*instanced_type), "InstancedStruct");
  EXPECT_TRUE(ReadableInBag(*bag_type));
  EXPECT_TRUE(ReadableInBag(*item_type));
  EXPECT_TRUE(ReadableInBag(*r.FindStruct(Name("Node"))->value_type()));  // recursive struct
  EXPECT_EQ(r.FindClass(Name("Actor"))->value_type(), nullptr);
}

TEST_F(PropertyBagTest, RoundTripThroughOpsOnly) {
  Item src = MakeItem();
  Item dst;
  CopyValue(*item_type, &src, &dst);
  ExpectSameItem(src, dst);
  // The layout the codec counts.
  ASSERT_EQ(dst.bag.layout().size(), 3u);
  EXPECT_EQ(dst.bag.layout()[0], (BagField{Name("Gold"), i32}));
  EXPECT_EQ(dst.bag.layout()[2], (BagField{Name("Inner"), bag_type}));
  EXPECT_EQ(&bag_type->bag->layout(&dst.bag), &dst.bag.layout());
}

TEST_F(PropertyBagTest, CopiesAreDeepAndMovesEmpty) {
  Item src = MakeItem();
  Item copy = src;
  ExpectSameItem(src, copy);
  *static_cast<std::int32_t*>(src.bag.Find(Name("Gold"))) = 99;
  auto* inner = static_cast<PropertyBag*>(src.bag.Find(Name("Inner")));
  static_cast<std::vector<Lock>*>(inner->Find(Name("Locks")))->clear();
  src.payload.Get<Wrapper>()->bag.Clear();
  EXPECT_EQ(*static_cast<std::int32_t*>(copy.bag.Find(Name("Gold"))), 12);
  auto* copied_inner = static_cast<PropertyBag*>(copy.bag.Find(Name("Inner")));
  EXPECT_EQ(static_cast<std::vector<Lock>*>(copied_inner->Find(Name("Locks")))->size(), 2u);
  EXPECT_EQ(copy.payload.Get<Wrapper>()->bag.size(), 1u);
  EXPECT_NE(copy.payload.data(), src.payload.data());

  Item moved = std::move(copy);
  EXPECT_TRUE(copy.bag.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_TRUE(copy.payload.empty());
  EXPECT_EQ(moved.bag.size(), 3u);

  PropertyBag assigned;
  ASSERT_THAT(assigned.Add(Name("Other"), str), IsOk());
  assigned = moved.bag;
  EXPECT_TRUE(assigned.SameLayout(moved.bag));
  InstancedStruct s = moved.payload;
  s = src.payload;
  EXPECT_EQ(s.Get<Wrapper>()->bag.size(), 0u);
}

TEST_F(PropertyBagTest, AddFindRemoveKeepOrder) {
  PropertyBag bag;
  ASSERT_THAT(bag.Add(Name("A"), i32), IsOk());
  ASSERT_THAT(bag.Add(Name("B"), str), IsOk());
  ASSERT_THAT(bag.Add(Name("C"), i32), IsOk());
  EXPECT_THAT(bag.Add(Name("B"), i32), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(bag.Add(Name(), i32), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(bag.Add(Name("D"), nullptr), StatusIs(StatusCode::kInvalidInput));
  EXPECT_EQ(bag.size(), 3u);
  EXPECT_EQ(bag.Find(Name("Nope")), nullptr);
  EXPECT_EQ(bag.IndexOf(Name("C")), 2u);
  EXPECT_TRUE(bag.Remove(Name("B")));
  EXPECT_FALSE(bag.Remove(Name("B")));
  ASSERT_EQ(bag.size(), 2u);
  EXPECT_EQ(bag.name(0), Name("A"));
  EXPECT_EQ(bag.name(1), Name("C"));
  EXPECT_EQ(bag.type(1), i32);
  EXPECT_EQ(bag.value(1), bag.Find(Name("C")));
  ASSERT_THAT(bag.Add(Name("B"), str), IsOk());  // a removed name may come back, at the end
  EXPECT_EQ(bag.name(2), Name("B"));
}

TEST_F(PropertyBagTest, BoundOfPropertiesAtItsLimitAndOnePast) {
  PropertyBag bag;
  for (std::size_t i = 0; i < PropertyBag::kMaxProperties; ++i) {
    ASSERT_THAT(bag.Add(Name("P" + std::to_string(i)), i32), IsOk()) << i;
  }
  EXPECT_EQ(bag.size(), 1024u);
  EXPECT_THAT(bag.Add(Name("OnePast"), i32), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(bag_type->bag->add(&bag, Name("OnePast"), i32), StatusIs(StatusCode::kInvalidData));
  EXPECT_EQ(bag.size(), 1024u);
  PropertyBag copy = bag;
  EXPECT_TRUE(copy.SameLayout(bag));
}

TEST_F(PropertyBagTest, OwnedAndReferenceTypesRefusedAtAnyDepth) {
  PropertyBag bag;
  EXPECT_THAT(bag.Add(Name("O"), r.TypeOf<std::unique_ptr<Actor>>()),
              StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(bag.Add(Name("R"), r.TypeOf<Actor*>()), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(bag.Add(Name("V"), r.TypeOf<std::vector<std::map<std::string, Actor*>>>()),
              StatusIs(StatusCode::kInvalidData));
  const Type* deep = r.FindStruct(Name("Deep"))->value_type();
  EXPECT_THAT(bag.Add(Name("Deep"), deep), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(bag.Add(Name("Deeper"), r.TypeOf<std::vector<Deep>>()),
              StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(bag.Add(Name("Owns"), r.FindStruct(Name("OwnsOne"))->value_type()),
              StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(bag.Add(Name("Extra"), r.FindStruct(Name("WithExtra"))->value_type()),
              StatusIs(StatusCode::kInvalidData));
  EXPECT_TRUE(bag.empty());
  // Members whatever their flags count, editor-only ones aside.
  EXPECT_THAT(bag.Add(Name("Ed"), r.FindStruct(Name("EditorOnlyRef"))->value_type()), IsOk());
  // Asking twice gives the cached answer.
  EXPECT_FALSE(ReadableInBag(*deep));
  EXPECT_FALSE(ReadableInBag(*deep));

  InstancedStruct s;
  ASSERT_THAT(s.Emplace(r.FindStruct(Name("Lock"))), IsOk());
  EXPECT_THAT(s.Emplace(r.FindStruct(Name("Deep"))), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(s.Emplace(r.FindStruct(Name("OwnsOne"))), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(s.Emplace(r.FindClass(Name("Actor"))), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(instanced_type->instanced->emplace(&s, r.FindStruct(Name("Inner"))),
              StatusIs(StatusCode::kInvalidData));
  EXPECT_NE(s.Get<Lock>(), nullptr);  // left as it was
  EXPECT_THAT(InstancedStruct::Make<Deep>(r), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(InstancedStruct::Make<std::string>(r), StatusIs(StatusCode::kInvalidData));

  // A vector of instanced structs is fine; what each holds is checked when emplaced.
  Result<InstancedStruct> holder = InstancedStruct::Make<DeepBag>(r);
  ASSERT_THAT(holder, IsOk());
  auto& items = holder->Get<DeepBag>()->items;
  items.resize(1);
  EXPECT_THAT(items[0].Emplace(r.FindStruct(Name("OwnsOne"))), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(items[0].Emplace(r.FindStruct(Name("Item"))), IsOk());
}

TEST_F(PropertyBagTest, InstancedStructMakeGetReset) {
  Result<InstancedStruct> made = InstancedStruct::Make<Lock>(r);
  ASSERT_THAT(made, IsOk());
  InstancedStruct s = std::move(*made);
  EXPECT_EQ(s.struct_info(), r.FindStruct(Name("Lock")));
  EXPECT_EQ(s.Get<Wrapper>(), nullptr);
  ASSERT_NE(s.Get<Lock>(), nullptr);
  EXPECT_EQ(*s.Get<Lock>(), Lock{});
  EXPECT_EQ(instanced_type->instanced->get(&s), s.struct_info());
  EXPECT_EQ(instanced_type->instanced->data(&s), s.data());
  ASSERT_THAT(s.Emplace(nullptr), IsOk());
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.data(), nullptr);
  EXPECT_EQ(instanced_type->instanced->get(&s), nullptr);
  InstancedStruct empty_copy = s;
  EXPECT_TRUE(empty_copy.empty());
}

}  // namespace
}  // namespace rolly::reflect
