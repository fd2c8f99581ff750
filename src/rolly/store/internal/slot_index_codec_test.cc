// Tests of the slot index codec (docs/storage.md, "The slot index"): what EncodeSlotIndex writes
// scans back, and each rule the scanner holds SIDX bytes to, at its bound and one past it.

#include "rolly/store/internal/slot_index_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status_matchers.h"
#include "rolly/store/store.h"

namespace rolly::store_internal {
namespace {

using store::Copy;
using store::CopyState;
using store::SlotInfo;
using store::SlotView;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();

// One entry laid out as the codec lays it out, each field wide enough to forge one past its bound.
// A varint given in `raw_sequence` or `raw_size` is written as those bytes instead.
struct Entry {
  std::string slot = "s";
  std::string title{};  // `{}`: GCC's -Wmissing-field-initializers, with designated initializers
  std::int64_t save_time_us = 0;
  std::uint64_t sequence = 0, kind = 0, game_data_version = 0;
  std::string metadata{};
  std::uint64_t size = 0;
  std::uint8_t copy = 0, state_a = 0, state_b = 0, flags = 0;
  Bytes raw_sequence{}, raw_size{};
};

// SIDX bytes: `count` (by default the number of entries), the entries, then `trailing`.
Bytes Forge(const std::vector<Entry>& entries, std::optional<std::uint64_t> count = std::nullopt,
            const Bytes& trailing = {}) {
  Bytes out;
  ByteWriter w(&out);
  auto varint = [&w](std::uint64_t v, const Bytes& raw) { raw.empty() ? w.Varint(v) : w.Raw(raw); };
  w.Varint(count.value_or(entries.size()));
  for (const Entry& e : entries) {
    w.LengthPrefixed(e.slot);
    w.LengthPrefixed(e.title);
    w.SignedVarint(e.save_time_us);
    varint(e.sequence, e.raw_sequence);
    w.Varint(e.kind);
    w.Varint(e.game_data_version);
    w.LengthPrefixed(e.metadata);
    varint(e.size, e.raw_size);
    for (std::uint8_t b : {e.copy, e.state_a, e.state_b, e.flags}) w.U8(b);
  }
  w.Raw(trailing);
  return out;
}

// ScanSlotIndex's answer, once CheckSlotIndex and MakeSlotList were seen to give the same.
Status Scan(const Bytes& bytes, std::vector<SlotView>* out = nullptr) {
  std::vector<SlotView> local;
  if (out == nullptr) out = &local;
  const Status scan = ScanSlotIndex(bytes, out);
  EXPECT_EQ(CheckSlotIndex(bytes), scan);
  const Result<store::SlotList> list = MakeSlotList(std::make_shared<const Bytes>(bytes));
  EXPECT_EQ(list.status(), scan);
  EXPECT_TRUE(!list.ok() || list.value().size() == out->size());
  return scan;
}

// Damaged, with a "slot index: ..." message holding `what`.
::testing::Matcher<Status> Refused(const std::string& what) {
  return StatusIs(StatusCode::kDamaged, AllOf(StartsWith("slot index: "), HasSubstr(what)));
}

SlotInfo Info(std::string slot, std::string title = "") {
  SlotInfo s;
  s.slot = std::move(slot);
  s.title = std::move(title);
  return s;
}

// `n` entries named "00000", "00001", ... with every other field left default.
std::vector<SlotInfo> Numbered(std::size_t n) {
  std::vector<SlotInfo> slots;
  for (std::size_t i = 0; i < n; ++i) slots.push_back(Info(std::to_string(100000 + i).substr(1)));
  return slots;
}

void ExpectSame(const SlotView& v, const SlotInfo& s) {
  EXPECT_EQ(std::tie(v.slot, v.title, v.save_time_us, v.sequence, v.kind, v.game_data_version,
                     v.size, v.copy, v.state_a, v.state_b, v.recovered, v.metadata_listed),
            std::tie(s.slot, s.title, s.save_time_us, s.sequence, s.kind, s.game_data_version,
                     s.size, s.copy, s.state_a, s.state_b, s.recovered, s.metadata_listed));
  EXPECT_EQ(Bytes(v.metadata.begin(), v.metadata.end()), s.metadata);
}

TEST(SlotIndexCodecTest, RoundTripGivesBackEveryField) {
  std::vector<SlotInfo> slots(3);
  const char* names[] = {"alpha", "beta long name", "z\xC3\xA9"};
  for (std::size_t i = 0; i < slots.size(); ++i) {
    SlotInfo& s = slots[i];
    s.slot = names[i];
    s.title = "Title \xE2\x82\xAC " + std::to_string(i);
    s.save_time_us = -1234567890123 + static_cast<std::int64_t>(i);
    s.sequence = (std::uint64_t{1} << (20 * i)) + 1;
    s.kind = 7 + static_cast<std::uint32_t>(i);
    s.game_data_version = 300000 + static_cast<std::uint32_t>(i);
    s.metadata = {0x00, 0xFF, 0x80, static_cast<std::uint8_t>(i)};
    s.size = 1048576 + i;
    s.copy = Copy::kB;
    s.state_a = i == 0 ? CopyState::kDamaged : CopyState::kNewer;
    s.state_b = CopyState::kValid;
    s.recovered = true;
  }
  slots[0].save_time_us = std::numeric_limits<std::int64_t>::min();
  slots[2].save_time_us = std::numeric_limits<std::int64_t>::max();
  slots[2].size = std::numeric_limits<std::uint64_t>::max();
  Bytes bytes;
  EncodeSlotIndex(slots, &bytes);
  std::vector<SlotView> views;
  ASSERT_OK(Scan(bytes, &views));
  ASSERT_EQ(views.size(), slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) ExpectSame(views[i], slots[i]);
  ASSERT_OK_AND_ASSIGN(const store::SlotList list,
                       MakeSlotList(std::make_shared<const Bytes>(bytes)));
  ASSERT_EQ(list.size(), slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) ExpectSame(list[i], slots[i]);
  ASSERT_NE(list.Find("beta long name"), nullptr);
  ExpectSame(*list.Find("beta long name"), slots[1]);
}

TEST(SlotIndexCodecTest, CountIsBoundedByTheBytes) {
  std::vector<SlotView> views = {SlotView{}};
  EXPECT_OK(Scan(Bytes{0x00}, &views));  // no entries; `out` replaced
  EXPECT_TRUE(views.empty());
  EXPECT_THAT(Scan(Bytes{}), Refused("slot count is not valid"));
  EXPECT_THAT(Scan(Forge({}, std::numeric_limits<std::uint64_t>::max())),
              Refused("slot count is not valid"));
  // A minimal entry takes 13 bytes; the count may be at most the bytes left over 13.
  ASSERT_EQ(Forge({Entry{}}).size(), 1u + 13u);
  EXPECT_OK(Scan(Forge({Entry{}})));
  EXPECT_THAT(Scan(Forge({Entry{}}, 2)), Refused("slot count is not valid"));
  std::vector<Entry> twelve(12);
  for (std::size_t i = 0; i < 12; ++i) twelve[i].slot = std::string(1, "abcdefghijkl"[i]);
  EXPECT_OK(Scan(Forge(twelve)));
  // 156 bytes: a count of 13 is more than they can hold. With 13 bytes more the count passes,
  // and the 13th entry (all zeros: an empty name) is what is refused.
  EXPECT_THAT(Scan(Forge(twelve, 13)), Refused("slot count is not valid"));
  EXPECT_THAT(Scan(Forge(twelve, 13, Bytes(12, 0))), Refused("slot count is not valid"));
  EXPECT_THAT(Scan(Forge(twelve, 13, Bytes(13, 0))), Refused("entry 12 is not valid"));
}

TEST(SlotIndexCodecTest, CountIsAtMost65536) {
  static_assert(kMaxIndexedSlots == 65536);
  std::vector<SlotInfo> slots = Numbered(kMaxIndexedSlots + 1);
  Bytes bytes;
  EncodeSlotIndex(slots, &bytes);
  EXPECT_THAT(Scan(bytes), Refused("slot count is not valid"));
  slots.pop_back();
  bytes.clear();
  EncodeSlotIndex(slots, &bytes);
  std::vector<SlotView> views;
  ASSERT_OK(Scan(bytes, &views));
  ASSERT_EQ(views.size(), kMaxIndexedSlots);
  EXPECT_EQ(views.back().slot, "65535");
}

TEST(SlotIndexCodecTest, StringAndMetadataLengths) {
  // docs/storage.md: names 1 to 4,096 bytes, titles 4,096, metadata 4,096.
  const std::size_t name_max = 4096, title_max = 4096;
  // A byte after the entry, so that an empty name's entry (12 bytes) passes the count.
  auto named = [](std::string slot) {
    return Forge({Entry{.slot = std::move(slot)}}, std::nullopt, {0x00});
  };
  EXPECT_THAT(Scan(named("")), Refused("entry 0 is not valid"));
  // The entry passes; the byte after it is what is refused.
  EXPECT_THAT(Scan(named(std::string(name_max, 'n'))), Refused("trailing bytes"));
  EXPECT_THAT(Scan(named(std::string(name_max + 1, 'n'))), Refused("entry 0 is not valid"));
  auto titled = [](std::string title) { return Forge({Entry{.title = std::move(title)}}); };
  EXPECT_OK(Scan(titled("")));
  EXPECT_OK(Scan(titled(std::string(title_max, 't'))));
  EXPECT_THAT(Scan(titled(std::string(title_max + 1, 't'))), Refused("entry 0 is not valid"));
  std::string metadata(store::kMaxListedMetadataSize, '\0');
  for (std::size_t i = 0; i < metadata.size(); ++i) metadata[i] = static_cast<char>(i * 131);
  std::vector<SlotView> views;
  ASSERT_OK(Scan(Forge({Entry{.metadata = metadata}}), &views));
  EXPECT_EQ(AsChars(views[0].metadata), metadata);
  metadata.push_back('m');
  EXPECT_THAT(Scan(Forge({Entry{.metadata = metadata}})), Refused("entry 0 is not valid"));
}

// Metadata past what a listing carries is left out of the entry, which says so; an entry that
// says so holds none.
TEST(SlotIndexCodecTest, MetadataPastTheListedBoundIsLeftOut) {
  SlotInfo at_bound = Info("a"), past = Info("b"), unlisted = Info("c");
  at_bound.metadata = Bytes(store::kMaxListedMetadataSize, 'm');
  past.metadata = Bytes(store::kMaxListedMetadataSize + 1, 'm');
  unlisted.metadata = Bytes(3, 'm');
  unlisted.metadata_listed = false;
  Bytes bytes;
  EncodeSlotIndex({at_bound, past, unlisted}, &bytes);
  std::vector<SlotView> views;
  ASSERT_OK(Scan(bytes, &views));
  ASSERT_EQ(views.size(), 3u);
  ExpectSame(views[0], at_bound);
  for (const SlotView& v : {views[1], views[2]}) {
    EXPECT_FALSE(v.metadata_listed) << v.slot;
    EXPECT_TRUE(v.metadata.empty()) << v.slot;
  }
  // A copy of a view keeps the mark, and encodes the same.
  Bytes again;
  EncodeSlotIndex({SlotInfo(views[0]), SlotInfo(views[1]), SlotInfo(views[2])}, &again);
  EXPECT_EQ(again, bytes);
  EXPECT_OK(Scan(Forge({Entry{.flags = 2}})));
  EXPECT_THAT(Scan(Forge({Entry{.metadata = "m", .flags = 2}})), Refused("entry 0 is not valid"));
}

// An entry with every field at its largest takes kMaxSlotIndexEntrySize bytes: the bound the
// index's size is held to (a static_assert) is the codec's own.
TEST(SlotIndexCodecTest, TheLargestEntryTakesItsBound) {
  SlotInfo s = Info(std::string(store::kMaxSlotNameSize, 'n'),
                    std::string(format::kMaxTitleSize, 't'));
  s.save_time_us = std::numeric_limits<std::int64_t>::min();
  s.sequence = std::numeric_limits<std::uint64_t>::max();
  s.kind = s.game_data_version = std::numeric_limits<std::uint32_t>::max();
  s.metadata = Bytes(store::kMaxListedMetadataSize, 'm');
  s.size = std::numeric_limits<std::uint64_t>::max();
  Bytes bytes;
  EncodeSlotIndex({s}, &bytes);
  EXPECT_EQ(bytes.size(), 1 + kMaxSlotIndexEntrySize);
  std::vector<SlotView> views;
  ASSERT_OK(Scan(bytes, &views));
  ExpectSame(views.at(0), s);
}

TEST(SlotIndexCodecTest, NamesAndTitlesAreUtf8WithoutNul) {
  using namespace std::string_literals;
  const std::string good[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF4\x8F\xBF\xBF", "long ascii name"};
  const std::string bad[] = {"a\0b"s,        "long name\0 with nul"s, "\xC0\xAF",
                             "\xED\xA0\x80", "\xF4\x90\x80\x80",      "\x80",
                             "\xE2\x82",     "long ascii then \xFF"};
  for (const std::string& s : good) {
    EXPECT_OK(Scan(Forge({Entry{.slot = s}}))) << s;
    EXPECT_OK(Scan(Forge({Entry{.title = s}}))) << s;
  }
  for (const std::string& s : bad) {
    EXPECT_THAT(Scan(Forge({Entry{.slot = s}})), Refused("entry 0 is not valid")) << s;
    EXPECT_THAT(Scan(Forge({Entry{.title = s}})), Refused("entry 0 is not valid")) << s;
  }
}

TEST(SlotIndexCodecTest, KindAndGameDataVersionAreU32) {
  std::vector<SlotView> views;
  ASSERT_OK(Scan(Forge({Entry{.kind = kU32Max, .game_data_version = kU32Max}}), &views));
  EXPECT_EQ(views[0].kind, kU32Max);
  EXPECT_EQ(views[0].game_data_version, kU32Max);
  EXPECT_THAT(Scan(Forge({Entry{.kind = kU32Max + 1}})), Refused("entry 0 is not valid"));
  EXPECT_THAT(Scan(Forge({Entry{.game_data_version = kU32Max + 1}})),
              Refused("entry 0 is not valid"));
}

TEST(SlotIndexCodecTest, CopyStatesAndFlagsAtTheirLastValue) {
  std::vector<SlotView> views;
  ASSERT_OK(Scan(Forge({Entry{.copy = 1, .state_a = 4, .state_b = 4, .flags = 1}}), &views));
  EXPECT_TRUE(views[0].copy == Copy::kB && views[0].state_a == CopyState::kFailed &&
              views[0].state_b == CopyState::kFailed && views[0].recovered);
  ASSERT_OK(Scan(Forge({Entry{.flags = 3}}), &views));
  EXPECT_TRUE(views[0].recovered && !views[0].metadata_listed);
  for (const Entry& e : {Entry{.copy = 2}, Entry{.state_a = 5}, Entry{.state_b = 5},
                         Entry{.flags = 4}, Entry{.flags = 0x80}}) {
    EXPECT_THAT(Scan(Forge({e})), Refused("entry 0 is not valid"));
  }
}

TEST(SlotIndexCodecTest, NamesAreInStrictlyIncreasingByteOrder) {
  // Byte order: a prefix first, bytes unsigned, the first differing byte deciding (also in the
  // eight-byte words the scanner compares).
  const std::pair<std::string, std::string> ordered[] = {{"a", "b"},
                                                         {"a", "ab"},
                                                         {"a0000001", "b0000000"},
                                                         {"abcdefgh0", "abcdefgh1"},
                                                         {"z", "\xC3\xA9"}};
  auto two = [](std::string a, std::string b) { return Forge({Entry{.slot = a}, {.slot = b}}); };
  for (const auto& [first, second] : ordered) {
    SCOPED_TRACE(first + " < " + second);
    EXPECT_OK(Scan(two(first, second)));
    EXPECT_THAT(Scan(two(second, first)), Refused("entry 1 is out of order or repeated"));
    EXPECT_THAT(Scan(two(first, first)), Refused("entry 1 is out of order or repeated"));
  }
  EXPECT_THAT(Scan(Forge({Entry{.slot = "a"}, Entry{.slot = "c"}, Entry{.slot = "b"}})),
              Refused("entry 2 is out of order or repeated"));
}

TEST(SlotIndexCodecTest, NoBytesAfterTheLastEntry) {
  EXPECT_THAT(Scan(Bytes{0x00, 0x00}), Refused("trailing bytes"));
  EXPECT_THAT(Scan(Forge({Entry{}}, std::nullopt, {0x00})), Refused("trailing bytes"));
}

TEST(SlotIndexCodecTest, VarintsAreInShortestForm) {
  // The count: 0 in two bytes, and a varint cut short.
  EXPECT_THAT(Scan(Bytes{0x80, 0x00}), Refused("slot count is not valid"));
  EXPECT_THAT(Scan(Bytes{0x80}), Refused("slot count is not valid"));
  // `n` bytes: 0x80 (or `fill`), then `last`.
  auto v = [](std::size_t n, std::uint8_t last, std::uint8_t fill = 0x80) {
    Bytes b(n - 1, fill);
    b.push_back(last);
    return b;
  };
  const std::tuple<Bytes, std::uint64_t, Bytes> cases[] = {
      {v(2, 1), 128, v(2, 0)},                              // two bytes: the inline path
      {v(3, 1), 1u << 14, v(3, 0)},                         // three: the out-of-line path
      {v(8, 1), std::uint64_t{1} << 49, v(8, 0)},           // eight: one word
      {v(9, 1), std::uint64_t{1} << 56, v(9, 0)},           // nine: past one word
      {v(10, 1), std::uint64_t{1} << 63, v(10, 0)},         // ten
      {v(10, 1, 0xFF), ~std::uint64_t{0}, v(10, 2, 0xFF)},  // above 2^64 - 1
      {v(10, 1), std::uint64_t{1} << 63, v(11, 1)}};        // eleven bytes
  for (const auto& [good, value, bad] : cases) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    // A long varint is read a word at a time when 8 bytes are left (always so for the sequence),
    // else a byte at a time (the size, the last varint, has 4 bytes after it: 3-byte varints).
    std::vector<SlotView> views;
    ASSERT_OK(Scan(Forge({Entry{.raw_sequence = good}}), &views));
    EXPECT_EQ(views[0].sequence, value);
    ASSERT_OK(Scan(Forge({Entry{.raw_size = good}}), &views));
    EXPECT_EQ(views[0].size, value);
    EXPECT_THAT(Scan(Forge({Entry{.raw_sequence = bad}})), Refused("entry 0 is not valid"));
    EXPECT_THAT(Scan(Forge({Entry{.raw_size = bad}})), Refused("entry 0 is not valid"));
  }
}

// "name=title" of each entry.
std::vector<std::string> Listed(const Bytes& bytes) {
  std::vector<SlotView> views;
  EXPECT_OK(Scan(bytes, &views));
  std::vector<std::string> listed;
  for (const SlotView& v : views) listed.emplace_back(v.slot).append("=").append(v.title);
  return listed;
}

TEST(SlotIndexCodecTest, MergeAddsReplacesAndRemovesInOrder) {
  const std::vector<SlotInfo> base = {Info("b", "kept"), Info("d", "old"), Info("f")};
  Bytes bytes;
  EncodeSlotIndex(base, &bytes);
  const std::map<std::string, std::optional<SlotInfo>> changes = {
      {"a", Info("a", "new")}, {"c", Info("c", "new")}, {"d", Info("d", "replaced")},
      {"f", std::nullopt},     {"g", Info("g", "new")}, {"x", std::nullopt}};
  Bytes out = {0xFF, 0xFF};  // replaced
  ASSERT_OK(MergeSlotIndex(bytes, changes, &out));
  EXPECT_THAT(Listed(out), ElementsAre("a=new", "b=kept", "c=new", "d=replaced", "g=new"));
  // Into an empty index, and removing everything.
  ASSERT_OK(MergeSlotIndex(Bytes{0x00}, changes, &out));
  EXPECT_THAT(Listed(out), ElementsAre("a=new", "c=new", "d=replaced", "g=new"));
  ASSERT_OK(MergeSlotIndex(bytes, {{"b", {}}, {"d", {}}, {"f", {}}}, &out));
  EXPECT_EQ(out, Bytes{0x00});
}

TEST(SlotIndexCodecTest, MergeListsAtMost65536) {
  const std::vector<SlotInfo> all = Numbered(kMaxIndexedSlots + 1);
  const SlotInfo &first = all.front(), &last = all.back();
  Bytes almost, full, out;
  EncodeSlotIndex({all.begin() + 1, all.end() - 1}, &almost);  // 65,535
  ASSERT_OK(MergeSlotIndex(almost, {{first.slot, first}}, &full));
  ASSERT_EQ(Listed(full).size(), kMaxIndexedSlots);
  // At the bound: replacing, and removing one while adding another.
  ASSERT_OK(MergeSlotIndex(full, {{first.slot, first}}, &out));
  EXPECT_EQ(out, full);
  ASSERT_OK(MergeSlotIndex(full, {{first.slot, std::nullopt}, {last.slot, last}}, &out));
  EXPECT_EQ(Listed(out).size(), kMaxIndexedSlots);
  // One past it: `out` untouched.
  const Bytes sentinel = {1, 2, 3};
  out = sentinel;
  EXPECT_THAT(MergeSlotIndex(full, {{last.slot, last}}, &out),
              StatusIs(StatusCode::kStorageFailed, HasSubstr("65537 slots, more than the 65536")));
  EXPECT_EQ(out, sentinel);
}

TEST(SlotIndexCodecTest, MergeOfDamagedBytesIsDamaged) {
  const std::map<std::string, std::optional<SlotInfo>> changes = {{"a", Info("a")}};
  const Bytes sentinel = {1, 2, 3};
  const std::pair<Bytes, std::string> damaged[] = {
      {Bytes{}, "slot count is not valid"},
      {Forge({Entry{.slot = "b"}, Entry{.slot = "a"}}), "entry 1 is out of order"},
      {Forge({Entry{.state_b = 5}}), "entry 0 is not valid"},
      {Forge({Entry{}}, std::nullopt, {0x00}), "trailing bytes"}};
  for (const auto& [bytes, what] : damaged) {
    Bytes out = sentinel;
    EXPECT_THAT(MergeSlotIndex(bytes, changes, &out), Refused(what));
    EXPECT_EQ(out, sentinel);
  }
}

}  // namespace
}  // namespace rolly::store_internal
