#include "rolly/record/record_fixture_scene.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <typeinfo>
#include <utility>

#include "rolly/record/apply.h"
#include "rolly/record/capture.h"
#include "rolly/record/links.h"

namespace rolly::record::fixture {
namespace {

using reflect::kEditorOnly;
using reflect::kSaveGame;
using reflect::kTransient;

// References among one world's Things: those saved in the chunk by record index, the elsewhere
// one by subject ID, any other (the unsaved one) as null.
class WorldLinks final : public ObjectLinks {
 public:
  explicit WorldLinks(const World* world) : world_(world) {}
  std::optional<LinkTarget> Locate(const reflect::ClassInfo&, const void* object) override {
    for (std::size_t i = 0; i < world_->entries.size(); ++i) {
      if (world_->entries[i].thing.get() == object) {
        return LinkTarget{world_->entries[i].subject, static_cast<std::uint32_t>(i + 1)};
      }
    }
    if (world_->elsewhere.get() == object) return LinkTarget{world_->elsewhere_id, 0};
    return std::nullopt;
  }
  void* Resolve(Guid id, const reflect::ClassInfo& cls) override {
    if (cls.cpp_type() != typeid(Thing)) return nullptr;
    return world_->Find(id);
  }

 private:
  const World* world_;
};

reflect::Text MakeText(std::string source, std::vector<reflect::Text> arguments = {},
                       std::string ns = "", std::string key = "") {
  reflect::Text t;
  t.source = std::move(source);
  t.localization_namespace = std::move(ns);
  t.localization_key = std::move(key);
  t.arguments = std::move(arguments);
  return t;
}

std::unique_ptr<Part> MakePart(std::int32_t id, std::string label, std::string serial) {
  auto p = std::make_unique<Part>();
  p->id = id;
  p->label = std::move(label);
  p->serial = std::move(serial);
  return p;
}

std::unique_ptr<Part> MakeGear(std::int32_t id, float power, double torque,
                               std::unique_ptr<Part> child) {
  auto g = std::make_unique<Gear>();
  g->id = id;
  g->label = "gear " + std::to_string(id);
  g->serial = "G-" + std::to_string(id);
  g->power = power;
  g->torque = torque;
  g->worn = id % 2 == 0;
  g->child = std::move(child);
  return g;
}

// Adds a property to a bag, asserting it goes in (the scenes are fixed and valid).
template <typename T>
void Put(reflect::PropertyBag* bag, std::string_view name, const reflect::Type* type, T value) {
  Result<void*> at = bag->Add(Name(name), type);
  if (at.ok()) *static_cast<T*>(*at) = std::move(value);
}

void FillHero(const SceneTypes& types, Thing* t) {
  t->b = true;
  t->i8 = -100;
  t->i16 = -30000;
  t->i32 = 2'000'000'000;
  t->i64 = -9'000'000'000'000'000'000;
  t->u8 = 200;
  t->u16 = 60000;
  t->u32 = 4'000'000'000u;
  t->u64 = 18'000'000'000'000'000'000ull;
  t->f = -1.5f;
  t->d = 3.25e300;
  t->s = "h\xC3\xA9llo w\xC3\xB6rld";
  t->n = Name("Hero_7");
  t->text = MakeText("{0} found {1}", {MakeText("Hero"), MakeText("{0} coins", {MakeText("12")})},
                     "Game", "Found");
  t->mood = Mood::kSleepy;
  t->sign = Sign::kMinus;
  t->stats = {7, 2.5f, {Name("Fast"), Name("Hero_7")}, Mood::kAngry};
  t->ints = {1, -2, 300000, 0};
  t->corners = {{{1, 2, 3}, {-4, -5, -6}}};
  t->tags = {"blue", "red", "zz"};
  t->by_name = {{"one", {1, 0.5f, {}, std::nullopt}},
                {"two", {2, 1.0f, {Name("Two")}, Mood::kCalm}}};
  t->moods_by_id = {{-5, {Mood::kAngry, Mood::kCalm}}, {1LL << 40, {}}};
  t->maybe = 17;
  t->maybe_stats = Stats{3, -0.25f, {}, std::nullopt};
  t->nested = {{"a"}, {}, {"b", "c"}};
  t->g = Guid(0x0123456789ABCDEFull, 0xFEDCBA9876543210ull);
  t->color = {0.1f, 0.2f, 0.3f, 0.4f};
  t->when = {638000000000000000};
  t->v2f = {1, 2};
  t->v2d = {3, 4};
  t->v3f = {5, 6, 7};
  t->v3d = {8, 9, 10};
  t->v4f = {1, 2, 3, 4};
  t->v4d = {5, 6, 7, 8};
  t->qf = {0, 0, 0.5f, 0.75f};
  t->qd = {0.5, 0.5, 0.5, 0.5};
  t->rf = {10, 20, 30};
  t->rd = {-10, -20, -30};
  t->tf.translation = {1, 2, 3};
  t->td.scale = {2, 2, 2};
  t->path = {"/Game/Maps/Level1.Level1"};
  t->part = MakeGear(1, 9.5f, 120.25, MakeGear(2, 1.5f, -3.0, MakePart(3, "leaf", "L-3")));
  t->parts.push_back(MakePart(4, "first", ""));
  t->parts.push_back(nullptr);
  t->parts.push_back(MakeGear(5, 0.0f, 0.0, nullptr));
  Put(&t->bag, "Gold", types.int32_type, std::int32_t{250});
  Put(&t->bag, "Title", types.string_type, std::string("Knight"));
  Put(&t->bag, "Spawn", types.vector3f_type, reflect::Vector3f{1.5f, -2, 0});
  Put(&t->bag, "Friends", types.names_type, std::vector<Name>{Name("Ann"), Name("Bo")});
  Put(&t->bag, "Mood", types.mood_type, Mood::kAngry);
  Put(&t->bag, "Pocket", types.slot_type, Slot{"key", 1, 0.125, {{1, 2}}});
  Put(&t->bag, "Motto", types.text_type, MakeText("Onward {0}", {MakeText("!")}));
  Put(&t->bag, "Ratio", types.double_type, 0.75);
  if (t->slot.Emplace(types.registry().FindClass<Slot>()).ok()) {
    *t->slot.Get<Slot>() = Slot{"sword", 2, std::nullopt, {{0, 0}, {3, 4}}};
  }
  t->health = 88;
  t->secret = -123456789;
  t->secret_count = 42;
  t->secret_note = "under the stone";
  t->scratch = 5;
  t->editor_only = 6;
}

void FillBuddy(const SceneTypes& types, Thing* t) {
  t->i32 = 12;
  t->s = "buddy";
  t->n = Name("Buddy");
  t->text = MakeText("plain");
  t->mood = Mood::kAngry;
  t->tags = {"only"};
  t->maybe = 0;
  t->part = MakePart(10, "buddy part", "B-10");
  Put(&t->bag, "Gold", types.int32_type, std::int32_t{3});
  if (t->slot.Emplace(types.registry().FindClass<Slot>()).ok()) {
    t->slot.Get<Slot>()->item = "stick";
  }
  t->health = 5;
  t->secret_note = "buddy's";
}

void FillExtremes(const SceneTypes& types, Thing* t) {
  t->b = false;
  t->i8 = std::numeric_limits<std::int8_t>::min();
  t->i16 = std::numeric_limits<std::int16_t>::max();
  t->i32 = std::numeric_limits<std::int32_t>::min();
  t->i64 = std::numeric_limits<std::int64_t>::max();
  t->u8 = std::numeric_limits<std::uint8_t>::max();
  t->u16 = 0;
  t->u32 = std::numeric_limits<std::uint32_t>::max();
  t->u64 = std::numeric_limits<std::uint64_t>::max();
  t->f = std::bit_cast<float>(0x7FC00001u);  // a NaN with payload
  t->d = -0.0;
  t->s = "\x01control\ttab\r\n\xF0\x9F\x92\xBE";
  t->n = Name("\xC3\x89t\xC3\xA9_0");
  // Nested 32 deep (the most a text may be); one-byte sources keep its display bound small
  // (docs/records.md: display = L + L x the arguments' displays).
  reflect::Text deep = MakeText("end");
  for (int i = 0; i < 31; ++i) deep = MakeText("x", {std::move(deep)}, "Deep", std::to_string(i));
  t->text = std::move(deep);
  t->mood = Mood::kCalm;
  t->sign = Sign::kPlus;
  t->stats = {std::numeric_limits<std::int32_t>::max(),
              std::numeric_limits<float>::infinity(),
              {Name()},
              Mood::kSleepy};
  for (int i = 0; i < 100; ++i) t->ints.push_back(i * i * (i % 2 == 0 ? 1 : -1));
  t->corners = {{{std::numeric_limits<float>::denorm_min(), 0, -0.0f},
                 {std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(), 1}}};
  t->tags = {"", "\x7F", "\xE2\x82\xAC"};
  t->by_name = {{"", {}}};
  t->moods_by_id = {{std::numeric_limits<std::int64_t>::min(), {Mood::kSleepy}}};
  t->maybe = std::numeric_limits<std::int32_t>::min();
  t->maybe_stats = Stats{};
  t->nested = {{}, {}, {""}};
  t->g = Guid(~std::uint64_t{0}, ~std::uint64_t{0});
  t->color = {-1, 2, 1e30f, 0};
  t->when = {std::numeric_limits<std::int64_t>::min()};
  t->v2d = {std::numeric_limits<double>::denorm_min(), -std::numeric_limits<double>::infinity()};
  t->td.rotation = {0, 0, 0, -1};
  t->path = {""};
  t->part = MakePart(std::numeric_limits<std::int32_t>::min(), "", "");
  // An owned chain six deep.
  std::unique_ptr<Part> chain = MakePart(99, "bottom", "B");
  for (int i = 0; i < 5; ++i) chain = MakeGear(100 + i, -0.0f, 1e-300, std::move(chain));
  t->parts.push_back(std::move(chain));
  Put(&t->bag, "", types.int32_type, std::int32_t{0});  // refused (None name): not added
  Put(&t->bag, "Empty", types.string_type, std::string());
  Put(&t->bag, "NoNames", types.names_type, std::vector<Name>{});
  Put(&t->bag, "Inf", types.double_type, std::numeric_limits<double>::infinity());
  Put(&t->bag, "EmptySlot", types.slot_type, Slot{});
  t->health = std::numeric_limits<std::int32_t>::min();
  t->secret = std::numeric_limits<std::int64_t>::min();
  t->secret_count = std::numeric_limits<std::uint64_t>::max();
  t->secret_note = "";
}

// Field-by-field comparison, naming the first difference.
class Compare {
 public:
  Compare(const World& wa, const World& wb, std::string* why) : wa_(wa), wb_(wb), why_(why) {}
  bool ok() const { return ok_; }

