// Tests of the record layer's newer value kinds, end to end: texts, owned objects (INLN),
// references (ObjectLinks), property bags and instanced structs captured by Capturer into a
// ChunkWriter, decoded by DecodePayload and applied by Applier; the value tree over them; hooks;
// save-extra bytes; every bound of the structure check and the file's budget, at its limit and one
// past it, at capture and at load.
//
// Single-threaded; each test makes its own registry.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/status_matchers.h"
#include "rolly/record/apply.h"
#include "rolly/record/capture.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/links.h"
#include "rolly/record/record_codec.h"
#include "rolly/record/internal/testing.h"
#include "rolly/record/value_tree.h"
#include "rolly/reflect/property_bag.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"

namespace rolly::record {
namespace {

using reflect::ClassInfo;
using reflect::InstancedStruct;
using reflect::kEditorOnly;
using reflect::kSaveGame;
using reflect::PropertyBag;
using reflect::Text;
using reflect::TypeRegistry;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---- Hook log ----

std::vector<std::string>& Events() {
  static std::vector<std::string> events;
  return events;
}
void Log(std::string event) { Events().push_back(std::move(event)); }

// ---- Types ----

struct Stats {
  std::int32_t hp = 0;
  std::string note;
  std::int32_t scratch = 0;  // registered without flags: saved only whole (bags, instanced)
  std::int32_t editor = 0;   // editor-only: never saved
};

struct Gone {
  std::int32_t g = 0;
};

struct Byte {
  std::uint8_t b = 0;
};

struct Blob {
  std::vector<Text> texts;
  std::vector<std::uint8_t> bytes;
};

class Base {
 public:
  virtual ~Base() = default;
  std::int32_t base_value = 0;
};

class Derived : public Base {
 public:
  std::string name;
  std::unique_ptr<Base> child;
  std::int64_t secret = 0;
  void WriteExtra(reflect::ExtraWriter& w) const { w.WriteInt(secret); }
  void ReadExtra(reflect::ExtraReader& r) { r.ReadInt(&secret); }
};

class Other : public Base {
 public:
  std::int32_t other = 0;
};

class Target {
 public:
  std::int32_t id = 0;
};

class Holder {
 public:
  Text text;
  std::unique_ptr<Base> owned;       // a Derived owning a Derived owning a Derived
  std::unique_ptr<Base> in_place;    // saved as a Derived
  std::unique_ptr<Base> replaced;    // saved as a Derived
  std::unique_ptr<Base> null_owned;  // saved null
  Target* ref_same = nullptr;        // saved in the same chunk
  Target* ref_other = nullptr;       // saved in another chunk
  Target* ref_null = nullptr;
  Target* ref_unsaved = nullptr;  // Locate says not saved
  Target* ref_lost = nullptr;     // not found on load
  PropertyBag bag;
  InstancedStruct inst;
  InstancedStruct inst_empty;
  InstancedStruct inst_gone;
  Stats plain;
};

// Hooks.
class Sub {
 public:
  std::int32_t v = 0;
  void Pre() {
    Log("Sub.pre");
    v = 3;
  }
  void Saved() { Log("Sub.saved"); }
  void Loaded() { Log("Sub.loaded"); }
};

class Part {
 public:
  std::int32_t v = 0;
  std::unique_ptr<Sub> sub;
  void Pre() {
    Log("Part.pre");
    v = 2;
  }
  void Saved() { Log("Part.saved"); }
  void Loaded() { Log("Part.loaded"); }
};

class Owner {
 public:
  std::int32_t v = 0;
  std::unique_ptr<Part> part;
  void Pre() {
    Log("Owner.pre");
    v = 1;
  }
  void Saved() { Log("Owner.saved"); }
  void Loaded() { Log("Owner.loaded"); }
};

// Save-extra.
class Item {
 public:
  std::int32_t v = 0;
};

class Simple {
 public:
  bool flag = false;
  std::int32_t v = 0;
  std::unique_ptr<Item> item;
  std::int64_t extra = 0;
  void WriteExtra(reflect::ExtraWriter& w) const { w.WriteInt(extra); }
  void ReadExtra(reflect::ExtraReader& r) { r.ReadInt(&extra); }
};

// The same class, its save-extra hook changed since the save: it reads a string.
class SimpleV2 {
 public:
  bool flag = false;
  std::int32_t v = 0;
  std::unique_ptr<Item> item;
  std::string extra;
  void WriteExtra(reflect::ExtraWriter& w) const { w.WriteString(extra); }
  void ReadExtra(reflect::ExtraReader& r) { r.ReadString(&extra); }
};

class XBase {
 public:
  std::int64_t a = 0;
  void WriteExtra(reflect::ExtraWriter& w) const { w.WriteInt(a); }
  void ReadExtra(reflect::ExtraReader& r) { r.ReadInt(&a); }
};

// Breaks the base-first rule: writes its own part before its base's.
class XBad : public XBase {
 public:
  std::int64_t b = 0;
  void WriteExtra(reflect::ExtraWriter& w) const {
    w.WriteInt(b);
    w.WriteBase();
  }
  void ReadExtra(reflect::ExtraReader& r) {
    r.ReadBase();
    r.ReadInt(&b);
  }
};

// Bounds.
class TextHolder {
 public:
  Text text;
};
class Texts {
 public:
  std::vector<Text> texts;
};
class Items {
 public:
  std::vector<std::unique_ptr<Item>> items;
};
class Node {
 public:
  std::unique_ptr<Node> child;
};
class BagHolder {
 public:
  PropertyBag bag;
};
class Bags {
 public:
  std::vector<PropertyBag> bags;
};
class BlobHolder {
 public:
  InstancedStruct inst;
};

// `later`: the game as it is at a later load: struct Gone is gone and no descriptor of
// std::vector<double> is made.
void Register(TypeRegistry& r, bool later) {
  r.Struct<Stats>("Stats")
      .Field("Hp", &Stats::hp, kSaveGame)
      .Field("Note", &Stats::note, kSaveGame)
      .Field("Scratch", &Stats::scratch, 0)
      .Field("Editor", &Stats::editor, kEditorOnly);
  if (!later) {
    r.Struct<Gone>("Gone").Field("G", &Gone::g, kSaveGame);
    r.TypeOf<std::vector<double>>();
  }
  r.Struct<Byte>("Byte").Field("B", &Byte::b, kSaveGame);
  r.Struct<Blob>("Blob")
      .Field("Texts", &Blob::texts, kSaveGame)
      .Field("Bytes", &Blob::bytes, kSaveGame);
  r.Class<Base>("Base").Field("BaseValue", &Base::base_value, kSaveGame);
  r.Class<Derived>("Derived")
      .Base<Base>()
      .Field("Name", &Derived::name, kSaveGame)
      .Field("Child", &Derived::child, kSaveGame)
      .SaveExtra(&Derived::WriteExtra, &Derived::ReadExtra);
  r.Class<Other>("Other").Base<Base>().Field("Other", &Other::other, kSaveGame);
  r.Class<Target>("Target").Field("Id", &Target::id, kSaveGame);
  r.Class<Holder>("Holder")
      .Field("Text", &Holder::text, kSaveGame)
      .Field("Owned", &Holder::owned, kSaveGame)
      .Field("InPlace", &Holder::in_place, kSaveGame)
      .Field("Replaced", &Holder::replaced, kSaveGame)
      .Field("NullOwned", &Holder::null_owned, kSaveGame)
      .Field("RefSame", &Holder::ref_same, kSaveGame)
      .Field("RefOther", &Holder::ref_other, kSaveGame)
      .Field("RefNull", &Holder::ref_null, kSaveGame)
      .Field("RefUnsaved", &Holder::ref_unsaved, kSaveGame)
      .Field("RefLost", &Holder::ref_lost, kSaveGame)
      .Field("Bag", &Holder::bag, kSaveGame)
      .Field("Inst", &Holder::inst, kSaveGame)
      .Field("InstEmpty", &Holder::inst_empty, kSaveGame)
      .Field("InstGone", &Holder::inst_gone, kSaveGame)
      .Field("Plain", &Holder::plain, kSaveGame);
  r.Class<Sub>("Sub")
      .Field("V", &Sub::v, kSaveGame)
      .OnPreSave(&Sub::Pre)
      .OnSaved(&Sub::Saved)
      .OnLoaded(&Sub::Loaded);
  r.Class<Part>("Part")
      .Field("V", &Part::v, kSaveGame)
      .Field("Sub", &Part::sub, kSaveGame)
      .OnPreSave(&Part::Pre)
      .OnSaved(&Part::Saved)
      .OnLoaded(&Part::Loaded);
  r.Class<Owner>("Owner")
      .Field("V", &Owner::v, kSaveGame)
      .Field("Part", &Owner::part, kSaveGame)
      .OnPreSave(&Owner::Pre)
      .OnSaved(&Owner::Saved)
      .OnLoaded(&Owner::Loaded);
  r.Class<Item>("Item").Field("V", &Item::v, kSaveGame);
  r.Class<Simple>("Simple")
      .Field("Flag", &Simple::flag, kSaveGame)
      .Field("V", &Simple::v, kSaveGame)
      .Field("Item", &Simple::item, kSaveGame)
      .SaveExtra(&Simple::WriteExtra, &Simple::ReadExtra);
  r.Class<XBase>("XBase")
      .Field("A", &XBase::a, kSaveGame)
      .SaveExtra(&XBase::WriteExtra, &XBase::ReadExtra);
  r.Class<XBad>("XBad").Base<XBase>().SaveExtra(&XBad::WriteExtra, &XBad::ReadExtra);
  r.Class<TextHolder>("TextHolder").Field("Text", &TextHolder::text, kSaveGame);
  r.Class<Texts>("Texts").Field("Texts", &Texts::texts, kSaveGame);
  r.Class<Items>("Items").Field("Items", &Items::items, kSaveGame);
  r.Class<Node>("Node").Field("Child", &Node::child, kSaveGame);
  r.Class<BagHolder>("BagHolder").Field("Bag", &BagHolder::bag, kSaveGame);
  r.Class<Bags>("Bags").Field("Bags", &Bags::bags, kSaveGame);
  r.Class<BlobHolder>("BlobHolder").Field("Inst", &BlobHolder::inst, kSaveGame);
  r.TypeOf<std::int32_t>();
  r.TypeOf<std::int64_t>();
  r.TypeOf<std::string>();
  r.TypeOf<std::vector<std::int32_t>>();
  r.TypeOf<PropertyBag>();
}

constexpr Guid kT1(0xA, 1), kT2(0xA, 2), kT4(0xA, 4), kHolder(0xB, 1);

Text Leaf(std::size_t n, char c = 'x') {
  Text t;
  t.source.assign(n, c);
  return t;
}
// A text of `source` bytes formatting one leaf of `arg` bytes: displays source + source * arg.
Text Formatted(std::size_t source, std::size_t arg) {
  Text t = Leaf(source);
  t.arguments.push_back(Leaf(arg, 'y'));
  return t;
}
// A text nested `depth` levels (1: no arguments).
Text Nested(int depth) {
  Text t = Leaf(1, 'd');
  for (int i = 1; i < depth; ++i) {
    Text outer = Leaf(1, 'o');
    outer.arguments.push_back(std::move(t));
    t = std::move(outer);
  }
  return t;
}
// A text's bytes as the codec writes them (docs/records.md): forges load-side inputs.
void WriteText(ByteWriter& w, const Text& t) {
  w.LengthPrefixed(t.source);
  w.LengthPrefixed(t.localization_namespace);
  w.LengthPrefixed(t.localization_key);
  w.Varint(t.arguments.size());
  for (const Text& a : t.arguments) WriteText(w, a);
}

Section* FindSection(Record& r, SectionId id) {
  for (Section& s : r.sections) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

class FeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Events().clear();
    Register(registry_, false);
    t_int32_ = registry_.TypeOf<std::int32_t>();
    t_int64_ = registry_.TypeOf<std::int64_t>();
    t_string_ = registry_.TypeOf<std::string>();
    t_ints_ = registry_.TypeOf<std::vector<std::int32_t>>();
    t_doubles_ = registry_.TypeOf<std::vector<double>>();
    t_stats_ = registry_.TypeOf<Stats>();
    t_bag_ = registry_.TypeOf<PropertyBag>();
    ASSERT_THAT(registry_.Finish(), IsOk());
    Register(later_, true);
    ASSERT_THAT(later_.Finish(), IsOk());
    t1_.id = 1;
    t2_.id = 2;
    t3_.id = 3;
    t4_.id = 4;
    lt1_.id = -1;
    lt2_.id = -2;
    save_links_.Save(&t1_, {kT1, 1});  // record 1 of the holder's chunk
    save_links_.Save(&t2_, {kT2, 0});  // another chunk
    save_links_.Save(&t4_, {kT4, 0});  // another chunk, gone at load
    load_links_.Live(kT1, &lt1_);
    load_links_.Live(kT2, &lt2_);
  }

