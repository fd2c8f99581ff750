// The check programs (internal/check_program.h) judge every record as the Walker of the payload
// check does: each bound at its limit and one past, every single-byte edit of a record holding
// every plain kind, and a payload's status when one of its records is edited. Also the payload
// check's other fast path: the usual record's frame read straight from its bytes
// (ViewUsualRecord), against records that take the general reader.

#include "rolly/record/internal/check_program.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "rolly/record/chunk_tables.h"
#include "rolly/record/record_codec.h"

namespace rolly::record {
namespace {

// Tables by hand: names, one saved type per kind used, and the layouts below.
class Tables {
 public:
  Tables() {
    for (const char* n : {"Inner", "Empty", "Plain", "One", "Two", "x", "y"}) {
      names.push_back(*t.AddName(Name(n)));
    }
    for (int i = 0; i < 300; ++i) fields.push_back(*t.AddName(Name("f" + std::to_string(i))));
    EXPECT_TRUE(t.AddRef(Guid(1, 1)).ok());
    EXPECT_TRUE(t.AddRef(Guid(1, 2)).ok());
    inner = t.AppendLayout({names[0], {{names[5], Type(SavedKind::kInt32)},
                                       {names[6], Type(SavedKind::kString)}}});
    // A struct of no fields: a file's tables may not hold one (docs/records.md), but the element
    // bounds of the check are tested with vectors of it, whose elements take no bytes.
    empty = t.AppendLayout({names[1], {}});
  }
  std::uint32_t Type(SavedKind kind, std::uint32_t a = 0, std::uint32_t count = 0) {
    return t.AddType(SavedType{kind, a, 0, count});
  }
  std::uint32_t Layout(std::vector<std::uint32_t> types) {
    record::Layout l;
    l.name = names[2];
    for (std::uint32_t type : types) l.fields.push_back({fields[l.fields.size()], type});
    return t.AppendLayout(l);
  }
  // The saved type of a struct of these field types.
  std::uint32_t Struct(std::vector<std::uint32_t> types) {
    return Type(SavedKind::kStruct, Layout(std::move(types)));
  }