  template <typename T>
  void Eq(std::string_view field, const T& a, const T& b) {
    if (!(a == b)) Fail(field);
  }
  void Bits(std::string_view field, float a, float b) {
    if (std::bit_cast<std::uint32_t>(a) != std::bit_cast<std::uint32_t>(b)) Fail(field);
  }
  void Bits(std::string_view field, double a, double b) {
    if (std::bit_cast<std::uint64_t>(a) != std::bit_cast<std::uint64_t>(b)) Fail(field);
  }
  void Ref(std::string_view field, const Thing* a, const Thing* b) {
    // Null and unsaved both read back as "no subject".
    if (wa_.SubjectOf(a) != wb_.SubjectOf(b)) Fail(field);
  }
  void Owned(std::string field, const Part* a, const Part* b) {
    if ((a == nullptr) != (b == nullptr)) return Fail(field);
    if (a == nullptr) return;
    if (typeid(*a) != typeid(*b)) return Fail(field + " class");
    Eq(field + ".id", a->id, b->id);
    Eq(field + ".label", a->label, b->label);
    Eq(field + ".serial", a->serial, b->serial);
    if (const auto* ga = dynamic_cast<const Gear*>(a)) {
      const auto* gb = dynamic_cast<const Gear*>(b);
      Bits(field + ".power", ga->power, gb->power);
      Bits(field + ".torque", ga->torque, gb->torque);
      Eq(field + ".worn", ga->worn, gb->worn);
      Owned(field + ".child", ga->child.get(), gb->child.get());
    }
  }
  void Bag(const SceneTypes* types, const reflect::PropertyBag& a, const reflect::PropertyBag& b) {
    if (a.size() != b.size()) return Fail("bag size");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string field = "bag." + a.name(i).str();
      if (a.name(i) != b.name(i)) return Fail(field + " name");
      if (a.type(i) != b.type(i)) return Fail(field + " type");
      const reflect::Type* t = a.type(i);
      if (types == nullptr) continue;
      if (t == types->int32_type)
        Eq(field, As<std::int32_t>(a, i), As<std::int32_t>(b, i));
      else if (t == types->string_type)
        Eq(field, As<std::string>(a, i), As<std::string>(b, i));
      else if (t == types->vector3f_type)
        Eq(field, As<reflect::Vector3f>(a, i), As<reflect::Vector3f>(b, i));
      else if (t == types->names_type)
        Eq(field, As<std::vector<Name>>(a, i), As<std::vector<Name>>(b, i));
      else if (t == types->mood_type)
        Eq(field, As<Mood>(a, i), As<Mood>(b, i));
      else if (t == types->slot_type)
        Eq(field, As<Slot>(a, i), As<Slot>(b, i));
      else if (t == types->text_type)
        Eq(field, As<reflect::Text>(a, i), As<reflect::Text>(b, i));
      else if (t == types->double_type)
        Bits(field, As<double>(a, i), As<double>(b, i));
      else
        Fail(field + " of a type the scenes do not use");
    }
  }
  void Instanced(std::string_view field, const reflect::InstancedStruct& a,
                 const reflect::InstancedStruct& b) {
    if (a.empty() != b.empty()) return Fail(field);
    if (a.empty()) return;
    if (a.struct_info()->name() != b.struct_info()->name()) return Fail(field);
    const Slot* sa = a.Get<Slot>();
    const Slot* sb = b.Get<Slot>();
    if (sa == nullptr || sb == nullptr || !(*sa == *sb)) Fail(field);
  }