  const ClassInfo& Cls(const TypeRegistry& r, std::string_view name) {
    const ClassInfo* cls = r.FindClass(Name(name));
    EXPECT_NE(cls, nullptr) << name;
    return *cls;
  }
  const ClassInfo& Cls(std::string_view name) { return Cls(registry_, name); }

  // A value of struct T made by `registry` (default: registry_).
  template <typename T>
  InstancedStruct Instanced(const T& value, const TypeRegistry* registry = nullptr) {
    Result<InstancedStruct> s = InstancedStruct::Make<T>(registry ? *registry : registry_);
    EXPECT_THAT(s, IsOk());
    *s->template Get<T>() = value;
    return std::move(*s);
  }

  template <typename T>
  void AddProperty(PropertyBag& bag, std::string_view name, const reflect::Type* type, T value) {
    Result<void*> at = bag.Add(Name(name), type);
    ASSERT_THAT(at, IsOk());
    *static_cast<T*>(*at) = std::move(value);
  }

  std::unique_ptr<Derived> MakeDerived(std::string name, std::int32_t base, std::int64_t secret) {
    auto d = std::make_unique<Derived>();
    d->name = std::move(name);
    d->base_value = base;
    d->secret = secret;
    return d;
  }

  // A holder using every new kind.
  void Fill(Holder& h) {
    h.text = {"Hello {0}", "Game", "Greeting",
              {Text{"{0} and {1}", "", "", {Text{"A", "", "", {}}, Text{"B", "ns", "k", {}}}}}};
    auto one = MakeDerived("one", 1, 100);
    auto two = MakeDerived("two", 2, 200);
    two->child = MakeDerived("three", 3, 300);
    one->child = std::move(two);
    h.owned = std::move(one);
    h.in_place = MakeDerived("ip", 10, 1000);
    h.replaced = MakeDerived("rp", 11, 1100);
    h.ref_same = &t1_;
    h.ref_other = &t2_;
    h.ref_unsaved = &t3_;
    h.ref_lost = &t4_;
    AddProperty<std::int32_t>(h.bag, "Gold", t_int32_, 10);
    AddProperty<std::string>(h.bag, "Title", t_string_, "hero");
    AddProperty<std::vector<std::int32_t>>(h.bag, "Ids", t_ints_, {1, 2, 3});
    AddProperty<Stats>(h.bag, "Stats", t_stats_, Stats{5, "n", 7, 123});
    PropertyBag inner;
    AddProperty<std::int64_t>(inner, "Depth", t_int64_, 2);
    AddProperty<PropertyBag>(h.bag, "Inner", t_bag_, std::move(inner));
    AddProperty<std::vector<double>>(h.bag, "Weights", t_doubles_, {1.5, -2.5});
    h.inst = Instanced(Stats{6, "i", 8, 124});
    h.inst_gone = Instanced(Gone{5});
    h.plain = Stats{1, "p", 2, 3};
  }

  // The chunk: record 1 is target t1_, record 2 the holder.
  Bytes SaveHolderChunk(Holder& h) {
    ChunkWriter chunk;
    Capturer capturer(&chunk, &save_links_);
    EXPECT_THAT(capturer.Capture(Cls("Target"), &t1_, kT1, RecordKind::kObject), IsOk());
    Result<std::uint32_t> index = capturer.Capture(Cls("Holder"), &h, kHolder, RecordKind::kActor);
    EXPECT_THAT(index, IsOk());
    EXPECT_EQ(index.ok() ? *index : 0u, 2u);
    return chunk.Finish();
  }

  // What the loaded object must hold, whatever path the record took.
  struct Prepared {
    Derived* in_place = nullptr;
    Target sentinel;
  };
  // `registry`: the one loading (its struct classes fill the instanced structs).
  void Prepare(Holder& loaded, Prepared& p, const TypeRegistry* registry = nullptr) {
    auto in_place = std::make_unique<Derived>();
    p.in_place = in_place.get();
    loaded.in_place = std::move(in_place);
    loaded.replaced = std::make_unique<Other>();
    loaded.null_owned = std::make_unique<Other>();
    loaded.ref_null = &p.sentinel;
    loaded.ref_unsaved = &p.sentinel;
    loaded.ref_lost = &p.sentinel;
    loaded.inst = Instanced(Stats{0, "", 0, 99}, registry);
    loaded.inst_empty = Instanced(Byte{1}, registry);
    loaded.inst_gone = Instanced(Byte{4}, registry);
    loaded.plain = Stats{0, "", 0, 0};
  }

  // `later`: loaded with later_, which lacks Gone and vector<double>.
  void ExpectLoaded(const Holder& h, const Holder& loaded, const Prepared& p, bool later) {
    EXPECT_EQ(loaded.text, h.text);
    // Owned: 3 deep, each a Derived, with its save-extra.
    const auto* one = dynamic_cast<const Derived*>(loaded.owned.get());
    ASSERT_NE(one, nullptr);
    EXPECT_EQ(one->name, "one");
    EXPECT_EQ(one->base_value, 1);
    EXPECT_EQ(one->secret, 100);
    const auto* two = dynamic_cast<const Derived*>(one->child.get());
    ASSERT_NE(two, nullptr);
    EXPECT_EQ(two->name, "two");
    EXPECT_EQ(two->secret, 200);
    const auto* three = dynamic_cast<const Derived*>(two->child.get());
    ASSERT_NE(three, nullptr);
    EXPECT_EQ(three->name, "three");
    EXPECT_EQ(three->base_value, 3);
    EXPECT_EQ(three->secret, 300);
    EXPECT_EQ(three->child, nullptr);
    // In place: the same object; replaced: made again as the saved class.
    EXPECT_EQ(loaded.in_place.get(), p.in_place);
    EXPECT_EQ(p.in_place->name, "ip");
    EXPECT_EQ(p.in_place->base_value, 10);
    EXPECT_EQ(p.in_place->secret, 1000);
    const auto* replaced = dynamic_cast<const Derived*>(loaded.replaced.get());
    ASSERT_NE(replaced, nullptr);
    EXPECT_EQ(replaced->name, "rp");
    EXPECT_EQ(replaced->secret, 1100);
    EXPECT_EQ(loaded.null_owned, nullptr);
    // References.
    EXPECT_EQ(loaded.ref_same, &lt1_);
    EXPECT_EQ(loaded.ref_other, &lt2_);
    EXPECT_EQ(loaded.ref_null, nullptr);
    EXPECT_EQ(loaded.ref_unsaved, nullptr);
    EXPECT_EQ(loaded.ref_lost, &p.sentinel);
    // The bag.
    const PropertyBag& bag = loaded.bag;
    ASSERT_EQ(bag.size(), later ? 5u : 6u);
    EXPECT_EQ(bag.name(0), Name("Gold"));
    EXPECT_EQ(*static_cast<const std::int32_t*>(bag.Find(Name("Gold"))), 10);
    ASSERT_NE(bag.Find(Name("Title")), nullptr);
    EXPECT_EQ(*static_cast<const std::string*>(bag.Find(Name("Title"))), "hero");
    ASSERT_NE(bag.Find(Name("Ids")), nullptr);
    EXPECT_EQ(*static_cast<const std::vector<std::int32_t>*>(bag.Find(Name("Ids"))),
              (std::vector<std::int32_t>{1, 2, 3}));
    const auto* stats = static_cast<const Stats*>(bag.Find(Name("Stats")));
    ASSERT_NE(stats, nullptr);
    EXPECT_EQ(stats->hp, 5);
    EXPECT_EQ(stats->note, "n");
    EXPECT_EQ(stats->scratch, 7);  // saved whole inside a bag
    EXPECT_EQ(stats->editor, 0);   // editor-only: not saved
    const auto* inner = static_cast<const PropertyBag*>(bag.Find(Name("Inner")));
    ASSERT_NE(inner, nullptr);
    ASSERT_EQ(inner->size(), 1u);
    EXPECT_EQ(*static_cast<const std::int64_t*>(inner->Find(Name("Depth"))), 2);
    if (later) {
      EXPECT_EQ(bag.Find(Name("Weights")), nullptr);
    } else {
      ASSERT_NE(bag.Find(Name("Weights")), nullptr);
      EXPECT_EQ(*static_cast<const std::vector<double>*>(bag.Find(Name("Weights"))),
                (std::vector<double>{1.5, -2.5}));
    }
    // Instanced structs.
    const Stats* inst = loaded.inst.Get<Stats>();
    ASSERT_NE(inst, nullptr);
    EXPECT_EQ(inst->hp, 6);
    EXPECT_EQ(inst->note, "i");
    EXPECT_EQ(inst->scratch, 8);   // saved whole
    EXPECT_EQ(inst->editor, 99);   // not saved: the live value stays
    EXPECT_TRUE(loaded.inst_empty.empty());
    if (later) {
      ASSERT_NE(loaded.inst_gone.Get<Byte>(), nullptr);  // left as it was
      EXPECT_EQ(loaded.inst_gone.Get<Byte>()->b, 4);
    } else {
      ASSERT_NE(loaded.inst_gone.Get<Gone>(), nullptr);
      EXPECT_EQ(loaded.inst_gone.Get<Gone>()->g, 5);
    }
    // A struct as a plain field saves its kSaveGame members only.
    EXPECT_EQ(loaded.plain.hp, 1);
    EXPECT_EQ(loaded.plain.note, "p");
    EXPECT_EQ(loaded.plain.scratch, 0);
    EXPECT_EQ(loaded.plain.editor, 0);
  }

