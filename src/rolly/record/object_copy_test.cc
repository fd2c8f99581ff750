// Tests of captures in two halves (capture.h: ObjectCopies, Capturer::Copy, Capturer::CaptureCopy):
// which classes are copied; that the record written from a copy is, byte for byte, the record
// Capture writes of the object at copy time, alone and among other records sharing the chunk's
// tables; that each half refuses what Capture refuses, with Capture's status, keeping nothing of
// the refused object (the chunk as it was, the copies still in order); hooks; copies spread over
// blocks let go of as their records are written; and applying a copy's record back.
//
// Each test makes its own registry. Single-threaded, except one test that writes records from
// copies on a second thread (handed over by starting and joining it).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
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
#include "rolly/reflect/property_bag.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"

namespace rolly::record {
namespace {

using reflect::ClassInfo;
using reflect::kEditorOnly;
using reflect::kSaveGame;
using reflect::kTransient;
using reflect::TypeRegistry;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---- Types ----

enum class Mood : std::uint16_t { kCalm = 0, kAngry = 5, kSleepy = 9 };
enum class Tier : std::int8_t { kLow = -1, kHigh = 1 };

// Every fixed-form kind, a name and two enums.
class Fixed {
 public:
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
  Guid g;
  reflect::Color color;
  reflect::DateTime when;
  reflect::Vector2f v2f;
  reflect::Vector2d v2d;
  reflect::Vector3f v3f;
  reflect::Vector3d v3d;
  reflect::Vector4f v4f;
  reflect::Vector4d v4d;
  reflect::Quatf qf;
  reflect::Quatd qd;
  reflect::Rotatorf rf;
  reflect::Rotatord rd;
  reflect::Transformf tf;
  reflect::Transformd td;
  Name n;
  Mood mood = Mood::kCalm;
  Tier tier = Tier::kLow;
  std::int32_t scratch = 0;  // not registered
  friend bool operator==(const Fixed&, const Fixed&) = default;
};

// Strings and soft paths, empty, short (held in the string itself) and long (on the heap).
class Strings {
 public:
  std::string empty;
  std::string small;
  std::string large;
  std::int32_t between = 0;
  reflect::SoftPath path_empty;
  reflect::SoftPath path_small;
  reflect::SoftPath path_large;
  friend bool operator==(const Strings&, const Strings&) = default;
};

struct Entry {
  Name name;
  std::int32_t count = 0;
  float weight = 0;
  friend bool operator==(const Entry&, const Entry&) = default;
};

// A struct holding a string, a vector, a struct and an array of enums.
struct Bundle {
  std::string label;
  std::vector<std::int32_t> ids;
  Entry head;
  std::array<Mood, 2> moods{};
  friend bool operator==(const Bundle&, const Bundle&) = default;
};

struct alignas(16) Packet {
  float x = 0, y = 0, z = 0, w = 0;
};

struct Cell {
  std::array<std::int16_t, 3> v{};
  Guid id;
  Tier tier = Tier::kLow;
  friend bool operator==(const Cell&, const Cell&) = default;
};

// Vectors and arrays of every element kind a copy takes.
class Lists {
 public:
  std::vector<Entry> none;
  std::vector<Entry> one;
  std::vector<Entry> many;
  std::array<Entry, 3> fixed{};
  Bundle bundle;
  std::vector<Mood> moods;
  std::vector<Name> names;
  std::vector<reflect::Transformd> xforms;
  std::vector<Cell> cells;
  std::vector<std::uint8_t> bytes;
  std::array<bool, 3> flags{};
  friend bool operator==(const Lists&, const Lists&) = default;
};

class Target {
 public:
  std::int32_t id = 0;
};

struct RefBox {
  Target* target = nullptr;
  std::string why;
};

class Linked {
 public:
  std::int32_t id = 0;
  Target* none = nullptr;
  Target* same = nullptr;     // saved in the same chunk: its record index
  Target* other = nullptr;    // saved in another chunk: its subject ID
  Target* unsaved = nullptr;  // Locate says not saved: null
  RefBox box;                 // a reference in a struct
};

// Base fields first in the plan; a polymorphic class (its vtable pointer before the fields).
class Base {
 public:
  virtual ~Base() = default;
  std::int32_t base_value = 0;
  std::string base_name;
  friend bool operator==(const Base&, const Base&) = default;
};

class Derived : public Base {
 public:
  std::vector<Entry> entries;
  Name tag;
  friend bool operator==(const Derived&, const Derived&) = default;
};

// Saved fields after a large member that is not saved: the image starts past it.
class Sparse {
 public:
  std::array<std::uint8_t, 100000> scratch{};
  std::int32_t a = 0;
  std::string s;
  std::vector<std::int64_t> v;
};

// Saved fields 70,000 bytes apart: more than a copy's image holds.
class Wide {
 public:
  std::int32_t first = 0;
  std::array<std::uint8_t, 70000> gap{};
  std::int32_t last = 0;
};

// Saved fields spanning exactly 65,536 bytes, and one byte more.
class Exact64K {
 public:
  std::array<std::uint8_t, 65536> bytes{};
};
class Past64K {
 public:
  std::array<std::uint8_t, 65537> bytes{};
};

// No saved field.
class Empty {
 public:
  std::int32_t transient = 0;
};

// Kinds a copy refuses, but neither saved: the class is copied.
class Unsaved {
 public:
  std::int32_t v = 0;
  std::map<std::int32_t, std::int32_t> cache;
  reflect::Text label;
};

// Structs nested N deep, a string at the bottom.
template <int N>
struct Deep {
  Deep<N - 1> inner;
};
template <>
struct Deep<0> {
  std::int32_t v = 0;
  std::string s;
};
template <int N>
class DeepHolder {
 public:
  Deep<N> deep;
  std::int32_t tail = 0;
};

// Vectors up to the bound of elements in a record.
class Blob {
 public:
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> more;
};
// An array counts its elements too.
class ArrayBlob {
 public:
  std::array<std::int32_t, 4> quad{};
  std::vector<std::uint8_t> bytes;
};

// Hooks.
class Hooked {
 public:
  std::int32_t v = 0;
  std::string note;
  int pre_calls = 0;
  int saved_calls = 0;
  void Pre() { v = 100 + ++pre_calls; }
  void Saved() { ++saved_calls; }
};
class PreOnly {
 public:
  std::int32_t v = 0;
  void Pre() { v = 5; }
};

// Classes a copy refuses.
class WithText {
 public:
  reflect::Text text;
};
class WithMap {
 public:
  std::map<std::int32_t, std::int32_t> map;
};
class WithSet {
 public:
  std::set<std::int32_t> set;
};
class WithOptional {
 public:
  std::optional<std::int32_t> maybe;
};
class WithOwned {
 public:
  std::unique_ptr<Target> owned;
};
class WithInstanced {
 public:
  reflect::InstancedStruct inst;
};
class WithBag {
 public:
  reflect::PropertyBag bag;
};
class WithExtra {
 public:
  std::int32_t v = 0;
  std::int64_t extra = 0;
  void WriteExtra(reflect::ExtraWriter& w) const { w.WriteInt(extra); }
  void ReadExtra(reflect::ExtraReader& r) { r.ReadInt(&extra); }
};
class ExtraChild : public WithExtra {  // the hook is its base's
 public:
  std::int32_t w = 0;
};
class WithStrings {
 public:
  std::vector<std::string> strings;
};
class WithVectors {
 public:
  std::vector<std::vector<std::int32_t>> vectors;
};
class WithRefs {
 public:
  std::vector<Target*> refs;
};
class WithStringArray {
 public:
  std::array<std::string, 2> strings;
};
struct Named {
  std::string name;
};
class WithNamedVector {  // a string inside vector elements
 public:
  std::vector<Named> items;
};
struct Boxed {
  std::vector<std::int32_t> v;
};
class WithBoxedVector {  // a vector inside vector elements
 public:
  std::vector<Boxed> items;
};
class WithPacket {  // a struct aligned past 8 bytes
 public:
  std::int32_t v = 0;
  Packet packet;
};
class WithPackets {
 public:
  std::vector<Packet> packets;
};
struct alignas(32) Wide32 {
  float x = 0;
};
class WithWide32 {
 public:
  Wide32 w;
};
struct MaybeBox {
  std::optional<std::int32_t> maybe;
};
class WithNestedOptional {  // a refused kind inside a struct
 public:
  MaybeBox box;
};

template <int N>
void RegisterDeep(TypeRegistry& r) {
  if constexpr (N == 0) {
    r.Struct<Deep<0>>("Deep0")
        .Field("V", &Deep<0>::v, kSaveGame)
        .Field("S", &Deep<0>::s, kSaveGame);
  } else {
    RegisterDeep<N - 1>(r);
    r.Struct<Deep<N>>("Deep" + std::to_string(N)).Field("Inner", &Deep<N>::inner, kSaveGame);
  }
}
template <int N>
void RegisterDeepHolder(TypeRegistry& r) {
  r.Class<DeepHolder<N>>("DeepHolder" + std::to_string(N))
      .Field("Deep", &DeepHolder<N>::deep, kSaveGame)
      .Field("Tail", &DeepHolder<N>::tail, kSaveGame);
}

void Register(TypeRegistry& r) {
  r.Enum<Mood>("Mood")
      .Value("Calm", Mood::kCalm)
      .Value("Angry", Mood::kAngry)
      .Value("Sleepy", Mood::kSleepy);
  r.Enum<Tier>("Tier").Value("Low", Tier::kLow).Value("High", Tier::kHigh);
  r.Class<Fixed>("Fixed")
      .Field("B", &Fixed::b, kSaveGame)
      .Field("I8", &Fixed::i8, kSaveGame)
      .Field("I16", &Fixed::i16, kSaveGame)
      .Field("I32", &Fixed::i32, kSaveGame)
      .Field("I64", &Fixed::i64, kSaveGame)
      .Field("U8", &Fixed::u8, kSaveGame)
      .Field("U16", &Fixed::u16, kSaveGame)
      .Field("U32", &Fixed::u32, kSaveGame)
      .Field("U64", &Fixed::u64, kSaveGame)
      .Field("F", &Fixed::f, kSaveGame)
      .Field("D", &Fixed::d, kSaveGame)
      .Field("G", &Fixed::g, kSaveGame)
      .Field("Color", &Fixed::color, kSaveGame)
      .Field("When", &Fixed::when, kSaveGame)
      .Field("V2f", &Fixed::v2f, kSaveGame)
      .Field("V2d", &Fixed::v2d, kSaveGame)
      .Field("V3f", &Fixed::v3f, kSaveGame)
      .Field("V3d", &Fixed::v3d, kSaveGame)
      .Field("V4f", &Fixed::v4f, kSaveGame)
      .Field("V4d", &Fixed::v4d, kSaveGame)
      .Field("Qf", &Fixed::qf, kSaveGame)
      .Field("Qd", &Fixed::qd, kSaveGame)
      .Field("Rf", &Fixed::rf, kSaveGame)
      .Field("Rd", &Fixed::rd, kSaveGame)
      .Field("Tf", &Fixed::tf, kSaveGame)
      .Field("Td", &Fixed::td, kSaveGame)
      .Field("N", &Fixed::n, kSaveGame)
      .Field("Mood", &Fixed::mood, kSaveGame)
      .Field("Tier", &Fixed::tier, kSaveGame);
  r.Class<Strings>("Strings")
      .Field("Empty", &Strings::empty, kSaveGame)
      .Field("Small", &Strings::small, kSaveGame)
      .Field("Large", &Strings::large, kSaveGame)
      .Field("Between", &Strings::between, kSaveGame)
      .Field("PathEmpty", &Strings::path_empty, kSaveGame)
      .Field("PathSmall", &Strings::path_small, kSaveGame)
      .Field("PathLarge", &Strings::path_large, kSaveGame);
  r.Struct<Entry>("Entry")
      .Field("Name", &Entry::name, kSaveGame)
      .Field("Count", &Entry::count, kSaveGame)
      .Field("Weight", &Entry::weight, kSaveGame);
  r.Struct<Bundle>("Bundle")
      .Field("Label", &Bundle::label, kSaveGame)
      .Field("Ids", &Bundle::ids, kSaveGame)
      .Field("Head", &Bundle::head, kSaveGame)
      .Field("Moods", &Bundle::moods, kSaveGame);
  r.Struct<Packet>("Packet")
      .Field("X", &Packet::x, kSaveGame)
      .Field("Y", &Packet::y, kSaveGame)
      .Field("Z", &Packet::z, kSaveGame)
      .Field("W", &Packet::w, kSaveGame);
  r.Struct<Cell>("Cell")
      .Field("V", &Cell::v, kSaveGame)
      .Field("Id", &Cell::id, kSaveGame)
      .Field("Tier", &Cell::tier, kSaveGame);
  r.Class<Lists>("Lists")
      .Field("None", &Lists::none, kSaveGame)
      .Field("One", &Lists::one, kSaveGame)
      .Field("Many", &Lists::many, kSaveGame)
      .Field("Fixed", &Lists::fixed, kSaveGame)
      .Field("Bundle", &Lists::bundle, kSaveGame)
      .Field("Moods", &Lists::moods, kSaveGame)
      .Field("Names", &Lists::names, kSaveGame)
      .Field("Xforms", &Lists::xforms, kSaveGame)
      .Field("Cells", &Lists::cells, kSaveGame)
      .Field("Bytes", &Lists::bytes, kSaveGame)
      .Field("Flags", &Lists::flags, kSaveGame);
  r.Class<Target>("Target").Field("Id", &Target::id, kSaveGame);
  r.Struct<RefBox>("RefBox")
      .Field("Target", &RefBox::target, kSaveGame)
      .Field("Why", &RefBox::why, kSaveGame);
  r.Class<Linked>("Linked")
      .Field("Id", &Linked::id, kSaveGame)
      .Field("None", &Linked::none, kSaveGame)
      .Field("Same", &Linked::same, kSaveGame)
      .Field("Other", &Linked::other, kSaveGame)
      .Field("Unsaved", &Linked::unsaved, kSaveGame)
      .Field("Box", &Linked::box, kSaveGame);
  r.Class<Base>("Base")
      .Field("BaseValue", &Base::base_value, kSaveGame)
      .Field("BaseName", &Base::base_name, kSaveGame);
  r.Class<Derived>("Derived")
      .Base<Base>()
      .Field("Entries", &Derived::entries, kSaveGame)
      .Field("Tag", &Derived::tag, kSaveGame);
  r.Class<Sparse>("Sparse")
      .Field("Scratch", &Sparse::scratch, kTransient)
      .Field("A", &Sparse::a, kSaveGame)
      .Field("S", &Sparse::s, kSaveGame)
      .Field("V", &Sparse::v, kSaveGame);
  r.Class<Wide>("Wide")
      .Field("First", &Wide::first, kSaveGame)
      .Field("Last", &Wide::last, kSaveGame);
  r.Class<Exact64K>("Exact64K").Field("Bytes", &Exact64K::bytes, kSaveGame);
  r.Class<Past64K>("Past64K").Field("Bytes", &Past64K::bytes, kSaveGame);
  r.Class<Empty>("Empty").Field("Transient", &Empty::transient, kTransient);
  r.Class<Unsaved>("Unsaved")
      .Field("V", &Unsaved::v, kSaveGame)
      .Field("Cache", &Unsaved::cache, kTransient)
      .Field("Label", &Unsaved::label, kEditorOnly);
  RegisterDeep<40>(r);
  RegisterDeepHolder<20>(r);
  RegisterDeepHolder<30>(r);
  RegisterDeepHolder<31>(r);
  RegisterDeepHolder<40>(r);
  r.Class<Blob>("Blob")
      .Field("Bytes", &Blob::bytes, kSaveGame)
      .Field("More", &Blob::more, kSaveGame);
  r.Class<ArrayBlob>("ArrayBlob")
      .Field("Quad", &ArrayBlob::quad, kSaveGame)
      .Field("Bytes", &ArrayBlob::bytes, kSaveGame);
  r.Class<Hooked>("Hooked")
      .Field("V", &Hooked::v, kSaveGame)
      .Field("Note", &Hooked::note, kSaveGame)
      .OnPreSave(&Hooked::Pre)
      .OnSaved(&Hooked::Saved);
  r.Class<PreOnly>("PreOnly").Field("V", &PreOnly::v, kSaveGame).OnPreSave(&PreOnly::Pre);
  r.Class<WithText>("WithText").Field("Text", &WithText::text, kSaveGame);
  r.Class<WithMap>("WithMap").Field("Map", &WithMap::map, kSaveGame);
  r.Class<WithSet>("WithSet").Field("Set", &WithSet::set, kSaveGame);
  r.Class<WithOptional>("WithOptional").Field("Maybe", &WithOptional::maybe, kSaveGame);
  r.Class<WithOwned>("WithOwned").Field("Owned", &WithOwned::owned, kSaveGame);
  r.Class<WithInstanced>("WithInstanced").Field("Inst", &WithInstanced::inst, kSaveGame);
  r.Class<WithBag>("WithBag").Field("Bag", &WithBag::bag, kSaveGame);
  r.Class<WithExtra>("WithExtra")
      .Field("V", &WithExtra::v, kSaveGame)
      .SaveExtra(&WithExtra::WriteExtra, &WithExtra::ReadExtra);
  r.Class<ExtraChild>("ExtraChild").Base<WithExtra>().Field("W", &ExtraChild::w, kSaveGame);
  r.Class<WithStrings>("WithStrings").Field("Strings", &WithStrings::strings, kSaveGame);
  r.Class<WithVectors>("WithVectors").Field("Vectors", &WithVectors::vectors, kSaveGame);
  r.Class<WithRefs>("WithRefs").Field("Refs", &WithRefs::refs, kSaveGame);
  r.Class<WithStringArray>("WithStringArray")
      .Field("Strings", &WithStringArray::strings, kSaveGame);
  r.Struct<Named>("Named").Field("Name", &Named::name, kSaveGame);
  r.Class<WithNamedVector>("WithNamedVector").Field("Items", &WithNamedVector::items, kSaveGame);
  r.Struct<Boxed>("Boxed").Field("V", &Boxed::v, kSaveGame);
  r.Class<WithBoxedVector>("WithBoxedVector").Field("Items", &WithBoxedVector::items, kSaveGame);
  r.Struct<Wide32>("Wide32").Field("X", &Wide32::x, kSaveGame);
  r.Class<WithWide32>("WithWide32").Field("W", &WithWide32::w, kSaveGame);
  r.Class<WithPacket>("WithPacket")
      .Field("V", &WithPacket::v, kSaveGame)
      .Field("Packet", &WithPacket::packet, kSaveGame);
  r.Class<WithPackets>("WithPackets").Field("Packets", &WithPackets::packets, kSaveGame);
  r.Struct<MaybeBox>("MaybeBox").Field("Maybe", &MaybeBox::maybe, kSaveGame);
  r.Class<WithNestedOptional>("WithNestedOptional")
      .Field("Box", &WithNestedOptional::box, kSaveGame);
}

// ---- Values ----

Fixed MakeFixed(int seed) {
  Fixed f;
  f.b = seed % 2 == 0;
  f.i8 = static_cast<std::int8_t>(-100 + seed);
  f.i16 = static_cast<std::int16_t>(-3000 * seed);
  f.i32 = -70000 * seed;
  f.i64 = -5000000000LL * seed;
  f.u8 = static_cast<std::uint8_t>(200 + seed);
  f.u16 = static_cast<std::uint16_t>(60000 + seed);
  f.u32 = 4000000000u + static_cast<std::uint32_t>(seed);
  f.u64 = 0xF000000000000000ull + static_cast<std::uint64_t>(seed);
  f.f = -1.5f * static_cast<float>(seed);
  f.d = 3.25e300 / (seed + 1);
  f.g = Guid(0x0123456789ABCDEFull + static_cast<std::uint64_t>(seed), 0xFEDCBA9876543210ull);
  f.color = {0.1f, 0.2f, 0.3f, 0.4f * static_cast<float>(seed)};
  f.when = {638000000000000000 + seed};
  f.v2f = {1, 2.5f};
  f.v2d = {3, -4};
  f.v3f = {5, 6, 7.25f};
  f.v3d = {8, 9, 10};
  f.v4f = {1, 2, 3, 4};
  f.v4d = {5, 6, 7, 8};
  f.qf = {0, 0, 0.7f, 0.7f};
  f.qd = {0.5, 0.5, 0.5, 0.5};
  f.rf = {10, 20, 30};
  f.rd = {-10, -20, -30};
  f.tf.translation = {1, 2, 3};
  f.td.scale = {2, 2, static_cast<double>(seed)};
  f.n = Name(seed % 3 == 0 ? std::string("Shared") : "Door_" + std::to_string(seed));
  f.mood = seed % 2 == 0 ? Mood::kSleepy : Mood::kAngry;
  f.tier = seed % 2 == 0 ? Tier::kHigh : Tier::kLow;
  f.scratch = 1234;
  return f;
}

Fixed ExtremeFixed() {
  Fixed f;
  f.b = true;
  f.i8 = std::numeric_limits<std::int8_t>::min();
  f.i16 = std::numeric_limits<std::int16_t>::min();
  f.i32 = std::numeric_limits<std::int32_t>::min();
  f.i64 = std::numeric_limits<std::int64_t>::min();
  f.u8 = std::numeric_limits<std::uint8_t>::max();
  f.u16 = std::numeric_limits<std::uint16_t>::max();
  f.u32 = std::numeric_limits<std::uint32_t>::max();
  f.u64 = std::numeric_limits<std::uint64_t>::max();
  f.f = std::numeric_limits<float>::lowest();
  f.d = std::numeric_limits<double>::max();
  f.g = Guid(~std::uint64_t{0}, ~std::uint64_t{0});
  f.when = {std::numeric_limits<std::int64_t>::max()};
  f.n = Name(std::string(1024, 'n'));  // the longest name saved
  f.mood = Mood::kSleepy;
  f.tier = Tier::kHigh;
  return f;
}

Strings MakeStrings(std::string small, std::string large) {
  Strings s;
  s.small = std::move(small);
  s.large = std::move(large);
  s.between = -7;
  s.path_small = {"/G/x"};
  s.path_large = {"/Game/Maps/Level1/Some/Long/Path.Asset_C"};
  return s;
}

Entry MakeEntry(int i) {
  return {Name(i % 5 == 0 ? std::string("Entry") : "Entry_" + std::to_string(i % 7)), i * 3 - 10,
          0.25f * static_cast<float>(i)};
}

Lists MakeLists(int many) {
  Lists l;
  l.one = {MakeEntry(1)};
  for (int i = 0; i < many; ++i) l.many.push_back(MakeEntry(i));
  l.fixed = {MakeEntry(2), Entry{}, MakeEntry(3)};
  l.bundle.label = "a bundle's label, longer than the short-string buffer";
  l.bundle.ids = {1, -2, 300000};
  l.bundle.head = MakeEntry(4);
  l.bundle.moods = {Mood::kAngry, Mood::kSleepy};
  l.moods = {Mood::kCalm, Mood::kSleepy, Mood::kAngry};
  l.names = {Name("A"), Name(), Name("B"), Name("A")};
  l.xforms.resize(2);
  l.xforms[1].translation = {1, 2, 3};
  l.cells = {{{1, -2, 3}, Guid(1, 2), Tier::kHigh}, {{}, Guid(), Tier::kLow}};
  l.bytes = {0, 1, 127, 128, 255};
  l.flags = {true, false, true};
  return l;
}

Derived MakeDerived(int seed) {
  Derived d;
  d.base_value = seed;
  d.base_name = "base name number " + std::to_string(seed) + ", on the heap";
  for (int i = 0; i < seed; ++i) d.entries.push_back(MakeEntry(i));
  d.tag = Name("Tag" + std::to_string(seed % 2));
  return d;
}

// ---- Helpers ----

constexpr Guid kT1(0xA, 1), kT2(0xA, 2), kT4(0xA, 4), kT5(0xA, 5);

// One object to capture: its class, the object, its subject and kind.
struct Subject {
  const ClassInfo* cls = nullptr;
  void* object = nullptr;
  Guid id;
  RecordKind kind = RecordKind::kObject;
};

// Whether two payloads are the same bytes; otherwise their sizes and where they first differ.
::testing::AssertionResult SameBytes(const Bytes& capture, const Bytes& copy) {
  if (capture == copy) return ::testing::AssertionSuccess();
  std::size_t i = 0;
  while (i < capture.size() && i < copy.size() && capture[i] == copy[i]) ++i;
  return ::testing::AssertionFailure()
         << "payloads of " << capture.size() << " bytes (Capture) and " << copy.size()
         << " bytes (Copy, CaptureCopy) first differ at byte " << i;
}

class ObjectCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Register(registry_);
    ASSERT_THAT(registry_.Finish(), IsOk());
    t1_.id = 1;
    t2_.id = 2;
    t3_.id = 3;
    t4_.id = 4;
    t5_.id = 5;
    links_.Save(&t1_, {kT1, 1});  // record 1 of the chunk
    links_.Save(&t2_, {kT2, 0});  // another chunk
    links_.Save(&t4_, {kT4, 0});  // another chunk
    links_.Save(&t5_, {kT5, 4});  // record 4 of the chunk (after the records referring to it)
    more_.clear();
    AppendSection(&more_, {'A', 'C', 'T', 'R'}, Bytes{1, 2, 3});
    AppendSection(&more_, {'Z', 'Z', 'Z', '9'}, Bytes(300, 7));
  }

