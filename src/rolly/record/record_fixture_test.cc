// The golden record fixtures: payloads under tests/fixtures/records/ (plain DecodePayload bytes,
// `<name>.rrec`) that every later version must decode, encode back byte for byte, and apply to
// fresh objects equal field by field to the scene they were captured from
// (record_fixture_scene.h builds it); and the current capture of each scene must give exactly the
// fixture's bytes, so any change to the record format is noticed here.
//
// The fixtures are written once. To write them again (only for a deliberate format change before
// a release; see tests/fixtures/records/README.md):
//   ROLLY_REGENERATE_FIXTURES=1 ./record_fixture_test --gtest_filter='RecordFixtures.Regenerate'
// from the source directory (ctest runs the tests there).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/checksum.h"
#include "rolly/core/fixture_files.h"
#include "rolly/core/status_matchers.h"
#include "rolly/record/chunk_tables.h"
#include "rolly/record/record_codec.h"
#include "rolly/record/record_fixture_scene.h"
#include "rolly/record/value_tree.h"

namespace rolly::record {
namespace {

namespace fs = std::filesystem;
using fixture::SceneTypes;
using fixture::World;
using ::testing::IsEmpty;
using fixture_files::ParseManifest;
using fixture_files::ReadFileBytes;
using fixture_files::ReadText;
using fixture_files::WriteFileBytes;

fs::path FixturesDir() { return fixture_files::FixturesRoot() / "records"; }


std::string Id(SectionId id) { return std::string(id.begin(), id.end()); }

// What a fixture decodes as: sizes of its tables and each record's kind, subject, class and
// sections.
std::string Describe(const Payload& p, ByteView bytes) {
  std::ostringstream o;
  o << "size " << bytes.size() << "\n";
  o << "xxh3 " << Checksum::Of(bytes).ToHex() << "\n";
  o << "tables names=" << p.tables.names().size() << " types=" << p.tables.types().size()
    << " layouts=" << p.tables.layouts().size() << " bag_layouts=" << p.tables.bag_layouts().size()
    << " refs=" << p.tables.refs().size() << "\n";
  for (std::size_t i = 0; i < p.records.size(); ++i) {
    const Record& r = p.records[i];
    o << "record " << i + 1 << " kind=" << int{r.kind};
    if (!IsKnownObjectKind(r.kind)) {
      o << " unknown_bytes=" << r.unknown.size() << "\n";
      continue;
    }
    o << " subject=" << r.subject.ToString()
      << " class=" << p.tables.name_text(p.tables.layouts()[r.layout].name) << " sections=";
    for (std::size_t k = 0; k < r.sections.size(); ++k) {
      o << (k ? "," : "") << Id(r.sections[k].id) << ":" << r.sections[k].bytes.size();
    }
    o << "\n";
  }
  return o.str();
}

const char kManifestHeader[] =
    "# What each golden record payload must decode as (record_fixture_test.cc, Describe), one\n"
    "# section per file. Permanent: see README.md. Written once by\n"
    "# ROLLY_REGENERATE_FIXTURES=1 record_fixture_test --gtest_filter=RecordFixtures.Regenerate.\n";

TEST(RecordFixtures, Regenerate) {
  if (std::getenv("ROLLY_REGENERATE_FIXTURES") == nullptr) {
    GTEST_SKIP() << "set ROLLY_REGENERATE_FIXTURES=1 to write the fixtures again";
  }
  SceneTypes types;
  ASSERT_THAT(types.status(), IsOk());
  fs::create_directories(FixturesDir());
  std::string manifest = kManifestHeader;
  for (const std::string& name : fixture::FixtureNames()) {
    ASSERT_OK_AND_ASSIGN(World world, fixture::BuildScene(types, name));
    ASSERT_OK_AND_ASSIGN(const Bytes bytes, fixture::CaptureScene(types, name, &world));
    EXPECT_LE(bytes.size(), 8192u) << "keep fixtures small";
    ASSERT_OK_AND_ASSIGN(const Payload p, DecodePayload(bytes));
    WriteFileBytes(FixturesDir() / (name + ".rrec"), bytes);
    manifest += "\n== " + name + ".rrec\n" + Describe(p, bytes);
  }
  std::ofstream(FixturesDir() / "MANIFEST.txt", std::ios::trunc) << manifest;
}

class RecordFixtureTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_THAT(types_.status(), IsOk());
    bytes_ = ReadFileBytes(FixturesDir() / (GetParam() + ".rrec"));
    ASSERT_FALSE(bytes_.empty()) << "no fixture " << GetParam() << ".rrec under " << FixturesDir();
  }
  SceneTypes types_;
  Bytes bytes_;
};