  // Decodes `bytes` and applies every record to `objects` in order (null: skipped).
  Status LoadAll(ByteView bytes, const ClassInfo& cls, const std::vector<void*>& objects,
                 std::vector<std::string>* messages = nullptr) {
    ROLLY_ASSIGN_OR_RETURN(Payload p, DecodePayload(bytes));
    Applier applier(registry_, p);
    for (std::size_t i = 0; i < p.records.size() && i < objects.size(); ++i) {
      if (objects[i] != nullptr) {
        ROLLY_RETURN_IF_ERROR(applier.Apply(p.records[i], cls, objects[i], messages));
      }
    }
    applier.RunLoadedHooks();
    return OkStatus();
  }

  // One chunk holding `object` alone (captured with a budget of its own).
  Bytes Chunk(const ClassInfo& cls, void* object) {
    FileBudget budget;
    ChunkWriter chunk(&budget);
    Capturer capturer(&chunk);
    EXPECT_THAT(capturer.Capture(cls, object, Guid(5, 5), RecordKind::kObject), IsOk());
    return chunk.Finish();
  }

  // Captures `object` into `chunk` expecting InvalidData, and checks nothing changed: the chunk's
  // tables, its record count and the file's budget.
  void ExpectRefused(Capturer& capturer, ChunkWriter& chunk, const ClassInfo& cls, void* object,
                     std::string_view message = "") {
    const ChunkTables::Mark mark = chunk.tables().GetMark();
    const FileBudget before = chunk.budget() ? *chunk.budget() : FileBudget{};
    const std::uint32_t count = chunk.record_count();
    EXPECT_THAT(capturer.Capture(cls, object, Guid(9, 9), RecordKind::kObject),
                StatusIs(StatusCode::kInvalidData, HasSubstr(std::string(message))));
    ExpectSameMark(chunk.tables().GetMark(), mark);
    if (chunk.budget()) {
      EXPECT_EQ(*chunk.budget(), before);
    }
    EXPECT_EQ(chunk.record_count(), count);
  }

  // The payload of one record of class `cls` (captured from `object`), its sections replaced.
  Bytes Forge(const ClassInfo& cls, const void* object, Bytes prop,
              std::optional<Bytes> inln = std::nullopt) {
    Payload p;
    Result<Record> r = CaptureObject(cls, object, Guid(7, 7), RecordKind::kObject, &p.tables);
    EXPECT_THAT(r, IsOk());
    r->sections.clear();
    r->sections.push_back({kPropSection, std::move(prop)});
    if (inln) r->sections.push_back({kOwnedSection, std::move(*inln)});
    p.records.push_back(*r);
    Result<Bytes> bytes = EncodePayload(p);
    EXPECT_THAT(bytes, IsOk());
    return bytes.ok() ? *bytes : Bytes{};
  }

  TypeRegistry registry_;
  TypeRegistry later_;
  const reflect::Type* t_int32_ = nullptr;
  const reflect::Type* t_int64_ = nullptr;
  const reflect::Type* t_string_ = nullptr;
  const reflect::Type* t_ints_ = nullptr;
  const reflect::Type* t_doubles_ = nullptr;
  const reflect::Type* t_stats_ = nullptr;
  const reflect::Type* t_bag_ = nullptr;
  Target t1_, t2_, t3_, t4_, lt1_, lt2_;
  TestLinks save_links_, load_links_;
};

// The value of field `name` of a record's root value.
const Value& FieldOf(const ChunkTables& tables, const Record& record, const Value& root,
                     std::string_view name) {
  const auto& fields = tables.layouts()[record.layout].fields;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (tables.names()[fields[i].name] == Name(name)) return root.items[i];
  }
  ADD_FAILURE() << "no field " << name;
  static const Value none;
  return none;
}

std::string GuidBytes(Guid id) {
  Bytes b;
  ByteWriter w(&b);
  w.U64(id.high());
  w.U64(id.low());
  return std::string(AsChars(b));
}

// ---- 1. Round trips ----

TEST_F(FeaturesTest, EveryNewKindRoundTrips) {
  Holder h;
  Fill(h);
  Bytes bytes = SaveHolderChunk(h);
  Result<Payload> p = DecodePayload(bytes);
  ASSERT_THAT(p, IsOk());
  ASSERT_EQ(p->records.size(), 2u);
  // Same-chunk targets by record index, others once in the refs table; unsaved ones not at all.
  EXPECT_THAT(p->tables.refs(), ElementsAre(kT2, kT4));
  // Editor-only members never save; members without flags save inside bags and instanced structs.
  EXPECT_FALSE(p->tables.FindName(Name("Editor")).has_value());
  EXPECT_TRUE(p->tables.FindName(Name("Scratch")).has_value());

  Target loaded_target;
  Holder loaded;
  Prepared prepared;
  Prepare(loaded, prepared);
  Applier applier(registry_, *p, &load_links_);
  std::vector<std::string> messages;
  ASSERT_THAT(applier.Apply(p->records[0], Cls("Target"), &loaded_target, &messages), IsOk());
  EXPECT_EQ(loaded_target.id, 1);
  ASSERT_THAT(applier.Apply(p->records[1], Cls("Holder"), &loaded, &messages), IsOk());
  ExpectLoaded(h, loaded, prepared, /*later=*/false);
  EXPECT_THAT(messages, ElementsAre(HasSubstr("RefLost: the Target saved as")));
  EXPECT_THAT(messages, ElementsAre(HasSubstr("was not found: left as it was")));
}

TEST_F(FeaturesTest, ReferencesSaveByRecordIndexOrRefsTableOrNull) {
  Holder h;
  Fill(h);
  Bytes bytes = SaveHolderChunk(h);
  Result<Payload> p = DecodePayload(bytes);
  ASSERT_THAT(p, IsOk());
  const Record& r = p->records[1];
  Result<Value> root = DecodeProp(p->tables, r, &p->records);
  ASSERT_THAT(root, IsOk());
  const Value& same = FieldOf(p->tables, r, *root, "RefSame");
  EXPECT_EQ(same.kind, SavedKind::kReference);
  EXPECT_EQ(same.number, 2u * 1 + 1);  // record 1, odd
  EXPECT_EQ(same.text, GuidBytes(kT1));
  const Value& other = FieldOf(p->tables, r, *root, "RefOther");
  EXPECT_EQ(other.number, 2u * 0 + 2);  // refs[0], even
  EXPECT_EQ(other.text, GuidBytes(kT2));
  EXPECT_EQ(FieldOf(p->tables, r, *root, "RefNull").number, 0u);
  EXPECT_EQ(FieldOf(p->tables, r, *root, "RefUnsaved").number, 0u);
  EXPECT_EQ(FieldOf(p->tables, r, *root, "RefLost").number, 2u * 1 + 2);
}

TEST_F(FeaturesTest, ReferenceWithoutLinksOnLoadIsLeftWithAMessage) {
  Holder h;
  Fill(h);
  Result<Payload> p = DecodePayload(SaveHolderChunk(h));
  ASSERT_THAT(p, IsOk());
  Holder loaded;
  Target sentinel;
  loaded.ref_same = &sentinel;
  Applier applier(registry_, *p);  // no links
  std::vector<std::string> messages;
  ASSERT_THAT(applier.Apply(p->records[1], Cls("Holder"), &loaded, &messages), IsOk());
  EXPECT_EQ(loaded.ref_same, &sentinel);
  EXPECT_TRUE(std::any_of(messages.begin(), messages.end(), [](const std::string& m) {
    return m.find("RefSame") != std::string::npos;
  })) << ::testing::PrintToString(messages);
}

TEST_F(FeaturesTest, ReferenceWithoutLinksOnCaptureIsInvalidData) {
  Holder h;
  h.ref_same = &t1_;
  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);  // no links
  ExpectRefused(capturer, chunk, Cls("Holder"), &h);
}

TEST_F(FeaturesTest, LaterGameDropsUnknownBagTypesAndKeepsUnknownInstancedStructs) {
  Holder h;
  Fill(h);
  Result<Payload> p = DecodePayload(SaveHolderChunk(h));
  ASSERT_THAT(p, IsOk());
  Holder loaded;
  Prepared prepared;
  Prepare(loaded, prepared, &later_);
  Applier applier(later_, *p, &load_links_);
  std::vector<std::string> messages;
  ASSERT_THAT(applier.Apply(p->records[1], Cls(later_, "Holder"), &loaded, &messages), IsOk());
  ExpectLoaded(h, loaded, prepared, /*later=*/true);
  EXPECT_THAT(messages, ::testing::UnorderedElementsAre(
                            HasSubstr("bag property Weights dropped"),
                            HasSubstr("an instanced struct Gone was not made"),
                            HasSubstr("RefLost")));
}

TEST_F(FeaturesTest, OwnedObjectOfAGoneClassIsLeftWithAMessage) {
  // Saved as Derived; a game without class Derived leaves the field as it was.
  TypeRegistry r;
  r.Class<Base>("Base").Field("BaseValue", &Base::base_value, kSaveGame);
  r.Class<Other>("Other").Base<Base>().Field("Other", &Other::other, kSaveGame);
  r.Class<Holder>("Holder").Field("Owned", &Holder::owned, kSaveGame);
  ASSERT_THAT(r.Finish(), IsOk());
  Holder h;
  Fill(h);
  Result<Payload> p = DecodePayload(SaveHolderChunk(h));
  ASSERT_THAT(p, IsOk());
  Holder loaded;
  loaded.owned = std::make_unique<Other>();
  Base* before = loaded.owned.get();
  Applier applier(r, *p, &load_links_);
  std::vector<std::string> messages;
  ASSERT_THAT(applier.Apply(p->records[1], *r.FindClass<Holder>(), &loaded, &messages), IsOk());
  EXPECT_EQ(loaded.owned.get(), before);
  EXPECT_TRUE(std::any_of(messages.begin(), messages.end(), [](const std::string& m) {
    return m.find("an owned object of class Derived was not made") != std::string::npos;
  })) << ::testing::PrintToString(messages);
}

// A piece that knows whether it is alive, so that an apply into one destroyed shows.
class Piece {
 public:
  Piece() { Alive().insert(this); }
  ~Piece() { Alive().erase(this); }
  Piece(const Piece&) = delete;
  Piece& operator=(const Piece&) = delete;
  std::int32_t v = 0;
  void Loaded() { Log(Alive().contains(this) ? "Piece.loaded" : "Piece.loaded after it died"); }
  static std::set<const Piece*>& Alive() {
    static std::set<const Piece*> alive;
    return alive;
  }
};
struct PieceKey {
  std::int32_t id = 0;
  std::unique_ptr<Piece> piece;
  friend bool operator<(const PieceKey& a, const PieceKey& b) { return a.id < b.id; }
};
struct PieceSet {
  std::set<PieceKey> keys;
};