  template <typename T>
  const ClassInfo& Cls() {
    const ClassInfo* cls = registry_.FindClass<T>();
    EXPECT_NE(cls, nullptr);
    return *cls;
  }
  template <typename T>
  Subject Of(T* object, Guid id, RecordKind kind = RecordKind::kObject) {
    return {&Cls<T>(), object, id, kind};
  }
  EncodedSections More() const { return {more_.view(), 2}; }

  // The payload of `subjects` captured one after another by Capture.
  Bytes CaptureAll(const std::vector<Subject>& subjects, ObjectLinks* links = nullptr,
                   const EncodedSections& more = {}) {
    ChunkWriter chunk;
    Capturer capturer(&chunk, links);
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      const Subject& s = subjects[i];
      Result<std::uint32_t> index = capturer.Capture(*s.cls, s.object, s.id, s.kind, more);
      EXPECT_THAT(index, IsOk()) << i;
      if (index.ok()) {
        EXPECT_EQ(*index, i + 1);
      }
    }
    Bytes payload = chunk.Finish();
    EXPECT_THAT(DecodePayload(payload), IsOk());
    return payload;
  }

  // The same in two halves: every subject copied first, then `between` (which may change the
  // objects: the records are of the copies), then each record written from its copy, in order.
  Bytes CopyAll(const std::vector<Subject>& subjects, ObjectLinks* links = nullptr,
                const EncodedSections& more = {}, const std::function<void()>& between = nullptr) {
    ObjectCopies copies;
    ChunkWriter chunk;
    Capturer capturer(&chunk, links);
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      const Subject& s = subjects[i];
      EXPECT_TRUE(copies.CanCopy(*s.cls)) << s.cls->name().str();
      const Status copied = capturer.Copy(*s.cls, s.object, &copies);
      EXPECT_THAT(copied, IsOk()) << i;
      if (!copied.ok()) return Bytes();
    }
    EXPECT_EQ(copies.pending(), subjects.size());
    EXPECT_EQ(chunk.record_count(), 0u) << "Copy adds no record";
    if (between) between();
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      const Subject& s = subjects[i];
      Result<std::uint32_t> index = capturer.CaptureCopy(&copies, s.id, s.kind, more);
      EXPECT_THAT(index, IsOk()) << i;
      if (index.ok()) {
        EXPECT_EQ(*index, i + 1);
      }
    }
    EXPECT_EQ(copies.pending(), 0u);
    return chunk.Finish();
  }

  // Both ways, expecting the same payload.
  void ExpectSameBytes(const std::vector<Subject>& subjects, ObjectLinks* links = nullptr,
                       const EncodedSections& more = {}) {
    const Bytes whole = CaptureAll(subjects, links, more);
    EXPECT_TRUE(SameBytes(whole, CopyAll(subjects, links, more)));
  }

  // `bad` between two captures of `good`, both ways. Capture refuses `bad`; the halves must
  // refuse it with the same status (Copy when `copy_refuses`, else CaptureCopy) and keep nothing
  // of it: the chunk's tables and count as they were, no copy pending for it, the payloads the
  // same bytes. Twice: each copy's record written right after it (`queued` false), and all three
  // copied before any record is written (true).
  void ExpectRefusedLikeCapture(const Subject& good, const Subject& bad, StatusCode code,
                                std::string_view message, bool copy_refuses,
                                ObjectLinks* links = nullptr) {
    ChunkWriter whole;
    Capturer capture(&whole, links);
    ASSERT_THAT(capture.Capture(*good.cls, good.object, good.id, good.kind), IsOk());
    const Result<std::uint32_t> refused = capture.Capture(*bad.cls, bad.object, bad.id, bad.kind);
    ASSERT_THAT(refused, StatusIs(code, HasSubstr(std::string(message))));
    ASSERT_THAT(capture.Capture(*good.cls, good.object, Guid(7, 7), good.kind), IsOk());
    const Bytes want = whole.Finish();

    for (const bool queued : {false, true}) {
      SCOPED_TRACE(queued ? "copied first" : "each written when copied");
      ObjectCopies copies;
      ChunkWriter halves;
      Capturer copy(&halves, links);
      ASSERT_THAT(copy.Copy(*good.cls, good.object, &copies), IsOk());
      if (!queued) {
        ASSERT_THAT(copy.CaptureCopy(&copies, good.id, good.kind, {}), IsOk());
      }
      const std::size_t pending = copies.pending();
      const std::uint32_t count = halves.record_count();
      const Status bad_copy = copy.Copy(*bad.cls, bad.object, &copies);
      if (copy_refuses) {
        EXPECT_EQ(bad_copy, refused.status());
        EXPECT_EQ(copies.pending(), pending) << "a refused copy is not pending";
        EXPECT_EQ(halves.record_count(), count);
      } else {
        ASSERT_THAT(bad_copy, IsOk());
      }
      ASSERT_THAT(copy.Copy(*good.cls, good.object, &copies), IsOk());
      if (queued) {
        ASSERT_THAT(copy.CaptureCopy(&copies, good.id, good.kind, {}), IsOk());
      }
      if (!copy_refuses) {
        const ChunkTables::Mark mark = halves.tables().GetMark();
        EXPECT_EQ(copy.CaptureCopy(&copies, bad.id, bad.kind, {}).status(), refused.status());
        ExpectSameMark(halves.tables().GetMark(), mark);
        EXPECT_EQ(halves.record_count(), 1u);
        EXPECT_EQ(copies.pending(), 1u) << "the refused record's copy is passed";
      }
      ASSERT_OK_AND_ASSIGN(const std::uint32_t index,
                           copy.CaptureCopy(&copies, Guid(7, 7), good.kind, {}));
      EXPECT_EQ(index, 2u);
      EXPECT_EQ(copies.pending(), 0u);
      EXPECT_TRUE(SameBytes(want, halves.Finish()));
    }
  }

  // Applies record `index` (from 1) of `payload` to `object` through a CheckedPayload and an
  // Applier, expecting no message.
  template <typename T>
  void ApplyRecord(const Bytes& payload, std::size_t index, T* object,
                   ObjectLinks* links = nullptr) {
    ASSERT_OK_AND_ASSIGN(const CheckedPayload checked, CheckedPayload::Check(payload));
    Applier applier(registry_, checked, links);
    std::vector<std::string> messages;
    ASSERT_THAT(applier.Apply(index - 1, Cls<T>(), object, &messages), IsOk());
    EXPECT_THAT(messages, IsEmpty());
  }

  // Whether objects of T are copied, by a new ObjectCopies.
  template <typename T>
  bool CanCopy() {
    ObjectCopies copies;
    return copies.CanCopy(Cls<T>());
  }

  // Objects of T are not copied: CanCopy says so, and Copy is InvalidInput, copying and adding
  // nothing; Capture still takes one whole.
  template <typename T>
  void ExpectNotCopied() {
    const ClassInfo& cls = Cls<T>();
    SCOPED_TRACE(cls.name().str());
    ObjectCopies copies;
    EXPECT_FALSE(copies.CanCopy(cls));
    auto object = std::make_unique<T>();
    ChunkWriter chunk;
    Capturer capturer(&chunk, &links_);
    EXPECT_THAT(capturer.Copy(cls, object.get(), &copies),
                StatusIs(StatusCode::kInvalidInput, HasSubstr(cls.name().str())));
    EXPECT_EQ(chunk.record_count(), 0u);
    EXPECT_THAT(capturer.Capture(cls, object.get(), Guid(1, 1), RecordKind::kObject), IsOk());
    EXPECT_EQ(copies.pending(), 0u) << "nothing was copied";
  }

  TypeRegistry registry_;
  Target t1_, t2_, t3_, t4_, t5_;
  TestLinks links_;
  ByteSink more_;
};

