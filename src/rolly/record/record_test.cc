#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status_matchers.h"
#include "rolly/record/apply.h"
#include "rolly/record/capture.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/internal/testing.h"
#include "rolly/record/record_codec.h"
#include "rolly/record/value_tree.h"
#include "rolly/reflect/type_registry.h"

namespace rolly::record {
namespace {

using reflect::kSaveGame;
using reflect::TypeRegistry;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

enum class Mood : std::uint16_t { kCalm = 0, kAngry = 5, kSleepy = 9 };

struct Inner {
  std::int32_t a = 0;
  std::string s;
  std::vector<Name> names;
  friend bool operator==(const Inner&, const Inner&) = default;
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
  reflect::SoftPath path;
  Mood mood = Mood::kCalm;
  Inner inner;
  std::vector<std::int32_t> ints;
  std::array<float, 3> arr{};
  std::set<std::string> tags;
  std::unordered_set<std::int64_t> ids;
  std::map<std::string, Inner> inners;
  std::unordered_map<std::int32_t, std::vector<double>> series;
  std::optional<std::int32_t> maybe;
  std::optional<Inner> maybe_inner;
  std::vector<std::vector<Mood>> nested;
  std::int32_t via_setter = 0;
  int setter_calls = 0;
  std::int64_t extra = 0;

  void SetViaSetter(std::int32_t v) {
    via_setter = v;
    ++setter_calls;
  }
  void WriteExtra(reflect::ExtraWriter& w) const { w.WriteInt(extra); }
  void ReadExtra(reflect::ExtraReader& r) { r.ReadInt(&extra); }

  bool SameValues(const Everything& o) const {
    Everything a = *this, c = o;
    a.setter_calls = c.setter_calls = 0;
    return std::tie(a.b, a.i8, a.i16, a.i32, a.i64, a.u8, a.u16, a.u32, a.u64, a.f, a.d, a.s, a.n,
                    a.g, a.color, a.when, a.v2f, a.v2d, a.v3f, a.v3d, a.v4f, a.v4d, a.qf, a.qd,
                    a.rf, a.rd, a.tf, a.td, a.path, a.mood, a.inner, a.ints, a.arr, a.tags, a.ids,
                    a.inners, a.series, a.maybe, a.maybe_inner, a.nested, a.via_setter, a.extra) ==
           std::tie(c.b, c.i8, c.i16, c.i32, c.i64, c.u8, c.u16, c.u32, c.u64, c.f, c.d, c.s, c.n,
                    c.g, c.color, c.when, c.v2f, c.v2d, c.v3f, c.v3d, c.v4f, c.v4d, c.qf, c.qd,
                    c.rf, c.rd, c.tf, c.td, c.path, c.mood, c.inner, c.ints, c.arr, c.tags, c.ids,
                    c.inners, c.series, c.maybe, c.maybe_inner, c.nested, c.via_setter, c.extra);
  }
};

void RegisterEverything(TypeRegistry& r) {
  r.Enum<Mood>("Mood")
      .Value("Calm", Mood::kCalm)
      .Value("Angry", Mood::kAngry)
      .Value("Sleepy", Mood::kSleepy);
  r.Struct<Inner>("Inner")
      .Field("A", &Inner::a, kSaveGame)
      .Field("S", &Inner::s, kSaveGame)
      .Field("Names", &Inner::names, kSaveGame);
  r.Class<Everything>("Everything")
      .Field("B", &Everything::b, kSaveGame)
      .Field("I8", &Everything::i8, kSaveGame)
      .Field("I16", &Everything::i16, kSaveGame)
      .Field("I32", &Everything::i32, kSaveGame)
      .Field("I64", &Everything::i64, kSaveGame)
      .Field("U8", &Everything::u8, kSaveGame)
      .Field("U16", &Everything::u16, kSaveGame)
      .Field("U32", &Everything::u32, kSaveGame)
      .Field("U64", &Everything::u64, kSaveGame)
      .Field("F", &Everything::f, kSaveGame)
      .Field("D", &Everything::d, kSaveGame)
      .Field("S", &Everything::s, kSaveGame)
      .Field("N", &Everything::n, kSaveGame)
      .Field("G", &Everything::g, kSaveGame)
      .Field("Color", &Everything::color, kSaveGame)
      .Field("When", &Everything::when, kSaveGame)
      .Field("V2f", &Everything::v2f, kSaveGame)
      .Field("V2d", &Everything::v2d, kSaveGame)
      .Field("V3f", &Everything::v3f, kSaveGame)
      .Field("V3d", &Everything::v3d, kSaveGame)
      .Field("V4f", &Everything::v4f, kSaveGame)
      .Field("V4d", &Everything::v4d, kSaveGame)
      .Field("Qf", &Everything::qf, kSaveGame)
      .Field("Qd", &Everything::qd, kSaveGame)
      .Field("Rf", &Everything::rf, kSaveGame)
      .Field("Rd", &Everything::rd, kSaveGame)
      .Field("Tf", &Everything::tf, kSaveGame)
      .Field("Td", &Everything::td, kSaveGame)
      .Field("Path", &Everything::path, kSaveGame)
      .Field("Mood", &Everything::mood, kSaveGame)
      .Field("Inner", &Everything::inner, kSaveGame)
      .Field("Ints", &Everything::ints, kSaveGame)
      .Field("Arr", &Everything::arr, kSaveGame)
      .Field("Tags", &Everything::tags, kSaveGame)
      .Field("Ids", &Everything::ids, kSaveGame)
      .Field("Inners", &Everything::inners, kSaveGame)
      .Field("Series", &Everything::series, kSaveGame)
      .Field("Maybe", &Everything::maybe, kSaveGame)
      .Field("MaybeInner", &Everything::maybe_inner, kSaveGame)
      .Field("Nested", &Everything::nested, kSaveGame)
      .Field("ViaSetter", &Everything::via_setter, kSaveGame, &Everything::SetViaSetter)
      .SaveExtra(&Everything::WriteExtra, &Everything::ReadExtra);
}

Everything Sample() {
  Everything e;
  e.b = true;
  e.i8 = -128;
  e.i16 = -300;
  e.i32 = std::numeric_limits<std::int32_t>::min();
  e.i64 = std::numeric_limits<std::int64_t>::min();
  e.u8 = 255;
  e.u16 = 65535;
  e.u32 = 0xFFFFFFFFu;
  e.u64 = ~std::uint64_t{0};
  e.f = -1.5f;
  e.d = 3.25e300;
  e.s = "héllo wörld";
  e.n = Name("Door_7");
  e.g = Guid(0x0123456789ABCDEFull, 0xFEDCBA9876543210ull);
  e.color = {0.1f, 0.2f, 0.3f, 0.4f};
  e.when = {638000000000000000};
  e.v2f = {1, 2};
  e.v2d = {3, 4};
  e.v3f = {5, 6, 7};
  e.v3d = {8, 9, 10};
  e.v4f = {1, 2, 3, 4};
  e.v4d = {5, 6, 7, 8};
  e.qf = {0, 0, 0.7f, 0.7f};
  e.qd = {0.5, 0.5, 0.5, 0.5};
  e.rf = {10, 20, 30};
  e.rd = {-10, -20, -30};
  e.tf.translation = {1, 2, 3};
  e.td.scale = {2, 2, 2};
  e.path = {"/Game/Maps/Level1"};
  e.mood = Mood::kSleepy;
  e.inner = {42, "inner", {Name("A"), Name("B"), Name("Door_7")}};
  e.ints = {1, -2, 300000};
  e.arr = {1.f, 2.f, 3.f};
  e.tags = {"x", "y", "zz"};
  e.ids = {7, -8, 9000000000};
  e.inners = {{"one", {1, "1", {}}}, {"two", {2, "2", {Name("Two")}}}};
  e.series = {{3, {0.5, 1.5}}, {-4, {}}};
  e.maybe = 17;
  e.maybe_inner = Inner{5, "five", {}};
  e.nested = {{Mood::kAngry}, {}, {Mood::kCalm, Mood::kSleepy}};
  e.via_setter = 99;
  e.extra = -123456789;
  return e;
}

class EverythingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterEverything(registry_);
    ASSERT_THAT(registry_.Finish(), IsOk());
    cls_ = registry_.FindClass<Everything>();
  }
  Bytes Save(const Everything& e) {
    Payload p;
    Result<Record> r = CaptureObject(*cls_, &e, Guid(1, 2), RecordKind::kActor, &p.tables);
    EXPECT_THAT(r, IsOk());
    p.records.push_back(*r);
    Result<Bytes> bytes = EncodePayload(p);
    EXPECT_THAT(bytes, IsOk());
    return *bytes;
  }
  Status Load(ByteView bytes, Everything* e, std::vector<std::string>* messages = nullptr) {
    ROLLY_ASSIGN_OR_RETURN(Payload p, DecodePayload(bytes));
    Applier applier(registry_, p);
    for (const Record& r : p.records) {
      if (IsKnownObjectKind(r.kind)) ROLLY_RETURN_IF_ERROR(applier.Apply(r, *cls_, e, messages));
    }
    return OkStatus();
  }
  // A captured actor record carrying a section this version does not know (`future`), and a
  // record of a kind it does not know (`strange`).
  struct Unknowns {
    Payload payload;  // its tables
    Record actor;
    Section future;
    Record strange;
  };
  Unknowns WithUnknowns(const Everything& e) {
    Unknowns u;
    Result<Record> r = CaptureObject(*cls_, &e, Guid(1, 2), RecordKind::kActor, &u.payload.tables);
    EXPECT_THAT(r, IsOk());
    u.future.id = {'Z', 'Z', 'Z', '9'};
    u.future.bytes = {1, 2, 3, 0xFF};
    u.actor = *r;
    u.actor.sections.insert(u.actor.sections.begin(), u.future);
    u.strange.kind = 200;
    u.strange.unknown = {0xDE, 0xAD, 0xBE, 0xEF, 0x80};
    return u;
  }
  // WithUnknowns' payload with `n` records: the actor under subjects of its own and the strange
  // record in turn, every fifth with a ZZZ8 section.
  Result<Bytes> ManyRecords(std::size_t n) {
    auto [p, actor, future, strange] = WithUnknowns(Sample());
    const Section other{{'Z', 'Z', 'Z', '8'}, {7}};
    for (std::uint64_t i = 0; i < n; ++i) {
      p.records.push_back(i % 7 == 3 ? strange : actor);
      if (p.records.back().kind != strange.kind) p.records.back().subject = Guid(5, i);
      if (i % 5 == 0) p.records.back().sections.push_back(other);
    }
    return EncodePayload(p);
  }
  TypeRegistry registry_;
  const reflect::ClassInfo* cls_ = nullptr;
};