void RegisterPieces(TypeRegistry& r) {
  r.Class<Piece>("Piece").Field("V", &Piece::v, kSaveGame).OnLoaded(&Piece::Loaded);
  r.Struct<PieceKey>("PieceKey")
      .Field("Id", &PieceKey::id, kSaveGame)
      .Field("Piece", &PieceKey::piece, kSaveGame);
  r.Class<PieceSet>("PieceSet").Field("Keys", &PieceSet::keys, kSaveGame);
}

// Keys 1 and 2, owning pieces of values 10 and 20.
PieceSet TwoPieces() {
  PieceSet set;
  for (int id : {1, 2}) {
    PieceKey key;
    key.id = id;
    key.piece = std::make_unique<Piece>();
    key.piece->v = 10 * id;
    set.keys.insert(std::move(key));
  }
  return set;
}

// A set key saved twice is dropped, and so are the objects it owns: their INLN entries apply to
// nothing (they were applied to the dropped key's objects after those were destroyed).
TEST_F(FeaturesTest, AKeySavedTwiceLeavesItsOwnedObjectsUnapplied) {
  TypeRegistry r;
  RegisterPieces(r);
  ASSERT_THAT(r.Finish(), IsOk());
  const PieceSet saved = TwoPieces();
  Payload p;
  Result<Record> rec =
      CaptureObject(*r.FindClass<PieceSet>(), &saved, Guid(8, 8), RecordKind::kObject, &p.tables);
  ASSERT_THAT(rec, IsOk());
  // Two keys, each an Id (svarint) and an owned flag; the second's Id made the first's.
  Section* prop = FindSection(*rec, kPropSection);
  ASSERT_NE(prop, nullptr);
  ASSERT_EQ(prop->bytes, (Bytes{2, 2, 1, 4, 1}));
  prop->bytes[3] = 2;
  p.records.push_back(*rec);
  Result<Payload> decoded = DecodePayload(*EncodePayload(p));
  ASSERT_THAT(decoded, IsOk());
  Events().clear();
  PieceSet loaded;
  std::vector<std::string> messages;
  Applier applier(r, *decoded);
  ASSERT_THAT(applier.Apply(decoded->records[0], *r.FindClass<PieceSet>(), &loaded, &messages),
              IsOk());
  applier.RunLoadedHooks();
  ASSERT_EQ(loaded.keys.size(), 1u);
  EXPECT_EQ(loaded.keys.begin()->id, 1);
  EXPECT_EQ(loaded.keys.begin()->piece->v, 10);
  EXPECT_THAT(messages, ElementsAre(HasSubstr("a key saved twice")));
  EXPECT_THAT(Events(), ElementsAre("Piece.loaded"));
}

// Two records for one object whose saved fields hold owned objects, in one load: the second would
// rebuild the set and destroy the objects the first made, whose OnLoaded is still to run. It is
// refused, and so is one from another applier of the load that shares it. After RunLoadedHooks
// the object takes a record again. A class that owns nothing takes both.
TEST_F(FeaturesTest, AnObjectThatOwnsTakesOneRecordPerLoad) {
  TypeRegistry r;
  RegisterPieces(r);
  ASSERT_THAT(r.Finish(), IsOk());
  EXPECT_TRUE(r.FindClass<PieceSet>()->Plan().owns);
  EXPECT_FALSE(r.FindClass<Piece>()->Plan().owns);
  const PieceSet saved = TwoPieces();
  Payload p;
  Result<Record> rec =
      CaptureObject(*r.FindClass<PieceSet>(), &saved, Guid(8, 8), RecordKind::kObject, &p.tables);
  ASSERT_THAT(rec, IsOk());
  p.records.push_back(*rec);
  Result<Payload> decoded = DecodePayload(*EncodePayload(p));
  ASSERT_THAT(decoded, IsOk());
  const ClassInfo& set_class = *r.FindClass<PieceSet>();
  Events().clear();
  PieceSet loaded;
  std::vector<std::string> messages;
  Applier applier(r, *decoded), other(r, *decoded);
  other.ShareLoad(applier);
  ASSERT_THAT(applier.Apply(decoded->records[0], set_class, &loaded, &messages), IsOk());
  for (Applier* again : {&applier, &other}) {
    EXPECT_THAT(again->Apply(decoded->records[0], set_class, &loaded, &messages),
                StatusIs(StatusCode::kInvalidInput, HasSubstr("took a record already")));
  }
  applier.RunLoadedHooks();
  other.RunLoadedHooks();
  EXPECT_EQ(loaded.keys.size(), 2u);
  EXPECT_THAT(Events(), ElementsAre("Piece.loaded", "Piece.loaded"));
  EXPECT_THAT(messages, ::testing::IsEmpty());
  // The load is over: the next takes a record again.
  Events().clear();
  ASSERT_THAT(other.Apply(decoded->records[0], set_class, &loaded, &messages), IsOk());
  other.RunLoadedHooks();
  EXPECT_THAT(Events(), ElementsAre("Piece.loaded", "Piece.loaded"));
  // A Piece owns nothing: two records of one in a load both apply.
  Piece piece;
  Payload pieces;
  piece.v = 7;
  Result<Record> piece_record =
      CaptureObject(*r.FindClass<Piece>(), &piece, Guid(9, 9), RecordKind::kObject, &pieces.tables);
  ASSERT_THAT(piece_record, IsOk());
  pieces.records.push_back(*piece_record);
  Result<Payload> pieces_decoded = DecodePayload(*EncodePayload(pieces));
  ASSERT_THAT(pieces_decoded, IsOk());
  Piece into;
  Applier piece_applier(r, *pieces_decoded);
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(piece_applier.Apply(pieces_decoded->records[0], *r.FindClass<Piece>(), &into,
                                    &messages),
                IsOk());
  }
  EXPECT_EQ(into.v, 7);
}

// ---- 2. Value tree ----

TEST_F(FeaturesTest, ValueTreeGivesBackTheSamePropAndInlnBytes) {
  Holder h;
  Fill(h);
  Result<Payload> p = DecodePayload(SaveHolderChunk(h));
  ASSERT_THAT(p, IsOk());
  const Record& r = p->records[1];
  Result<Value> root = DecodeProp(p->tables, r, &p->records);
  ASSERT_THAT(root, IsOk());
  // Every new kind is in the tree.
  EXPECT_EQ(FieldOf(p->tables, r, *root, "Text").kind, SavedKind::kText);
  const Value& owned = FieldOf(p->tables, r, *root, "Owned");
  EXPECT_EQ(owned.kind, SavedKind::kOwned);
  ASSERT_EQ(owned.items.size(), 1u);
  EXPECT_FALSE(owned.extra.empty());
  EXPECT_EQ(FieldOf(p->tables, r, *root, "Bag").kind, SavedKind::kPropertyBag);
  EXPECT_EQ(FieldOf(p->tables, r, *root, "Inst").kind, SavedKind::kInstancedStruct);
  ChunkTables tables = p->tables;
  const ChunkTables::Mark mark = tables.GetMark();
  Result<EncodedValues> again = EncodeProp(&tables, r.layout, *root);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->prop, r.Find(kPropSection)->bytes);
  ASSERT_TRUE(again->owned.has_value());
  ASSERT_NE(r.Find(kOwnedSection), nullptr);
  EXPECT_EQ(*again->owned, r.Find(kOwnedSection)->bytes);
  ExpectSameMark(tables.GetMark(), mark);
}

// PartsToApply of records with owned objects (INLN), with and without XTRA, checked in order
// and in two halves: INLN and XTRA exactly when the record has them.
TEST_F(FeaturesTest, PartsToApplyOfRecordsWithOwnedObjects) {
  Holder h;
  Fill(h);
  ASSERT_OK_AND_ASSIGN(Payload p, DecodePayload(SaveHolderChunk(h)));
  std::vector<Record> records = p.records;
  bool owned = false;
  for (const Record& r : records) owned = owned || r.Find(kOwnedSection) != nullptr;
  ASSERT_TRUE(owned);
  for (const Record& r : records) {
    Record with_extra = r;  // XTRA added where the record has none, and an unknown section
    if (with_extra.Find(kExtraSection) == nullptr && IsKnownObjectKind(r.kind)) {
      with_extra.sections.push_back({kExtraSection, {}});
    }
    with_extra.sections.insert(with_extra.sections.begin(), {SectionId{'Z', 'Z', 'Z', '1'}, {9}});
    for (int k = 0; k < 20; ++k) p.records.push_back(with_extra);
  }
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, EncodePayload(p));
  ExpectPartsToApplyAsDecoded(bytes);
}

TEST_F(FeaturesTest, MovedRecordAppliesTheSameAndRecordIndexesBecomeRefs) {
  Holder h;
  Fill(h);
  Result<Payload> from = DecodePayload(SaveHolderChunk(h));
  ASSERT_THAT(from, IsOk());
  Payload to;
  ASSERT_THAT(to.tables.AddName(Name("Unrelated")), IsOk());
  to.tables.AddType({SavedKind::kDouble});
  ASSERT_THAT(to.tables.AddRef(Guid(0xFF, 0xFF)), IsOk());
  Result<Record> moved = MoveRecord(from->tables, from->records[1], &to.tables, &from->records);
  ASSERT_THAT(moved, IsOk());
  to.records.push_back(*moved);
  Result<Bytes> bytes = EncodePayload(to);
  ASSERT_THAT(bytes, IsOk());
  Result<Payload> q = DecodePayload(*bytes);
  ASSERT_THAT(q, IsOk());
  EXPECT_THAT(q->tables.refs(), ::testing::Contains(kT1));
  Result<Value> root = DecodeProp(q->tables, q->records[0], &q->records);
  ASSERT_THAT(root, IsOk());
  const Value& same = FieldOf(q->tables, q->records[0], *root, "RefSame");
  EXPECT_EQ(same.number % 2, 0u);
  EXPECT_NE(same.number, 0u);
  EXPECT_EQ(same.text, GuidBytes(kT1));

  Holder loaded;
  Prepared prepared;
  Prepare(loaded, prepared);
  Applier applier(registry_, *q, &load_links_);
  std::vector<std::string> messages;
  ASSERT_THAT(applier.Apply(q->records[0], Cls("Holder"), &loaded, &messages), IsOk());
  ExpectLoaded(h, loaded, prepared, /*later=*/false);
  EXPECT_THAT(messages, ElementsAre(HasSubstr("RefLost")));
}

TEST_F(FeaturesTest, MovedRecordsOfOneClassShareTheirLayouts) {
  // Regression: Translator::LayoutOf appends every layout anew for each moved record, so a chunk
  // of moved records holds one copy of each layout per record and reaches the 65,536-layout bound
  // after a few thousand records (value_tree.cc, Translator::LayoutOf).
  Holder h;
  Fill(h);
  Result<Payload> from = DecodePayload(SaveHolderChunk(h));
  ASSERT_THAT(from, IsOk());
  Payload to;
  ASSERT_THAT(MoveRecord(from->tables, from->records[1], &to.tables, &from->records), IsOk());
  const ChunkTables::Mark once = to.tables.GetMark();
  ASSERT_THAT(MoveRecord(from->tables, from->records[1], &to.tables, &from->records), IsOk());
  EXPECT_EQ(to.tables.GetMark().layouts, once.layouts);
  ASSERT_THAT(MoveRecord(from->tables, from->records[0], &to.tables, &from->records), IsOk());
  const ChunkTables::Mark target = to.tables.GetMark();
  ASSERT_THAT(MoveRecord(from->tables, from->records[0], &to.tables, &from->records), IsOk());
  EXPECT_EQ(to.tables.GetMark().layouts, target.layouts);
}