TEST_P(RecordFixtureTest, MatchesTheManifest) {
  const auto manifest = ParseManifest(ReadText(FixturesDir() / "MANIFEST.txt"));
  auto it = manifest.find(GetParam() + ".rrec");
  ASSERT_NE(it, manifest.end()) << "not in MANIFEST.txt";
  ASSERT_OK_AND_ASSIGN(const Payload p, DecodePayload(bytes_));
  EXPECT_EQ(Describe(p, bytes_), it->second);
}

TEST_P(RecordFixtureTest, DecodesAndEncodesBackByteExactly) {
  FileBudget budget;
  ASSERT_OK_AND_ASSIGN(const Payload p, DecodePayload(bytes_, &budget));
  ASSERT_OK_AND_ASSIGN(const Bytes again, EncodePayload(p));
  EXPECT_EQ(again, bytes_);
}

TEST_P(RecordFixtureTest, ValueTreeGivesBackEveryPropSection) {
  ASSERT_OK_AND_ASSIGN(Payload p, DecodePayload(bytes_));
  for (const Record& r : p.records) {
    if (!IsKnownObjectKind(r.kind)) {
      EXPECT_THAT(DecodeProp(p.tables, r, &p.records), StatusIs(StatusCode::kInvalidInput));
      continue;
    }
    ASSERT_OK_AND_ASSIGN(const Value tree, DecodeProp(p.tables, r, &p.records));
    ChunkTables tables = p.tables;
    ASSERT_OK_AND_ASSIGN(const EncodedValues values, EncodeProp(&tables, r.layout, tree));
    EXPECT_EQ(values.prop, r.Find(kPropSection)->bytes);
    const Section* owned = r.Find(kOwnedSection);
    ASSERT_EQ(values.owned.has_value(), owned != nullptr);
    if (owned != nullptr) {
      EXPECT_EQ(*values.owned, owned->bytes);
    }
  }
}

TEST_P(RecordFixtureTest, AppliesToObjectsEqualToTheScene) {
  ASSERT_OK_AND_ASSIGN(const World expected, fixture::BuildScene(types_, GetParam()));
  ASSERT_OK_AND_ASSIGN(const Payload p, DecodePayload(bytes_));
  World loaded = fixture::FreshWorld(expected);
  std::vector<std::string> messages;
  ASSERT_THAT(fixture::ApplyPayload(types_, p, &loaded, &messages), IsOk());
  EXPECT_THAT(messages, IsEmpty());
  std::string why;
  EXPECT_TRUE(fixture::SameWorld(types_, expected, loaded, &why)) << why;
  for (const World::Entry& e : loaded.entries) {
    EXPECT_EQ(e.thing->loaded_calls, 1);
    EXPECT_EQ(e.thing->setter_calls, 1);
    EXPECT_EQ(e.thing->scratch, 0) << "a transient field was applied";
    EXPECT_EQ(e.thing->editor_only, 0) << "an editor-only field was applied";
    if (e.thing->part != nullptr) {
      EXPECT_EQ(e.thing->part->loaded_calls, 1);
    }
  }
}