// That `got` holds the bytes and records of `want`, as its index tells them.
void ExpectSameRecords(const CheckedPayload& got, const CheckedPayload& want) {
  EXPECT_THAT(got.bytes(), ElementsAreArray(want.bytes()));
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got.Get(i), want.Get(i)) << i;
    EXPECT_EQ(got.kind(i), want.kind(i)) << i;
    EXPECT_EQ(got.subject(i), want.subject(i)) << i;
    EXPECT_EQ(got.layout(i), want.layout(i)) << i;
    EXPECT_EQ(got.FirstChecked(i), want.FirstChecked(i)) << i;
  }
}

// What the tests of a check on two threads share: a check of ManyRecords' sections (ZZZ8, and
// WithUnknowns' ZZZ9) that counts its calls and refuses record `fail_at` (0: none), and three ways
// to hand the second thread its task: a thread of its own, at once, or never (the check then
// takes it back). Settle() joins the threads and runs the tasks never run, too late to do any.
struct TwoThreadCheck {
  TwoThreadCheck() {
    sections.ids = asked;
    CountAndRefuse();
  }
  void CountAndRefuse() {
    sections.check = [this](std::size_t i, std::size_t, ByteView) {
      ++checks;
      return i == fail_at ? DamagedError("record " + std::to_string(i) + ": ZZZ8 is bad")
                          : OkStatus();
    };
  }
  void Settle() {
    for (std::thread& t : threads) t.join();
    threads.clear();
    for (auto& task : dropped) task();
    dropped.clear();
  }
  const SectionId asked[2] = {{'Z', 'Z', 'Z', '8'}, {'Z', 'Z', 'Z', '9'}};
  std::atomic<std::size_t> fail_at{0};
  std::atomic<int> checks{0};
  CheckedPayload::SectionCheck sections;
  std::vector<std::thread> threads;
  std::vector<std::function<void()>> dropped;
  const CheckedPayload::Post on_a_thread = [this](std::function<void()> task) {
    threads.emplace_back(std::move(task));
  };
  const CheckedPayload::Post at_once = [](std::function<void()> task) { task(); };
  const CheckedPayload::Post never = [this](std::function<void()> task) {
    dropped.push_back(std::move(task));
  };
};

TEST_F(EverythingTest, EveryValueTypeRoundTrips) {
  Everything original = Sample();
  Bytes bytes = Save(original);
  Everything loaded;
  std::vector<std::string> messages;
  ASSERT_THAT(Load(bytes, &loaded, &messages), IsOk());
  EXPECT_TRUE(loaded.SameValues(original));
  EXPECT_THAT(messages, ::testing::IsEmpty());
  EXPECT_EQ(loaded.setter_calls, 1);
}

TEST_F(EverythingTest, DefaultObjectRoundTrips) {
  Everything original;
  Everything loaded = Sample();
  ASSERT_THAT(Load(Save(original), &loaded), IsOk());
  EXPECT_TRUE(loaded.SameValues(original));
}

TEST_F(EverythingTest, DecodeThenEncodeGivesTheSameBytes) {
  Everything e = Sample();
  Payload p;
  for (int i = 0; i < 3; ++i) {
    e.i32 = i;
    Result<Record> r = CaptureObject(*cls_, &e, Guid(3, i), RecordKind::kObject, &p.tables);
    ASSERT_THAT(r, IsOk());
    p.records.push_back(*r);
  }
  Result<Bytes> bytes = EncodePayload(p);
  ASSERT_THAT(bytes, IsOk());
  Result<Payload> decoded = DecodePayload(*bytes);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->records, p.records);
  Result<Bytes> again = EncodePayload(*decoded);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(*again, *bytes);
}

TEST_F(EverythingTest, NamesAndTypesAreWrittenOncePerChunk) {
  Everything e;
  Payload p;
  for (int i = 0; i < 10; ++i) {
    ASSERT_THAT(CaptureObject(*cls_, &e, Guid(3, i), RecordKind::kObject, &p.tables), IsOk());
  }
  EXPECT_EQ(p.tables.layouts().size(), 2u);  // Everything and Inner
  const std::size_t names = p.tables.names().size();
  const std::size_t types = p.tables.types().size();
  Result<Record> r = CaptureObject(*cls_, &e, Guid(3, 1), RecordKind::kObject, &p.tables);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(p.tables.names().size(), names);
  EXPECT_EQ(p.tables.types().size(), types);
  // No field name in the record's bytes: the layout names them.
  std::string_view prop = AsChars(r->Find(kPropSection)->bytes);
  EXPECT_EQ(prop.find("ViaSetter"), std::string_view::npos);
}

TEST_F(EverythingTest, ValueTreeRoundTripsBytesExactly) {
  Bytes bytes = Save(Sample());
  Result<Payload> p = DecodePayload(bytes);
  ASSERT_THAT(p, IsOk());
  Result<Value> tree = DecodeProp(p->tables, p->records[0]);
  ASSERT_THAT(tree, IsOk());
  Result<EncodedValues> prop = EncodeProp(&p->tables, p->records[0].layout, *tree);
  ASSERT_THAT(prop, IsOk());
  EXPECT_EQ(prop->prop, p->records[0].Find(kPropSection)->bytes);
}

TEST_F(EverythingTest, MovedRecordKeepsItsValues) {
  Everything original = Sample();
  original.f = std::numeric_limits<float>::quiet_NaN();
  Bytes bytes = Save(original);
  Result<Payload> from = DecodePayload(bytes);
  ASSERT_THAT(from, IsOk());
  // A chunk whose tables already hold other names and types, so every index differs.
  Payload to;
  ASSERT_THAT(to.tables.AddName(Name("Unrelated")), IsOk());
  ASSERT_THAT(to.tables.AddName(Name("Sleepy")), IsOk());
  to.tables.AddType({SavedKind::kDouble});
  Result<Record> moved = MoveRecord(from->tables, from->records[0], &to.tables);
  ASSERT_THAT(moved, IsOk());
  to.records.push_back(*moved);
  Result<Bytes> moved_bytes = EncodePayload(to);
  ASSERT_THAT(moved_bytes, IsOk());
  Result<Payload> reread = DecodePayload(*moved_bytes);
  ASSERT_THAT(reread, IsOk());
  Result<Value> a = DecodeProp(from->tables, from->records[0]);
  Result<Value> b = DecodeProp(reread->tables, reread->records[0]);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(*a, *b);  // float bits included
  Everything loaded;
  ASSERT_THAT(Load(*moved_bytes, &loaded), IsOk());
  loaded.f = original.f = 0;
  EXPECT_TRUE(loaded.SameValues(original));
}