TEST_F(FeaturesTest, RecordsAddedToAChunkCountAgainstItsFileBudget) {
  // Regression: ChunkWriter::Add (records kept for absent objects, or moved with MoveRecord)
  // charges nothing to the file's budget, so a save writes a chunk its own load refuses.
  constexpr std::size_t kHalf = FileBudget::kMaxOwned / 2;
  Items half, over;
  for (std::size_t i = 0; i < kHalf; ++i) {
    half.items.push_back(std::make_unique<Item>());
    over.items.push_back(std::make_unique<Item>());
  }
  over.items.push_back(std::make_unique<Item>());
  Result<Payload> kept = DecodePayload(Chunk(Cls("Items"), &over));
  ASSERT_THAT(kept, IsOk());

  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Capture(Cls("Items"), &half, Guid(1, 1), RecordKind::kObject), IsOk());
  Result<Record> moved = MoveRecord(kept->tables, kept->records[0], &chunk.tables());
  ASSERT_THAT(moved, IsOk());
  const Status added = chunk.Add(*moved);
  const Bytes bytes = chunk.Finish();
  if (added.ok()) {
    EXPECT_THAT(DecodePayload(bytes), IsOk()) << "the save wrote a chunk its load refuses";
  } else {
    EXPECT_THAT(added, StatusIs(StatusCode::kInvalidData));
  }
}

// A chunk's records are kept in blocks: many small records over several blocks, and one larger
// than a block, come out of Finish whole and in order (records of a kind this version does not
// know, which are kept as their bytes).
TEST_F(FeaturesTest, AChunkOverManyBlocksFinishesWhole) {
  ChunkWriter chunk;
  std::vector<Record> want;
  for (std::uint64_t i = 0; i < 6000; ++i) {
    Record r;
    r.kind = 200;
    r.unknown.assign(i == 3000 ? 300'000 : 90, static_cast<std::uint8_t>(i));
    ASSERT_OK_AND_ASSIGN(Bytes encoded, EncodeRecord(r));
    chunk.AddEncoded(encoded);
    want.push_back(std::move(r));
  }
  EXPECT_EQ(chunk.record_count(), want.size());
  const Bytes payload = chunk.Finish();
  EXPECT_EQ(chunk.record_count(), 0u) << "the writer is empty after Finish";
  ASSERT_OK_AND_ASSIGN(const Payload read, DecodePayload(payload));
  EXPECT_TRUE(read.records == want);
}

// ---- 3. Hooks ----

// Only captures of objects with OnSaved hooks (or owning some) are remembered, and `keep` skips
// whole captures by their number among those, asked right before each.
TEST_F(FeaturesTest, SavedHooksSkipTheCapturesKeepRefuses) {
  Owner first, second;
  first.part = std::make_unique<Part>();
  second.part = std::make_unique<Part>();
  Items plain;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Capture(Cls("Owner"), &first, Guid(1, 1), RecordKind::kObject), IsOk());
  EXPECT_TRUE(capturer.last_remembered());
  ASSERT_THAT(capturer.Capture(Cls("Items"), &plain, Guid(1, 2), RecordKind::kObject), IsOk());
  EXPECT_FALSE(capturer.last_remembered());
  ASSERT_THAT(capturer.Capture(Cls("Owner"), &second, Guid(1, 3), RecordKind::kObject), IsOk());
  EXPECT_TRUE(capturer.last_remembered());
  Events().clear();
  std::vector<std::size_t> asked;
  capturer.RunSavedHooks([&](std::size_t k) {
    asked.push_back(k);
    // Asked right before its own hooks: the first capture's ran already when the second is asked.
    EXPECT_EQ(Events().size(), k == 0 ? 0u : 2u) << k;
    return k == 0;
  });
  EXPECT_THAT(asked, ElementsAre(0, 1));
  EXPECT_THAT(Events(), ElementsAre("Part.saved", "Owner.saved"));
  Events().clear();
  capturer.RunSavedHooks([&](std::size_t) { return true; });
  EXPECT_THAT(Events(), IsEmpty()) << "forgotten once run";
}

TEST_F(FeaturesTest, HooksRunInOrderAndOnlyWhenTheyShould) {
  Owner o;
  o.part = std::make_unique<Part>();
  o.part->sub = std::make_unique<Sub>();
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Capture(Cls("Owner"), &o, Guid(1, 1), RecordKind::kObject), IsOk());
  // OnPreSave: the object before it is read, each owned one before it is read.
  EXPECT_THAT(Events(), ElementsAre("Owner.pre", "Part.pre", "Sub.pre"));
  Events().clear();
  capturer.RunSavedHooks();
  EXPECT_THAT(Events(), ElementsAre("Sub.saved", "Part.saved", "Owner.saved"));
  Events().clear();
  capturer.RunSavedHooks();  // forgotten once run
  EXPECT_THAT(Events(), IsEmpty());
  Bytes bytes = chunk.Finish();

  // CaptureObject (tools and tests) runs no hook.
  ChunkTables scratch;
  ASSERT_THAT(CaptureObject(Cls("Owner"), &o, Guid(1, 1), RecordKind::kObject, &scratch), IsOk());
  EXPECT_THAT(Events(), IsEmpty());

  // A failed write: no OnSaved.
  ChunkWriter chunk2;
  Capturer capturer2(&chunk2);
  ASSERT_THAT(capturer2.Capture(Cls("Owner"), &o, Guid(1, 1), RecordKind::kObject), IsOk());
  Events().clear();
  capturer2.ForgetCaptured();
  capturer2.RunSavedHooks();
  EXPECT_THAT(Events(), IsEmpty());

  Result<Payload> p = DecodePayload(bytes);
  ASSERT_THAT(p, IsOk());
  Owner loaded;
  Applier applier(registry_, *p);
  ASSERT_THAT(applier.Apply(p->records[0], Cls("Owner"), &loaded, nullptr), IsOk());
  // The values OnPreSave set were the ones saved.
  EXPECT_EQ(loaded.v, 1);
  ASSERT_NE(loaded.part, nullptr);
  EXPECT_EQ(loaded.part->v, 2);
  ASSERT_NE(loaded.part->sub, nullptr);
  EXPECT_EQ(loaded.part->sub->v, 3);
  EXPECT_THAT(Events(), IsEmpty());  // not before RunLoadedHooks
  // A refused record (another class) runs no hook and changes nothing.
  Part wrong;
  wrong.v = 42;
  EXPECT_THAT(applier.Apply(p->records[0], Cls("Part"), &wrong, nullptr),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_EQ(wrong.v, 42);
  EXPECT_EQ(wrong.sub, nullptr);
  applier.RunLoadedHooks();
  EXPECT_THAT(Events(), ElementsAre("Sub.loaded", "Part.loaded", "Owner.loaded"));
  Events().clear();
  applier.RunLoadedHooks();
  EXPECT_THAT(Events(), IsEmpty());

  // Only a refused record: nothing at all.
  Applier refused(registry_, *p);
  EXPECT_THAT(refused.Apply(p->records[0], Cls("Part"), &wrong, nullptr),
              StatusIs(StatusCode::kInvalidInput));
  refused.RunLoadedHooks();
  EXPECT_THAT(Events(), IsEmpty());
}

// ---- 4. EXTR ----

Simple MakeSimple(std::int32_t v) {
  Simple s;
  s.flag = true;
  s.v = v;
  s.item = std::make_unique<Item>();
  s.item->v = v * 10;
  s.extra = -v - 1000;
  return s;
}

bool Untouched(const Simple& s) {
  return !s.flag && s.v == -1 && s.item == nullptr && s.extra == 0;
}

Simple Fresh() {
  Simple s;
  s.v = -1;
  return s;
}

// An applier that runs no game code (a second pass beside the game thread) answers Cancelled for
// each record that needs some, keeps none of them for the hooks, and applies the rest; the record
// it left, applied again by an applier that runs game code, loads as if applied by that one only.
TEST_F(FeaturesTest, AnApplierThatRunsNoGameCodeLeavesTheRecordsThatNeedIt) {
  Holder h;
  Fill(h);
  Result<Payload> p = DecodePayload(SaveHolderChunk(h));
  ASSERT_THAT(p, IsOk());
  Applier beside(registry_, *p, &load_links_);
  beside.RunNoGameCode();
  // Target: plain fields only.
  Target target;
  ASSERT_THAT(beside.Apply(p->records[0], Cls("Target"), &target, nullptr), IsOk());
  EXPECT_EQ(target.id, 1);
  // Holder: owned objects (INLN), a bag, instanced structs.
  Holder loaded;
  Prepared prepared;
  Prepare(loaded, prepared);
  std::vector<std::string> messages;
  EXPECT_THAT(beside.Apply(p->records[1], Cls("Holder"), &loaded, &messages),
              StatusIs(StatusCode::kCancelled));
  Applier game(registry_, *p, &load_links_);
  ASSERT_THAT(game.Apply(p->records[1], Cls("Holder"), &loaded, nullptr), IsOk());
  ExpectLoaded(h, loaded, prepared, false);

  // A save-extra hook; a class with OnLoaded that owns.
  Simple simple = MakeSimple(3);
  const Bytes simple_bytes = Chunk(Cls("Simple"), &simple);
  Result<Payload> simple_payload = DecodePayload(simple_bytes);
  ASSERT_THAT(simple_payload, IsOk());
  Applier simple_beside(registry_, *simple_payload);
  simple_beside.RunNoGameCode();
  Simple fresh = Fresh();
  EXPECT_THAT(simple_beside.Apply(simple_payload->records[0], Cls("Simple"), &fresh, nullptr),
              StatusIs(StatusCode::kCancelled));

  Owner owner;
  owner.v = 5;
  Events().clear();
  const Bytes owner_bytes = Chunk(Cls("Owner"), &owner);
  Result<Payload> owner_payload = DecodePayload(owner_bytes);
  ASSERT_THAT(owner_payload, IsOk());
  Applier owner_beside(registry_, *owner_payload);
  owner_beside.RunNoGameCode();
  Owner owner_loaded;
  EXPECT_THAT(owner_beside.Apply(owner_payload->records[0], Cls("Owner"), &owner_loaded, nullptr),
              StatusIs(StatusCode::kCancelled));
  EXPECT_EQ(owner_loaded.v, 0);  // refused before any value
  Events().clear();
  owner_beside.RunLoadedHooks();
  EXPECT_THAT(Events(), IsEmpty());
  // The same records through an applier that runs game code apply (the class is not refused).
  Applier owner_game(registry_, *owner_payload);
  ASSERT_THAT(owner_game.Apply(owner_payload->records[0], Cls("Owner"), &owner_loaded, nullptr),
              IsOk());
  EXPECT_EQ(owner_loaded.v, 1);  // its pre-save hook set 1 before the capture
}