// ---- 1. The same bytes as Capture ----

TEST_F(ObjectCopyTest, FixedKindsNamesAndEnumsWriteTheSameBytes) {
  Fixed zero;
  Fixed a = MakeFixed(1), b = MakeFixed(2), c = MakeFixed(3), e = ExtremeFixed();
  ExpectSameBytes({Of(&zero, Guid(1, 0)), Of(&a, Guid(1, 1)), Of(&b, Guid(1, 2)),
                   Of(&c, Guid(1, 3)), Of(&e, Guid(1, 4))});
}

TEST_F(ObjectCopyTest, StringsAndSoftPathsWriteTheSameBytes) {
  Strings none;
  Strings a = MakeStrings("short", "a string long enough to live on the heap");
  Strings b = MakeStrings("fifteen chars!!", "sixteen chars!!!");  // at the short-string edge
  Strings c = MakeStrings("", "seventeen chars!!");
  Strings d = MakeStrings("h\xC3\xA9llo", "w\xC3\xB6rld \xE2\x80\x94 \xF0\x9F\x8E\xAE in UTF-8");
  d.path_empty = {"x"};
  d.path_large = {std::string(5000, 'p')};
  ExpectSameBytes({Of(&none, Guid(2, 0)), Of(&a, Guid(2, 1)), Of(&b, Guid(2, 2)),
                   Of(&c, Guid(2, 3)), Of(&d, Guid(2, 4))});
}