TEST_F(EverythingTest, UnknownKindsAndSectionsAreKeptWhole) {
  Everything e = Sample();
  auto [p, actor, future, strange] = WithUnknowns(e);
  p.records.push_back(strange);
  p.records.push_back(actor);
  Result<Bytes> bytes = EncodePayload(p);
  ASSERT_THAT(bytes, IsOk());
  Result<Payload> decoded = DecodePayload(*bytes);
  ASSERT_THAT(decoded, IsOk());
  ASSERT_EQ(decoded->records.size(), 2u);
  EXPECT_EQ(decoded->records[0].unknown, strange.unknown);
  ASSERT_NE(decoded->records[1].Find(future.id), nullptr);
  EXPECT_EQ(*decoded->records[1].Find(future.id), future);
  Result<Bytes> again = EncodePayload(*decoded);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(*again, *bytes);
  Everything loaded;
  ASSERT_THAT(Load(*bytes, &loaded), IsOk());
  EXPECT_TRUE(loaded.SameValues(e));
  EXPECT_THAT(MoveRecord(decoded->tables, decoded->records[1], &p.tables),
              StatusIs(StatusCode::kNewerVersion));
  EXPECT_THAT(MoveRecord(decoded->tables, decoded->records[0], &p.tables),
              StatusIs(StatusCode::kNewerVersion));
}

// What an apply reads of each record (PartsToApply): PROP, and INLN and XTRA exactly when the
// record has them, whatever else it holds and in whichever order; the same from a check in two
// halves.
TEST_F(EverythingTest, PartsToApplyGivesPropAndTheExtraSectionARecordHas) {
  Everything e = Sample();
  auto [p, actor, future, strange] = WithUnknowns(e);
  // (Records with INLN: FeaturesTest.PartsToApplyOfRecordsWithOwnedObjects.)
  ASSERT_NE(actor.Find(kExtraSection), nullptr);
  Record no_extra = actor;
  std::erase_if(no_extra.sections,
                [](const Section& s) { return SameSection(s.id, kExtraSection); });
  Record reversed = actor;  // the other sections in another order
  std::reverse(reversed.sections.begin(), reversed.sections.end());
  Record plain = actor;  // PROP alone
  std::erase_if(plain.sections, [](const Section& s) { return !SameSection(s.id, kPropSection); });
  for (const Record& r : {actor, no_extra, strange, reversed, plain}) {
    for (int k = 0; k < 40; ++k) p.records.push_back(r);
  }
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, EncodePayload(p));
  ExpectPartsToApplyAsDecoded(bytes);
}

// What a loaded save keeps: the bytes and where each record lies. Every record reads the same as
// DecodePayload's, sections are found in place, and unknown kinds and sections come through.
TEST_F(EverythingTest, CheckedPayloadReadsWhatDecodePayloadReads) {
  Everything e = Sample();
  auto [p, actor, future, strange] = WithUnknowns(e);
  p.records.push_back(actor);
  p.records.push_back(strange);
  p.records.push_back(actor);
  p.records.back().subject = Guid(3, 4);
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, EncodePayload(p));
  ASSERT_OK_AND_ASSIGN(const Payload decoded, DecodePayload(bytes));
  FileBudget budget;
  ASSERT_OK_AND_ASSIGN(const CheckedPayload checked, CheckedPayload::Check(bytes, &budget));
  FileBudget decode_budget;
  ASSERT_THAT(DecodePayload(bytes, &decode_budget), IsOk());
  EXPECT_EQ(budget, decode_budget);
  EXPECT_THAT(checked.bytes(), ElementsAreArray(bytes));
  EXPECT_EQ(checked.tables().layouts().size(), decoded.tables.layouts().size());
  ASSERT_EQ(checked.size(), 3u);
  for (std::size_t i = 0; i < checked.size(); ++i) {
    const Record& want = decoded.records[i];
    EXPECT_EQ(checked.Get(i), want) << i;
    EXPECT_EQ(checked.kind(i), want.kind) << i;
    EXPECT_EQ(checked.subject(i), want.subject) << i;
    EXPECT_EQ(checked.layout(i), want.layout) << i;
    for (const SectionId id : {kPropSection, future.id, kExtraSection, kOwnedSection}) {
      ByteView found;
      const Section* s = want.Find(id);
      EXPECT_EQ(checked.Find(i, id, &found), s != nullptr) << i;
      if (s != nullptr) {
        EXPECT_EQ(Bytes(found.begin(), found.end()), s->bytes) << i;
      }
    }
    // FindEach finds the same in one walk, whatever the order asked and with absent IDs between.
    const SectionId asked[] = {kOwnedSection, SectionId{'N', 'O', 'N', 'E'}, kPropSection,
                               future.id, kExtraSection};
    ByteView each[5];
    const std::uint32_t has = checked.FindEach(i, asked, each);
    for (std::size_t k = 0; k < 5; ++k) {
      const Section* s = want.Find(asked[k]);
      EXPECT_EQ((has >> k) & 1, s != nullptr ? 1u : 0u) << i << " " << k;
      if (s != nullptr) {
        EXPECT_EQ(Bytes(each[k].begin(), each[k].end()), s->bytes) << i << " " << k;
      }
    }
  }
  // References by record index name the same subjects through either.
  const RecordSubjects from_records(&decoded.records), from_checked(&checked);
  ASSERT_EQ(from_records.size(), from_checked.size());
  for (std::size_t i = 1; i <= from_checked.size(); ++i) {
    EXPECT_EQ(from_records.subject(i), from_checked.subject(i)) << i;
  }
  // Refused as DecodePayload refuses, and an empty payload is refused too.
  Bytes cut(bytes.begin(), bytes.end() - 1);
  EXPECT_THAT(CheckedPayload::Check(cut), StatusIs(DecodePayload(cut).status().code()));
  EXPECT_THAT(CheckedPayload::Check(Bytes()), StatusIs(StatusCode::kDamaged));
}

// A layer's own sections are checked in Check's walk: each section asked for, in the order asked,
// record by record; the first failure is Check's status only when the structure check passed
// (a payload broken both ways fails as the structure check says), and leaves the budget as it was.
TEST_F(EverythingTest, CheckedPayloadChecksALayersSectionsInItsWalk) {
  Everything e = Sample();
  auto [p, actor, future, strange] = WithUnknowns(e);
  Section other{{'Z', 'Z', 'Z', '8'}, {7}};
  p.records.push_back(actor);
  p.records.push_back(strange);
  p.records.push_back(actor);
  p.records.back().subject = Guid(3, 4);
  p.records.back().sections.push_back(other);
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, EncodePayload(p));
  const SectionId asked[] = {other.id, SectionId{'N', 'O', 'N', 'E'}, future.id};
  std::vector<std::string> seen;
  std::size_t fail_at = 0;  // the record whose sections fail the check (0: none)
  CheckedPayload::SectionCheck sections;
  sections.ids = asked;
  sections.check = [&](std::size_t i, std::size_t k, ByteView body) {
    seen.push_back(std::to_string(i) + " " + std::to_string(k) + " " +
                   std::to_string(body.size()));
    return i == fail_at ? DamagedError("record " + std::to_string(i) + ": ZZZ8 is bad")
                        : OkStatus();
  };
  FileBudget budget;
  ASSERT_OK_AND_ASSIGN(const CheckedPayload checked,
                       CheckedPayload::Check(bytes, &budget, sections));
  EXPECT_EQ(checked.size(), 3u);
  EXPECT_THAT(seen, ElementsAre("1 2 4", "3 0 1", "3 2 4"));
  FileBudget plain;
  ASSERT_OK_AND_ASSIGN(const CheckedPayload unasked, CheckedPayload::Check(bytes, &plain));
  EXPECT_EQ(budget, plain);
  // The check notes the first of the sections asked that each record holds, in the order asked:
  // none for a kind this version does not know, or for a check that asked for none.
  EXPECT_EQ(checked.FirstChecked(0), 2);
  EXPECT_EQ(checked.FirstChecked(1), -1);
  EXPECT_EQ(checked.FirstChecked(2), 0);
  for (std::size_t i = 0; i < unasked.size(); ++i) EXPECT_EQ(unasked.FirstChecked(i), -1) << i;

  // A failure: the checks after it do not run, and the budget stays as it was.
  seen.clear();
  fail_at = 3;
  FileBudget untouched;
  EXPECT_THAT(CheckedPayload::Check(bytes, &untouched, sections),
              StatusIs(StatusCode::kDamaged, "record 3: ZZZ8 is bad"));
  EXPECT_THAT(seen, ElementsAre("1 2 4", "3 0 1"));
  EXPECT_EQ(untouched, FileBudget{});

  // A payload that also fails the structure check, past the failing sections, fails as that says.
  fail_at = 1;
  Bytes cut(bytes.begin(), bytes.end() - 1);
  ASSERT_FALSE(CheckedPayload::Check(cut).ok());
  EXPECT_THAT(CheckedPayload::Check(cut, nullptr, sections),
              StatusIs(CheckedPayload::Check(cut).status().code(),
                       std::string(CheckedPayload::Check(cut).status().message())));
}