// A dial whose second field is set through a setter that counts its calls.
class Dial {
 public:
  std::int32_t face = 0;
  std::int32_t level = 0;
  int set_calls = 0;
  void SetLevel(std::int32_t v) {
    level = v;
    ++set_calls;
  }
};

// A field with a setter is met part way through a record: the applier that runs no game code has
// set the fields before it, calls no setter and answers Cancelled; the ordinary applier then
// sets every field again, the setter once.
TEST(NoGameCodeTest, ASetterPartWayThroughARecordIsLeftAfterTheFieldsBeforeIt) {
  TypeRegistry r;
  r.Class<Dial>("Dial")
      .Field("Face", &Dial::face, kSaveGame)
      .Field("Level", &Dial::level, kSaveGame, &Dial::SetLevel);
  ASSERT_THAT(r.Finish(), IsOk());
  Dial saved;
  saved.face = 4;
  saved.level = 9;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Capture(*r.FindClass<Dial>(), &saved, Guid(3, 3), RecordKind::kObject),
              IsOk());
  Result<Payload> p = DecodePayload(chunk.Finish());
  ASSERT_THAT(p, IsOk());
  Dial loaded;
  Applier beside(r, *p);
  beside.RunNoGameCode();
  EXPECT_THAT(beside.Apply(p->records[0], *r.FindClass<Dial>(), &loaded, nullptr),
              StatusIs(StatusCode::kCancelled));
  EXPECT_EQ(loaded.face, 4);
  EXPECT_EQ(loaded.level, 0);
  EXPECT_EQ(loaded.set_calls, 0);
  Applier game(r, *p);
  ASSERT_THAT(game.Apply(p->records[0], *r.FindClass<Dial>(), &loaded, nullptr), IsOk());
  EXPECT_EQ(loaded.face, 4);
  EXPECT_EQ(loaded.level, 9);
  EXPECT_EQ(loaded.set_calls, 1);
}

TEST_F(FeaturesTest, SaveExtraNotWellFormedIsDamagedAndNothingApplies) {
  Simple s = MakeSimple(3);
  Bytes bytes = Chunk(Cls("Simple"), &s);
  Simple ok = Fresh();
  ASSERT_THAT(LoadAll(bytes, Cls("Simple"), {&ok}), IsOk());
  EXPECT_EQ(ok.extra, -1003);
  Result<Payload> p = DecodePayload(bytes);
  ASSERT_THAT(p, IsOk());
  Section* extra = FindSection(p->records[0], kExtraSection);
  ASSERT_NE(extra, nullptr);
  ASSERT_FALSE(extra->bytes.empty());
  extra->bytes[0] ^= 0xFF;  // the tag
  Result<Bytes> edited = EncodePayload(*p);
  ASSERT_THAT(edited, IsOk());
  EXPECT_THAT(DecodePayload(*edited), StatusIs(StatusCode::kDamaged, HasSubstr("EXTR")));
  Simple loaded = Fresh();
  EXPECT_THAT(LoadAll(*edited, Cls("Simple"), {&loaded}), StatusIs(StatusCode::kDamaged));
  EXPECT_TRUE(Untouched(loaded));
}

TEST_F(FeaturesTest, SaveExtraHookChangedSinceTheSaveAppliesWithAMessage) {
  Simple s = MakeSimple(4);
  Bytes bytes = Chunk(Cls("Simple"), &s);
  TypeRegistry r;
  r.Class<Item>("Item").Field("V", &Item::v, kSaveGame);
  r.Class<SimpleV2>("Simple")
      .Field("Flag", &SimpleV2::flag, kSaveGame)
      .Field("V", &SimpleV2::v, kSaveGame)
      .Field("Item", &SimpleV2::item, kSaveGame)
      .SaveExtra(&SimpleV2::WriteExtra, &SimpleV2::ReadExtra);
  ASSERT_THAT(r.Finish(), IsOk());
  Result<Payload> p = DecodePayload(bytes);
  ASSERT_THAT(p, IsOk());
  SimpleV2 loaded;
  loaded.extra = "kept";
  Applier applier(r, *p);
  std::vector<std::string> messages;
  ASSERT_THAT(applier.Apply(p->records[0], *r.FindClass<SimpleV2>(), &loaded, &messages), IsOk());
  EXPECT_EQ(loaded.v, 4);
  ASSERT_NE(loaded.item, nullptr);
  EXPECT_EQ(loaded.item->v, 40);
  EXPECT_EQ(loaded.extra, "kept");
  EXPECT_THAT(messages, ElementsAre(HasSubstr("the save-extra hook did not read what was saved")));
}

TEST_F(FeaturesTest, SaveExtraWrittenBeforeItsBaseIsRefusedAtCapture) {
  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);
  XBase fine;
  fine.a = 5;
  ASSERT_THAT(capturer.Capture(Cls("XBase"), &fine, Guid(1, 1), RecordKind::kObject), IsOk());
  XBad bad;
  ExpectRefused(capturer, chunk, Cls("XBad"), &bad, "wrote before its base");
  Result<Payload> p = DecodePayload(chunk.Finish());
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->records.size(), 1u);
}

// ---- Sections a layer above adds ----

// Section IDs "S000".."S063".
SectionId NumberedSection(int i) {
  return {'S', static_cast<char>('0' + i / 100), static_cast<char>('0' + i / 10 % 10),
          static_cast<char>('0' + i % 10)};
}

TEST_F(FeaturesTest, AddedSectionsEncodedOrListedWriteTheSameRecord) {
  const Bytes small = {1, 2, 3};
  const Bytes large(300, 7);
  const std::vector<Section> listed = {{{'A', 'C', 'T', 'R'}, small},
                                       {{'C', 'O', 'M', 'P'}, large}};
  ByteSink encoded;
  AppendSection(&encoded, {'A', 'C', 'T', 'R'}, small);
  const std::size_t begun = BeginSection(&encoded, {'C', 'O', 'M', 'P'});
  encoded.Raw(large);
  EndSection(&encoded, begun);

  Simple object = MakeSimple(3);
  ChunkWriter by_list;
  Capturer a(&by_list);
  ASSERT_THAT(a.Capture(Cls("Simple"), &object, Guid(1, 1), RecordKind::kActor, &listed), IsOk());
  ChunkWriter by_bytes;
  Capturer b(&by_bytes);
  ASSERT_THAT(b.Capture(Cls("Simple"), &object, Guid(1, 1), RecordKind::kActor,
                        EncodedSections{encoded.view(), 2}),
              IsOk());
  const Bytes payload = by_list.Finish();
  EXPECT_EQ(by_bytes.Finish(), payload);
  Result<Payload> p = DecodePayload(payload);
  ASSERT_THAT(p, IsOk());
  ASSERT_EQ(p->records.size(), 1u);
  ASSERT_NE(p->records[0].Find({'C', 'O', 'M', 'P'}), nullptr);
  EXPECT_EQ(p->records[0].Find({'C', 'O', 'M', 'P'})->bytes, large);
  EXPECT_EQ(p->records[0].Find({'A', 'C', 'T', 'R'})->bytes, small);
}

TEST_F(FeaturesTest, SectionsWrittenInPlaceMatchAppendedOnesAtEverySizeLength) {
  // Sizes at each edge of the size's varint length.
  for (std::size_t size : {0, 1, 127, 128, 129, 16383, 16384, 70000}) {
    Bytes body(size);
    for (std::size_t i = 0; i < size; ++i) body[i] = static_cast<std::uint8_t>(i * 31);
    ByteSink appended;
    appended.U8(9);  // sections may follow other bytes
    AppendSection(&appended, {'T', 'E', 'S', 'T'}, body);
    ByteSink in_place;
    in_place.U8(9);
    const std::size_t begun = BeginSection(&in_place, {'T', 'E', 'S', 'T'});
    EXPECT_EQ(begun, 1u);
    in_place.Raw(body);
    EndSection(&in_place, begun);
    EXPECT_EQ(in_place.ToBytes(), appended.ToBytes()) << size;
    EXPECT_EQ(appended.size(), 1 + 4 + VarintSize(size) + size);
  }
}

TEST_F(FeaturesTest, AddedSectionsNotInTheRecordsFormAreRefusedAndWriteNothing) {
  Simple object = MakeSimple(1);
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  auto refused = [&](const EncodedSections& more) {
    EXPECT_THAT(capturer.Capture(Cls("Simple"), &object, Guid(1, 1), RecordKind::kActor, more),
                StatusIs(StatusCode::kInvalidInput, HasSubstr("sections added to a record")));
    EXPECT_EQ(chunk.record_count(), 0u);
  };
  auto one = [](SectionId id, const Bytes& body = {1}) {
    ByteSink out;
    AppendSection(&out, id, body);
    return out;
  };
  const ByteSink prop = one(kPropSection), inln = one(kOwnedSection), extr = one(kExtraSection);
  refused({prop.view(), 1});
  refused({inln.view(), 1});
  refused({extr.view(), 1});
  ByteSink twice = one({'A', 'C', 'T', 'R'});
  AppendSection(&twice, {'A', 'C', 'T', 'R'}, Bytes{2});
  refused({twice.view(), 2});
  const ByteSink actr = one({'A', 'C', 'T', 'R'}, Bytes(5, 1));
  refused({actr.view(), 2});                                   // fewer than the count
  refused({actr.view(), 0});                                   // bytes after the count's
  refused({actr.view().first(actr.size() - 1), 1});            // cut short
  refused({actr.view().first(3), 1});                          // not even an ID
  // Bytes that are not a section at all (a size past the end), and a size not in its shortest
  // form (a load reads only the writer's form).
  const Bytes junk = {'A', 'C', 'T', 'R', 0xFF, 0xFF, 0xFF, 0x7F};
  refused({junk, 1});
  const Bytes overlong = {'A', 'C', 'T', 'R', 0x81, 0x00, 7};
  refused({overlong, 1});
  // IDs a load refuses: each byte printable ASCII, no space (0x21 to 0x7E); and one at each end.
  for (char bad : {'\x01', ' ', '\x7F'}) {
    const ByteSink unprintable = one({'A', bad, 'C', 'T'});
    refused({unprintable.view(), 1});
  }
  for (char fine : {'!', '~'}) {
    const ByteSink printable = one({'A', fine, 'C', 'T'});
    ChunkWriter other;
    Capturer accepts(&other);
    EXPECT_THAT(accepts.Capture(Cls("Simple"), &object, Guid(1, 1), RecordKind::kActor,
                                EncodedSections{printable.view(), 1}),
                IsOk());
    EXPECT_THAT(DecodePayload(other.Finish()), IsOk());
  }
  EXPECT_THAT(capturer.Capture(Cls("Simple"), &object, Guid(1, 1), RecordKind::kActor,
                               EncodedSections{actr.view(), 1}),
              IsOk());
}