TEST_F(ObjectCopyTest, VectorsArraysAndNestedStructsWriteTheSameBytes) {
  Lists empty;
  Lists one = MakeLists(1);
  Lists many = MakeLists(5000);
  Lists odd = MakeLists(3);
  odd.bytes.assign(1000, 200);  // two-byte varints
  odd.bundle.ids.clear();
  odd.bundle.label.clear();
  ExpectSameBytes(
      {Of(&empty, Guid(3, 0)), Of(&one, Guid(3, 1)), Of(&many, Guid(3, 2)), Of(&odd, Guid(3, 3))});
}

TEST_F(ObjectCopyTest, ReferencesWriteTheSameBytes) {
  Linked a;
  a.id = 10;
  a.same = &t1_;     // record 1
  a.other = &t2_;    // refs table
  a.unsaved = &t3_;  // null
  a.box = {&t4_, "another chunk's"};
  Linked b;
  b.id = 11;
  b.same = &t5_;  // record 4, after this one
  b.other = &t4_;
  b.unsaved = &t2_;
  b.box = {&t1_, "same chunk's"};
  ExpectSameBytes({Of(&t1_, kT1), Of(&a, Guid(4, 1)), Of(&b, Guid(4, 2)), Of(&t5_, kT5)}, &links_);
}

// Links that locate in two steps: a copy only names each target (Identify), and the record written
// from it locates them (LocateIdentified), to the bytes Capture writes; Locate is never asked.
TEST_F(ObjectCopyTest, ReferencesLocatedInTwoStepsWriteTheSameBytes) {
  TwoStepLinks two_step;
  two_step.Save(&t1_, {kT1, 1});
  two_step.Save(&t2_, {kT2, 0});
  two_step.Save(&t4_, {kT4, 0});
  two_step.Save(&t5_, {kT5, 4});
  Linked a;
  a.same = &t1_;
  a.other = &t2_;
  a.unsaved = &t3_;
  a.box = {&t4_, "another chunk's"};
  Linked b;
  b.same = &t5_;
  b.other = &t4_;
  b.box = {&t1_, "same chunk's"};
  const std::vector<Subject> subjects = {Of(&t1_, kT1), Of(&a, Guid(4, 1)), Of(&b, Guid(4, 2)),
                                         Of(&t5_, kT5)};
  const Bytes want = CaptureAll(subjects, &links_);
  const Bytes got = CopyAll(subjects, &two_step, {}, [&] {
    EXPECT_EQ(two_step.identified, 7) << "each reference set is named at its copy";
    EXPECT_EQ(two_step.located_identified, 0) << "and located only when its record is written";
  });
  EXPECT_TRUE(SameBytes(want, got));
  EXPECT_EQ(two_step.located_identified, 7);
  EXPECT_EQ(two_step.located, 0);

  // Links that name some objects and not others: those are located at the copy, to the same
  // bytes.
  TwoStepLinks some;
  some.Save(&t1_, {kT1, 1});
  some.Save(&t2_, {kT2, 0});
  some.Save(&t4_, {kT4, 0});
  some.Save(&t5_, {kT5, 4});
  some.at_once = {&t1_, &t3_};
  const Bytes mixed = CopyAll(subjects, &some, {}, [&] {
    EXPECT_EQ(some.located, 3) << "a.same, a.unsaved and b.box at the copy";
    EXPECT_EQ(some.identified, 4);
  });
  EXPECT_TRUE(SameBytes(want, mixed));
  EXPECT_EQ(some.located_identified, 4);
}

// A copy holding a named reference cannot be written without links: InvalidData with Capture's
// message for a reference set without links, the chunk as it was, the copy passed; the next copy
// is written by a capturer with links.
TEST_F(ObjectCopyTest, NamedReferenceWrittenWithoutLinksIsRefused) {
  TwoStepLinks two_step;
  two_step.Save(&t1_, {kT1, 1});
  Linked a;
  a.same = &t1_;
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer linked(&chunk, &two_step);
  Capturer unlinked(&chunk);
  ASSERT_THAT(linked.Copy(Cls<Target>(), &t1_, &copies), IsOk());
  ASSERT_THAT(linked.Copy(Cls<Linked>(), &a, &copies), IsOk());
  ASSERT_THAT(linked.Copy(Cls<Linked>(), &a, &copies), IsOk());
  ASSERT_THAT(unlinked.CaptureCopy(&copies, kT1, RecordKind::kObject, {}), IsOk());
  const ChunkTables::Mark mark = chunk.tables().GetMark();
  EXPECT_THAT(unlinked.CaptureCopy(&copies, Guid(4, 1), RecordKind::kObject, {}),
              StatusIs(StatusCode::kInvalidData,
                       AllOf(HasSubstr("class Linked"), HasSubstr("field Same"),
                             HasSubstr("nothing says where objects are saved"))));
  ExpectSameMark(chunk.tables().GetMark(), mark);
  EXPECT_EQ(chunk.record_count(), 1u);
  EXPECT_EQ(copies.pending(), 1u) << "the refused record's copy is passed";
  ASSERT_OK_AND_ASSIGN(const std::uint32_t index,
                       linked.CaptureCopy(&copies, Guid(4, 2), RecordKind::kObject, {}));
  EXPECT_EQ(index, 2u);
  EXPECT_EQ(two_step.located_identified, 1);
}

TEST_F(ObjectCopyTest, ClassesInterleavedShareTheChunksTablesAndAddedSections) {
  Fixed f1 = MakeFixed(1), f2 = MakeFixed(3), f3 = MakeFixed(6);
  Strings s1 = MakeStrings("a", "a long string for the first strings object");
  Strings s2 = MakeStrings("b", "a long string for the second strings object");
  Lists l1 = MakeLists(10), l2 = MakeLists(0);
  Derived d1 = MakeDerived(2), d2 = MakeDerived(7);
  Linked k;
  k.same = &t1_;
  k.other = &t2_;
  ExpectSameBytes(
      {Of(&t1_, kT1, RecordKind::kActor), Of(&f1, Guid(5, 1), RecordKind::kActor),
       Of(&s1, Guid(5, 2), RecordKind::kComponent), Of(&f2, Guid(5, 3), RecordKind::kPlayer),
       Of(&s2, Guid(5, 4)), Of(&l1, Guid(5, 5)), Of(&d1, Guid(5, 6), RecordKind::kComponent),
       Of(&f3, Guid(5, 7)), Of(&k, Guid(5, 8)), Of(&l2, Guid(5, 9)),
       Of(&d2, Guid(5, 10), RecordKind::kActor)},
      &links_, More());
}

TEST_F(ObjectCopyTest, BaseFieldsSparseEmptyAndDeepClassesWriteTheSameBytes) {
  Derived d = MakeDerived(5);
  auto sparse = std::make_unique<Sparse>();
  sparse->scratch.fill(0xEE);
  sparse->a = 42;
  sparse->s = "the sparse class's string, on the heap";
  sparse->v = {1, -1, std::numeric_limits<std::int64_t>::min()};
  Empty empty;
  auto exact = std::make_unique<Exact64K>();
  for (std::size_t i = 0; i < exact->bytes.size(); ++i) {
    exact->bytes[i] = static_cast<std::uint8_t>(i * 13);
  }
  DeepHolder<20> deep;
  deep.deep.inner.inner.inner.inner.inner.inner.inner.inner.inner.inner.inner.inner.inner.inner
      .inner.inner.inner.inner.inner.inner.s = "at the bottom of twenty structs";
  deep.tail = 9;
  ExpectSameBytes({Of(&d, Guid(6, 1)), Of(sparse.get(), Guid(6, 2)), Of(&empty, Guid(6, 3)),
                   Of(exact.get(), Guid(6, 4)), Of(&deep, Guid(6, 5)), Of(&d, Guid(6, 6))},
                  &links_, More());
}