// FirstChecked tells apart the first 63 sections asked for: a record holding only the 64th is
// noted as holding none of them.
TEST_F(EverythingTest, FirstCheckedTellsApartTheFirst63SectionsAsked) {
  Everything e = Sample();
  auto [p, actor, future, strange] = WithUnknowns(e);
  std::vector<SectionId> asked;
  for (int k = 0; k < 64; ++k) {
    asked.push_back(SectionId{'Q', static_cast<char>('0' + k / 10), static_cast<char>('0' + k % 10),
                              'X'});
  }
  ASSERT_EQ(CheckedPayload::kMaxFirstChecked, 63u);
  for (const std::size_t k : {std::size_t{62}, std::size_t{63}}) {
    p.records.push_back(actor);
    p.records.back().sections.push_back(Section{asked[k], {1}});
  }
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, EncodePayload(p));
  std::vector<std::size_t> seen;
  CheckedPayload::SectionCheck sections;
  sections.ids = asked;
  sections.check = [&](std::size_t, std::size_t k, ByteView) {
    seen.push_back(k);
    return OkStatus();
  };
  ASSERT_OK_AND_ASSIGN(const CheckedPayload checked,
                       CheckedPayload::Check(bytes, nullptr, sections));
  ASSERT_EQ(checked.size(), 2u);
  EXPECT_EQ(checked.FirstChecked(0), 62);
  EXPECT_EQ(checked.FirstChecked(1), -1);
  // The 64th is still checked.
  EXPECT_THAT(seen, ElementsAre(62u, 63u));
}

// A check split in two halves, the second handed to `post`, gives what the check in order gives:
// the same records, subjects and budget, and for a payload refused anywhere (structure or a
// layer's sections, in either half) the same status and message. It does whether `post` runs the
// task on another thread, runs it at once, or never runs it (the caller then takes it back).
TEST_F(EverythingTest, ASplitCheckGivesWhatTheCheckInOrderGives) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, ManyRecords(41));
  TwoThreadCheck c;
  auto split = [&](const Bytes& b, const CheckedPayload::Post& post, FileBudget* budget) {
    Result<CheckedPayload> r = CheckedPayload::Check(b, budget, c.sections, post, 0);
    c.Settle();
    return r;
  };

  FileBudget in_order_budget;
  ASSERT_OK_AND_ASSIGN(const CheckedPayload in_order,
                       CheckedPayload::Check(bytes, &in_order_budget, c.sections));
  const int in_order_checks = c.checks.exchange(0);
  for (const CheckedPayload::Post* post : {&c.on_a_thread, &c.at_once, &c.never}) {
    FileBudget budget;
    ASSERT_OK_AND_ASSIGN(const CheckedPayload checked, split(bytes, *post, &budget));
    EXPECT_EQ(c.checks.exchange(0), in_order_checks);
    EXPECT_EQ(budget, in_order_budget);
    ExpectSameRecords(checked, in_order);
  }
  // Each half holds each answer (a section asked first, another, none), so the split's are
  // compared for all three.
  for (const std::size_t from : {std::size_t{0}, in_order.size() - 15}) {
    std::set<int> firsts;
    for (std::size_t i = from; i < from + 15; ++i) firsts.insert(in_order.FirstChecked(i));
    EXPECT_THAT(firsts, ElementsAre(-1, 0, 1)) << from;
  }
  // Below `split_bytes` it is the check in order, and `post` is not called.
  FileBudget small;
  EXPECT_THAT(CheckedPayload::Check(bytes, &small, c.sections, c.never, bytes.size() + 1), IsOk());
  EXPECT_TRUE(c.dropped.empty());

  // Refused in the first half or the second: by a layer's sections, by a cut, by a byte after the
  // last record, and both ways at once. The budget is left as it was.
  const Bytes cut(bytes.begin(), bytes.end() - 1);
  Bytes longer = bytes;
  longer.push_back(0);
  for (const std::size_t at : {std::size_t{1}, std::size_t{36}}) {
    c.fail_at = at;
    for (const Bytes* b : {&bytes, &cut, static_cast<const Bytes*>(&longer)}) {
      const Result<CheckedPayload> want = CheckedPayload::Check(*b, nullptr, c.sections);
      ASSERT_FALSE(want.ok());
      for (const CheckedPayload::Post* post : {&c.on_a_thread, &c.at_once, &c.never}) {
        FileBudget untouched;
        EXPECT_EQ(split(*b, *post, &untouched).status(), want.status()) << at;
        EXPECT_EQ(untouched, FileBudget{});
      }
    }
  }
}

// A check of bytes that arrive while it runs (CheckWhileFilled) gives what the check in order of
// the whole bytes gives, however the bytes arrive and whoever takes the follower's task; a fill
// that fails gives its own status, and the follower waiting on it stops. Over 256 records, so
// the follower claims more than one batch and the filling thread takes a share of its own; over
// 4,096 bytes of head and records, so the follower tries the head on more than one prefix.
TEST_F(EverythingTest, ACheckOfArrivingBytesGivesWhatTheCheckInOrderGives) {
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, ManyRecords(5000));
  TwoThreadCheck c;
  // Copies `b` in steps of `step` bytes; with `fail_after`, fails once that many arrived.
  auto filling = [](const Bytes& b, std::size_t step,
                    std::size_t fail_after = ~std::size_t{0}) -> CheckedPayload::Fill {
    return [&b, step, fail_after](std::span<std::uint8_t> out,
                                  const std::function<void(std::size_t)>& arrived) {
      for (std::size_t at = 0; at < b.size();) {
        if (at >= fail_after) return DamagedError("the frame stops");
        const std::size_t n = std::min({step, b.size() - at, fail_after - at});
        std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(at), n, out.begin() + at);
        at += n;
        arrived(at);
      }
      return OkStatus();
    };
  };
  auto check = [&](const Bytes& b, const CheckedPayload::Fill& fill,
                   const CheckedPayload::Post& post, FileBudget* budget) {
    Result<CheckedPayload> r =
        CheckedPayload::CheckWhileFilled(b.size(), fill, budget, c.sections, post, 0);
    c.Settle();
    return r;
  };

  FileBudget in_order_budget;
  ASSERT_OK_AND_ASSIGN(const CheckedPayload in_order,
                       CheckedPayload::Check(bytes, &in_order_budget, c.sections));
  const int in_order_checks = c.checks.exchange(0);
  for (const std::size_t step : {std::size_t{1}, std::size_t{997}, bytes.size()}) {
    for (const CheckedPayload::Post* post : {&c.on_a_thread, &c.at_once, &c.never}) {
      FileBudget budget;
      ASSERT_OK_AND_ASSIGN(const CheckedPayload checked,
                           check(bytes, filling(bytes, step), *post, &budget));
      EXPECT_EQ(c.checks.exchange(0), in_order_checks) << step;
      EXPECT_EQ(budget, in_order_budget);
      ExpectSameRecords(checked, in_order);
    }
  }

  // The follower checks records before the last bytes arrive: this fill waits, half way, until
  // a record was checked.
  std::mutex m;
  std::condition_variable cv;
  std::atomic<bool> followed{false};
  c.sections.check = [&](std::size_t, std::size_t, ByteView) {
    std::lock_guard lock(m);
    followed = true;
    cv.notify_all();
    return OkStatus();
  };
  const CheckedPayload::Fill waits_half_way = [&](std::span<std::uint8_t> out,
                                                  const std::function<void(std::size_t)>& arrived) {
    const std::size_t half = bytes.size() / 2;
    std::copy_n(bytes.begin(), half, out.begin());
    arrived(half);
    std::unique_lock lock(m);
    cv.wait_for(lock, std::chrono::seconds(30), [&] { return followed.load(); });
    lock.unlock();
    std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(half), bytes.end(), out.begin() + half);
    arrived(bytes.size());
    return OkStatus();
  };
  FileBudget budget;
  EXPECT_OK(check(bytes, waits_half_way, c.on_a_thread, &budget).status());
  EXPECT_TRUE(followed);
  EXPECT_EQ(budget, in_order_budget);
  c.CountAndRefuse();

  // The first 4,096 bytes alone for a while: too few for the head (the record count is larger),
  // so the follower tries a longer prefix, and the check is still the one in order's.
  const CheckedPayload::Fill head_first = [&](std::span<std::uint8_t> out,
                                              const std::function<void(std::size_t)>& arrived) {
    std::copy(bytes.begin(), bytes.end(), out.begin());
    arrived(4096);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    arrived(bytes.size());
    return OkStatus();
  };
  ASSERT_LT(4096u, in_order.size());
  budget = FileBudget();
  EXPECT_OK(check(bytes, head_first, c.on_a_thread, &budget).status());
  EXPECT_EQ(c.checks.exchange(0), in_order_checks);
  EXPECT_EQ(budget, in_order_budget);

  // Below `split_bytes`, the fill runs, then the check, and `post` is not called.
  FileBudget small;
  EXPECT_THAT(CheckedPayload::CheckWhileFilled(bytes.size(), filling(bytes, 997), &small,
                                               c.sections, c.never, bytes.size() + 1),
              IsOk());
  EXPECT_TRUE(c.dropped.empty());

  // Refused early, late, by a cut, by a byte after the last record, both ways at once: the
  // status of the check in order; the budget left as it was.
  const Bytes cut(bytes.begin(), bytes.end() - 1);
  Bytes longer = bytes;
  longer.push_back(0);
  for (const std::size_t at : {std::size_t{1}, std::size_t{36}, std::size_t{4880}}) {
    c.fail_at = at;
    for (const Bytes* b : {&bytes, &cut, static_cast<const Bytes*>(&longer)}) {
      const Result<CheckedPayload> want = CheckedPayload::Check(*b, nullptr, c.sections);
      ASSERT_FALSE(want.ok());
      for (const CheckedPayload::Post* post : {&c.on_a_thread, &c.at_once, &c.never}) {
        FileBudget untouched;
        EXPECT_EQ(check(*b, filling(*b, 997), *post, &untouched).status(), want.status()) << at;
        EXPECT_EQ(untouched, FileBudget{});
      }
    }
  }
  c.fail_at = 0;
  // A head that does not read (the record count made 0), and a payload of one record after the
  // tables, too few to share: the check in order's answer.
  Bytes no_count = bytes;
  no_count[0] = 0;
  Everything few = Sample();
  auto [q, one, q_future, q_strange] = WithUnknowns(few);
  q.records.assign(1, one);
  ASSERT_OK_AND_ASSIGN(const Bytes short_payload, EncodePayload(q));
  for (const Bytes* b : {static_cast<const Bytes*>(&no_count), &short_payload}) {
    const Result<CheckedPayload> want = CheckedPayload::Check(*b, nullptr, c.sections);
    for (const CheckedPayload::Post* post : {&c.on_a_thread, &c.at_once, &c.never}) {
      const Result<CheckedPayload> got = check(*b, filling(*b, 997), *post, nullptr);
      EXPECT_EQ(got.status(), want.status());
      if (got.ok() && want.ok()) {
        EXPECT_EQ(got->size(), want->size());
      }
    }
  }
  EXPECT_THAT(CheckedPayload::Check(no_count, nullptr, c.sections),
              StatusIs(StatusCode::kDamaged, HasSubstr("record count")));
  // A fill that fails, before any byte, part way, one byte short: its status, the follower
  // released (the threads join), the budget as it was.
  for (const std::size_t after : {std::size_t{0}, bytes.size() / 2, bytes.size() - 1}) {
    for (const CheckedPayload::Post* post : {&c.on_a_thread, &c.at_once, &c.never}) {
      FileBudget untouched;
      EXPECT_THAT(check(bytes, filling(bytes, 997, after), *post, &untouched),
                  StatusIs(StatusCode::kDamaged, HasSubstr("the frame stops")))
          << after;
      EXPECT_EQ(untouched, FileBudget{});
    }
  }
}