TEST_F(FeaturesTest, AddedSectionsBoundAt61) {
  Simple object = MakeSimple(1);
  for (int n : {61, 62}) {
    std::vector<Section> listed;
    ByteSink encoded;
    for (int i = 0; i < n; ++i) {
      listed.push_back({NumberedSection(i), Bytes{static_cast<std::uint8_t>(i)}});
      AppendSection(&encoded, NumberedSection(i), listed.back().bytes);
    }
    ChunkWriter chunk;
    Capturer capturer(&chunk);
    const EncodedSections more{encoded.view(), static_cast<std::uint32_t>(n)};
    if (n == 61) {
      // With PROP, INLN and EXTR: the record's 64 sections.
      EXPECT_THAT(capturer.Capture(Cls("Simple"), &object, Guid(1, 1), RecordKind::kActor, more),
                  IsOk());
      EXPECT_THAT(
          capturer.Capture(Cls("Simple"), &object, Guid(1, 2), RecordKind::kActor, &listed),
          IsOk());
      Result<Payload> p = DecodePayload(chunk.Finish());
      ASSERT_THAT(p, IsOk());
      EXPECT_EQ(p->records[0].sections.size(), 64u);
    } else {
      EXPECT_THAT(capturer.Capture(Cls("Simple"), &object, Guid(1, 1), RecordKind::kActor, more),
                  StatusIs(StatusCode::kInvalidInput));
      EXPECT_THAT(
          capturer.Capture(Cls("Simple"), &object, Guid(1, 2), RecordKind::kActor, &listed),
          StatusIs(StatusCode::kInvalidInput));
      EXPECT_EQ(chunk.record_count(), 0u);
    }
  }
}

// ---- 6. A damaged record anywhere ----

TEST_F(FeaturesTest, DamagedRecordAnywhereAppliesNothing) {
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  std::vector<Simple> objects;
  for (int i = 0; i < 3; ++i) objects.push_back(MakeSimple(i + 1));
  for (int i = 0; i < 3; ++i) {
    ASSERT_THAT(capturer.Capture(Cls("Simple"), &objects[i], Guid(2, i), RecordKind::kObject),
                IsOk());
  }
  const Bytes bytes = chunk.Finish();
  {
    std::vector<Simple> loaded(3);
    for (Simple& s : loaded) s = Fresh();
    ASSERT_THAT(LoadAll(bytes, Cls("Simple"), {&loaded[0], &loaded[1], &loaded[2]}), IsOk());
    EXPECT_EQ(loaded[2].item->v, 30);
  }
  enum Where { kProp, kInln, kExtr };
  for (int victim = 0; victim < 3; ++victim) {
    for (Where part : {kProp, kInln, kExtr}) {
      Result<Payload> p = DecodePayload(bytes);
      ASSERT_THAT(p, IsOk());
      Record& r = p->records[victim];
      switch (part) {
        case kProp:
          FindSection(r, kPropSection)->bytes[0] = 2;  // Flag, a bool
          break;
        case kInln:
          FindSection(r, kOwnedSection)->bytes[0] = 2;  // two entries for one owned value
          break;
        case kExtr:
          FindSection(r, kExtraSection)->bytes[0] ^= 0xFF;
          break;
      }
      Result<Bytes> edited = EncodePayload(*p);
      ASSERT_THAT(edited, IsOk());
      EXPECT_THAT(DecodePayload(*edited),
                  StatusIs(StatusCode::kDamaged, HasSubstr("record " + std::to_string(victim + 1))))
          << victim << " " << part;
      std::vector<Simple> loaded(3);
      for (Simple& s : loaded) s = Fresh();
      EXPECT_THAT(LoadAll(*edited, Cls("Simple"), {&loaded[0], &loaded[1], &loaded[2]}),
                  StatusIs(StatusCode::kDamaged));
      for (const Simple& s : loaded) EXPECT_TRUE(Untouched(s)) << victim << " " << part;
    }
  }
}

// ---- 5. Bounds ----

TEST_F(FeaturesTest, TextNestingBound) {
  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);
  TextHolder at;
  at.text = Nested(kMaxTextDepth);
  ASSERT_EQ(reflect::TextNestingDepth(at.text), 32);
  ASSERT_THAT(capturer.Capture(Cls("TextHolder"), &at, Guid(1, 1), RecordKind::kObject), IsOk());
  TextHolder past;
  past.text = Nested(kMaxTextDepth + 1);
  ExpectRefused(capturer, chunk, Cls("TextHolder"), &past, "32");
  const Bytes captured = chunk.Finish();

  // Load: forged bytes, checked against the captured ones at the limit.
  TextHolder empty;
  Bytes prop;
  ByteWriter w(&prop);
  WriteText(w, at.text);
  const Bytes forged_at = Forge(Cls("TextHolder"), &empty, prop);
  Result<Payload> a = DecodePayload(forged_at);
  ASSERT_THAT(a, IsOk());
  Result<Payload> c = DecodePayload(captured);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(a->records[0].Find(kPropSection)->bytes, c->records[0].Find(kPropSection)->bytes);
  TextHolder loaded;
  ASSERT_THAT(LoadAll(forged_at, Cls("TextHolder"), {&loaded}), IsOk());
  EXPECT_EQ(loaded.text, at.text);

  prop.clear();
  WriteText(w, past.text);
  EXPECT_THAT(DecodePayload(Forge(Cls("TextHolder"), &empty, prop)),
              StatusIs(StatusCode::kDamaged, HasSubstr("nests past 32")));
}

TEST_F(FeaturesTest, OneFormattedTextDisplayBound) {
  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);
  // display = L + L * display(arg): 1 + 1 * 1,048,575.
  TextHolder at;
  at.text = Formatted(1, FileBudget::kMaxTextDisplayEach - 1);
  ASSERT_THAT(capturer.Capture(Cls("TextHolder"), &at, Guid(1, 1), RecordKind::kObject), IsOk());
  EXPECT_EQ(budget.text_display, FileBudget::kMaxTextDisplayEach);
  // 17 * (1 + 61,680) = 1,048,577.
  TextHolder past;
  past.text = Formatted(17, 61'680);
  ExpectRefused(capturer, chunk, Cls("TextHolder"), &past, "1,048,576 characters");
  TextHolder past2;
  past2.text = Formatted(1, FileBudget::kMaxTextDisplayEach);
  ExpectRefused(capturer, chunk, Cls("TextHolder"), &past2, "1,048,576 characters");
  // Nested: a formatted argument past the bound inside a formatted text.
  TextHolder nested;
  nested.text = Leaf(1);
  nested.text.arguments.push_back(past.text);
  ExpectRefused(capturer, chunk, Cls("TextHolder"), &nested, "1,048,576 characters");

  TextHolder empty;
  for (const TextHolder* t : {&at, &past, &past2, &nested}) {
    Bytes prop;
    ByteWriter w(&prop);
    WriteText(w, t->text);
    Result<Payload> p = DecodePayload(Forge(Cls("TextHolder"), &empty, prop));
    if (t == &at) {
      EXPECT_THAT(p, IsOk());
    } else {
      EXPECT_THAT(p, StatusIs(StatusCode::kDamaged, HasSubstr("1,048,576 characters")));
    }
  }
}

TEST_F(FeaturesTest, FileTextDisplayBoundAcrossRecords) {
  constexpr std::size_t kHalf = FileBudget::kMaxTextDisplay / FileBudget::kMaxTextDisplayEach / 2;
  static_assert(kHalf == 32);
  Texts half;
  for (std::size_t i = 0; i < kHalf; ++i) half.texts.push_back(Formatted(1024, 1023));
  Texts one;
  one.texts.push_back(Formatted(1, 0));  // displays 1
  Texts half_and_one = half;
  half_and_one.texts.push_back(one.texts[0]);

  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Capture(Cls("Texts"), &half, Guid(1, 1), RecordKind::kObject), IsOk());
  EXPECT_EQ(budget.text_display, FileBudget::kMaxTextDisplay / 2);
  ExpectRefused(capturer, chunk, Cls("Texts"), &half_and_one, "67,108,864");
  ASSERT_THAT(capturer.Capture(Cls("Texts"), &half, Guid(1, 2), RecordKind::kObject), IsOk());
  EXPECT_EQ(budget.text_display, FileBudget::kMaxTextDisplay);
  ExpectRefused(capturer, chunk, Cls("Texts"), &one, "67,108,864");
  // Leaf texts display no formatting and are not counted.
  Texts leaf;
  leaf.texts.push_back(Leaf(100));
  ASSERT_THAT(capturer.Capture(Cls("Texts"), &leaf, Guid(1, 3), RecordKind::kObject), IsOk());
  const Bytes both = chunk.Finish();

  FileBudget load;
  ASSERT_THAT(DecodePayload(both, &load), IsOk());
  EXPECT_EQ(load.text_display, FileBudget::kMaxTextDisplay);
  const FileBudget before = load;
  EXPECT_THAT(DecodePayload(Chunk(Cls("Texts"), &one), &load),
              StatusIs(StatusCode::kDamaged, HasSubstr("67,108,864")));
  EXPECT_EQ(load, before);
  // One chunk at half, another at half and one more, against one budget.
  const Bytes halves = Chunk(Cls("Texts"), &half);
  FileBudget two;
  ASSERT_THAT(DecodePayload(halves, &two), IsOk());
  EXPECT_THAT(DecodePayload(Chunk(Cls("Texts"), &half_and_one), &two),
              StatusIs(StatusCode::kDamaged));
  EXPECT_EQ(two.text_display, FileBudget::kMaxTextDisplay / 2);
  // Two records of one payload, each fine alone (a writer without a budget checks each record
  // against a fresh one), forge one past.
  ChunkWriter unbounded;
  Capturer forger(&unbounded);
  ASSERT_THAT(forger.Capture(Cls("Texts"), &half, Guid(1, 1), RecordKind::kObject), IsOk());
  ASSERT_THAT(forger.Capture(Cls("Texts"), &half_and_one, Guid(1, 2), RecordKind::kObject),
              IsOk());
  EXPECT_THAT(DecodePayload(unbounded.Finish()),
              StatusIs(StatusCode::kDamaged, HasSubstr("record 2")));
}