  ChunkTables t;
  std::vector<std::uint32_t> names;
  std::vector<std::uint32_t> fields;  // the names of a layout's fields, in order
  std::uint32_t inner = 0;
  std::uint32_t empty = 0;
};

// A payload of 3 records besides the tables.
constexpr std::uint64_t kRecordCount = 4;

Record RecordOf(std::uint32_t layout, Bytes prop) {
  Record r;
  r.subject = Guid(7, 7);
  r.layout = layout;
  r.sections.push_back({kPropSection, std::move(prop)});
  return r;
}

// The Walker's verdict (CheckRecord takes no program) and the program's, on one record.
struct Verdicts {
  bool walker;
  bool program;
};
Verdicts Judge(const ChunkTables& tables, std::uint32_t layout, const Bytes& prop) {
  CheckPrograms programs(tables, kRecordCount);
  FileBudget budget;
  const bool walker = CheckRecord(tables, RecordOf(layout, prop), 1, kRecordCount, &budget).ok();
  return {walker, programs.Passes(layout, prop)};
}

// Every plain kind, structs, arrays and vectors (of fixed and varying elements, nested), and a
// reference: the layout and a record of it that passes.
struct PlainRecord {
  std::uint32_t layout;
  Bytes prop;
};
PlainRecord MakePlain(Tables& tb) {
  const std::uint32_t inner = tb.Type(SavedKind::kStruct, tb.inner);
  const std::uint32_t flag = tb.Struct({tb.Type(SavedKind::kBool)});
  const std::uint32_t layout = tb.Layout({
      tb.Type(SavedKind::kBool), tb.Type(SavedKind::kInt8), tb.Type(SavedKind::kInt16),
      tb.Type(SavedKind::kInt32), tb.Type(SavedKind::kInt64), tb.Type(SavedKind::kUInt8),
      tb.Type(SavedKind::kUInt16), tb.Type(SavedKind::kUInt32), tb.Type(SavedKind::kUInt64),
      tb.Type(SavedKind::kFloat), tb.Type(SavedKind::kDouble), tb.Type(SavedKind::kGuid),
      tb.Type(SavedKind::kString), tb.Type(SavedKind::kSoftPath), tb.Type(SavedKind::kName),
      tb.Type(SavedKind::kEnum), inner, tb.Type(SavedKind::kVector, tb.Type(SavedKind::kInt16)),
      tb.Type(SavedKind::kVector, inner),
      tb.Type(SavedKind::kArray, tb.Type(SavedKind::kUInt8), 3),
      tb.Type(SavedKind::kArray, tb.Type(SavedKind::kVector3f), 2),
      tb.Type(SavedKind::kTransformd),  // right after fixed-size elements: not one of them
      tb.Type(SavedKind::kVector, tb.Type(SavedKind::kVector, tb.Type(SavedKind::kBool))),
      tb.Type(SavedKind::kReference), tb.Type(SavedKind::kVector, flag),
      tb.Type(SavedKind::kVector, tb.Type(SavedKind::kFloat)), tb.Type(SavedKind::kColor),
      tb.Type(SavedKind::kDateTime), tb.Type(SavedKind::kVector2f),
      tb.Type(SavedKind::kVector2d), tb.Type(SavedKind::kVector3f),
      tb.Type(SavedKind::kVector3d), tb.Type(SavedKind::kVector4f),
      tb.Type(SavedKind::kVector4d), tb.Type(SavedKind::kQuatf), tb.Type(SavedKind::kQuatd),
      tb.Type(SavedKind::kRotatorf), tb.Type(SavedKind::kRotatord),
      tb.Type(SavedKind::kTransformf)});
  Bytes b;
  ByteWriter w(&b);
  w.U8(1);
  w.SignedVarint(-5);
  w.SignedVarint(300);
  w.SignedVarint(-70000);
  w.SignedVarint(std::int64_t{1} << 40);
  w.Varint(200);
  w.Varint(60000);
  w.Varint(4000000000u);
  w.Varint(std::uint64_t{1} << 63);
  w.F32(1.5f);
  w.F64(2.5);
  w.U64(1);
  w.U64(2);
  w.LengthPrefixed(std::string_view("h\xC3\xA9llo"));
  w.LengthPrefixed(std::string_view("/Game/Path"));
  w.Varint(1);  // a name
  w.Varint(0);  // an enum's value name
  w.SignedVarint(7);
  w.LengthPrefixed(std::string_view("in"));
  w.Varint(3);
  for (int v : {1, -2, 3}) w.SignedVarint(v);
  w.Varint(2);
  for (int i = 0; i < 2; ++i) {
    w.SignedVarint(i);
    w.LengthPrefixed(std::string_view("x"));
  }
  for (int v : {1, 2, 255}) w.Varint(v);
  for (int i = 0; i < 6; ++i) w.F32(0.25f * i);
  for (int i = 0; i < 10; ++i) w.F64(i);
  w.Varint(2);
  w.Varint(2);
  w.U8(1);
  w.U8(0);
  w.Varint(0);
  w.Varint(2 * 3 + 1);  // record 3
  w.Varint(5);          // five structs of a bool
  for (int i = 0; i < 5; ++i) w.U8(static_cast<std::uint8_t>(i % 2));
  w.Varint(2);          // two floats, then the fixed-size values, each as its bytes
  for (SavedKind kind : {SavedKind::kFloat, SavedKind::kFloat, SavedKind::kColor,
                         SavedKind::kDateTime, SavedKind::kVector2f, SavedKind::kVector2d,
                         SavedKind::kVector3f, SavedKind::kVector3d, SavedKind::kVector4f,
                         SavedKind::kVector4d, SavedKind::kQuatf, SavedKind::kQuatd,
                         SavedKind::kRotatorf, SavedKind::kRotatord, SavedKind::kTransformf}) {
    for (std::size_t k = 0; k < FixedValueSize(kind); ++k) w.U8(static_cast<std::uint8_t>(k));
  }
  return {layout, b};
}

TEST(CheckProgramTest, PlainLayoutsGetProgramsAndOthersAreWalked) {
  Tables tb;
  const PlainRecord plain = MakePlain(tb);
  // Fixed-size values next to each other are one step; a struct's fields are inlined.
  const std::uint32_t fixed = tb.Layout({tb.Type(SavedKind::kFloat), tb.Type(SavedKind::kGuid),
                                         tb.Type(SavedKind::kTransformd)});
  const std::uint32_t inner = tb.Layout({tb.Type(SavedKind::kStruct, tb.inner)});
  // Kinds the Walker charges to the budget, or counts owned objects of, have none; nor do the
  // kinds left to it.
  const std::uint32_t int32 = tb.Type(SavedKind::kInt32);
  std::vector<std::uint32_t> walked;
  for (SavedKind kind : {SavedKind::kText, SavedKind::kOwned, SavedKind::kPropertyBag}) {
    walked.push_back(tb.Layout({int32, tb.Type(kind)}));
  }
  for (SavedKind kind : {SavedKind::kOptional, SavedKind::kSet, SavedKind::kInstancedStruct}) {
    walked.push_back(tb.Layout({tb.Type(kind, int32)}));
  }
  CheckPrograms programs(tb.t, kRecordCount);
  EXPECT_GT(programs.StepsOf(plain.layout), 0u);
  EXPECT_EQ(programs.StepsOf(fixed), 1u);
  EXPECT_EQ(programs.StepsOf(inner), 2u);
  for (std::uint32_t layout : walked) {
    EXPECT_EQ(programs.StepsOf(layout), 0u) << layout;
    EXPECT_FALSE(programs.Passes(layout, Bytes{0, 0})) << layout;
  }
  const auto past = static_cast<std::uint32_t>(tb.t.layouts().size());
  EXPECT_EQ(programs.StepsOf(past), 0u);
  EXPECT_FALSE(programs.Passes(past, {}));
}

TEST(CheckProgramTest, ARecordOfEveryPlainKindPasses) {
  Tables tb;
  const PlainRecord plain = MakePlain(tb);
  const Verdicts v = Judge(tb.t, plain.layout, plain.prop);
  EXPECT_TRUE(v.walker);
  EXPECT_TRUE(v.program);
}

TEST(CheckProgramTest, EveryEditIsJudgedAsTheWalkerJudgesIt) {
  Tables tb;
  const PlainRecord plain = MakePlain(tb);
  int refused = 0;
  int cases = 0;
  auto judge = [&](const Bytes& prop, std::string what) {
    const Verdicts v = Judge(tb.t, plain.layout, prop);
    EXPECT_EQ(v.program, v.walker) << what;
    refused += v.walker ? 0 : 1;
    ++cases;
  };
  for (std::size_t at = 0; at < plain.prop.size(); ++at) {
    for (std::uint8_t edit : {0x01, 0x02, 0x40, 0x80, 0xFF}) {
      Bytes prop = plain.prop;
      prop[at] ^= edit;
      judge(prop, "byte " + std::to_string(at) + " ^ " + std::to_string(edit));
    }
    for (std::uint8_t value : {0x00, 0x01, 0x7F, 0x80, 0xFF}) {
      Bytes prop = plain.prop;
      prop[at] = value;
      judge(prop, "byte " + std::to_string(at) + " = " + std::to_string(value));
    }
    Bytes cut(plain.prop.begin(), plain.prop.begin() + static_cast<std::ptrdiff_t>(at));
    judge(cut, "cut at " + std::to_string(at));
    Bytes longer = plain.prop;
    longer.insert(longer.begin() + static_cast<std::ptrdiff_t>(at), 0x00);
    judge(longer, "0 inserted at " + std::to_string(at));
  }
  // Many edits are refused, and many pass (a number's value changed): both verdicts were met.
  EXPECT_GT(refused, cases / 10);
  EXPECT_LT(refused, cases);
}

// A payload with an edited record fails with the Walker's status for it (the program passes
// nothing the Walker refuses, and a record it does not pass is walked for its message).
TEST(CheckProgramTest, APayloadWithAnEditedRecordFailsAsTheWalkerSays) {
  Tables tb;
  const PlainRecord plain = MakePlain(tb);
  for (std::size_t at = 0; at < plain.prop.size(); at += 3) {
    Bytes prop = plain.prop;
    prop[at] ^= 0x80;
    Payload p;
    p.tables = tb.t;
    p.records = {RecordOf(plain.layout, plain.prop), RecordOf(plain.layout, prop),
                 RecordOf(plain.layout, plain.prop)};
    Result<Bytes> bytes = EncodePayload(p);
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    FileBudget budget;
    const Status walker = CheckRecord(tb.t, p.records[1], 2, kRecordCount, &budget);
    const Result<Payload> decoded = DecodePayload(*bytes);
    const Result<CheckedPayload> checked = CheckedPayload::Check(*bytes);
    EXPECT_EQ(decoded.status().code(), walker.code()) << at;
    EXPECT_EQ(decoded.status().message(), walker.message()) << at;
    EXPECT_EQ(checked.status().code(), walker.code()) << at;
    EXPECT_EQ(checked.status().message(), walker.message()) << at;
  }
}

// One field of `type` holding `bytes`: whether it passes, by both.
void ExpectOne(Tables& tb, std::uint32_t type, const Bytes& bytes, bool passes,
               const std::string& what) {
  const std::uint32_t layout = tb.Layout({type});
  const Verdicts v = Judge(tb.t, layout, bytes);
  EXPECT_EQ(v.walker, passes) << what;
  EXPECT_EQ(v.program, passes) << what;
  CheckPrograms programs(tb.t, kRecordCount);
  EXPECT_GT(programs.StepsOf(layout), 0u) << what;
}
Bytes Signed(std::int64_t v) {
  Bytes b;
  ByteWriter(&b).SignedVarint(v);
  return b;
}
Bytes Unsigned(std::uint64_t v) {
  Bytes b;
  ByteWriter(&b).Varint(v);
  return b;
}

TEST(CheckProgramTest, EachBoundAtItsLimitAndOnePast) {
  Tables tb;
  const struct {
    SavedKind kind;
    int bits;
  } ints[] = {{SavedKind::kInt8, 8}, {SavedKind::kInt16, 16}, {SavedKind::kInt32, 32}};
  for (const auto& i : ints) {
    const std::int64_t half = std::int64_t{1} << (i.bits - 1);
    const std::uint32_t type = tb.Type(i.kind);
    ExpectOne(tb, type, Signed(half - 1), true, "int max");
    ExpectOne(tb, type, Signed(half), false, "int max + 1");
    ExpectOne(tb, type, Signed(-half), true, "int min");
    ExpectOne(tb, type, Signed(-half - 1), false, "int min - 1");
  }
  ExpectOne(tb, tb.Type(SavedKind::kInt64), Signed(INT64_MIN), true, "int64 min");
  ExpectOne(tb, tb.Type(SavedKind::kInt64), Signed(INT64_MAX), true, "int64 max");
  const struct {
    SavedKind kind;
    std::uint64_t max;
  } uints[] = {{SavedKind::kUInt8, 0xFF}, {SavedKind::kUInt16, 0xFFFF},
               {SavedKind::kUInt32, 0xFFFFFFFF}};
  for (const auto& u : uints) {
    ExpectOne(tb, tb.Type(u.kind), Unsigned(u.max), true, "uint max");
    ExpectOne(tb, tb.Type(u.kind), Unsigned(u.max + 1), false, "uint max + 1");
  }
  ExpectOne(tb, tb.Type(SavedKind::kUInt64), Unsigned(UINT64_MAX), true, "uint64 max");
  ExpectOne(tb, tb.Type(SavedKind::kUInt64), Bytes{0x80, 0x00}, false, "a varint not shortest");
  ExpectOne(tb, tb.Type(SavedKind::kBool), Bytes{1}, true, "bool 1");
  ExpectOne(tb, tb.Type(SavedKind::kBool), Bytes{2}, false, "bool 2");
  const std::uint64_t names = tb.t.names().size();
  ExpectOne(tb, tb.Type(SavedKind::kName), Unsigned(names), true, "the last name");
  ExpectOne(tb, tb.Type(SavedKind::kName), Unsigned(names + 1), false, "past the names");
  ExpectOne(tb, tb.Type(SavedKind::kEnum), Unsigned(names - 1), true, "the last enum name");
  ExpectOne(tb, tb.Type(SavedKind::kEnum), Unsigned(names), false, "past the enum names");
  // References: 0, a record of the payload (odd) or an entry of the refs table (even).
  const std::uint32_t ref = tb.Type(SavedKind::kReference);
  ExpectOne(tb, ref, Unsigned(0), true, "no reference");
  ExpectOne(tb, ref, Unsigned(2 * (kRecordCount - 1) + 1), true, "the last record");
  ExpectOne(tb, ref, Unsigned(2 * kRecordCount + 1), false, "past the records");
  ExpectOne(tb, ref, Unsigned(1), false, "the tables record");
  ExpectOne(tb, ref, Unsigned(2 + 2 * (tb.t.refs().size() - 1)), true, "the last ref");
  ExpectOne(tb, ref, Unsigned(2 + 2 * tb.t.refs().size()), false, "past the refs");
  // Strings: at most 1 MiB of UTF-8 without NUL.
  const std::uint32_t str = tb.Type(SavedKind::kString);
  auto text = [](const std::string& s) {
    Bytes b;
    ByteWriter(&b).LengthPrefixed(std::string_view(s));
    return b;
  };
  ExpectOne(tb, str, text(std::string(kMaxStringBytes, 'a')), true, "1 MiB string");
  ExpectOne(tb, str, text(std::string(kMaxStringBytes + 1, 'a')), false, "1 MiB + 1");
  ExpectOne(tb, str, text(std::string("a\0b", 3)), false, "a NUL");
  ExpectOne(tb, str, text("\xC3"), false, "not UTF-8");
  ExpectOne(tb, str, Bytes{3, 'a'}, false, "shorter than its length");
  // Elements: at most 2^24 in a record, counted across its containers.
  const std::uint32_t empties = tb.Type(SavedKind::kVector, tb.Type(SavedKind::kStruct, tb.empty));
  ExpectOne(tb, empties, Unsigned(kMaxElementsPerRecord), true, "2^24 elements");
  ExpectOne(tb, empties, Unsigned(kMaxElementsPerRecord + 1), false, "2^24 + 1 elements");
  const std::uint32_t two = tb.Layout({empties, empties});
  Bytes at_limit = Unsigned(kMaxElementsPerRecord - 1);
  at_limit.push_back(1);
  Bytes past = Unsigned(kMaxElementsPerRecord - 1);
  past.push_back(2);
  for (const auto& [bytes, passes] : {std::pair{at_limit, true}, std::pair{past, false}}) {
    const Verdicts v = Judge(tb.t, two, bytes);
    EXPECT_EQ(v.walker, passes);
    EXPECT_EQ(v.program, passes);
  }
  // Fixed-size elements are skipped together: as many bytes as they take, no fewer.
  const std::uint32_t floats = tb.Type(SavedKind::kVector, tb.Type(SavedKind::kFloat));
  Bytes four = Unsigned(4);
  four.resize(four.size() + 16);
  ExpectOne(tb, floats, four, true, "four floats");
  Bytes short_by_one = four;
  short_by_one.pop_back();
  ExpectOne(tb, floats, short_by_one, false, "four floats less a byte");
  ExpectOne(tb, floats, Unsigned(UINT64_MAX), false, "a count past the bytes");
  // The array's count counts as elements too; bytes after the last field are refused.
  const std::uint32_t pair = tb.Type(SavedKind::kArray, tb.Type(SavedKind::kBool), 2);
  ExpectOne(tb, pair, Bytes{1, 0}, true, "an array of two");
  ExpectOne(tb, pair, Bytes{1, 0, 0}, false, "a byte after the last field");
  ExpectOne(tb, pair, Bytes{1}, false, "an array cut short");
}

// A layout nested past 64 levels has no program: the Walker refuses it, with its message.
TEST(CheckProgramTest, ValuesNestedPast64LevelsAreLeftToTheWalker) {
  // A bool inside `levels` arrays, vectors or structs: the bool sits at depth levels + 1.
  for (SavedKind kind : {SavedKind::kArray, SavedKind::kVector, SavedKind::kStruct}) {
    Tables tb;
    auto nest = [&](int levels) {
      std::uint32_t type = tb.Type(SavedKind::kBool);
      for (int i = 0; i < levels; ++i) {
        type = kind == SavedKind::kStruct ? tb.Struct({type}) : tb.Type(kind, type, 1);
      }
      return tb.Layout({type});
    };
    auto prop = [&](int levels) {  // each vector holds one element; then the bool
      return Bytes(kind == SavedKind::kVector ? static_cast<std::size_t>(levels) + 1 : 1, 1);
    };
    const std::uint32_t deep = nest(kMaxValueDepth);
    const std::uint32_t fits = nest(kMaxValueDepth - 1);
    CheckPrograms programs(tb.t, kRecordCount);
    EXPECT_EQ(programs.StepsOf(deep), 0u);
    const Verdicts v = Judge(tb.t, deep, prop(kMaxValueDepth));
    EXPECT_FALSE(v.walker);
    EXPECT_FALSE(v.program);
    // One level less has one: a step for each container and the bool (structs are inlined).
    EXPECT_EQ(programs.StepsOf(fits),
              kind == SavedKind::kStruct ? 1u : static_cast<std::size_t>(kMaxValueDepth));
    const Verdicts ok = Judge(tb.t, fits, prop(kMaxValueDepth - 1));
    EXPECT_TRUE(ok.walker);
    EXPECT_TRUE(ok.program);
  }
}

// A fixed-size value after a vector or an array is read once, after the elements: it is not
// joined to the elements' own fixed-size skip (which runs once per element).
TEST(CheckProgramTest, AFixedValueAfterAContainerIsNotOneOfItsElements) {
  Tables tb;
  const std::uint32_t f32 = tb.Type(SavedKind::kFloat);
  const std::uint32_t floats = tb.Type(SavedKind::kVector, f32);
  const std::uint32_t pair = tb.Type(SavedKind::kArray, f32, 2);
  const std::uint32_t after_vector = tb.Layout({floats, f32});
  const std::uint32_t after_array = tb.Layout({pair, f32});
  const std::uint32_t after_struct = tb.Layout({tb.Struct({floats}), f32});
  const std::uint32_t nested = tb.Layout({tb.Type(SavedKind::kVector, tb.Struct({f32, floats})),
                                          f32});
  auto bytes = [](std::initializer_list<int> counts_and_floats) {
    Bytes b;
    ByteWriter w(&b);
    for (int v : counts_and_floats) {
      if (v < 0) {
        w.F32(1.0f);  // -1: a float
      } else {
        w.Varint(static_cast<std::uint64_t>(v));  // a count
      }
    }
    return b;
  };
  const struct {
    std::uint32_t layout;
    Bytes prop;
    bool passes;
    const char* what;
  } cases[] = {
      {after_vector, bytes({0, -1}), true, "no element, a float"},
      {after_vector, bytes({0}), false, "no element, no float"},
      {after_vector, bytes({1, -1, -1}), true, "one element, a float"},
      {after_vector, bytes({2, -1, -1, -1}), true, "two elements, a float"},
      {after_vector, bytes({2, -1, -1, -1, -1}), false, "two elements, two floats"},
      {after_array, bytes({-1, -1, -1}), true, "an array of two, a float"},
      {after_array, bytes({-1, -1, -1, -1}), false, "a float too many"},
      {after_struct, bytes({0, -1}), true, "a struct of no element, a float"},
      {after_struct, bytes({0}), false, "a struct of no element, no float"},
      {nested, bytes({1, -1, 0, -1}), true, "one struct of a float and no element, a float"},
      {nested, bytes({1, -1, 0}), false, "one struct, no float after"},
      {nested, bytes({2, -1, 1, -1, -1, 0, -1}), true, "two structs, a float"},
  };
  CheckPrograms programs(tb.t, kRecordCount);
  for (const auto& c : cases) {
    EXPECT_GT(programs.StepsOf(c.layout), 0u) << c.what;
    const Verdicts v = Judge(tb.t, c.layout, c.prop);
    EXPECT_EQ(v.walker, c.passes) << c.what;
    EXPECT_EQ(v.program, c.passes) << c.what;
  }
}

// The caps of a program: 512 steps, 4,096 values visited, and 65,536 steps for all of one
// CheckPrograms' programs; each at its limit and one past. Past a cap the layout is walked.
TEST(CheckProgramTest, EachCapAtItsLimitAndOnePast) {
  Tables tb;
  const std::uint32_t flag = tb.Type(SavedKind::kBool);
  const std::uint32_t f32 = tb.Type(SavedKind::kFloat);
  const std::uint32_t flags256 = tb.Struct(std::vector<std::uint32_t>(256, flag));
  const std::uint32_t steps512 = tb.Layout({flags256, flags256});
  const std::uint32_t steps513 = tb.Layout({flags256, flags256, flag});
  // 63 structs of 64 floats: 63 + 4,032 = 4,095 values, one skip; 64 of them: 4,160.
  const std::uint32_t floats64 = tb.Struct(std::vector<std::uint32_t>(64, f32));
  const std::uint32_t visits4095 = tb.Layout(std::vector<std::uint32_t>(63, floats64));
  const std::uint32_t visits4160 = tb.Layout(std::vector<std::uint32_t>(64, floats64));
  {
    CheckPrograms programs(tb.t, kRecordCount);
    EXPECT_EQ(programs.StepsOf(steps512), 512u);
    EXPECT_EQ(programs.StepsOf(steps513), 0u);
    EXPECT_EQ(programs.StepsOf(visits4095), 1u);
    EXPECT_EQ(programs.StepsOf(visits4160), 0u);
  }
  const struct {
    std::uint32_t layout;
    std::size_t size;
    bool program;
  } records[] = {{steps512, 512, true},
                 {steps513, 513, false},
                 {visits4095, 63 * 64 * 4, true},
                 {visits4160, 64 * 64 * 4, false}};
  for (const auto& r : records) {
    const Verdicts v = Judge(tb.t, r.layout, Bytes(r.size, 0));
    EXPECT_TRUE(v.walker) << r.layout;
    EXPECT_EQ(v.program, r.program) << r.layout;
  }
  // 128 programs of 512 steps fill the 65,536: the 129th layout gets none.
  std::vector<std::uint32_t> layouts;
  for (int i = 0; i < 129; ++i) layouts.push_back(tb.Layout({flags256, flags256}));
  CheckPrograms filled(tb.t, kRecordCount);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(filled.StepsOf(layouts[i]), 512u) << i;
  EXPECT_EQ(filled.StepsOf(layouts[128]), 0u);
  EXPECT_FALSE(filled.Passes(layouts[128], Bytes(512, 0)));
  EXPECT_TRUE(filled.Passes(layouts[0], Bytes(512, 0)));
}

TEST(CheckProgramTest, ElementsAreCountedAcrossArraysAndNestedVectors) {
  Tables tb;
  const std::uint32_t empty = tb.Type(SavedKind::kStruct, tb.empty);
  const std::uint32_t empties = tb.Type(SavedKind::kVector, empty);
  const auto limit = static_cast<std::uint32_t>(kMaxElementsPerRecord);
  const std::uint32_t array_then_vector =
      tb.Layout({tb.Type(SavedKind::kArray, empty, limit), empties});
  const std::uint32_t nested = tb.Layout({tb.Type(SavedKind::kVector, empties)});
  Bytes inner_to_limit = Unsigned(1);  // one outer element: 1 + (2^24 - 1) elements
  const Bytes n = Unsigned(kMaxElementsPerRecord - 1);
  inner_to_limit.insert(inner_to_limit.end(), n.begin(), n.end());
  Bytes inner_past = Unsigned(1);
  const Bytes m = Unsigned(kMaxElementsPerRecord);
  inner_past.insert(inner_past.end(), m.begin(), m.end());
  const struct {
    std::uint32_t layout;
    Bytes prop;
    bool passes;
  } cases[] = {{array_then_vector, Unsigned(0), true},
               {array_then_vector, Unsigned(1), false},
               {nested, inner_to_limit, true},
               {nested, inner_past, false}};
  for (const auto& c : cases) {
    const Verdicts v = Judge(tb.t, c.layout, c.prop);
    EXPECT_EQ(v.walker, c.passes);
    EXPECT_EQ(v.program, c.passes);
  }
}

// ViewUsualRecord reads a record whose layout index, section count and section sizes each take
// one byte; a record with a longer one is read by the general reader. Both view it the same.
TEST(RecordFrameTest, RecordsWithLongerPartsAreViewedAsTheUsualOnes) {
  Tables tb;
  std::uint32_t last = 0;
  for (int i = 0; i < 200; ++i) last = tb.Layout({});
  ASSERT_GE(last, 128u);
  Payload p;
  p.tables = tb.t;
  for (const std::uint32_t layout : {std::uint32_t{1}, last}) {
    for (const std::size_t size : {std::size_t{0}, std::size_t{127}, std::size_t{128}}) {
      Record r = RecordOf(layout, {});
      r.sections.push_back({SectionId{'A', 'C', 'T', 'R'}, Bytes(size, 7)});
      r.sections.push_back({SectionId{'N', 'O', 'T', 'E'}, Bytes(3, 1)});
      p.records.push_back(r);
    }
  }
  Result<Bytes> bytes = EncodePayload(p);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  Result<Payload> decoded = DecodePayload(*bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ASSERT_EQ(decoded->records.size(), p.records.size());
  for (std::size_t i = 0; i < p.records.size(); ++i) {
    EXPECT_EQ(decoded->records[i].layout, p.records[i].layout) << i;
    ASSERT_EQ(decoded->records[i].sections.size(), 3u) << i;
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(decoded->records[i].sections[k].id, p.records[i].sections[k].id) << i;
      EXPECT_EQ(decoded->records[i].sections[k].bytes, p.records[i].sections[k].bytes) << i;
    }
  }
  Result<CheckedPayload> checked = CheckedPayload::Check(*bytes);
  ASSERT_TRUE(checked.ok()) << checked.status().message();
  for (std::size_t i = 0; i < p.records.size(); ++i) {
    ByteView actr, note;
    EXPECT_TRUE(checked->Find(i, SectionId{'A', 'C', 'T', 'R'}, &actr)) << i;
    EXPECT_TRUE(checked->Find(i, SectionId{'N', 'O', 'T', 'E'}, &note)) << i;
    EXPECT_EQ(Bytes(actr.begin(), actr.end()), p.records[i].sections[1].bytes) << i;
    EXPECT_EQ(checked->layout(i), p.records[i].layout) << i;
  }
}

// A section ID that is PROP, that another section has, or that is not printable damages the
// payload, with the general reader's message.
TEST(RecordFrameTest, BadSectionIdsInTheUsualFrameAreRefused) {
  Tables tb;
  const std::uint32_t layout = tb.Layout({});
  Payload p;
  p.tables = tb.t;
  Record r = RecordOf(layout, {});
  r.sections.push_back({SectionId{'A', 'C', 'T', 'R'}, Bytes{1, 2}});
  r.sections.push_back({SectionId{'N', 'O', 'T', 'E'}, Bytes{3}});
  p.records.push_back(r);
  Result<Bytes> good = EncodePayload(p);
  ASSERT_TRUE(good.ok());
  const std::string text(good->begin(), good->end());
  const std::size_t actr = text.find("ACTR");
  const std::size_t note = text.find("NOTE");
  ASSERT_NE(actr, std::string::npos);
  ASSERT_NE(note, std::string::npos);
  const struct {
    std::size_t at;
    const char* id;
    const char* message;
  } edits[] = {{actr, "PROP", "record 1: section PROP appears twice"},
               {note, "ACTR", "record 1: section ACTR appears twice"},
               {note, "NO\nE", "record 1: a section ID is not printable"},
               {actr, "AC R", "record 1: a section ID is not printable"}};
  for (const auto& e : edits) {
    Bytes bytes = *good;
    std::memcpy(bytes.data() + e.at, e.id, 4);
    const Result<Payload> decoded = DecodePayload(bytes);
    const Result<CheckedPayload> checked = CheckedPayload::Check(bytes);
    EXPECT_EQ(decoded.status().code(), StatusCode::kDamaged) << e.id;
    EXPECT_EQ(decoded.status().message(), e.message) << e.id;
    EXPECT_EQ(checked.status().code(), StatusCode::kDamaged) << e.id;
    EXPECT_EQ(checked.status().message(), e.message) << e.id;
  }
}

}  // namespace
}  // namespace rolly::record