// Section IDs are four bytes from '!' (0x21) to '~' (0x7E): each byte just past either end, or
// with its top bit set, is refused wherever it sits in the ID.
TEST_F(EverythingTest, SectionIdsOfBytesOutsidePrintableAsciiAreRefused) {
  Everything e = Sample();
  auto [p, actor, future, strange] = WithUnknowns(e);
  for (const char c : {'\x21', '\x7E'}) {
    actor.sections.front().id = {c, c, c, c};
    p.records.assign(1, actor);
    EXPECT_OK(EncodePayload(p)) << int{c};
  }
  for (std::size_t at = 0; at < 4; ++at) {
    for (const char c : {'\x20', '\x7F', '\x80', '\xA1', '\xFF', '\x00'}) {
      SectionId id = {'Z', 'Z', 'Z', '9'};
      id[at] = c;
      actor.sections.front().id = id;
      p.records.assign(1, actor);
      EXPECT_THAT(EncodePayload(p), StatusIs(StatusCode::kInvalidData, HasSubstr("printable")))
          << at << " " << int{c};
      // The same bytes read back are Damaged.
      actor.sections.front().id = future.id;
      p.records.assign(1, actor);
      ASSERT_OK_AND_ASSIGN(Bytes bytes, EncodePayload(p));
      const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      const std::size_t where = text.find("ZZZ9");
      ASSERT_NE(where, std::string_view::npos);
      bytes[where + at] = static_cast<std::uint8_t>(c);
      EXPECT_THAT(CheckedPayload::Check(bytes), StatusIs(StatusCode::kDamaged))
          << at << " " << int{c};
      EXPECT_THAT(DecodePayload(bytes), StatusIs(StatusCode::kDamaged)) << at << " " << int{c};
    }
  }
}

// Applying by record index reads a CheckedPayload in place, and gives what applying the decoded
// record gives; an index past the records, a record of an unknown kind and an applier of a decoded
// payload are refused, applying nothing.
TEST_F(EverythingTest, ApplyingByIndexReadsTheCheckedPayloadInPlace) {
  Everything e = Sample();
  auto [p, actor, future, strange] = WithUnknowns(e);
  p.records.push_back(actor);
  p.records.push_back(strange);
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, EncodePayload(p));
  ASSERT_OK_AND_ASSIGN(const CheckedPayload checked, CheckedPayload::Check(bytes));
  Applier in_place(registry_, checked);
  Everything loaded;
  std::vector<std::string> messages;
  ASSERT_OK(in_place.Apply(0, *cls_, &loaded, &messages));
  EXPECT_TRUE(loaded.SameValues(e));
  Everything untouched;
  EXPECT_THAT(in_place.Apply(1, *cls_, &untouched, &messages),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(in_place.Apply(2, *cls_, &untouched, &messages),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("no such record")));
  ASSERT_OK_AND_ASSIGN(const Payload decoded, DecodePayload(bytes));
  Applier of_decoded(registry_, decoded);
  EXPECT_THAT(of_decoded.Apply(0, *cls_, &untouched, &messages),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("decoded payload")));
  EXPECT_TRUE(untouched.SameValues(Everything()));
}

TEST_F(EverythingTest, EveryTruncationIsDamagedAndAppliesNothing) {
  Bytes bytes = Save(Sample());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    Everything loaded;
    EXPECT_THAT(Load(ByteView(bytes.data(), n), &loaded), StatusIs(StatusCode::kDamaged)) << n;
    EXPECT_TRUE(loaded.SameValues(Everything())) << n;
  }
}

TEST_F(EverythingTest, SeededByteEditsAreRefusedOrDecodeInOneForm) {
  Bytes bytes = Save(Sample());
  std::mt19937 rng(20261130);
  int refused = 0;
  for (int i = 0; i < 400; ++i) {
    Bytes edited = bytes;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      edited[rng() % edited.size()] = static_cast<std::uint8_t>(rng());
    }
    Result<Payload> p = DecodePayload(edited);
    if (!p.ok()) {
      ++refused;
      EXPECT_TRUE(p.status().code() == StatusCode::kDamaged ||
                  p.status().code() == StatusCode::kNewerVersion)
          << p.status().ToString();
      Everything loaded;
      EXPECT_FALSE(Load(edited, &loaded).ok());
      EXPECT_TRUE(loaded.SameValues(Everything()));
      continue;
    }
    Result<Bytes> again = EncodePayload(*p);
    ASSERT_THAT(again, IsOk());
    EXPECT_EQ(*again, edited) << i;
    Applier applier(registry_, *p);
    // The same records applied in place from a CheckedPayload give the same objects, statuses
    // and messages.
    ASSERT_OK_AND_ASSIGN(const CheckedPayload checked, CheckedPayload::Check(edited));
    ASSERT_EQ(checked.size(), p->records.size());
    Applier in_place(registry_, checked);
    for (std::size_t k = 0; k < p->records.size(); ++k) {
      const Record& r = p->records[k];
      Everything loaded, loaded_in_place;
      std::vector<std::string> messages, messages_in_place;
      if (!IsKnownObjectKind(r.kind)) continue;
      const Status s = applier.Apply(r, *cls_, &loaded, &messages);
      const Status t = in_place.Apply(k, *cls_, &loaded_in_place, &messages_in_place);
      EXPECT_EQ(s, t) << i;
      EXPECT_TRUE(loaded.SameValues(loaded_in_place)) << i;
      EXPECT_EQ(messages, messages_in_place) << i;
      EXPECT_THAT(DecodeProp(p->tables, r), IsOk());
    }
  }
  EXPECT_GT(refused, 100);
}

