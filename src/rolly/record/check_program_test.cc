// The check programs (internal/check_program.h) judge every record as the Walker of the payload
// check does: each bound at its limit and one past, every single-byte edit of a record holding
// every plain kind, and a payload's status when one of its records is edited.

#include "rolly/record/internal/check_program.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
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
    for (int i = 0; i < 32; ++i) fields.push_back(*t.AddName(Name("f" + std::to_string(i))));
    EXPECT_TRUE(t.AddRef(Guid(1, 1)).ok());
    EXPECT_TRUE(t.AddRef(Guid(1, 2)).ok());
    inner = t.AppendLayout({names[0], {{names[5], Type(SavedKind::kInt32)},
                                       {names[6], Type(SavedKind::kString)}}});
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
  const std::uint32_t empty = tb.Type(SavedKind::kStruct, tb.empty);
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
      tb.Type(SavedKind::kVector, tb.Type(SavedKind::kVector, tb.Type(SavedKind::kBool))),
      tb.Type(SavedKind::kReference), tb.Type(SavedKind::kVector, empty),
      tb.Type(SavedKind::kTransformd)});
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
  w.Varint(2);
  w.Varint(2);
  w.U8(1);
  w.U8(0);
  w.Varint(0);
  w.Varint(2 * 3 + 1);  // record 3
  w.Varint(5);          // five empty structs
  for (int i = 0; i < 10; ++i) w.F64(i);
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
  // Most edits are refused, and some pass (a number's value changed): both verdicts were met.
  EXPECT_GT(refused, cases / 4);
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
  Tables tb;
  std::uint32_t type = tb.Type(SavedKind::kBool);
  for (int i = 0; i < kMaxValueDepth; ++i) type = tb.Type(SavedKind::kArray, type, 1);
  const std::uint32_t deep = tb.Layout({type});
  // One level less has one.
  std::uint32_t shallow = tb.Type(SavedKind::kBool);
  for (int i = 0; i < kMaxValueDepth - 1; ++i) shallow = tb.Type(SavedKind::kArray, shallow, 1);
  const std::uint32_t fits = tb.Layout({shallow});
  CheckPrograms programs(tb.t, kRecordCount);
  EXPECT_EQ(programs.StepsOf(deep), 0u);
  const Verdicts v = Judge(tb.t, deep, Bytes{1});
  EXPECT_FALSE(v.walker);
  EXPECT_FALSE(v.program);
  EXPECT_EQ(programs.StepsOf(fits), static_cast<std::size_t>(kMaxValueDepth));
  const Verdicts ok = Judge(tb.t, fits, Bytes{1});
  EXPECT_TRUE(ok.walker);
  EXPECT_TRUE(ok.program);
}

}  // namespace
}  // namespace rolly::record