// A save-extra hook (the class's own, or its base's) runs at the copy: its bytes go into the
// record written from the copy as Capture writes them, even when the object changes after the
// copy, and load back.
TEST_F(ObjectCopyTest, SaveExtraHooksRunAtTheCopy) {
  EXPECT_TRUE(CanCopy<WithExtra>());
  EXPECT_TRUE(CanCopy<ExtraChild>());
  WithExtra a;
  a.v = 7;
  a.extra = -123456789012345;
  ExtraChild b;
  b.v = 8;
  b.extra = 42;
  b.w = 9;
  WithExtra none;  // an extra of 0: the hook still writes its value
  const Bytes whole =
      CaptureAll({Of(&a, Guid(30, 1)), Of(&b, Guid(30, 2)), Of(&none, Guid(30, 3))});
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Copy(Cls<WithExtra>(), &a, &copies), IsOk());
  ASSERT_THAT(capturer.Copy(Cls<ExtraChild>(), &b, &copies), IsOk());
  ASSERT_THAT(capturer.Copy(Cls<WithExtra>(), &none, &copies), IsOk());
  const WithExtra a_saved = a;
  a.extra = 1;  // after the copy: not in the record
  b.extra = 2;
  for (std::uint64_t k = 1; k <= 3; ++k) {
    ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(30, k), RecordKind::kObject, {}), IsOk());
  }
  const Bytes payload = chunk.Finish();
  EXPECT_TRUE(SameBytes(whole, payload));
  WithExtra loaded;
  ApplyRecord(payload, 1, &loaded);
  EXPECT_EQ(loaded.v, a_saved.v);
  EXPECT_EQ(loaded.extra, a_saved.extra);
  ExtraChild loaded_child;
  ApplyRecord(payload, 2, &loaded_child);
  EXPECT_EQ(loaded_child.extra, 42);
  EXPECT_EQ(loaded_child.w, 9);
}

TEST_F(ObjectCopyTest, DeepestCopiedStructsWriteTheSameBytes) {
  // A value at depth 32 (the class's fields at depth 1) is within a copy's reach; whichever of
  // these CanCopy takes, what it takes must write Capture's bytes.
  EXPECT_TRUE(CanCopy<DeepHolder<30>>());
  auto d30 = std::make_unique<DeepHolder<30>>();
  d30->tail = 30;
  ExpectSameBytes({Of(d30.get(), Guid(6, 30))});
  if (CanCopy<DeepHolder<31>>()) {
    auto d31 = std::make_unique<DeepHolder<31>>();
    d31->tail = 31;
    ExpectSameBytes({Of(d31.get(), Guid(6, 31))});
  }
}

TEST_F(ObjectCopyTest, RecordsAreOfTheObjectsAtCopyTime) {
  Fixed f = MakeFixed(1);
  Strings s = MakeStrings("small", "a string long enough to live on the heap");
  Lists l = MakeLists(300);
  Linked k;
  k.same = &t1_;
  k.other = &t2_;
  k.box = {&t4_, "box"};
  const std::vector<Subject> subjects = {Of(&t1_, kT1), Of(&f, Guid(7, 1)), Of(&s, Guid(7, 2)),
                                         Of(&l, Guid(7, 3)), Of(&k, Guid(7, 4))};
  const Bytes whole = CaptureAll(subjects, &links_);
  const Bytes halves = CopyAll(subjects, &links_, {}, [&] {
    // Everything changes, and the old heap buffers are let go of, before the records are written.
    f = MakeFixed(8);
    s.small = "changed";
    s.large = std::string(300, 'c');
    std::string().swap(s.path_large.path);
    l.many.clear();
    l.many.shrink_to_fit();
    l.bundle.label = "a different label, also long enough for the heap";
    l.bundle.ids.assign(1000, 5);
    l.names = {Name("Changed")};
    k.same = &t5_;
    k.other = nullptr;
    k.box.target = &t2_;
  });
  EXPECT_TRUE(SameBytes(whole, halves));
}

TEST_F(ObjectCopyTest, CaptureAndCaptureCopyMixInOneChunk) {
  Fixed f1 = MakeFixed(1), f2 = MakeFixed(2), f3 = MakeFixed(3);
  Strings s = MakeStrings("s", "a string long enough to live on the heap");
  Lists l = MakeLists(20);
  const std::vector<Subject> subjects = {Of(&f1, Guid(8, 1)), Of(&s, Guid(8, 2)),
                                         Of(&l, Guid(8, 3)), Of(&f2, Guid(8, 4)),
                                         Of(&f3, Guid(8, 5))};
  const Bytes whole = CaptureAll(subjects, nullptr, More());
  // Records 1 and 4 by Capture, the others from copies, through one capturer; copies 3 and 5
  // wait while Capture writes record 4.
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  auto capture = [&](std::size_t i) {
    const Subject& x = subjects[i];
    return capturer.Capture(*x.cls, x.object, x.id, x.kind, More());
  };
  auto copy = [&](std::size_t i) {
    return capturer.Copy(*subjects[i].cls, subjects[i].object, &copies);
  };
  auto write = [&](std::size_t i) {
    return capturer.CaptureCopy(&copies, subjects[i].id, subjects[i].kind, More());
  };
  ASSERT_THAT(capture(0), IsOk());
  ASSERT_THAT(copy(1), IsOk());
  ASSERT_THAT(write(1), IsOk());
  ASSERT_THAT(copy(2), IsOk());
  ASSERT_THAT(copy(4), IsOk());
  ASSERT_THAT(write(2), IsOk());
  ASSERT_OK_AND_ASSIGN(const std::uint32_t index, capture(3));
  EXPECT_EQ(index, 4u);
  ASSERT_THAT(write(4), IsOk());
  EXPECT_TRUE(SameBytes(whole, chunk.Finish()));
}

TEST_F(ObjectCopyTest, RecordsAreWrittenFromCopiesOnAnotherThread) {
  Fixed f = MakeFixed(4);
  Lists l = MakeLists(100);
  Linked k;
  k.same = &t1_;
  k.other = &t4_;
  const std::vector<Subject> subjects = {Of(&t1_, kT1), Of(&f, Guid(9, 1)), Of(&l, Guid(9, 2)),
                                         Of(&k, Guid(9, 3))};
  const Bytes whole = CaptureAll(subjects, &links_, More());
  // The game thread copies through its capturer (links, hooks); a worker writes the records
  // through a capturer of its own, with no links.
  ObjectCopies copies;
  ChunkWriter game_chunk;
  Capturer game(&game_chunk, &links_);
  for (const Subject& x : subjects) ASSERT_THAT(game.Copy(*x.cls, x.object, &copies), IsOk());
  Bytes halves;
  std::thread worker([&] {
    ChunkWriter chunk;
    Capturer writer(&chunk);
    for (const Subject& x : subjects) {
      EXPECT_THAT(writer.CaptureCopy(&copies, x.id, x.kind, More()), IsOk());
    }
    halves = chunk.Finish();
  });
  worker.join();
  EXPECT_TRUE(SameBytes(whole, halves));
  EXPECT_EQ(game_chunk.record_count(), 0u);
  EXPECT_EQ(copies.pending(), 0u);
}

TEST_F(ObjectCopyTest, CaptureCopyWithNoCopyPendingIsInvalidInput) {
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  EXPECT_THAT(capturer.CaptureCopy(&copies, Guid(10, 1), RecordKind::kObject, {}),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_EQ(chunk.record_count(), 0u);
  Fixed f = MakeFixed(1);
  ASSERT_THAT(capturer.Copy(Cls<Fixed>(), &f, &copies), IsOk());
  EXPECT_EQ(copies.pending(), 1u);
  ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(10, 1), RecordKind::kObject, {}), IsOk());
  EXPECT_EQ(copies.pending(), 0u);
  const ChunkTables::Mark mark = chunk.tables().GetMark();
  EXPECT_THAT(capturer.CaptureCopy(&copies, Guid(10, 2), RecordKind::kObject, {}),
              StatusIs(StatusCode::kInvalidInput));
  ExpectSameMark(chunk.tables().GetMark(), mark);
  EXPECT_EQ(chunk.record_count(), 1u);
  EXPECT_TRUE(SameBytes(CaptureAll({Of(&f, Guid(10, 1))}), chunk.Finish()));
}

// ---- 2. Which classes are copied ----

TEST_F(ObjectCopyTest, PlainClassesAreCopied) {
  EXPECT_TRUE(CanCopy<Fixed>());
  EXPECT_TRUE(CanCopy<Strings>());
  EXPECT_TRUE(CanCopy<Lists>());
  EXPECT_TRUE(CanCopy<Target>());
  EXPECT_TRUE(CanCopy<Linked>());
  EXPECT_TRUE(CanCopy<Base>());
  EXPECT_TRUE(CanCopy<Derived>());
  EXPECT_TRUE(CanCopy<Sparse>());
  EXPECT_TRUE(CanCopy<Empty>());
  EXPECT_TRUE(CanCopy<Unsaved>()) << "kinds a copy refuses that are not saved do not count";
  EXPECT_TRUE(CanCopy<Exact64K>());
  EXPECT_TRUE(CanCopy<DeepHolder<20>>());
  EXPECT_TRUE(CanCopy<Blob>());
  EXPECT_TRUE(CanCopy<ArrayBlob>());
  EXPECT_TRUE(CanCopy<Hooked>()) << "OnPreSave and OnSaved hooks run around a copy";
  EXPECT_TRUE(CanCopy<PreOnly>());
}

TEST_F(ObjectCopyTest, ClassesHoldingWhatACopyCannotTakeAreNotCopied) {
  ExpectNotCopied<WithText>();
  ExpectNotCopied<WithMap>();
  ExpectNotCopied<WithSet>();
  ExpectNotCopied<WithOptional>();
  ExpectNotCopied<WithOwned>();
  ExpectNotCopied<WithInstanced>();
  ExpectNotCopied<WithBag>();
  ExpectNotCopied<WithStrings>();
  ExpectNotCopied<WithVectors>();
  ExpectNotCopied<WithRefs>();
  ExpectNotCopied<WithStringArray>();
  ExpectNotCopied<WithNamedVector>();
  ExpectNotCopied<WithBoxedVector>();
  ExpectNotCopied<WithNestedOptional>();
  ExpectNotCopied<DeepHolder<40>>();
  // Alignment past 8 bytes (capture.h: "no alignment past 8 bytes").
  ExpectNotCopied<WithPacket>();
  ExpectNotCopied<WithPackets>();
  ExpectNotCopied<WithWide32>();
}