TEST_F(EverythingTest, ValuesNotInTheOneFormAreDamagedNamingTheField) {
  Everything e;
  Payload p;
  Result<Record> r = CaptureObject(*cls_, &e, Guid(1, 2), RecordKind::kActor, &p.tables);
  ASSERT_THAT(r, IsOk());
  r->sections[0].bytes[0] = 2;  // field B, a bool
  p.records.push_back(*r);
  Result<Bytes> bytes = EncodePayload(p);
  ASSERT_THAT(bytes, IsOk());
  EXPECT_THAT(DecodePayload(*bytes), StatusIs(StatusCode::kDamaged, HasSubstr("record 1 field B")));
  // A non-shortest varint for I8 (0 written as 80 00).
  p.records[0] = *r;
  p.records[0].sections[0].bytes[0] = 0;
  auto& prop = p.records[0].sections[0].bytes;
  prop[1] = 0x80;
  prop.insert(prop.begin() + 2, 0x00);
  bytes = EncodePayload(p);
  ASSERT_THAT(bytes, IsOk());
  EXPECT_THAT(DecodePayload(*bytes), StatusIs(StatusCode::kDamaged, HasSubstr("field I8")));
}

TEST_F(EverythingTest, UnsaveableValuesAreInvalidData) {
  Everything e;
  e.s.assign(kMaxStringBytes + 1, 'x');
  ChunkTables tables;
  EXPECT_THAT(CaptureObject(*cls_, &e, Guid(), RecordKind::kActor, &tables),
              StatusIs(StatusCode::kInvalidData, HasSubstr("field S")));
  Everything e2;
  e2.mood = static_cast<Mood>(3);
  ChunkTables tables2;
  EXPECT_THAT(CaptureObject(*cls_, &e2, Guid(), RecordKind::kActor, &tables2),
              StatusIs(StatusCode::kInvalidData, HasSubstr("Mood")));
  Everything e3;
  e3.n = Name(std::string(kMaxNameBytes + 1, 'n'));
  ChunkTables tables3;
  EXPECT_THAT(CaptureObject(*cls_, &e3, Guid(), RecordKind::kActor, &tables3),
              StatusIs(StatusCode::kInvalidData));
}

// A type's description, which messages carry, stays short however deeply a file nests maps of
// maps (whose whole text doubles at each level): it is cut, and so is the walk behind it.
TEST(TablesTest, ADescriptionOfDeeplyNestedTypesIsCut) {
  ChunkTables tables;
  const std::uint32_t boolean = tables.AddType({SavedKind::kBool});
  EXPECT_EQ(tables.Describe(tables.AddType({SavedKind::kVector, boolean})), "Vector<Bool>");
  std::uint32_t type = boolean;
  for (int level = 0; level < 63; ++level) type = tables.AddType({SavedKind::kMap, type, type});
  const std::string text = tables.Describe(type);
  EXPECT_TRUE(text.starts_with("Map<Map<Map<")) << text;
  EXPECT_TRUE(text.ends_with("...")) << text;
  EXPECT_LE(text.size(), ChunkTables::kMaxDescription + 16);
  EXPECT_EQ(tables.Describe(static_cast<std::uint32_t>(tables.types().size())), "?");
}

TEST(TablesTest, UnsupportedSavedKindIsNewerVersion) {
  Bytes payload;
  ByteWriter w(&payload);
  w.Varint(1);
  Bytes tables = {0, 0, 1, static_cast<std::uint8_t>(SavedKind::kPropertyBag) + 1, 0};
  w.LengthPrefixed(tables);
  EXPECT_THAT(DecodePayload(payload),
              StatusIs(StatusCode::kNewerVersion, HasSubstr("not supported")));
  payload.clear();
  w.Varint(1);
  tables[3] = 99;
  w.LengthPrefixed(tables);
  EXPECT_THAT(DecodePayload(payload), StatusIs(StatusCode::kNewerVersion));
}

TEST(TablesTest, RepeatedNamesAndForwardTypeIndexesAreDamaged) {
  Bytes payload;
  ByteWriter w(&payload);
  w.Varint(1);
  Bytes tables = {0, 2, 1, 'a', 1, 'a', 0, 0};
  w.LengthPrefixed(tables);
  EXPECT_THAT(DecodePayload(payload), StatusIs(StatusCode::kDamaged, HasSubstr("repeats")));
  payload.clear();
  w.Varint(1);
  tables = {0, 0, 1, static_cast<std::uint8_t>(SavedKind::kVector), 0, 0};
  w.LengthPrefixed(tables);
  EXPECT_THAT(DecodePayload(payload), StatusIs(StatusCode::kDamaged));
}

// Tables holding a struct type of `layouts` levels (layout k holds two fields of the struct of
// layout k - 1; layout 0 has `first_fields` Bool fields) and a record of the top layout, whose
// PROP is `prop`.
Bytes StructTower(int layouts, int first_fields, const Bytes& prop) {
  Payload p;
  ChunkTables& t = p.tables;
  const std::uint32_t name = *t.AddName(Name("Tower"));
  const std::uint32_t a = *t.AddName(Name("a"));
  const std::uint32_t b = *t.AddName(Name("b"));
  const std::uint32_t boolean = t.AddType({SavedKind::kBool});
  Layout first{name, {}};
  for (int f = 0; f < first_fields; ++f) {
    first.fields.push_back({*t.AddName(Name("f" + std::to_string(f))), boolean});
  }
  std::uint32_t layout = t.AppendLayout(first);
  for (int k = 1; k < layouts; ++k) {
    const std::uint32_t below = t.AddType({SavedKind::kStruct, layout});
    layout = t.AppendLayout({name, {{a, below}, {b, below}}});
  }
  Record r;
  r.subject = Guid(3, 3);
  r.layout = layout;
  r.sections.push_back({kPropSection, prop});
  p.records.push_back(r);
  Result<Bytes> bytes = EncodePayload(p);
  EXPECT_THAT(bytes, IsOk());
  return *bytes;
}

// A property bag holding a struct `levels` deep (each holding the one below; a Bool at the
// bottom), as one record's only field.
Bytes BagOfDeepStruct(int levels) {
  Payload p;
  ChunkTables& t = p.tables;
  const std::uint32_t name = *t.AddName(Name("Deep"));
  const std::uint32_t field = *t.AddName(Name("a"));
  std::uint32_t type = t.AddType({SavedKind::kBool});
  for (int k = 0; k < levels; ++k) {
    type = t.AddType({SavedKind::kStruct, t.AppendLayout({name, {{field, type}}})});
  }
  EXPECT_THAT(t.AddSavedBagLayout({{{field, type}}}), IsOk());
  Record r;
  r.subject = Guid(3, 4);
  r.layout = t.AppendLayout({name, {{field, t.AddType({SavedKind::kPropertyBag})}}});
  r.sections.push_back({kPropSection, {0, 1}});  // bag layout 0, then the Bool
  p.records.push_back(r);
  return *EncodePayload(p);
}

// A value in a property bag nests as deep as one outside it: the bag's size is counted at the
// walk's levels (each struct counted two levels deep, a bag of structs 33 deep was refused as
// past the bag budget). The record's field is level 1, the bag's property level 2, so 62
// structs put the Bool at level 64.
TEST(TablesTest, ABagsValuesNestToTheValueDepthBound) {
  EXPECT_THAT(DecodePayload(BagOfDeepStruct(40)), IsOk());
  EXPECT_THAT(DecodePayload(BagOfDeepStruct(62)), IsOk());
  EXPECT_THAT(DecodePayload(BagOfDeepStruct(63)),
              StatusIs(StatusCode::kDamaged, HasSubstr("nests past 64 levels")));
}

// A struct type of no fields is refused with the tables: its values would take no bytes, so a
// few hundred bytes of layouts holding two structs of the one before could make the check walk
// 2^64 values (it walked without end before the rule), and a 4-byte vector count make an apply
// construct millions of elements.
TEST(TablesTest, AStructTypeOfNoFieldsIsDamaged) {
  EXPECT_THAT(DecodePayload(StructTower(64, 0, {})),
              StatusIs(StatusCode::kDamaged, HasSubstr("struct of no fields")));
  EXPECT_THAT(CheckedPayload::Check(StructTower(2, 0, {})),
              StatusIs(StatusCode::kDamaged, HasSubstr("struct of no fields")));
  // With a field at the bottom, each value takes bytes: the tower reads as far as its bytes go.
  EXPECT_THAT(DecodePayload(StructTower(64, 1, Bytes(4, 1))),
              StatusIs(StatusCode::kDamaged, HasSubstr("a bool is not 0 or 1")));
  EXPECT_THAT(DecodePayload(StructTower(3, 1, Bytes(4, 1))), IsOk());
  // A vector of such structs, by the 4 bytes of a count of 2^24 elements.
  Payload p;
  ChunkTables& t = p.tables;
  const std::uint32_t hollow = t.AppendLayout({*t.AddName(Name("Hollow")), {}});
  const std::uint32_t vector = t.AddType({SavedKind::kVector, t.AddType({SavedKind::kStruct,
                                                                          hollow})});
  Record r;
  r.subject = Guid(4, 4);
  r.layout = t.AppendLayout({*t.AddName(Name("Holder")), {{*t.AddName(Name("v")), vector}}});
  r.sections.push_back({kPropSection, {0x80, 0x80, 0x80, 0x08}});
  p.records.push_back(r);
  EXPECT_THAT(DecodePayload(*EncodePayload(p)),
              StatusIs(StatusCode::kDamaged, HasSubstr("struct of no fields")));
}