TEST_F(FeaturesTest, OwnedObjectsPerFileBound) {
  constexpr std::size_t kHalf = FileBudget::kMaxOwned / 2;
  Items half, over;
  for (std::size_t i = 0; i < kHalf; ++i) {
    half.items.push_back(std::make_unique<Item>());
    over.items.push_back(std::make_unique<Item>());
  }
  over.items.push_back(std::make_unique<Item>());

  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Capture(Cls("Items"), &half, Guid(1, 1), RecordKind::kObject), IsOk());
  EXPECT_EQ(budget.owned, kHalf);
  ExpectRefused(capturer, chunk, Cls("Items"), &over, "262,144");
  ASSERT_THAT(capturer.Capture(Cls("Items"), &half, Guid(1, 2), RecordKind::kObject), IsOk());
  EXPECT_EQ(budget.owned, FileBudget::kMaxOwned);
  const Bytes full = chunk.Finish();

  FileBudget load;
  ASSERT_THAT(DecodePayload(full, &load), IsOk());
  EXPECT_EQ(load.owned, FileBudget::kMaxOwned);
  // One past: two chunks, each fine on its own, against one budget.
  const Bytes half_bytes = Chunk(Cls("Items"), &half);
  const Bytes over_bytes = Chunk(Cls("Items"), &over);
  FileBudget two;
  ASSERT_THAT(DecodePayload(half_bytes, &two), IsOk());
  const FileBudget before = two;
  EXPECT_THAT(DecodePayload(over_bytes, &two),
              StatusIs(StatusCode::kDamaged, HasSubstr("262,144")));
  EXPECT_EQ(two, before);
  ASSERT_THAT(DecodePayload(half_bytes, &two), IsOk());
  EXPECT_EQ(two.owned, FileBudget::kMaxOwned);
  // Two records of one payload, each fine alone, forge one past.
  ChunkWriter unbounded;
  Capturer forger(&unbounded);
  ASSERT_THAT(forger.Capture(Cls("Items"), &half, Guid(1, 1), RecordKind::kObject), IsOk());
  ASSERT_THAT(forger.Capture(Cls("Items"), &over, Guid(1, 2), RecordKind::kObject), IsOk());
  const Bytes forged = unbounded.Finish();
  EXPECT_THAT(DecodePayload(forged), StatusIs(StatusCode::kDamaged, HasSubstr("record 2 INLN")));
  // Checked in two halves of a record each, on two threads: each half is within the bound alone
  // and only their sum is past it. The split check says what the check in order says.
  const Result<CheckedPayload> in_order = CheckedPayload::Check(forged);
  ASSERT_FALSE(in_order.ok());
  std::vector<std::thread> helpers;
  const CheckedPayload::Post post = [&helpers](std::function<void()> task) {
    helpers.emplace_back(std::move(task));
  };
  FileBudget split_budget;
  const Result<CheckedPayload> split = CheckedPayload::Check(forged, &split_budget, {}, post, 0);
  for (std::thread& t : helpers) t.join();
  EXPECT_EQ(helpers.size(), 1u);
  EXPECT_EQ(split.status(), in_order.status());
  EXPECT_EQ(split_budget, FileBudget{});
}

Node Chain(int n) {
  Node root;
  Node* at = &root;
  for (int i = 0; i < n; ++i) {
    at->child = std::make_unique<Node>();
    at = at->child.get();
  }
  return root;
}

// INLN of a chain of `n` nodes owned one by the next, layout `layout`.
Bytes ChainInln(std::uint32_t layout, int n) {
  Bytes out;
  ByteWriter w(&out);
  w.Varint(n);
  for (int i = 0; i < n; ++i) {
    w.Varint(layout);
    w.LengthPrefixed(Bytes{static_cast<std::uint8_t>(i + 1 < n ? 1 : 0)});
    w.LengthPrefixed(Bytes{});
  }
  return out;
}

TEST_F(FeaturesTest, OwnedNestingBound) {
  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);
  Node at = Chain(kMaxValueDepth);
  ASSERT_THAT(capturer.Capture(Cls("Node"), &at, Guid(1, 1), RecordKind::kObject), IsOk());
  Node past = Chain(kMaxValueDepth + 1);
  ExpectRefused(capturer, chunk, Cls("Node"), &past, "nest past 64");
  Result<Payload> c = DecodePayload(chunk.Finish());
  ASSERT_THAT(c, IsOk());
  const std::uint32_t layout = c->records[0].layout;
  ASSERT_NE(c->records[0].Find(kOwnedSection), nullptr);
  EXPECT_EQ(c->records[0].Find(kOwnedSection)->bytes, ChainInln(layout, kMaxValueDepth));

  Node empty;
  const Bytes forged_at = Forge(Cls("Node"), &empty, Bytes{1}, ChainInln(layout, kMaxValueDepth));
  Node loaded;
  ASSERT_THAT(LoadAll(forged_at, Cls("Node"), {&loaded}), IsOk());
  int depth = 0;
  for (const Node* n = loaded.child.get(); n != nullptr; n = n->child.get()) ++depth;
  EXPECT_EQ(depth, kMaxValueDepth);
  EXPECT_THAT(
      DecodePayload(Forge(Cls("Node"), &empty, Bytes{1}, ChainInln(layout, kMaxValueDepth + 1))),
      StatusIs(StatusCode::kDamaged, HasSubstr("nest past 64")));
}

TEST_F(FeaturesTest, PropertiesPerBagBound) {
  BagHolder at;
  for (std::size_t i = 0; i < kMaxBagProperties; ++i) {
    AddProperty<std::int32_t>(at.bag, "P" + std::to_string(i), t_int32_,
                              static_cast<std::int32_t>(i));
  }
  EXPECT_THAT(at.bag.Add(Name("One more"), t_int32_), StatusIs(StatusCode::kInvalidData));
  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Capture(Cls("BagHolder"), &at, Guid(1, 1), RecordKind::kObject), IsOk());
  BagHolder loaded;
  ASSERT_THAT(LoadAll(chunk.Finish(), Cls("BagHolder"), {&loaded}), IsOk());
  ASSERT_EQ(loaded.bag.size(), kMaxBagProperties);
  EXPECT_EQ(*static_cast<const std::int32_t*>(loaded.bag.value(1023)), 1023);

  // Load: a bag layout of n properties, forged.
  auto forge = [&](std::size_t n) {
    Payload p;
    Result<std::uint32_t> layout = p.tables.AddLayout(Cls("BagHolder"));
    EXPECT_THAT(layout, IsOk());
    const std::uint32_t int32 = p.tables.AddType({SavedKind::kInt32});
    BagLayout bag;
    for (std::size_t i = 0; i < n; ++i) {
      bag.fields.push_back({p.tables.AddName(Name("Q" + std::to_string(i))).value(), int32});
    }
    EXPECT_THAT(p.tables.AddSavedBagLayout(bag), IsOk());
    Record r;
    r.layout = *layout;
    Bytes prop;
    ByteWriter w(&prop);
    w.Varint(0);
    for (std::size_t i = 0; i < n; ++i) w.SignedVarint(static_cast<std::int64_t>(i));
    r.sections.push_back({kPropSection, prop});
    p.records.push_back(r);
    return EncodePayload(p).value();
  };
  BagHolder forged;
  ASSERT_THAT(LoadAll(forge(kMaxBagProperties), Cls("BagHolder"), {&forged}), IsOk());
  EXPECT_EQ(forged.bag.size(), kMaxBagProperties);
  EXPECT_THAT(DecodePayload(forge(kMaxBagProperties + 1)), StatusIs(StatusCode::kDamaged));
}

Bags MakeBags(std::size_t n, const std::string& prefix, const reflect::Type* int32) {
  Bags b;
  b.bags.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_THAT(b.bags[i].Add(Name(prefix + std::to_string(i)), int32), IsOk());
  }
  return b;
}

TEST_F(FeaturesTest, BagLayoutsPerFileBound) {
  constexpr std::size_t kHalf = FileBudget::kMaxBagLayouts / 2;
  Bags a = MakeBags(kHalf, "A", t_int32_);
  Bags b = MakeBags(kHalf, "B", t_int32_);
  Bags c = MakeBags(1, "C", t_int32_);
  Bags b_and_c = MakeBags(kHalf + 1, "B", t_int32_);

  // Capture: two chunks of one file against one budget.
  FileBudget budget;
  ChunkWriter first(&budget), second(&budget);
  Capturer one(&first), two(&second);
  ASSERT_THAT(one.Capture(Cls("Bags"), &a, Guid(1, 1), RecordKind::kObject), IsOk());
  EXPECT_EQ(budget.bag_layouts, kHalf);
  ExpectRefused(two, second, Cls("Bags"), &b_and_c, "4,096");
  ASSERT_THAT(two.Capture(Cls("Bags"), &b, Guid(1, 2), RecordKind::kObject), IsOk());
  EXPECT_EQ(budget.bag_layouts, FileBudget::kMaxBagLayouts);
  ExpectRefused(two, second, Cls("Bags"), &c, "4,096");
  const Bytes first_bytes = first.Finish();
  const Bytes second_bytes = second.Finish();

  FileBudget load;
  ASSERT_THAT(DecodePayload(first_bytes, &load), IsOk());
  ASSERT_THAT(DecodePayload(second_bytes, &load), IsOk());
  EXPECT_EQ(load.bag_layouts, FileBudget::kMaxBagLayouts);
  FileBudget past;
  ASSERT_THAT(DecodePayload(first_bytes, &past), IsOk());
  const FileBudget before = past;
  EXPECT_THAT(DecodePayload(Chunk(Cls("Bags"), &b_and_c), &past),
              StatusIs(StatusCode::kDamaged, HasSubstr("4,096")));
  EXPECT_EQ(past, before);
}

// Walker::TypeSize: a vector 24, a text 120, a uint8 1; Blob's own size is its two vectors.
constexpr std::uint64_t kBlobSize = 48;
constexpr std::uint64_t kTextSize = 120;
constexpr std::size_t kBlobTexts = 2'236'961;
constexpr std::size_t kBlobBytes = 88;
static_assert(kBlobSize + kTextSize * kBlobTexts + kBlobBytes == FileBudget::kMaxBagBytes);

TEST_F(FeaturesTest, BagBytesPerFileBound) {
  BlobHolder at;
  at.inst = Instanced(Blob{});
  at.inst.Get<Blob>()->texts.resize(kBlobTexts);
  at.inst.Get<Blob>()->bytes.resize(kBlobBytes);
  BlobHolder byte;
  byte.inst = Instanced(Byte{7});  // 1 byte

  FileBudget budget;
  ChunkWriter chunk(&budget);
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Capture(Cls("BlobHolder"), &at, Guid(1, 1), RecordKind::kObject), IsOk());
  EXPECT_EQ(budget.bag_bytes, FileBudget::kMaxBagBytes);
  ExpectRefused(capturer, chunk, Cls("BlobHolder"), &byte, "256 MiB");
  const Bytes full = chunk.Finish();
  {
    // One record one byte past.
    FileBudget fresh;
    ChunkWriter single(&fresh);
    Capturer c(&single);
    at.inst.Get<Blob>()->bytes.push_back(0);
    ExpectRefused(c, single, Cls("BlobHolder"), &at, "256 MiB");
    at.inst.Get<Blob>()->bytes.pop_back();
  }

  FileBudget load;
  Result<Payload> p = DecodePayload(full, &load);
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(load.bag_bytes, FileBudget::kMaxBagBytes);
  const FileBudget before = load;
  EXPECT_THAT(DecodePayload(Chunk(Cls("BlobHolder"), &byte), &load),
              StatusIs(StatusCode::kDamaged, HasSubstr("256 MiB")));
  EXPECT_EQ(load, before);
  // One record one byte past: one more element in Bytes, the last field of PROP.
  Section* prop = FindSection(p->records[0], kPropSection);
  ASSERT_EQ(prop->bytes[prop->bytes.size() - kBlobBytes - 1], kBlobBytes);
  prop->bytes[prop->bytes.size() - kBlobBytes - 1] = kBlobBytes + 1;
  prop->bytes.push_back(0);
  Result<Bytes> edited = EncodePayload(*p);
  ASSERT_THAT(edited, IsOk());
  EXPECT_THAT(DecodePayload(*edited), StatusIs(StatusCode::kDamaged, HasSubstr("256 MiB")));
}

}  // namespace
}  // namespace rolly::record