 private:
  template <typename T>
  static const T& As(const reflect::PropertyBag& bag, std::size_t i) {
    return *static_cast<const T*>(bag.value(i));
  }
  void Fail(std::string_view field) {
    if (!ok_) return;
    ok_ = false;
    if (why_ != nullptr) *why_ = std::string(field);
  }

  const World& wa_;
  const World& wb_;
  std::string* why_;
  bool ok_ = true;
};

}  // namespace

SceneTypes::SceneTypes() {
  reflect::TypeRegistry& r = registry_;
  r.Enum<Mood>("Mood")
      .Value("Calm", Mood::kCalm)
      .Value("Angry", Mood::kAngry)
      .Value("Sleepy", Mood::kSleepy);
  r.Enum<Sign>("Sign")
      .Value("Minus", Sign::kMinus)
      .Value("Zero", Sign::kZero)
      .Value("Plus", Sign::kPlus);
  r.Struct<Stats>("Stats")
      .Field("Level", &Stats::level, kSaveGame)
      .Field("Speed", &Stats::speed, kSaveGame)
      .Field("Tags", &Stats::tags, kSaveGame)
      .Field("Mood", &Stats::mood, kSaveGame);
  r.Struct<Slot>("Slot")
      .Field("Item", &Slot::item, kSaveGame)
      .Field("Count", &Slot::count, kSaveGame)
      .Field("Weight", &Slot::weight, kSaveGame)
      .Field("Marks", &Slot::marks, kSaveGame);
  r.Class<Part>("Part")
      .Field("Id", &Part::id, kSaveGame)
      .Field("Label", &Part::label, kSaveGame)
      .OnLoaded(&Part::Loaded)
      .SaveExtra(&Part::WriteExtra, &Part::ReadExtra);
  r.Class<Gear>("Gear")
      .Base<Part>()
      .Field("Power", &Gear::power, kSaveGame)
      .Field("Child", &Gear::child, kSaveGame)
      .SaveExtra(&Gear::WriteGearExtra, &Gear::ReadGearExtra);
  r.Class<Thing>("Thing")
      .Field("B", &Thing::b, kSaveGame)
      .Field("I8", &Thing::i8, kSaveGame)
      .Field("I16", &Thing::i16, kSaveGame)
      .Field("I32", &Thing::i32, kSaveGame)
      .Field("I64", &Thing::i64, kSaveGame)
      .Field("U8", &Thing::u8, kSaveGame)
      .Field("U16", &Thing::u16, kSaveGame)
      .Field("U32", &Thing::u32, kSaveGame)
      .Field("U64", &Thing::u64, kSaveGame)
      .Field("F", &Thing::f, kSaveGame)
      .Field("D", &Thing::d, kSaveGame)
      .Field("S", &Thing::s, kSaveGame)
      .Field("N", &Thing::n, kSaveGame)
      .Field("Text", &Thing::text, kSaveGame)
      .Field("Mood", &Thing::mood, kSaveGame)
      .Field("Sign", &Thing::sign, kSaveGame)
      .Field("Stats", &Thing::stats, kSaveGame)
      .Field("Ints", &Thing::ints, kSaveGame)
      .Field("Corners", &Thing::corners, kSaveGame)
      .Field("Tags", &Thing::tags, kSaveGame)
      .Field("ByName", &Thing::by_name, kSaveGame)
      .Field("MoodsById", &Thing::moods_by_id, kSaveGame)
      .Field("Maybe", &Thing::maybe, kSaveGame)
      .Field("MaybeStats", &Thing::maybe_stats, kSaveGame)
      .Field("Nested", &Thing::nested, kSaveGame)
      .Field("G", &Thing::g, kSaveGame)
      .Field("Color", &Thing::color, kSaveGame)
      .Field("When", &Thing::when, kSaveGame)
      .Field("V2f", &Thing::v2f, kSaveGame)
      .Field("V2d", &Thing::v2d, kSaveGame)
      .Field("V3f", &Thing::v3f, kSaveGame)
      .Field("V3d", &Thing::v3d, kSaveGame)
      .Field("V4f", &Thing::v4f, kSaveGame)
      .Field("V4d", &Thing::v4d, kSaveGame)
      .Field("Qf", &Thing::qf, kSaveGame)
      .Field("Qd", &Thing::qd, kSaveGame)
      .Field("Rf", &Thing::rf, kSaveGame)
      .Field("Rd", &Thing::rd, kSaveGame)
      .Field("Tf", &Thing::tf, kSaveGame)
      .Field("Td", &Thing::td, kSaveGame)
      .Field("Path", &Thing::path, kSaveGame)
      .Field("Part", &Thing::part, kSaveGame)
      .Field("NoPart", &Thing::no_part, kSaveGame)
      .Field("Parts", &Thing::parts, kSaveGame)
      .Field("Buddy", &Thing::buddy, kSaveGame)
      .Field("Far", &Thing::far, kSaveGame)
      .Field("Nobody", &Thing::nobody, kSaveGame)
      .Field("Bag", &Thing::bag, kSaveGame)
      .Field("Slot", &Thing::slot, kSaveGame)
      .Field("EmptySlot", &Thing::empty_slot, kSaveGame)
      .Field("Health", &Thing::health, kSaveGame, &Thing::SetHealth)
      .Field("Scratch", &Thing::scratch, kSaveGame | kTransient)
      .Field("EditorOnly", &Thing::editor_only, kSaveGame | kEditorOnly)
      .OnPreSave(&Thing::PreSave)
      .OnLoaded(&Thing::Loaded)
      .SaveExtra(&Thing::WriteExtra, &Thing::ReadExtra);
  int32_type = r.TypeOf<std::int32_t>();
  string_type = r.TypeOf<std::string>();
  vector3f_type = r.TypeOf<reflect::Vector3f>();
  names_type = r.TypeOf<std::vector<Name>>();
  mood_type = r.TypeOf<Mood>();
  slot_type = r.TypeOf<Slot>();
  text_type = r.TypeOf<reflect::Text>();
  double_type = r.TypeOf<double>();
  if (r.Finish().ok()) thing_ = r.FindClass<Thing>();
}