// A struct none of whose members save would save as nothing: a field of one, or of a fixed array
// of them, is left out of its class's plan; a container or optional of one cannot be saved.
struct Hollow {
  std::int32_t scratch = 0;  // registered, not saved
};
struct WithHollow {
  std::int32_t before = 0;
  Hollow hollow;
  std::array<Hollow, 2> hollows{};
  std::int32_t after = 0;
};
struct WithHollows {
  std::vector<Hollow> hollows;
};
struct WithMaybeHollow {
  std::optional<Hollow> maybe;
};

TEST(TablesTest, FieldsThatWouldSaveAsNothingAreLeftOutAndContainersOfThemRefused) {
  TypeRegistry r;
  r.Struct<Hollow>("Hollow").Field("Scratch", &Hollow::scratch, 0);
  r.Class<WithHollow>("WithHollow")
      .Field("Before", &WithHollow::before, kSaveGame)
      .Field("Hollow", &WithHollow::hollow, kSaveGame)
      .Field("Hollows", &WithHollow::hollows, kSaveGame)
      .Field("After", &WithHollow::after, kSaveGame);
  r.Class<WithHollows>("WithHollows").Field("Hollows", &WithHollows::hollows, kSaveGame);
  r.Class<WithMaybeHollow>("WithMaybeHollow").Field("Maybe", &WithMaybeHollow::maybe, kSaveGame);
  ASSERT_THAT(r.Finish(), IsOk());
  const reflect::ClassPlan& plan = r.FindClass<WithHollow>()->Plan();
  ASSERT_EQ(plan.fields.size(), 2u);
  EXPECT_EQ(plan.fields[0].name(), Name("Before"));
  EXPECT_EQ(plan.fields[1].name(), Name("After"));
  // Such a class saves and loads.
  WithHollow saved;
  saved.before = 1;
  saved.after = 2;
  Payload p;
  Result<Record> rec = CaptureObject(*r.FindClass<WithHollow>(), &saved, Guid(5, 5),
                                     RecordKind::kActor, &p.tables);
  ASSERT_THAT(rec, IsOk());
  p.records.push_back(*rec);
  Result<Payload> decoded = DecodePayload(*EncodePayload(p));
  ASSERT_THAT(decoded, IsOk());
  WithHollow loaded;
  Applier applier(r, *decoded);
  ASSERT_THAT(applier.Apply(decoded->records[0], *r.FindClass<WithHollow>(), &loaded, nullptr),
              IsOk());
  EXPECT_EQ(loaded.before, 1);
  EXPECT_EQ(loaded.after, 2);
  // Containers of it, and an optional, are refused at capture, naming the field.
  WithHollows many;
  many.hollows.resize(3);
  ChunkTables tables;
  EXPECT_THAT(
      CaptureObject(*r.FindClass<WithHollows>(), &many, Guid(), RecordKind::kActor, &tables),
      StatusIs(StatusCode::kInvalidData,
               HasSubstr("field Hollows: struct Hollow saves no fields")));
  WithMaybeHollow maybe;
  ChunkTables tables2;
  EXPECT_THAT(
      CaptureObject(*r.FindClass<WithMaybeHollow>(), &maybe, Guid(), RecordKind::kActor, &tables2),
      StatusIs(StatusCode::kInvalidData, HasSubstr("saves no fields")));
}

// `bytes` with every occurrence of `from` replaced by `to` (the same length).
Bytes Replaced(Bytes bytes, std::string_view from, std::string_view to) {
  EXPECT_EQ(from.size(), to.size());
  const auto* begin = reinterpret_cast<const std::uint8_t*>(from.data());
  int found = 0;
  for (auto it = bytes.begin();
       (it = std::search(it, bytes.end(), begin, begin + from.size())) != bytes.end(); ++found) {
    std::memcpy(&*it, to.data(), to.size());
  }
  EXPECT_GT(found, 0) << from;
  return bytes;
}

struct Tagged {
  std::int32_t kept = 0;
  Name tag;
  std::int32_t dropped = 0;
};

// Reading a file interns none of its names, so a file cannot pin texts for the process's life:
// a name the process does not have is kept as text by the tables. A name value is interned when
// an apply hands it to the game. The names here are saved as ones the process has, then renamed
// in the bytes to ones nothing in this test program makes (the name value's text is new on each
// run, since the apply interns it).
TEST(TablesTest, ReadingAFileInternsNoneOfItsNames) {
  static int runs = 0;
  char run[8];
  std::snprintf(run, sizeof run, "%04d", ++runs % 10000);
  const std::string tag_saved = std::string("TagValueA") + run;
  const std::string tag = std::string("TagValueQ") + run;
  TypeRegistry r;
  r.Class<Tagged>("TaggedRecord")
      .Field("Kept", &Tagged::kept, kSaveGame)
      .Field("Tag", &Tagged::tag, kSaveGame)
      .Field("DroppedA", &Tagged::dropped, kSaveGame);
  ASSERT_THAT(r.Finish(), IsOk());
  const reflect::ClassInfo& cls = *r.FindClass<Tagged>();
  Tagged saved;
  saved.kept = 7;
  saved.tag = Name(tag_saved);
  saved.dropped = 9;
  Payload p;
  Result<Record> rec = CaptureObject(cls, &saved, Guid(6, 6), RecordKind::kActor, &p.tables);
  ASSERT_THAT(rec, IsOk());
  p.records.push_back(*rec);
  const Bytes bytes =
      Replaced(Replaced(*EncodePayload(p), tag_saved, tag), "DroppedA", "DroppedQ");
  // Refused files intern nothing either: cut short, and damaged after the tables.
  Bytes damaged = bytes;
  damaged.back() = 0xFF;
  EXPECT_THAT(DecodePayload(damaged), StatusIs(StatusCode::kDamaged));
  EXPECT_THAT(CheckedPayload::Check(Bytes(bytes.begin(), bytes.end() - 1)),
              StatusIs(StatusCode::kDamaged));
  Result<Payload> decoded = DecodePayload(bytes);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(Name::Find(tag), std::nullopt);
  EXPECT_EQ(Name::Find("DroppedQ"), std::nullopt);
  // The tables give every name's text, and encode back to the same bytes.
  std::vector<std::string_view> texts;
  for (std::uint32_t i = 0; i < decoded->tables.names().size(); ++i) {
    texts.push_back(decoded->tables.name_text(i));
    EXPECT_EQ(decoded->tables.names()[i].is_none(),
              texts.back() == tag || texts.back() == "DroppedQ")
        << texts.back();
  }
  EXPECT_THAT(texts, ::testing::IsSupersetOf({std::string_view(tag), std::string_view("DroppedQ"),
                                              std::string_view("Kept"),
                                              std::string_view("TaggedRecord")}));
  EXPECT_EQ(*EncodePayload(*decoded), bytes);
  // A record moved into other tables keeps the names as text too.
  ChunkTables moved_into;
  Result<Record> moved = MoveRecord(decoded->tables, decoded->records[0], &moved_into);
  ASSERT_THAT(moved, IsOk());
  Payload again;
  again.tables = moved_into;
  again.records.push_back(*moved);
  Result<Payload> again_decoded = DecodePayload(*EncodePayload(again));
  ASSERT_THAT(again_decoded, IsOk());
  EXPECT_EQ(Name::Find("DroppedQ"), std::nullopt);
  // Applied: the field the class no longer has is named in its message and not interned; the
  // name value is interned as the game gets it.
  for (const Payload* from : {&*decoded, &*again_decoded}) {
    Tagged loaded;
    std::vector<std::string> messages;
    Applier applier(r, *from);
    ASSERT_THAT(applier.Apply(from->records[0], cls, &loaded, &messages), IsOk());
    EXPECT_EQ(loaded.kept, 7);
    EXPECT_EQ(loaded.tag.view(), tag);
    EXPECT_EQ(loaded.dropped, 0);
    EXPECT_THAT(messages, ElementsAre(HasSubstr("field DroppedQ of TaggedRecord")));
  }
  EXPECT_EQ(Name::Find("DroppedQ"), std::nullopt);
  // A record of a class the process does not have names it when refused.
  Result<Payload> other = DecodePayload(Replaced(bytes, "TaggedRecord", "TaggedRecorQ"));
  ASSERT_THAT(other, IsOk());
  Tagged untouched;
  Applier applier(r, *other);
  EXPECT_THAT(applier.Apply(other->records[0], cls, &untouched, nullptr),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("class TaggedRecorQ")));
}