TEST_F(ObjectCopyTest, LargeObjectsWriteTheSameBytesWhetherCopiedOrNot) {
  // Saved fields spread far apart, or many bytes of them: whichever of these CanCopy takes, a
  // copy writes Capture's bytes, and Capture takes the others.
  auto sparse = std::make_unique<Sparse>();
  sparse->scratch.fill(0xEE);
  sparse->a = 42;
  sparse->s = "the sparse class's string, on the heap";
  sparse->v = {1, -1, std::numeric_limits<std::int64_t>::min()};
  auto wide = std::make_unique<Wide>();
  wide->first = -1;
  wide->gap.fill(0x55);
  wide->last = 70000;
  auto exact = std::make_unique<Exact64K>();
  auto past = std::make_unique<Past64K>();
  for (std::size_t i = 0; i < past->bytes.size(); ++i) {
    past->bytes[i] = static_cast<std::uint8_t>(i * 13);
    if (i < exact->bytes.size()) exact->bytes[i] = static_cast<std::uint8_t>(i * 7);
  }
  EXPECT_TRUE(CanCopy<Sparse>());
  EXPECT_TRUE(CanCopy<Exact64K>());
  const std::vector<Subject> subjects = {Of(sparse.get(), Guid(11, 1)), Of(wide.get(), Guid(11, 2)),
                                         Of(exact.get(), Guid(11, 3)), Of(past.get(), Guid(11, 4))};
  const Bytes whole = CaptureAll(subjects, nullptr, More());
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  for (const Subject& x : subjects) {
    SCOPED_TRACE(x.cls->name().str());
    if (copies.CanCopy(*x.cls)) {
      ASSERT_THAT(capturer.Copy(*x.cls, x.object, &copies), IsOk());
      ASSERT_THAT(capturer.CaptureCopy(&copies, x.id, x.kind, More()), IsOk());
    } else {
      EXPECT_THAT(capturer.Copy(*x.cls, x.object, &copies), StatusIs(StatusCode::kInvalidInput));
      ASSERT_THAT(capturer.Capture(*x.cls, x.object, x.id, x.kind, More()), IsOk());
    }
  }
  EXPECT_TRUE(SameBytes(whole, chunk.Finish()));
}

TEST_F(ObjectCopyTest, CanCopyAnswersTheSameWhenAskedAgainAmongOtherClasses) {
  ObjectCopies copies;
  for (int round = 0; round < 3; ++round) {
    EXPECT_TRUE(copies.CanCopy(Cls<Fixed>()));
    EXPECT_FALSE(copies.CanCopy(Cls<WithText>()));
    EXPECT_TRUE(copies.CanCopy(Cls<Lists>()));
    EXPECT_FALSE(copies.CanCopy(Cls<WithBag>()));
    EXPECT_TRUE(copies.CanCopy(Cls<Strings>()));
    EXPECT_FALSE(copies.CanCopy(Cls<WithPackets>()));
  }
}

// ---- 3. Copy refuses what Capture refuses ----

TEST_F(ObjectCopyTest, StringAtTheBoundIsCopiedAndRoundTrips) {
  Strings s = MakeStrings("x", std::string(kMaxStringBytes, 'L'));
  s.path_large = {std::string(kMaxStringBytes, 'P')};
  const Bytes payload = CopyAll({Of(&s, Guid(11, 1))});
  EXPECT_TRUE(SameBytes(CaptureAll({Of(&s, Guid(11, 1))}), payload));
  Strings loaded;
  ApplyRecord(payload, 1, &loaded);
  EXPECT_EQ(loaded, s);
}

TEST_F(ObjectCopyTest, StringPastTheBoundIsRefusedLikeCapture) {
  Strings good = MakeStrings("good", "a string long enough to live on the heap");
  Strings bad = MakeStrings("x", std::string(kMaxStringBytes + 1, 'L'));
  ExpectRefusedLikeCapture(Of(&good, Guid(12, 1)), Of(&bad, Guid(12, 2)), StatusCode::kInvalidData,
                           "field Large", /*copy_refuses=*/true);
  Strings bad_path = MakeStrings("x", "y");
  bad_path.path_large = {std::string(kMaxStringBytes + 1, 'P')};
  ExpectRefusedLikeCapture(Of(&good, Guid(12, 1)), Of(&bad_path, Guid(12, 2)),
                           StatusCode::kInvalidData, "field PathLarge", true);
}

TEST_F(ObjectCopyTest, StringNotUtf8OrWithNulIsRefusedLikeCapture) {
  Strings good = MakeStrings("good", "a string long enough to live on the heap");
  Strings not_utf8 = MakeStrings("ok", "bad \xFF byte in a long enough string");
  ExpectRefusedLikeCapture(Of(&good, Guid(13, 1)), Of(&not_utf8, Guid(13, 2)),
                           StatusCode::kInvalidData, "field Large", true);
  Strings nul = MakeStrings(std::string("a\0b", 3), "fine");
  ExpectRefusedLikeCapture(Of(&good, Guid(13, 1)), Of(&nul, Guid(13, 2)), StatusCode::kInvalidData,
                           "field Small", true);
  Strings bad_path = MakeStrings("ok", "fine");
  bad_path.path_small = {"\xC3"};  // a cut sequence
  ExpectRefusedLikeCapture(Of(&good, Guid(13, 1)), Of(&bad_path, Guid(13, 2)),
                           StatusCode::kInvalidData, "field PathSmall", true);
}

TEST_F(ObjectCopyTest, StringInANestedStructIsRefusedLikeCapture) {
  Lists good = MakeLists(3);
  Lists bad = MakeLists(3);
  bad.bundle.label = "\xFF";
  ExpectRefusedLikeCapture(Of(&good, Guid(14, 1)), Of(&bad, Guid(14, 2)), StatusCode::kInvalidData,
                           "field Bundle", true);
}

TEST_F(ObjectCopyTest, ElementsUpToTheBoundAreCopiedAndOneMoreIsRefused) {
  constexpr std::size_t kMax = kMaxElementsPerRecord;
  Blob at;
  at.bytes.resize(kMax - 10);
  for (std::size_t i = 0; i < at.bytes.size(); ++i) at.bytes[i] = static_cast<std::uint8_t>(i);
  at.more.assign(10, 0x90);
  {
    const Bytes payload = CopyAll({Of(&at, Guid(15, 1))});
    EXPECT_TRUE(SameBytes(CaptureAll({Of(&at, Guid(15, 1))}), payload));
    Blob loaded;
    ApplyRecord(payload, 1, &loaded);
    EXPECT_TRUE(loaded.bytes == at.bytes && loaded.more == at.more);
  }
  Blob good;
  good.bytes = {1, 2, 3};
  Blob past;
  past.bytes.assign(kMax - 10, 1);
  past.more.assign(11, 2);  // the two vectors together: one past
  ExpectRefusedLikeCapture(Of(&good, Guid(15, 2)), Of(&past, Guid(15, 3)), StatusCode::kInvalidData,
                           "more than 16,777,216 elements", true);
  Blob one_vector;
  one_vector.bytes.assign(kMax + 1, 3);
  ExpectRefusedLikeCapture(Of(&good, Guid(15, 2)), Of(&one_vector, Guid(15, 3)),
                           StatusCode::kInvalidData, "field Bytes", true);
}

TEST_F(ObjectCopyTest, ElementsOfArraysCountTowardsTheBoundInOneHalfOrTheOther) {
  // Capture counts an array's elements; a record past the bound must not be written whichever
  // half finds it, and the status is Capture's.
  ArrayBlob past;
  past.bytes.assign(kMaxElementsPerRecord - 3, 1);  // with the array's 4: one past
  ChunkWriter whole;
  Capturer capture(&whole);
  const Result<std::uint32_t> refused =
      capture.Capture(Cls<ArrayBlob>(), &past, Guid(16, 1), RecordKind::kObject);
  ASSERT_THAT(refused,
              StatusIs(StatusCode::kInvalidData, HasSubstr("more than 16,777,216 elements")));
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ObjectCopies copies;
  const Status copied = capturer.Copy(Cls<ArrayBlob>(), &past, &copies);
  if (copied.ok()) {
    EXPECT_EQ(capturer.CaptureCopy(&copies, Guid(16, 1), RecordKind::kObject, {}).status(),
              refused.status());
  } else {
    EXPECT_EQ(copied, refused.status());
  }
  EXPECT_EQ(chunk.record_count(), 0u);
  EXPECT_EQ(copies.pending(), 0u);
}

TEST_F(ObjectCopyTest, ReferenceWithoutLinksIsRefusedLikeCapture) {
  Linked good;
  good.id = 1;
  good.box.why = "no target";
  Linked bad;
  bad.same = &t1_;
  ExpectRefusedLikeCapture(Of(&good, Guid(17, 1)), Of(&bad, Guid(17, 2)), StatusCode::kInvalidData,
                           "field Same", true, /*links=*/nullptr);
  Linked bad_box;
  bad_box.box.target = &t2_;
  ExpectRefusedLikeCapture(Of(&good, Guid(17, 1)), Of(&bad_box, Guid(17, 2)),
                           StatusCode::kInvalidData, "field Box", true, nullptr);
}

TEST_F(ObjectCopyTest, RefusedCopyIsNotRememberedForOnSaved) {
  Hooked bad;
  bad.note = "\xFF";
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ObjectCopies copies;
  EXPECT_THAT(capturer.Copy(Cls<Hooked>(), &bad, &copies),
              StatusIs(StatusCode::kInvalidData, HasSubstr("field Note")));
  EXPECT_EQ(bad.pre_calls, 1) << "OnPreSave runs before the object is read, as in Capture";
  capturer.RunSavedHooks();
  EXPECT_EQ(bad.saved_calls, 0);
}

// ---- 4. CaptureCopy refuses what Capture refuses and a copy does not check ----