Thing* World::Find(Guid id) const {
  for (const Entry& e : entries) {
    if (e.subject == id) return e.thing.get();
  }
  if (id == elsewhere_id) return elsewhere.get();
  return nullptr;
}

Guid World::SubjectOf(const Thing* thing) const {
  if (thing == nullptr) return Guid();
  for (const Entry& e : entries) {
    if (e.thing.get() == thing) return e.subject;
  }
  if (thing == elsewhere.get()) return elsewhere_id;
  return Guid();
}

std::vector<std::string> FixtureNames() {
  return {"empty", "default", "scene", "extremes", "future"};
}

Result<World> BuildScene(const SceneTypes& types, std::string_view name) {
  World w;
  auto add = [&w](Guid id, RecordKind kind) {
    w.entries.push_back({id, kind, std::make_unique<Thing>()});
    return w.entries.back().thing.get();
  };
  w.elsewhere->s = "elsewhere";
  if (name == "empty") return w;
  if (name == "default" || name == "future") {
    add(Guid(0xD, 0xEF), RecordKind::kObject);
    return w;
  }
  if (name == "scene") {
    Thing* hero = add(Guid(0x4E50'0000'0000'0001ull, 1), RecordKind::kActor);
    Thing* buddy = add(Guid(0x4E50'0000'0000'0001ull, 2), RecordKind::kComponent);
    Thing* player = add(Guid(0x4E50'0000'0000'0001ull, 3), RecordKind::kPlayer);
    FillHero(types, hero);
    FillBuddy(types, buddy);
    hero->buddy = buddy;
    hero->far = w.elsewhere.get();
    hero->nobody = nullptr;
    buddy->buddy = hero;
    buddy->far = w.elsewhere.get();
    player->buddy = player;  // itself
    player->far = hero;
    player->n = Name("Player_0");
    return w;
  }
  if (name == "extremes") {
    Thing* t = add(Guid(0xFFFF'FFFF'FFFF'FFFFull, 0), RecordKind::kActor);
    FillExtremes(types, t);
    t->far = w.elsewhere.get();
    return w;
  }
  return NotFoundError("no record fixture named " + std::string(name));
}

Result<Bytes> CaptureScene(const SceneTypes& types, std::string_view name, World* world) {
  FileBudget budget;
  ChunkWriter chunk(&budget);
  WorldLinks links(world);
  Capturer capturer(&chunk, &links);
  for (World::Entry& e : world->entries) {
    ROLLY_ASSIGN_OR_RETURN(std::uint32_t index,
                           capturer.Capture(types.thing(), e.thing.get(), e.subject, e.kind));
    (void)index;
  }
  capturer.RunSavedHooks();
  Bytes bytes = chunk.Finish();
  if (name != "future") return bytes;
  // What a later version might write: an unknown section in a known record and a record of an
  // unknown kind, both kept whole by this one.
  ROLLY_ASSIGN_OR_RETURN(Payload payload, DecodePayload(bytes));
  Section future;
  future.id = {'Z', 'Z', 'Z', '9'};
  future.bytes = {1, 2, 3, 0xFF, 0x00};
  payload.records[0].sections.insert(payload.records[0].sections.begin(), future);
  Record strange;
  strange.kind = 200;
  strange.unknown = {0xDE, 0xAD, 0xBE, 0xEF, 0x80};
  payload.records.push_back(strange);
  return EncodePayload(payload);
}

World FreshWorld(const World& shape) {
  World w;
  w.elsewhere_id = shape.elsewhere_id;
  w.elsewhere->s = shape.elsewhere->s;
  for (const World::Entry& e : shape.entries) {
    w.entries.push_back({e.subject, e.kind, std::make_unique<Thing>()});
  }
  return w;
}

Status ApplyPayload(const SceneTypes& types, const Payload& payload, World* world,
                    std::vector<std::string>* messages) {
  WorldLinks links(world);
  Applier applier(types.registry(), payload, &links);
  Status first;
  for (const Record& r : payload.records) {
    if (!IsKnownObjectKind(r.kind)) continue;
    Thing* t = nullptr;
    for (World::Entry& e : world->entries) {
      if (e.subject == r.subject) {
        t = e.thing.get();
        break;
      }
    }
    if (t == nullptr) continue;
    Status s = applier.Apply(r, types.thing(), t, messages);
    if (!s.ok() && first.ok()) first = s;
  }
  applier.RunLoadedHooks();
  return first;
}

bool SameThing(const SceneTypes& types, const World& wa, const Thing& a, const World& wb,
               const Thing& b, std::string* why) {
  Compare c(wa, wb, why);
  c.Eq("B", a.b, b.b);
  c.Eq("I8", a.i8, b.i8);
  c.Eq("I16", a.i16, b.i16);
  c.Eq("I32", a.i32, b.i32);
  c.Eq("I64", a.i64, b.i64);
  c.Eq("U8", a.u8, b.u8);
  c.Eq("U16", a.u16, b.u16);
  c.Eq("U32", a.u32, b.u32);
  c.Eq("U64", a.u64, b.u64);
  c.Bits("F", a.f, b.f);
  c.Bits("D", a.d, b.d);
  c.Eq("S", a.s, b.s);
  c.Eq("N", a.n, b.n);
  c.Eq("Text", a.text, b.text);
  c.Eq("Mood", a.mood, b.mood);
  c.Eq("Sign", a.sign, b.sign);
  c.Eq("Stats", a.stats, b.stats);
  c.Eq("Ints", a.ints, b.ints);
  for (std::size_t i = 0; i < a.corners.size(); ++i) {
    c.Bits("Corners.x", a.corners[i].x, b.corners[i].x);
    c.Bits("Corners.y", a.corners[i].y, b.corners[i].y);
    c.Bits("Corners.z", a.corners[i].z, b.corners[i].z);
  }
  c.Eq("Tags", a.tags, b.tags);
  c.Eq("ByName", a.by_name, b.by_name);
  c.Eq("MoodsById", a.moods_by_id, b.moods_by_id);
  c.Eq("Maybe", a.maybe, b.maybe);
  c.Eq("MaybeStats", a.maybe_stats, b.maybe_stats);
  c.Eq("Nested", a.nested, b.nested);
  c.Eq("G", a.g, b.g);
  c.Eq("Color", a.color, b.color);
  c.Eq("When", a.when, b.when);
  c.Bits("V2d.x", a.v2d.x, b.v2d.x);
  c.Bits("V2d.y", a.v2d.y, b.v2d.y);
  c.Eq("V2f", a.v2f, b.v2f);
  c.Eq("V3f", a.v3f, b.v3f);
  c.Eq("V3d", a.v3d, b.v3d);
  c.Eq("V4f", a.v4f, b.v4f);
  c.Eq("V4d", a.v4d, b.v4d);
  c.Eq("Qf", a.qf, b.qf);
  c.Eq("Qd", a.qd, b.qd);
  c.Eq("Rf", a.rf, b.rf);
  c.Eq("Rd", a.rd, b.rd);
  c.Eq("Tf", a.tf, b.tf);
  c.Eq("Td", a.td, b.td);
  c.Eq("Path", a.path, b.path);
  c.Owned("Part", a.part.get(), b.part.get());
  c.Owned("NoPart", a.no_part.get(), b.no_part.get());
  c.Eq("Parts size", a.parts.size(), b.parts.size());
  for (std::size_t i = 0; c.ok() && i < a.parts.size(); ++i) {
    c.Owned("Parts[" + std::to_string(i) + "]", a.parts[i].get(), b.parts[i].get());
  }
  c.Ref("Buddy", a.buddy, b.buddy);
  c.Ref("Far", a.far, b.far);
  c.Ref("Nobody", a.nobody, b.nobody);
  c.Bag(&types, a.bag, b.bag);
  c.Instanced("Slot", a.slot, b.slot);
  c.Instanced("EmptySlot", a.empty_slot, b.empty_slot);
  c.Eq("Health", a.health, b.health);
  c.Eq("extra secret", a.secret, b.secret);
  c.Eq("extra secret_count", a.secret_count, b.secret_count);
  c.Eq("extra secret_note", a.secret_note, b.secret_note);
  return c.ok();
}

bool SameWorld(const SceneTypes& types, const World& a, const World& b, std::string* why) {
  if (a.entries.size() != b.entries.size()) {
    if (why != nullptr) *why = "number of objects";
    return false;
  }
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    const World::Entry& ea = a.entries[i];
    const World::Entry& eb = b.entries[i];
    std::string field;
    if (ea.subject != eb.subject || ea.kind != eb.kind) {
      field = "subject or kind";
    } else if (SameThing(types, a, *ea.thing, b, *eb.thing, &field)) {
      continue;
    }
    if (why != nullptr) *why = "object " + std::to_string(i) + ": " + field;
    return false;
  }
  return true;
}

}  // namespace rolly::record::fixture