// A layout reserved empty and then set (a struct holding containers of itself, moved) is found
// by its content only: an empty layout of the same name is not it.
TEST(TablesTest, ALayoutSetInItsReservedPlaceIsFoundByItsNewContentOnly) {
  ChunkTables t;
  const std::uint32_t name = *t.AddName(Name("Reserved"));
  const std::uint32_t reserved = t.AppendLayout(Layout{});
  const Layout filled{name, {{name, t.AddType({SavedKind::kBool})}}};
  t.SetLayout(reserved, filled);
  EXPECT_EQ(t.FindLayout(Layout{}), std::nullopt);
  EXPECT_EQ(t.FindLayout(filled), reserved);
  // An empty layout added after is its own.
  const std::uint32_t empty = t.AppendLayout(Layout{});
  EXPECT_EQ(t.FindLayout(Layout{}), empty);
}

// ---- Classes that changed since the save: V1 saves, V2 loads. ----

enum class DoorState : std::uint8_t { kClosed = 0, kOpen = 1 };

struct DoorV1 {
  std::int32_t health = 0;
  std::string label;
  std::int32_t gone = 0;
  std::int32_t old_name = 0;
  DoorState state = DoorState::kClosed;
};

struct DoorV2 {
  std::int32_t health = 0;
  std::string label;
  std::int32_t added = 77;
  std::int32_t new_name = 0;
  DoorState state = DoorState::kClosed;
  std::string retyped_health;
};

Bytes SaveV1(const DoorV1& d, const char* open_name) {
  TypeRegistry r;
  r.Enum<DoorState>("DoorState")
      .Value("Closed", DoorState::kClosed)
      .Value(open_name, DoorState::kOpen);
  r.Class<DoorV1>("Door")
      .Field("Health", &DoorV1::health, kSaveGame)
      .Field("Label", &DoorV1::label, kSaveGame)
      .Field("Gone", &DoorV1::gone, kSaveGame)
      .Field("OldName", &DoorV1::old_name, kSaveGame)
      .Field("State", &DoorV1::state, kSaveGame);
  EXPECT_THAT(r.Finish(), IsOk());
  Payload p;
  Result<Record> rec =
      CaptureObject(*r.FindClass<DoorV1>(), &d, Guid(9, 9), RecordKind::kActor, &p.tables);
  EXPECT_THAT(rec, IsOk());
  p.records.push_back(*rec);
  return *EncodePayload(p);
}

struct V2Options {
  bool retype_health = false;
  bool rename_redirect = false;
  bool enum_redirect = false;
  // The record applied this many times by one applier, which counts the messages it dropped.
  int applies = 1;
  std::size_t* dropped = nullptr;
};

Status LoadV2(ByteView bytes, const V2Options& o, DoorV2* d, std::vector<std::string>* messages) {
  TypeRegistry r;
  r.Enum<DoorState>("DoorState")
      .Value("Closed", DoorState::kClosed)
      .Value("Open", DoorState::kOpen);
  // Reordered relative to V1.
  auto c = r.Class<DoorV2>("Door");
  c.Field("State", &DoorV2::state, kSaveGame).Field("Added", &DoorV2::added, kSaveGame);
  if (o.retype_health) {
    c.Field("Health", &DoorV2::retyped_health, kSaveGame);
  } else {
    c.Field("Health", &DoorV2::health, kSaveGame);
  }
  c.Field("NewName", &DoorV2::new_name, kSaveGame).Field("Label", &DoorV2::label, kSaveGame);
  if (o.rename_redirect)
    ROLLY_RETURN_IF_ERROR(r.redirects().AddProperty("Door", "OldName", "NewName"));
  if (o.enum_redirect)
    ROLLY_RETURN_IF_ERROR(r.redirects().AddEnumValue("DoorState", "Opened", "Open"));
  ROLLY_RETURN_IF_ERROR(r.Finish());
  ROLLY_ASSIGN_OR_RETURN(Payload p, DecodePayload(bytes));
  Applier applier(r, p);
  for (int k = 1; k < o.applies; ++k) {
    ROLLY_RETURN_IF_ERROR(applier.Apply(p.records[0], *r.FindClass<DoorV2>(), d, messages));
  }
  const Status s = applier.Apply(p.records[0], *r.FindClass<DoorV2>(), d, messages);
  if (o.dropped != nullptr) *o.dropped = applier.messages_dropped();
  return s;
}

DoorV1 SampleDoor() {
  DoorV1 d;
  d.health = 55;
  d.label = "front";
  d.gone = 3;
  d.old_name = 8;
  d.state = DoorState::kOpen;
  return d;
}

bool AnyHas(const std::vector<std::string>& messages, const std::string& text) {
  for (const auto& m : messages) {
    if (m.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(EvolutionTest, AddedRemovedAndReorderedFields) {
  DoorV2 d;
  std::vector<std::string> messages;
  ASSERT_THAT(LoadV2(SaveV1(SampleDoor(), "Open"), {}, &d, &messages), IsOk());
  EXPECT_EQ(d.health, 55);
  EXPECT_EQ(d.label, "front");
  EXPECT_EQ(d.state, DoorState::kOpen);
  EXPECT_EQ(d.added, 77);  // added since the save: keeps its default
  EXPECT_TRUE(AnyHas(messages, "field Gone")) << ::testing::PrintToString(messages);
}

TEST(EvolutionTest, RetypedFieldIsSkippedWithAMessage) {
  DoorV2 d;
  d.retyped_health = "kept";
  std::vector<std::string> messages;
  ASSERT_THAT(LoadV2(SaveV1(SampleDoor(), "Open"), {.retype_health = true}, &d, &messages), IsOk());
  EXPECT_EQ(d.retyped_health, "kept");
  EXPECT_EQ(d.label, "front");
  EXPECT_TRUE(AnyHas(messages, "field Health was saved as Int32 and is now String: skipped"))
      << ::testing::PrintToString(messages);
}

// The messages an apply gives stop at kMaxMessages (a file can ask for millions); the rest are
// counted, and the values are applied all the same.
TEST(EvolutionTest, MessagesStopAtTheirBoundAndTheRestAreCounted) {
  const Bytes saved = SaveV1(SampleDoor(), "Open");
  DoorV2 d;
  std::vector<std::string> one;
  ASSERT_THAT(LoadV2(saved, {.retype_health = true}, &d, &one), IsOk());
  const std::size_t per_apply = one.size();
  ASSERT_GE(per_apply, 2u);
  const int applies = static_cast<int>(Applier::kMaxMessages / per_apply) + 1;
  std::vector<std::string> messages;
  std::size_t dropped = 0;
  ASSERT_THAT(LoadV2(saved, {.retype_health = true, .applies = applies, .dropped = &dropped}, &d,
                     &messages),
              IsOk());
  EXPECT_EQ(messages.size(), Applier::kMaxMessages);
  EXPECT_EQ(dropped, per_apply * static_cast<std::size_t>(applies) - Applier::kMaxMessages);
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(d.label, "front");
  // At the bound exactly, none is dropped.
  std::vector<std::string> exactly(Applier::kMaxMessages - per_apply, "earlier");
  ASSERT_THAT(LoadV2(saved, {.retype_health = true, .dropped = &dropped}, &d, &exactly), IsOk());
  EXPECT_EQ(exactly.size(), Applier::kMaxMessages);
  EXPECT_EQ(dropped, 0u);
}

TEST(EvolutionTest, RenamedFieldLoadsThroughARedirectOnly) {
  DoorV2 with;
  ASSERT_THAT(LoadV2(SaveV1(SampleDoor(), "Open"), {.rename_redirect = true}, &with, nullptr),
              IsOk());
  EXPECT_EQ(with.new_name, 8);
  DoorV2 without;
  std::vector<std::string> messages;
  ASSERT_THAT(LoadV2(SaveV1(SampleDoor(), "Open"), {}, &without, &messages), IsOk());
  EXPECT_EQ(without.new_name, 0);
  EXPECT_TRUE(AnyHas(messages, "field OldName"));
}

TEST(EvolutionTest, RenamedEnumValueLoadsThroughARedirect) {
  Bytes bytes = SaveV1(SampleDoor(), "Opened");
  DoorV2 with;
  ASSERT_THAT(LoadV2(bytes, {.enum_redirect = true}, &with, nullptr), IsOk());
  EXPECT_EQ(with.state, DoorState::kOpen);
  DoorV2 without;
  std::vector<std::string> messages;
  ASSERT_THAT(LoadV2(bytes, {}, &without, &messages), IsOk());
  EXPECT_EQ(without.state, DoorState::kClosed);
  EXPECT_TRUE(AnyHas(messages, "no value Opened"));
}

TEST(EvolutionTest, RecordOfAnotherClassIsRefused) {
  TypeRegistry r;
  RegisterEverything(r);
  ASSERT_THAT(r.Finish(), IsOk());
  Result<Payload> p = DecodePayload(SaveV1(SampleDoor(), "Open"));
  ASSERT_THAT(p, IsOk());
  Applier applier(r, *p);
  Everything e;
  EXPECT_THAT(applier.Apply(p->records[0], *r.FindClass<Everything>(), &e, nullptr),
              StatusIs(StatusCode::kInvalidInput));
}

}  // namespace
}  // namespace rolly::record