TEST_F(ObjectCopyTest, EnumNumberWithoutANameIsRefusedLikeCapture) {
  Fixed good = MakeFixed(1);
  Fixed bad = MakeFixed(2);
  bad.n = Name("OnlyInTheRefusedRecord");  // a name before the enum: rolled back
  bad.mood = static_cast<Mood>(3);
  ExpectRefusedLikeCapture(Of(&good, Guid(18, 1)), Of(&bad, Guid(18, 2)), StatusCode::kInvalidData,
                           "enum Mood", /*copy_refuses=*/false);
  Lists bad_lists = MakeLists(4);
  bad_lists.cells[1].tier = static_cast<Tier>(7);  // in a vector's element
  bad_lists.many[3].name = Name("OnlyInTheRefusedLists");
  Lists good_lists = MakeLists(2);
  ExpectRefusedLikeCapture(Of(&good_lists, Guid(18, 3)), Of(&bad_lists, Guid(18, 4)),
                           StatusCode::kInvalidData, "enum Tier", false);
  Lists bad_array = MakeLists(1);
  bad_array.bundle.moods[1] = static_cast<Mood>(4);  // in an array in a struct
  ExpectRefusedLikeCapture(Of(&good_lists, Guid(18, 3)), Of(&bad_array, Guid(18, 5)),
                           StatusCode::kInvalidData, "enum Mood", false);
}

TEST_F(ObjectCopyTest, NamePastTheBoundIsRefusedLikeCapture) {
  Fixed good = MakeFixed(1);
  Fixed bad = MakeFixed(2);
  bad.n = Name(std::string(kMaxNameBytes + 1, 'n'));
  ExpectRefusedLikeCapture(Of(&good, Guid(19, 1)), Of(&bad, Guid(19, 2)), StatusCode::kInvalidData,
                           "field N", false);
  Lists good_lists = MakeLists(2);
  Lists bad_lists = MakeLists(2);
  bad_lists.names.push_back(Name(std::string(kMaxNameBytes + 1, 'm')));
  ExpectRefusedLikeCapture(Of(&good_lists, Guid(19, 3)), Of(&bad_lists, Guid(19, 4)),
                           StatusCode::kInvalidData, "field Names", false);
}

TEST_F(ObjectCopyTest, TablesKindAndBadSectionsAreInvalidInput) {
  Fixed f = MakeFixed(1);
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ChunkWriter whole;
  Capturer capture(&whole);

  // Each refused by CaptureCopy as Capture refuses it, the chunk left as it was and the copy
  // passed. A second copy waits behind each: it is the next written.
  Fixed g = MakeFixed(2);
  ASSERT_THAT(capturer.Copy(Cls<Fixed>(), &g, &copies), IsOk());
  ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(20, 0), RecordKind::kObject, {}), IsOk());
  ASSERT_THAT(capture.Capture(Cls<Fixed>(), &g, Guid(20, 0), RecordKind::kObject), IsOk());
  auto expect_refused = [&](RecordKind kind, const EncodedSections& more, const char* what) {
    SCOPED_TRACE(what);
    ASSERT_THAT(capturer.Copy(Cls<Fixed>(), &f, &copies), IsOk());
    ASSERT_THAT(capturer.Copy(Cls<Fixed>(), &g, &copies), IsOk());
    const ChunkTables::Mark mark = chunk.tables().GetMark();
    const std::uint32_t count = chunk.record_count();
    const Status refused = capturer.CaptureCopy(&copies, Guid(20, 1), kind, more).status();
    EXPECT_THAT(refused, StatusIs(StatusCode::kInvalidInput));
    EXPECT_EQ(refused, capture.Capture(Cls<Fixed>(), &f, Guid(20, 1), kind, more).status());
    ExpectSameMark(chunk.tables().GetMark(), mark);
    EXPECT_EQ(chunk.record_count(), count);
    EXPECT_EQ(copies.pending(), 1u);
    // The next record is g's.
    ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(20, 2), RecordKind::kActor, More()), IsOk());
    ASSERT_THAT(capture.Capture(Cls<Fixed>(), &g, Guid(20, 2), RecordKind::kActor, More()), IsOk());
  };
  expect_refused(RecordKind::kTables, {}, "kind TABLES");
  expect_refused(static_cast<RecordKind>(9), {}, "an unknown kind");
  for (const SectionId id : {kPropSection, kOwnedSection, kExtraSection,
                             SectionId{'A', ' ', 'B', 'C'}, SectionId{'A', 'B', 'C', '\x7F'}}) {
    ByteSink one;
    AppendSection(&one, id, Bytes{1});
    expect_refused(RecordKind::kObject, {one.view(), 1}, "a section ID");
  }
  ByteSink twice;
  AppendSection(&twice, {'A', 'C', 'T', 'R'}, Bytes{1});
  AppendSection(&twice, {'A', 'C', 'T', 'R'}, Bytes{2});
  expect_refused(RecordKind::kObject, {twice.view(), 2}, "a repeated ID");
  expect_refused(RecordKind::kObject, {more_.view(), 3}, "fewer sections than counted");
  expect_refused(RecordKind::kObject, {more_.view(), 1}, "bytes after the sections counted");
  expect_refused(RecordKind::kObject, {more_.view().first(more_.size() - 1), 2}, "cut short");
  ByteSink many;
  for (int i = 0; i < 62; ++i) {
    AppendSection(&many,
                  {'S', static_cast<char>('A' + i / 26), static_cast<char>('A' + i % 26), '0'},
                  Bytes{});
  }
  expect_refused(RecordKind::kObject, {many.view(), 62}, "more than 61 sections");

  // With 61 sections (the most), a record is written.
  ByteSink most;
  for (int i = 0; i < 61; ++i) {
    AppendSection(&most,
                  {'S', static_cast<char>('A' + i / 26), static_cast<char>('A' + i % 26), '0'},
                  Bytes{static_cast<std::uint8_t>(i)});
  }
  const EncodedSections sections{most.view(), 61};
  ASSERT_THAT(capturer.Copy(Cls<Fixed>(), &f, &copies), IsOk());
  ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(20, 3), RecordKind::kPlayer, sections), IsOk());
  ASSERT_THAT(capture.Capture(Cls<Fixed>(), &f, Guid(20, 3), RecordKind::kPlayer, sections),
              IsOk());
  EXPECT_TRUE(SameBytes(whole.Finish(), chunk.Finish()));
}

TEST_F(ObjectCopyTest, RefusedRecordPassesItsCopyAndTheNextIsWritten) {
  // Three copies made before any record is written; the middle one's record is refused.
  Fixed a = MakeFixed(1), bad = MakeFixed(2), c = MakeFixed(3);
  bad.mood = static_cast<Mood>(1);
  bad.n = Name("OnlyInTheRefusedRecord");
  ChunkWriter whole;
  Capturer capture(&whole);
  ASSERT_THAT(capture.Capture(Cls<Fixed>(), &a, Guid(26, 1), RecordKind::kObject), IsOk());
  const Result<std::uint32_t> refused =
      capture.Capture(Cls<Fixed>(), &bad, Guid(26, 2), RecordKind::kObject);
  ASSERT_THAT(refused, StatusIs(StatusCode::kInvalidData, HasSubstr("enum Mood")));
  ASSERT_THAT(capture.Capture(Cls<Fixed>(), &c, Guid(26, 3), RecordKind::kObject), IsOk());

  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  for (Fixed* x : {&a, &bad, &c}) ASSERT_THAT(capturer.Copy(Cls<Fixed>(), x, &copies), IsOk());
  ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(26, 1), RecordKind::kObject, {}), IsOk());
  EXPECT_EQ(capturer.CaptureCopy(&copies, Guid(26, 2), RecordKind::kObject, {}).status(),
            refused.status());
  EXPECT_EQ(copies.pending(), 1u);
  ASSERT_OK_AND_ASSIGN(const std::uint32_t index,
                       capturer.CaptureCopy(&copies, Guid(26, 3), RecordKind::kObject, {}));
  EXPECT_EQ(index, 2u);
  EXPECT_TRUE(SameBytes(whole.Finish(), chunk.Finish()));
}

// ---- 5. Hooks ----

TEST_F(ObjectCopyTest, OnPreSaveRunsInCopyAndItsChangeIsSaved) {
  Hooked captured, copied;
  captured.note = copied.note = "the note";
  ChunkWriter whole;
  Capturer capture(&whole);
  ASSERT_THAT(capture.Capture(Cls<Hooked>(), &captured, Guid(21, 1), RecordKind::kObject), IsOk());
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Copy(Cls<Hooked>(), &copied, &copies), IsOk());
  EXPECT_EQ(copied.pre_calls, 1);
  EXPECT_EQ(copied.v, 101);
  ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(21, 1), RecordKind::kObject, {}), IsOk());
  EXPECT_EQ(copied.pre_calls, 1) << "CaptureCopy runs no hook";
  EXPECT_EQ(copied.saved_calls, 0) << "OnSaved waits for RunSavedHooks";
  const Bytes payload = chunk.Finish();
  EXPECT_TRUE(SameBytes(whole.Finish(), payload));
  Hooked loaded;
  ApplyRecord(payload, 1, &loaded);
  EXPECT_EQ(loaded.v, 101);
  EXPECT_EQ(loaded.note, "the note");
}

TEST_F(ObjectCopyTest, OnSavedRunsOnceAfterCopyAndOnlyForClassesWithIt) {
  Hooked a, b;
  Fixed f;
  PreOnly p;
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Copy(Cls<Hooked>(), &a, &copies), IsOk());
  EXPECT_TRUE(capturer.last_remembered());
  ASSERT_THAT(capturer.Copy(Cls<Fixed>(), &f, &copies), IsOk());
  EXPECT_FALSE(capturer.last_remembered());
  ASSERT_THAT(capturer.Copy(Cls<Hooked>(), &b, &copies), IsOk());
  EXPECT_TRUE(capturer.last_remembered());
  ASSERT_THAT(capturer.Copy(Cls<PreOnly>(), &p, &copies), IsOk());
  EXPECT_FALSE(capturer.last_remembered()) << "an OnPreSave hook alone is not remembered";
  EXPECT_EQ(p.v, 5);
  for (std::uint64_t i = 0; i < 4; ++i) {
    ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(22, i), RecordKind::kObject, {}), IsOk());
  }
  EXPECT_EQ(a.saved_calls, 0);
  // Captures that remembered objects are numbered among themselves: a is 0, b is 1.
  std::vector<std::size_t> asked;
  capturer.RunSavedHooks([&](std::size_t k) {
    asked.push_back(k);
    return k == 1;
  });
  EXPECT_EQ(asked, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(a.saved_calls, 0);
  EXPECT_EQ(b.saved_calls, 1);
  capturer.RunSavedHooks();
  EXPECT_EQ(b.saved_calls, 1) << "forgotten once run";

  // Run once each, mixed with Capture, whether or not the copy's record was written yet.
  Hooked c, d;
  ASSERT_THAT(capturer.Copy(Cls<Hooked>(), &c, &copies), IsOk());
  ASSERT_THAT(capturer.Capture(Cls<Hooked>(), &d, Guid(22, 9), RecordKind::kObject), IsOk());
  capturer.RunSavedHooks();
  capturer.RunSavedHooks();
  EXPECT_EQ(c.saved_calls, 1);
  EXPECT_EQ(d.saved_calls, 1);

  // A failed write: no OnSaved.
  Hooked e;
  ASSERT_THAT(capturer.Copy(Cls<Hooked>(), &e, &copies), IsOk());
  capturer.ForgetCaptured();
  capturer.RunSavedHooks();
  EXPECT_EQ(e.saved_calls, 0);
}

