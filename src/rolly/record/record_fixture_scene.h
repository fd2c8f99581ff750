// The fixed scenes behind the golden record fixtures (tests/fixtures/records/), the record
// mutation test and the record fuzzers: registered test classes holding every value type the
// record codec saves, objects of them filled with fixed values, and the code that captures a
// scene into a payload and applies a payload back to fresh objects.
//
// The generator (RecordFixtures.Regenerate in record_fixture_test.cc) and the tests build the
// expected objects with the same functions, so a fixture that no longer loads into exactly these
// objects, or a capture that no longer gives exactly the fixture's bytes, is noticed.
//
// Test support only: never installed, never used by the library.
//
// Thread rules: a SceneTypes is built on one thread and then only read; Worlds are plain values
// used by one thread at a time.

#ifndef ROLLY_RECORD_RECORD_FIXTURE_SCENE_H_
#define ROLLY_RECORD_RECORD_FIXTURE_SCENE_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/record/record_codec.h"
#include "rolly/reflect/property_bag.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"

namespace rolly::record::fixture {

enum class Mood : std::uint16_t { kCalm = 0, kAngry = 5, kSleepy = 9 };
enum class Sign : std::int8_t { kMinus = -1, kZero = 0, kPlus = 1 };

// A nested struct (saved by its plan).
struct Stats {
  std::int32_t level = 0;
  float speed = 0;
  std::vector<Name> tags;
  std::optional<Mood> mood;
  friend bool operator==(const Stats&, const Stats&) = default;
};

// A struct an instanced struct and a property bag hold (saved whole: every member).
struct Slot {
  std::string item;
  std::int32_t count = 0;
  std::optional<double> weight;
  std::vector<reflect::Vector2f> marks;
  friend bool operator==(const Slot&, const Slot&) = default;
};

// An owned object's class, with a save-extra hook; Gear derives from it.
class Part {
 public:
  virtual ~Part() = default;
  void WriteExtra(reflect::ExtraWriter& w) const { w.WriteString(serial); }
  void ReadExtra(reflect::ExtraReader& r) { r.ReadString(&serial); }
  void Loaded() { ++loaded_calls; }

  std::int32_t id = 0;
  std::string label;
  std::string serial;  // save-extra
  int loaded_calls = 0;
};

// A derived owned class: its save-extra hook writes its base's part first, and it owns a Part in
// turn (nested owned objects).
class Gear : public Part {
 public:
  void WriteGearExtra(reflect::ExtraWriter& w) const {
    w.WriteBase();
    w.WriteDouble(torque);
    w.WriteBool(worn);
  }
  void ReadGearExtra(reflect::ExtraReader& r) {
    r.ReadBase();
    r.ReadDouble(&torque);
    r.ReadBool(&worn);
  }

  float power = 0;
  std::unique_ptr<Part> child;
  double torque = 0;  // save-extra
  bool worn = false;  // save-extra
};

// The class with every value type the record codec saves.
class Thing {
 public:
  void SetHealth(std::int32_t h) {
    health = h;
    ++setter_calls;
  }
  void PreSave() { ++presave_calls; }
  void Loaded() { ++loaded_calls; }
  void WriteExtra(reflect::ExtraWriter& w) const {
    w.WriteInt(secret);
    w.WriteUInt(secret_count);
    w.WriteString(secret_note);
  }
  void ReadExtra(reflect::ExtraReader& r) {
    r.ReadInt(&secret);
    r.ReadUInt(&secret_count);
    r.ReadString(&secret_note);
  }

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
  reflect::Text text;
  Mood mood = Mood::kCalm;
  Sign sign = Sign::kZero;
  Stats stats;
  std::vector<std::int32_t> ints;
  std::array<reflect::Vector3f, 2> corners{};
  std::set<std::string> tags;
  std::map<std::string, Stats> by_name;
  std::map<std::int64_t, std::vector<Mood>> moods_by_id;
  std::optional<std::int32_t> maybe;
  std::optional<Stats> maybe_stats;
  std::vector<std::vector<std::string>> nested;
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
  std::unique_ptr<Part> part;
  std::unique_ptr<Part> no_part;
  std::vector<std::unique_ptr<Part>> parts;
  Thing* buddy = nullptr;  // saved in the same chunk: by record index
  Thing* far = nullptr;    // saved elsewhere: by the refs table
  Thing* nobody = nullptr;
  reflect::PropertyBag bag;
  reflect::InstancedStruct slot;
  reflect::InstancedStruct empty_slot;
  std::int32_t health = 0;  // applied through SetHealth
  std::int64_t secret = 0;  // save-extra
  std::uint64_t secret_count = 0;
  std::string secret_note;
  std::int32_t scratch = 0;  // transient: never saved
  std::int32_t editor_only = 0;
  int setter_calls = 0;
  int presave_calls = 0;
  int loaded_calls = 0;
};

// A registry with the test classes, and the descriptors the scenes put in property bags.
class SceneTypes {
 public:
  SceneTypes();
  SceneTypes(const SceneTypes&) = delete;
  SceneTypes& operator=(const SceneTypes&) = delete;