TEST_P(RecordFixtureTest, AppliesOverObjectsAlreadyLoaded) {
  // Applying again onto objects that hold the scene already (owned objects of the saved class
  // are applied into, not made again) leaves them equal to the scene.
  ASSERT_OK_AND_ASSIGN(const World expected, fixture::BuildScene(types_, GetParam()));
  ASSERT_OK_AND_ASSIGN(const Payload p, DecodePayload(bytes_));
  World loaded = fixture::FreshWorld(expected);
  ASSERT_THAT(fixture::ApplyPayload(types_, p, &loaded, nullptr), IsOk());
  ASSERT_THAT(fixture::ApplyPayload(types_, p, &loaded, nullptr), IsOk());
  std::string why;
  EXPECT_TRUE(fixture::SameWorld(types_, expected, loaded, &why)) << why;
}

TEST_P(RecordFixtureTest, CaptureOfTheSceneGivesTheFixtureBytes) {
  ASSERT_OK_AND_ASSIGN(World world, fixture::BuildScene(types_, GetParam()));
  ASSERT_OK_AND_ASSIGN(const Bytes bytes, fixture::CaptureScene(types_, GetParam(), &world));
  EXPECT_EQ(bytes, bytes_) << "the record format changed: " << GetParam()
                           << ".rrec no longer matches what a capture writes";
  for (const World::Entry& e : world.entries) EXPECT_EQ(e.thing->presave_calls, 1);
}

TEST_P(RecordFixtureTest, EveryTruncationIsDamaged) {
  for (std::size_t n = 0; n < bytes_.size(); ++n) {
    FileBudget budget;
    EXPECT_THAT(DecodePayload(ByteView(bytes_.data(), n), &budget), StatusIs(StatusCode::kDamaged))
        << n;
    EXPECT_EQ(budget, FileBudget()) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, RecordFixtureTest, ::testing::ValuesIn(fixture::FixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The comparison the fixtures rely on sees a change in any kind of value.
TEST(RecordFixtures, SceneComparisonNoticesEachKindOfChange) {
  SceneTypes types;
  ASSERT_THAT(types.status(), IsOk());
  const std::vector<std::pair<std::string, void (*)(World*)>> changes = {
      {"I64", [](World* w) { w->entries[0].thing->i64 += 1; }},
      {"F", [](World* w) { w->entries[0].thing->f = -w->entries[0].thing->f; }},
      {"Text", [](World* w) { w->entries[0].thing->text.arguments[1].arguments[0].source = "13"; }},
      {"Part",
       [](World* w) {
         static_cast<fixture::Gear*>(w->entries[0].thing->part.get())->child->label = "x";
       }},
      {"Buddy", [](World* w) { w->entries[0].thing->buddy = w->entries[2].thing.get(); }},
      {"Far", [](World* w) { w->entries[0].thing->far = nullptr; }},
      {"bag", [](World* w) { *static_cast<std::int32_t*>(w->entries[0].thing->bag.value(0)) = 1; }},
      {"Slot", [](World* w) { w->entries[0].thing->slot.Get<fixture::Slot>()->count = 9; }},
      {"extra", [](World* w) { w->entries[0].thing->secret_note += "!"; }},
      {"Health", [](World* w) { w->entries[0].thing->health = 0; }},
  };
  for (const auto& [what, change] : changes) {
    ASSERT_OK_AND_ASSIGN(const World a, fixture::BuildScene(types, "scene"));
    ASSERT_OK_AND_ASSIGN(World b, fixture::BuildScene(types, "scene"));
    std::string why;
    EXPECT_TRUE(fixture::SameWorld(types, a, b, &why)) << why;
    change(&b);
    EXPECT_FALSE(fixture::SameWorld(types, a, b, &why)) << what;
    EXPECT_THAT(why, ::testing::HasSubstr(what));
  }
}

TEST(RecordFixtures, EveryFileIsInTheManifest) {
  const auto manifest = ParseManifest(ReadText(FixturesDir() / "MANIFEST.txt"));
  const auto names = fixture::FixtureNames();
  EXPECT_EQ(manifest.size(), names.size());
  for (const auto& entry : fs::directory_iterator(FixturesDir())) {
    if (entry.path().extension() != ".rrec") continue;
    EXPECT_TRUE(manifest.count(entry.path().filename().string()))
        << entry.path() << " is not in MANIFEST.txt";
  }
}

}  // namespace
}  // namespace rolly::record