// ---- 6. Copies over several blocks, let go of as their records are written ----

// Blobs whose copies take about `size` bytes each.
std::vector<Blob> MakeBlobs(std::size_t count, std::size_t size) {
  std::vector<Blob> blobs(count);
  for (std::size_t k = 0; k < count; ++k) {
    blobs[k].bytes.resize(size);
    for (std::size_t i = 0; i < size; ++i) {
      blobs[k].bytes[i] = static_cast<std::uint8_t>(i * (k + 3));
    }
    blobs[k].more = {static_cast<std::uint8_t>(k)};
  }
  return blobs;
}

TEST_F(ObjectCopyTest, CopiesInBlocksLetGoOfWriteTheSameBytes) {
  // Copies of about 200 KiB: one each block of 256 KiB. All made, then written in turn, each
  // block let go of once its copy is passed (under ASan a read of one let go of is caught).
  std::vector<Blob> blobs = MakeBlobs(4, 200 * 1024);
  std::vector<Subject> subjects;
  for (std::size_t k = 0; k < blobs.size(); ++k) subjects.push_back(Of(&blobs[k], Guid(23, k)));
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  for (const Subject& x : subjects) ASSERT_THAT(capturer.Copy(*x.cls, x.object, &copies), IsOk());
  for (std::size_t k = 0; k < subjects.size(); ++k) {
    ASSERT_THAT(capturer.CaptureCopy(&copies, subjects[k].id, subjects[k].kind, {}), IsOk());
    // Memory let go of may be given out again: take some, and change it.
    std::vector<Bytes> churn(2, Bytes(256 * 1024, static_cast<std::uint8_t>(0xA0 + k)));
    EXPECT_EQ(copies.pending(), subjects.size() - k - 1);
  }
  EXPECT_TRUE(SameBytes(CaptureAll(subjects), chunk.Finish()));
}

TEST_F(ObjectCopyTest, CopiesMadeWhileOthersAreWrittenWriteTheSameBytes) {
  // Copies of many sizes (some past a block, one of their own), made and written in an uneven
  // rhythm, so that blocks are let go of while later ones fill.
  const std::size_t sizes[] = {3,         100 * 1024, 200 * 1024, 0,   300 * 1024,  5,
                               60 * 1024, 256 * 1024, 130 * 1024, 700, 1024 * 1024, 10};
  std::vector<Blob> blobs;
  for (std::size_t k = 0; k < std::size(sizes); ++k) {
    blobs.push_back(std::move(MakeBlobs(1, sizes[k])[0]));
    blobs.back().more.assign(k, static_cast<std::uint8_t>(k));
  }
  std::vector<Subject> subjects;
  for (std::size_t k = 0; k < blobs.size(); ++k) subjects.push_back(Of(&blobs[k], Guid(24, k)));
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  std::size_t copied = 0, written = 0;
  for (const std::size_t ahead : {1, 3, 0, 2, 5, 1, 0, 4}) {
    // Copy until `ahead` copies wait, then write one.
    while (copied < subjects.size() && copies.pending() < ahead + 1) {
      ASSERT_THAT(capturer.Copy(*subjects[copied].cls, subjects[copied].object, &copies), IsOk());
      ++copied;
    }
    if (written < copied) {
      ASSERT_THAT(capturer.CaptureCopy(&copies, subjects[written].id, RecordKind::kObject, {}),
                  IsOk());
      ++written;
    }
  }
  for (; copied < subjects.size(); ++copied) {
    ASSERT_THAT(capturer.Copy(*subjects[copied].cls, subjects[copied].object, &copies), IsOk());
  }
  for (; written < subjects.size(); ++written) {
    ASSERT_THAT(capturer.CaptureCopy(&copies, subjects[written].id, RecordKind::kObject, {}),
                IsOk());
  }
  EXPECT_EQ(copies.pending(), 0u);
  EXPECT_TRUE(SameBytes(CaptureAll(subjects), chunk.Finish()));
}

TEST_F(ObjectCopyTest, CopiesGoOnAfterEveryBlockWasLetGoOf) {
  std::vector<Blob> blobs = MakeBlobs(3, 300 * 1024);
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  // Each copy written before the next is made: the block before is let go of each time.
  for (std::size_t k = 0; k < blobs.size(); ++k) {
    ASSERT_THAT(capturer.Copy(Cls<Blob>(), &blobs[k], &copies), IsOk());
    ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(27, k), RecordKind::kObject, {}), IsOk());
  }
  Blob small;
  small.bytes = {9, 8, 7};
  ASSERT_THAT(capturer.Copy(Cls<Blob>(), &small, &copies), IsOk());
  ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(27, 9), RecordKind::kObject, {}), IsOk());
  EXPECT_TRUE(SameBytes(CaptureAll({Of(&blobs[0], Guid(27, 0)), Of(&blobs[1], Guid(27, 1)),
                                    Of(&blobs[2], Guid(27, 2)), Of(&small, Guid(27, 9))}),
                        chunk.Finish()));
}

// A copy refused after it made a block for itself (a long string, not UTF-8, is found bad only
// as it is written) leaves that block empty: the copies after it are written as Capture writes
// them, and the empty block is passed over.
TEST_F(ObjectCopyTest, ACopyRefusedAfterItMadeABlockLeavesNothingBehind) {
  std::vector<Blob> blobs = MakeBlobs(2, 200 * 1024);
  Strings bad = MakeStrings("ok", std::string(300 * 1024, 'x') + "\xff");
  Strings good = MakeStrings("fine", std::string(400 * 1024, 'y'));  // past that block
  ObjectCopies copies;
  ChunkWriter chunk;
  Capturer capturer(&chunk);
  ASSERT_THAT(capturer.Copy(Cls<Blob>(), &blobs[0], &copies), IsOk());
  EXPECT_THAT(capturer.Copy(Cls<Strings>(), &bad, &copies),
              StatusIs(StatusCode::kInvalidData, HasSubstr("field Large")));
  EXPECT_EQ(copies.pending(), 1u);
  ASSERT_THAT(capturer.Copy(Cls<Strings>(), &good, &copies), IsOk());
  ASSERT_THAT(capturer.Copy(Cls<Blob>(), &blobs[1], &copies), IsOk());
  EXPECT_EQ(copies.pending(), 3u);
  for (std::uint64_t k = 0; k < 3; ++k) {
    ASSERT_THAT(capturer.CaptureCopy(&copies, Guid(28, k), RecordKind::kObject, {}), IsOk());
  }
  EXPECT_EQ(copies.pending(), 0u);
  EXPECT_TRUE(SameBytes(CaptureAll({Of(&blobs[0], Guid(28, 0)), Of(&good, Guid(28, 1)),
                                    Of(&blobs[1], Guid(28, 2))}),
                        chunk.Finish()));
}

// ---- 7. Applying a copy's record ----

TEST_F(ObjectCopyTest, RecordsWrittenFromCopiesApplyBack) {
  Fixed f = MakeFixed(5);
  Fixed x = ExtremeFixed();
  Strings s = MakeStrings("h\xC3\xA9", "a string long enough to live on the heap");
  Lists l = MakeLists(50);
  Derived d = MakeDerived(4);
  Linked k;
  k.id = 77;
  k.same = &t1_;
  k.other = &t2_;
  k.unsaved = &t3_;
  k.box = {&t4_, "boxed"};
  const Bytes payload =
      CopyAll({Of(&t1_, kT1), Of(&f, Guid(25, 1)), Of(&x, Guid(25, 2)), Of(&s, Guid(25, 3)),
               Of(&l, Guid(25, 4)), Of(&d, Guid(25, 5)), Of(&k, Guid(25, 6))},
              &links_, More());
  Fixed loaded_f, loaded_x;
  ApplyRecord(payload, 2, &loaded_f);
  EXPECT_EQ(loaded_f.scratch, 0) << "not registered: not saved";
  loaded_f.scratch = f.scratch;
  EXPECT_EQ(loaded_f, f);
  ApplyRecord(payload, 3, &loaded_x);
  EXPECT_EQ(loaded_x, x);
  Strings loaded_s;
  ApplyRecord(payload, 4, &loaded_s);
  EXPECT_EQ(loaded_s, s);
  Lists loaded_l;
  ApplyRecord(payload, 5, &loaded_l);
  EXPECT_EQ(loaded_l, l);
  Derived loaded_d;
  ApplyRecord(payload, 6, &loaded_d);
  EXPECT_EQ(loaded_d, d);

  Target lt1, lt2, lt4, sentinel;
  TestLinks load_links;
  load_links.Live(kT1, &lt1);
  load_links.Live(kT2, &lt2);
  load_links.Live(kT4, &lt4);
  Linked loaded_k;
  loaded_k.unsaved = &sentinel;
  ApplyRecord(payload, 7, &loaded_k, &load_links);
  EXPECT_EQ(loaded_k.id, 77);
  EXPECT_EQ(loaded_k.none, nullptr);
  EXPECT_EQ(loaded_k.same, &lt1);
  EXPECT_EQ(loaded_k.other, &lt2);
  EXPECT_EQ(loaded_k.unsaved, nullptr) << "saved as null";
  EXPECT_EQ(loaded_k.box.target, &lt4);
  EXPECT_EQ(loaded_k.box.why, "boxed");

  // The added sections are in the records, as written.
  ASSERT_OK_AND_ASSIGN(const Payload decoded, DecodePayload(payload));
  ASSERT_EQ(decoded.records.size(), 7u);
  const Section* actr = decoded.records[3].Find({'A', 'C', 'T', 'R'});
  ASSERT_NE(actr, nullptr);
  EXPECT_EQ(actr->bytes, (Bytes{1, 2, 3}));
  EXPECT_EQ(decoded.records[3].subject, Guid(25, 3));
}

}  // namespace
}  // namespace rolly::record