  // Ok, or the registration mistake (a bug in this file).
  const Status& status() const { return registry_.status(); }
  const reflect::TypeRegistry& registry() const { return registry_; }
  const reflect::ClassInfo& thing() const { return *thing_; }

  // Bag property descriptors.
  const reflect::Type* int32_type = nullptr;
  const reflect::Type* string_type = nullptr;
  const reflect::Type* vector3f_type = nullptr;
  const reflect::Type* names_type = nullptr;
  const reflect::Type* mood_type = nullptr;
  const reflect::Type* slot_type = nullptr;
  const reflect::Type* text_type = nullptr;
  const reflect::Type* double_type = nullptr;

 private:
  reflect::TypeRegistry registry_;
  const reflect::ClassInfo* thing_ = nullptr;
};

// The objects of one chunk: the Things saved in it (in record order, each with its subject and
// record kind), and one Thing saved in another chunk that references may point to.
struct World {
  struct Entry {
    Guid subject;
    RecordKind kind = RecordKind::kObject;
    std::unique_ptr<Thing> thing;
  };
  std::vector<Entry> entries;
  Guid elsewhere_id = Guid(0xE15E'0000'0000'0001ull, 0x0000'0000'0000'0E15ull);
  std::unique_ptr<Thing> elsewhere = std::make_unique<Thing>();

  // The Thing saved as `id` (the elsewhere one included), or null.
  Thing* Find(Guid id) const;
  // The subject of `thing`, or the none ID.
  Guid SubjectOf(const Thing* thing) const;
};

// The names of the fixtures, in the order the manifest lists them ("<name>.rrec" each).
std::vector<std::string> FixtureNames();

// The scene of fixture `name`: its objects as saved. NotFound for an unknown name.
Result<World> BuildScene(const SceneTypes& types, std::string_view name);
// The fixture's payload: `world` (as BuildScene made it for `name`) captured into one chunk with
// one file budget, plus what fixture `name` adds by hand (records of unknown kinds, unknown
// sections). Runs OnPreSave on the objects.
Result<Bytes> CaptureScene(const SceneTypes& types, std::string_view name, World* world);
// A world with the same subjects and kinds as `shape`, each Thing a default object.
World FreshWorld(const World& shape);

// Applies every record of a known kind of `payload` to the Thing of `world` saved under its
// subject (records without one are skipped), resolving references among `world`'s objects, then
// runs OnLoaded. Returns the first Apply status that is not Ok (applying the rest still), and
// appends Apply's messages to `messages` (may be null).
Status ApplyPayload(const SceneTypes& types, const Payload& payload, World* world,
                    std::vector<std::string>* messages);

// Whether two worlds hold the same saved values, field by field (references compared by the
// subject they point to, owned objects by class and values, floats by bits). When not, `why`
// (may be null) names the first difference.
// `types` gives the descriptors the bags hold.
bool SameWorld(const SceneTypes& types, const World& a, const World& b, std::string* why);
bool SameThing(const SceneTypes& types, const World& wa, const Thing& a, const World& wb,
               const Thing& b, std::string* why);

}  // namespace rolly::record::fixture

#endif  // ROLLY_RECORD_RECORD_FIXTURE_SCENE_H_
