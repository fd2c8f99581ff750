// record_benchmark: capture (live object to record bytes) and apply (bytes to live object) of
// 100,000 actor-like objects, per object, measured in the same run as the same saved fields
// written and read with protobuf (arena), FlatBuffers and cereal, and as a walk that only reads
// the saved fields (the floor no codec can beat). After Google Benchmark's table it prints, per
// object, capture and apply nanoseconds, payload bytes raw and after zstd level 3, the ratios of
// every peer to Rolly Save, and marks the targets of the issue PASS or MISS: capture <= 100 ns
// and >= 4x faster than protobuf; apply <= 200 ns and >= 3x faster than protobuf; <= 100 bytes
// raw and <= 55 bytes after zstd.
//
// The objects: each Actor has a transform and ten saved properties (three ints, two floats, a
// bool, a 16-character std::string, four Names from a vocabulary of 48, an enum with named values
// and a reference to another Actor) beside unsaved fields (its ID, a path cache on the heap,
// pointers, render state), about 300 bytes. Each is allocated apart (its own `new`, with spacer
// blocks of random size between them) and every pass visits them in one shuffled order, so no
// format gets a sequential walk through memory. The values are seeded and game-like: positions on
// a 1 cm grid of a 4 km map, most rotations yaw-only, most scales 1, health mostly full, 1 in 4
// references and name slots null.
//
// What each operation includes, and why it is fair:
//   - capture: from the live objects to one finished payload in a fresh buffer. Rolly Save:
//     ChunkWriter + Capturer::Capture per object (subject = the object's ID) + Finish. protobuf:
//     an arena, one ActorRecord per object in an ActorChunk, SerializeToString. FlatBuffers:
//     FlatBufferBuilder, Finish, Release (no copy). cereal: BinaryOutputArchive into a string.
//   - apply: from the payload's bytes into the live objects (a second set of the same IDs, so a
//     load really writes). Rolly Save: DecodePayload (its structure check) + an Applier over every
//     record + RunLoadedHooks. protobuf: ParseFromArray on a fresh arena, then the fields copied
//     into the objects. FlatBuffers: the Verifier over the buffer, then the fields copied. cereal:
//     BinaryInputArchive from the bytes into the objects. Peers check what they read as a loader
//     must (name indices in the table, enum numbers in range, reference indices in the chunk).
//   - Every format pays the same for the same work: record i belongs to the i-th object visited
//     (no format looks its subject up); names go through a per-chunk table in every peer too
//     (index 0 = None), as Rolly Save's chunk tables do; a reference is found at capture through
//     the same record index kept on the target object (ObjectLinks::Locate reads it with the
//     target's ID, the peers read it as their target index), and resolved at apply through the
//     same unordered_map from ID to live object (ObjectLinks::Resolve; the peers read the target
//     record's ID and look it up).
//   - bytes: the whole payload over the number of objects; zstd level 3 (ZSTD_compress, one
//     frame) over the same whole payload for all four formats.
//   - the floor: one pass over the objects in the same order that reads every saved field (the
//     string's bytes included) and sums them, so nothing can be dropped. Beside it, for reading the
//     apply figures, Resolve/links times the ID -> live object look-ups alone that every apply
//     makes for its references.
// Before anything is timed, every format's capture -> apply is checked to reproduce every saved
// field of every object (into objects whose saved fields were first set to poison values); the
// program stops with a message when one does not: a benchmark of wrong code is worthless.
//
// Defaults keep a run short (about 40 s) and fair on a shared machine (--benchmark_min_time=0.3,
// --benchmark_repetitions=7, --benchmark_enable_random_interleaving=true, so a burst of load hits
// one repetition of several benchmarks rather than every repetition of one); flags given on the
// command line win. Times are CPU times; the summary takes the best repetition, the console shows
// the median. Thread rules: single-threaded, like one save or load on one worker.

#include <benchmark/benchmark.h>
#include <flatbuffers/flatbuffers.h>
#include <google/protobuf/arena.h>
#include <zstd.h>

#include <array>
#include <bit>
#include <cereal/archives/binary.hpp>
#include <cereal/cereal.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actor.pb.h"
#include "actor_generated.h"
#include "bench_support.h"
#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/name.h"
#include "rolly/record/apply.h"
#include "rolly/record/capture.h"
#include "rolly/record/links.h"
#include "rolly/record/record_codec.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"

namespace {

using rolly::Bytes;
using rolly::ByteView;
using rolly::Guid;
using rolly::Name;
using rolly::bench::CapturingReporter;
using rolly::bench::Rng;

constexpr std::size_t kObjects = 100'000;
constexpr std::uint64_t kSeed = 0x52EC0D5;
constexpr int kZstdLevel = 3;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "record_benchmark: %s\n", what.c_str());
  std::exit(2);
}

// ---------------------------------------------------------------------------------------------
// The objects.

enum class Stance : std::uint8_t { kIdle, kPatrol, kAlert, kCombat, kFleeing, kDown };
constexpr std::uint32_t kStanceCount = 6;

struct Actor {
  // Unsaved: the ID the world gives it (its records' subject), and where the save being written
  // holds it (its record index: position in the save's order plus one; 0 when it is not saved),
  // as a world layer keeps it on the object for the length of a save.
  Guid id;
  std::uint32_t save_index = 0;
  // Saved: the transform and ten properties.
  rolly::reflect::Transformf transform;
  std::int32_t health = 100;
  std::int32_t ammo = 0;
  std::int64_t gold = 0;
  float speed = 0;
  float stamina = 0;
  bool alive = true;
  std::string label;
  std::array<Name, 4> tags;
  Stance stance = Stance::kIdle;
  Actor* target = nullptr;
  // Unsaved: what a live actor carries besides its saved state.
  std::vector<float> path_cache;
  void* owner = nullptr;
  Actor* last_seen = nullptr;
  std::uint64_t last_tick = 0;
  float velocity[3] = {};
  unsigned char render_state[96] = {};
};

constexpr std::string_view kTagWords[] = {
    "Hostile",    "Friendly",  "Neutral",  "Asleep",   "Awake",    "Burning",  "Frozen",
    "Poisoned",   "Hidden",    "Quest",    "Merchant", "Guard",    "Villager", "Bandit",
    "Wolf",       "Bear",      "Looted",   "Locked",   "Opened",   "Closed",   "Lit",
    "Unlit",      "Broken",    "Repaired", "Mounted",  "Flying",   "Swimming", "Wounded",
    "Healthy",    "Elite",     "Boss",     "Minion",   "Summoned", "Undead",   "Blessed",
    "Cursed",     "Invisible", "Stunned",  "Rooted",   "Silenced", "Enraged",  "Fleeing",
    "Patrolling", "Sleeping",  "Trading",  "Crafting", "Fishing",  "Praying"};
constexpr std::string_view kLabelWords[] = {"guard", "villager", "wolf",  "bandit", "merchant",
                                            "chest", "door",     "torch", "horse",  "shrine"};

// Everything a pass needs about one set of live objects.
struct World {
  std::vector<std::unique_ptr<Actor>> owned;     // in allocation order
  std::vector<std::unique_ptr<char[]>> spacers;  // keep the objects apart
  std::vector<Actor*> order;                     // the shuffled visit (and record) order
  std::unordered_map<Guid, Actor*> by_id;
};

// Allocates kObjects actors apart from each other, with `ids[i]` for the i-th one visited
// (random IDs when `ids` is null), and shuffles the visit order.
void Allocate(World& w, Rng& rng, const std::vector<Guid>* ids) {
  w.owned.reserve(kObjects);
  w.spacers.reserve(kObjects);
  for (std::size_t i = 0; i < kObjects; ++i) {
    w.owned.push_back(std::make_unique<Actor>());
    w.owned.back()->path_cache.assign(8, 0.0f);
    w.spacers.push_back(std::make_unique<char[]>(16 + rng.Below(512)));
  }
  for (const auto& a : w.owned) w.order.push_back(a.get());
  for (std::size_t i = w.order.size(); i > 1; --i) {
    std::swap(w.order[i - 1], w.order[rng.Below(static_cast<std::uint32_t>(i))]);
  }
  for (std::uint32_t i = 0; i < kObjects; ++i) {
    Actor* a = w.order[i];
    a->id = ids ? (*ids)[i] : Guid(rng.Next(), rng.Next());
    a->save_index = i + 1;
    w.by_id.emplace(a->id, a);
  }
}

void Fill(World& w, Rng& rng) {
  std::vector<Name> vocabulary;
  for (std::string_view word : kTagWords) vocabulary.emplace_back(word);
  for (Actor* a : w.order) {
    auto& t = a->transform;
    t.translation = {static_cast<float>(rng.Below(400000)) / 100.0f,
                     static_cast<float>(rng.Below(400000)) / 100.0f,
                     static_cast<float>(rng.Below(2000)) / 100.0f};
    if (rng.OneIn(3)) {
      const float half_yaw = static_cast<float>(rng.Below(8)) * 0.3926990817f;  // 22.5 degrees
      t.rotation = {0.0f, 0.0f, std::sin(half_yaw), std::cos(half_yaw)};
    }
    const float scale = rng.OneIn(8) ? 0.5f * static_cast<float>(1 + rng.Below(4)) : 1.0f;
    t.scale = {scale, scale, scale};
    a->health = rng.OneIn(4) ? static_cast<std::int32_t>(rng.Below(100)) : 100;
    a->ammo = static_cast<std::int32_t>(rng.Below(200));
    a->gold = rng.OneIn(2) ? 0 : static_cast<std::int64_t>(rng.Below(100000));
    a->speed = 150.0f * static_cast<float>(2 + rng.Below(3));
    a->stamina = rng.OneIn(2) ? 100.0f : rng.Float(0.0f, 100.0f);
    a->alive = !rng.OneIn(10);
    std::string label(kLabelWords[rng.Below(std::size(kLabelWords))]);
    label += '_';
    while (label.size() < 16) label += static_cast<char>('0' + rng.Below(10));
    a->label = std::move(label);
    for (Name& tag : a->tags) tag = rng.OneIn(4) ? Name() : vocabulary[rng.Below(48)];
    a->stance = static_cast<Stance>(rng.Below(kStanceCount));
    a->target = rng.OneIn(4) ? nullptr : w.order[rng.Below(kObjects)];
  }
}

// Sets every saved field to a value no save holds, so a format that fails to write one is seen.
Actor poison_target;
void Poison(World& w) {
  for (Actor* a : w.order) {
    a->transform.rotation = {-9, -9, -9, -9};
    a->transform.translation = {-9, -9, -9};
    a->transform.scale = {-9, -9, -9};
    a->health = a->ammo = -9;
    a->gold = -9;
    a->speed = a->stamina = -9;
    a->alive = a->id.low() & 1;  // half of them differ from any given save
    a->label = "poison poison poison";
    a->tags.fill(Name("Poison"));
    a->stance = static_cast<Stance>(99);
    a->target = &poison_target;
  }
}

// The first saved field of `got` (an object of `to`) that differs from `want`'s, or empty.
std::string Differs(const Actor& want, const Actor& got, const World& to) {
  if (!(want.transform == got.transform)) return "Transform";
  if (want.health != got.health) return "Health";
  if (want.ammo != got.ammo) return "Ammo";
  if (want.gold != got.gold) return "Gold";
  if (want.speed != got.speed) return "Speed";
  if (want.stamina != got.stamina) return "Stamina";
  if (want.alive != got.alive) return "Alive";
  if (want.label != got.label) return "Label";
  if (want.tags != got.tags) return "Tags";
  if (want.stance != got.stance) return "Stance";
  if (want.target == nullptr) return got.target == nullptr ? "" : "Target";
  auto it = to.by_id.find(want.target->id);
  if (it == to.by_id.end() || got.target != it->second) return "Target";
  return "";
}

// The record index of `target` in the save (its position plus one); 0 for null or an object not
// saved.
std::uint32_t TargetIndex(const Actor* target) { return target ? target->save_index : 0; }

Actor* FindLive(World& w, Guid id) {
  auto it = w.by_id.find(id);
  return it == w.by_id.end() ? nullptr : it->second;
}

// ---------------------------------------------------------------------------------------------
// Rolly Save.

class Links final : public rolly::record::ObjectLinks {
 public:
  explicit Links(World* world) : world_(world) {}
  std::optional<rolly::record::LinkTarget> Locate(const rolly::reflect::ClassInfo&,
                                                  const void* object) override {
    const auto* a = static_cast<const Actor*>(object);
    if (a->save_index == 0) return std::nullopt;
    return rolly::record::LinkTarget{a->id, a->save_index};
  }
  void* Resolve(Guid id, const rolly::reflect::ClassInfo&) override {
    return FindLive(*world_, id);
  }

 private:
  World* world_;
};

struct Rolly {
  rolly::reflect::TypeRegistry registry;
  const rolly::reflect::ClassInfo* cls = nullptr;

  Rolly() {
    using rolly::reflect::kSaveGame;
    using rolly::reflect::kTransient;
    registry.Enum<Stance>("Stance")
        .Value("Idle", Stance::kIdle)
        .Value("Patrol", Stance::kPatrol)
        .Value("Alert", Stance::kAlert)
        .Value("Combat", Stance::kCombat)
        .Value("Fleeing", Stance::kFleeing)
        .Value("Down", Stance::kDown);
    registry.Class<Actor>("Actor")
        .Field("Transform", &Actor::transform, kSaveGame)
        .Field("Health", &Actor::health, kSaveGame)
        .Field("Ammo", &Actor::ammo, kSaveGame)
        .Field("Gold", &Actor::gold, kSaveGame)
        .Field("Speed", &Actor::speed, kSaveGame)
        .Field("Stamina", &Actor::stamina, kSaveGame)
        .Field("Alive", &Actor::alive, kSaveGame)
        .Field("Label", &Actor::label, kSaveGame)
        .Field("Tags", &Actor::tags, kSaveGame)
        .Field("Stance", &Actor::stance, kSaveGame)
        .Field("Target", &Actor::target, kSaveGame)
        .Field("PathCache", &Actor::path_cache, kTransient);  // registered, never saved
    const rolly::Status s = registry.Finish();
    if (!s.ok()) Die("registry: " + std::string(s.message()));
    cls = registry.FindClass<Actor>();
    if (cls == nullptr) Die("Actor is not registered");
  }

  // The payload of every object, in visit order; empty (and `error` set) on failure.
  Bytes Capture(World& w, std::string* error = nullptr) const {
    rolly::record::ChunkWriter chunk;
    Links links(&w);
    rolly::record::Capturer capturer(&chunk, &links);
    for (Actor* a : w.order) {
      auto index = capturer.Capture(*cls, a, a->id, rolly::record::RecordKind::kActor);
      if (!index.ok()) {
        if (error) *error = std::string(index.status().message());
        return {};
      }
    }
    return chunk.Finish();
  }

  // Applies record i to the i-th object of `w`.
  bool Apply(ByteView bytes, World& w, std::vector<std::string>* messages = nullptr,
             std::string* error = nullptr) const {
    auto payload = rolly::record::DecodePayload(bytes);
    if (!payload.ok()) {
      if (error) *error = "DecodePayload: " + std::string(payload.status().message());
      return false;
    }
    if (payload->records.size() != w.order.size()) {
      if (error) *error = "wrong record count " + std::to_string(payload->records.size());
      return false;
    }
    Links links(&w);
    rolly::record::Applier applier(registry, *payload, &links);
    for (std::size_t i = 0; i < w.order.size(); ++i) {
      const rolly::Status s = applier.Apply(payload->records[i], *cls, w.order[i], messages);
      if (!s.ok()) {
        if (error) *error = "Apply: " + std::string(s.message());
        return false;
      }
    }
    applier.RunLoadedHooks();
    return true;
  }
};

// ---------------------------------------------------------------------------------------------
// The peers' shared part: the per-chunk name table.

class NameTableWriter {
 public:
  NameTableWriter() {
    names_.push_back(Name());
    index_.emplace(Name(), 0);
  }
  std::uint32_t Index(Name name) {
    auto [it, fresh] = index_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
    if (fresh) names_.push_back(name);
    return it->second;
  }
  const std::vector<Name>& names() const { return names_; }

 private:
  std::unordered_map<Name, std::uint32_t> index_;
  std::vector<Name> names_;
};

Name NameAt(const std::vector<Name>& names, std::uint32_t index) {
  return index < names.size() ? names[index] : Name();
}

// ---------------------------------------------------------------------------------------------
// protobuf (arena).

namespace pb = rolly_bench::pb;

std::string ProtobufCapture(World& w) {
  google::protobuf::Arena arena;
  auto* chunk = google::protobuf::Arena::CreateMessage<pb::ActorChunk>(&arena);
  NameTableWriter names;
  chunk->mutable_actors()->Reserve(static_cast<int>(w.order.size()));
  for (const Actor* a : w.order) {
    pb::ActorRecord* r = chunk->add_actors();
    r->set_id_high(a->id.high());
    r->set_id_low(a->id.low());
    const auto& t = a->transform;
    pb::Transform* pt = r->mutable_transform();
    pt->set_rot_x(t.rotation.x);
    pt->set_rot_y(t.rotation.y);
    pt->set_rot_z(t.rotation.z);
    pt->set_rot_w(t.rotation.w);
    pt->set_loc_x(t.translation.x);
    pt->set_loc_y(t.translation.y);
    pt->set_loc_z(t.translation.z);
    pt->set_scale_x(t.scale.x);
    pt->set_scale_y(t.scale.y);
    pt->set_scale_z(t.scale.z);
    r->set_health(a->health);
    r->set_ammo(a->ammo);
    r->set_gold(a->gold);
    r->set_speed(a->speed);
    r->set_stamina(a->stamina);
    r->set_alive(a->alive);
    r->set_label(a->label);
    auto* tags = r->mutable_tags();
    tags->Reserve(4);
    for (Name n : a->tags) tags->AddAlreadyReserved(names.Index(n));
    r->set_stance(static_cast<std::uint32_t>(a->stance));
    r->set_target(TargetIndex(a->target));
  }
  for (Name n : names.names()) chunk->add_names(std::string(n.view()));
  std::string out;
  if (!chunk->SerializeToString(&out)) out.clear();
  return out;
}

bool ProtobufApply(ByteView bytes, World& w) {
  google::protobuf::Arena arena;
  auto* chunk = google::protobuf::Arena::CreateMessage<pb::ActorChunk>(&arena);
  if (!chunk->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
  std::vector<Name> names;
  names.reserve(chunk->names_size());
  for (const std::string& s : chunk->names()) names.emplace_back(s);
  const auto& records = chunk->actors();
  if (static_cast<std::size_t>(records.size()) != w.order.size()) return false;
  for (int i = 0; i < records.size(); ++i) {
    const pb::ActorRecord& r = records.Get(i);
    Actor& a = *w.order[i];
    const pb::Transform& pt = r.transform();
    a.transform.rotation = {pt.rot_x(), pt.rot_y(), pt.rot_z(), pt.rot_w()};
    a.transform.translation = {pt.loc_x(), pt.loc_y(), pt.loc_z()};
    a.transform.scale = {pt.scale_x(), pt.scale_y(), pt.scale_z()};
    a.health = r.health();
    a.ammo = r.ammo();
    a.gold = r.gold();
    a.speed = r.speed();
    a.stamina = r.stamina();
    a.alive = r.alive();
    a.label = r.label();
    if (r.tags_size() == 4) {
      for (int k = 0; k < 4; ++k) a.tags[k] = NameAt(names, r.tags(k));
    }
    if (r.stance() < kStanceCount) a.stance = static_cast<Stance>(r.stance());
    const std::uint32_t t = r.target();
    if (t == 0) {
      a.target = nullptr;
    } else if (t <= static_cast<std::uint32_t>(records.size())) {
      const pb::ActorRecord& tr = records.Get(static_cast<int>(t - 1));
      if (Actor* live = FindLive(w, Guid(tr.id_high(), tr.id_low()))) a.target = live;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// FlatBuffers.

namespace fb = rolly_bench::fb;

flatbuffers::DetachedBuffer FlatBuffersCapture(World& w) {
  flatbuffers::FlatBufferBuilder b;
  NameTableWriter names;
  std::vector<flatbuffers::Offset<fb::ActorRecord>> records;
  records.reserve(w.order.size());
  for (const Actor* a : w.order) {
    const auto label = b.CreateString(a->label.data(), a->label.size());
    const fb::Guid id(a->id.high(), a->id.low());
    const auto& t = a->transform;
    const fb::Transform transform(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w,
                                  t.translation.x, t.translation.y, t.translation.z, t.scale.x,
                                  t.scale.y, t.scale.z);
    std::uint16_t tag_index[4];
    for (int k = 0; k < 4; ++k) tag_index[k] = static_cast<std::uint16_t>(names.Index(a->tags[k]));
    const fb::Tags tags(flatbuffers::span<const std::uint16_t, 4>(tag_index, 4));
    fb::ActorRecordBuilder r(b);
    r.add_id(&id);
    r.add_transform(&transform);
    r.add_health(a->health);
    r.add_ammo(a->ammo);
    r.add_gold(a->gold);
    r.add_speed(a->speed);
    r.add_stamina(a->stamina);
    r.add_alive(a->alive);
    r.add_label(label);
    r.add_tags(&tags);
    r.add_stance(static_cast<std::uint8_t>(a->stance));
    r.add_target(TargetIndex(a->target));
    records.push_back(r.Finish());
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> name_offsets;
  for (Name n : names.names())
    name_offsets.push_back(b.CreateString(n.view().data(), n.view().size()));
  const auto name_vector = b.CreateVector(name_offsets);
  const auto record_vector = b.CreateVector(records);
  b.Finish(fb::CreateActorChunk(b, name_vector, record_vector));
  return b.Release();
}

bool FlatBuffersApply(ByteView bytes, World& w) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!fb::VerifyActorChunkBuffer(verifier)) return false;
  const fb::ActorChunk* chunk = fb::GetActorChunk(bytes.data());
  std::vector<Name> names;
  if (chunk->names() != nullptr) {
    names.reserve(chunk->names()->size());
    for (const flatbuffers::String* s : *chunk->names()) names.emplace_back(s->string_view());
  }
  const auto* records = chunk->actors();
  if (records == nullptr || records->size() != w.order.size()) return false;
  for (flatbuffers::uoffset_t i = 0; i < records->size(); ++i) {
    const fb::ActorRecord* r = records->Get(i);
    Actor& a = *w.order[i];
    if (const fb::Transform* pt = r->transform()) {
      a.transform.rotation = {pt->rot_x(), pt->rot_y(), pt->rot_z(), pt->rot_w()};
      a.transform.translation = {pt->loc_x(), pt->loc_y(), pt->loc_z()};
      a.transform.scale = {pt->scale_x(), pt->scale_y(), pt->scale_z()};
    }
    a.health = r->health();
    a.ammo = r->ammo();
    a.gold = r->gold();
    a.speed = r->speed();
    a.stamina = r->stamina();
    a.alive = r->alive();
    if (const flatbuffers::String* label = r->label()) {
      a.label.assign(label->c_str(), label->size());
    } else {
      a.label.clear();
    }
    if (const fb::Tags* tags = r->tags()) {
      for (int k = 0; k < 4; ++k) a.tags[k] = NameAt(names, tags->index()->Get(k));
    }
    if (r->stance() < kStanceCount) a.stance = static_cast<Stance>(r->stance());
    const std::uint32_t t = r->target();
    if (t == 0) {
      a.target = nullptr;
    } else if (t <= records->size()) {
      const fb::Guid* tid = records->Get(t - 1)->id();
      if (tid != nullptr) {
        if (Actor* live = FindLive(w, Guid(tid->high(), tid->low()))) a.target = live;
      }
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// cereal (binary archive).

// The streams cereal reads and writes: a string that grows, and bytes in memory.
class StringSink final : public std::streambuf {
 public:
  explicit StringSink(std::string* out) : out_(out) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    out_->append(s, static_cast<std::size_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    out_->push_back(traits_type::to_char_type(c));
    return c;
  }

 private:
  std::string* out_;
};

class MemorySource final : public std::streambuf {
 public:
  explicit MemorySource(ByteView bytes) {
    char* begin = const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
    setg(begin, begin, begin + bytes.size());
  }
};

// The saved fields of a live actor as cereal writes them (a mirror of the saved fields, read
// straight from the object).
struct CerealOut {
  const Actor* a;
  std::array<std::uint16_t, 4> tags;
  std::uint32_t target;

  template <class Archive>
  void save(Archive& ar) const {
    const auto& t = a->transform;
    ar(a->id.high(), a->id.low());
    ar(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w, t.translation.x, t.translation.y,
       t.translation.z, t.scale.x, t.scale.y, t.scale.z);
    ar(a->health, a->ammo, a->gold, a->speed, a->stamina, static_cast<std::uint8_t>(a->alive));
    ar(a->label, tags, static_cast<std::uint8_t>(a->stance), target);
  }
};

// The same fields read straight into a live actor; the reference waits for every ID to be read.
struct CerealIn {
  Actor* a;
  const std::vector<Name>* names;
  Guid* id;
  std::uint32_t* target;

  template <class Archive>
  void load(Archive& ar) {
    std::uint64_t high, low;
    ar(high, low);
    *id = Guid(high, low);
    auto& t = a->transform;
    ar(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w, t.translation.x, t.translation.y,
       t.translation.z, t.scale.x, t.scale.y, t.scale.z);
    std::uint8_t alive, stance;
    std::array<std::uint16_t, 4> tags;
    ar(a->health, a->ammo, a->gold, a->speed, a->stamina, alive);
    ar(a->label, tags, stance, *target);
    a->alive = alive != 0;
    for (int k = 0; k < 4; ++k) a->tags[k] = NameAt(*names, tags[k]);
    if (stance < kStanceCount) a->stance = static_cast<Stance>(stance);
  }
};

// The name table first, then the count and the actors; the table is known only once every actor
// was written, so the actors go to a body that is appended after it (as ChunkWriter::Finish does
// with its records).
std::string CerealCapture(World& w) {
  NameTableWriter names;
  std::string body;
  {
    StringSink sink(&body);
    std::ostream os(&sink);
    cereal::BinaryOutputArchive ar(os);
    for (const Actor* a : w.order) {
      CerealOut out{a, {}, TargetIndex(a->target)};
      for (int k = 0; k < 4; ++k) out.tags[k] = static_cast<std::uint16_t>(names.Index(a->tags[k]));
      ar(out);
    }
  }
  std::string out;
  {
    StringSink sink(&out);
    std::ostream os(&sink);
    cereal::BinaryOutputArchive ar(os);
    std::vector<std::string> texts;
    texts.reserve(names.names().size());
    for (Name n : names.names()) texts.emplace_back(n.view());
    ar(texts, static_cast<std::uint64_t>(w.order.size()));
  }
  out += body;
  return out;
}

bool CerealApply(ByteView bytes, World& w) {
  MemorySource source(bytes);
  std::istream is(&source);
  std::vector<Guid> ids(w.order.size());
  std::vector<std::uint32_t> targets(w.order.size());
  try {
    cereal::BinaryInputArchive ar(is);
    std::vector<std::string> texts;
    std::uint64_t count = 0;
    ar(texts, count);
    if (count != w.order.size()) return false;
    std::vector<Name> names;
    names.reserve(texts.size());
    for (const std::string& s : texts) names.emplace_back(s);
    for (std::size_t i = 0; i < w.order.size(); ++i) {
      CerealIn in{w.order[i], &names, &ids[i], &targets[i]};
      ar(in);
    }
  } catch (const cereal::Exception&) {
    return false;
  }
  for (std::size_t i = 0; i < w.order.size(); ++i) {
    const std::uint32_t t = targets[i];
    if (t == 0) {
      w.order[i]->target = nullptr;
    } else if (t <= ids.size()) {
      if (Actor* live = FindLive(w, ids[t - 1])) w.order[i]->target = live;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The floor: read every saved field once.

std::uint64_t Walk(const World& w) {
  std::uint64_t sum = 0;
  for (const Actor* a : w.order) {
    const auto& t = a->transform;
    for (float f :
         {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w, t.translation.x, t.translation.y,
          t.translation.z, t.scale.x, t.scale.y, t.scale.z, a->speed, a->stamina}) {
      sum += std::bit_cast<std::uint32_t>(f);
    }
    sum += static_cast<std::uint64_t>(a->health) + static_cast<std::uint64_t>(a->ammo) +
           static_cast<std::uint64_t>(a->gold) + a->alive + static_cast<std::uint64_t>(a->stance);
    for (char c : a->label) sum += static_cast<unsigned char>(c);
    for (Name n : a->tags) sum += std::bit_cast<std::uintptr_t>(n);
    sum += reinterpret_cast<std::uintptr_t>(a->target);
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// The fixture, the round-trip checks and the benchmarks.

enum class Format { kRolly, kProtobuf, kFlatBuffers, kCereal };
constexpr Format kFormats[] = {Format::kRolly, Format::kProtobuf, Format::kFlatBuffers,
                               Format::kCereal};
constexpr const char* kFormatNames[] = {"rolly", "protobuf", "flatbuffers", "cereal"};
const char* FormatName(Format f) { return kFormatNames[static_cast<int>(f)]; }

struct Fixture {
  World save;  // the objects captured
  World load;  // the same IDs in other objects, in the same order: what applies write
  Rolly rolly;
  Bytes payload[std::size(kFormats)];
  // The ID of each saved object's target, in save order (none for a null reference).
  std::vector<Guid> target_ids;
  std::size_t zstd_size[std::size(kFormats)] = {};
};

Fixture* fixture = nullptr;

Bytes ToBytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

// One capture of `f` from the save objects; empty on failure.
Bytes CaptureOnce(Format f) {
  World& w = fixture->save;
  switch (f) {
    case Format::kRolly: {
      std::string error;
      Bytes b = fixture->rolly.Capture(w, &error);
      if (b.empty()) Die("rolly capture failed: " + error);
      return b;
    }
    case Format::kProtobuf:
      return ToBytes(ProtobufCapture(w));
    case Format::kFlatBuffers: {
      flatbuffers::DetachedBuffer buffer = FlatBuffersCapture(w);
      return Bytes(buffer.data(), buffer.data() + buffer.size());
    }
    case Format::kCereal:
      return ToBytes(CerealCapture(w));
  }
  return {};
}

bool ApplyOnce(Format f, ByteView bytes, World& w, std::string* error) {
  switch (f) {
    case Format::kRolly: {
      std::vector<std::string> messages;
      if (!fixture->rolly.Apply(bytes, w, &messages, error)) return false;
      if (!messages.empty()) {
        *error = std::to_string(messages.size()) + " messages, the first: " + messages[0];
        return false;
      }
      return true;
    }
    case Format::kProtobuf:
      return ProtobufApply(bytes, w);
    case Format::kFlatBuffers:
      return FlatBuffersApply(bytes, w);
    case Format::kCereal:
      return CerealApply(bytes, w);
  }
  return false;
}

void CheckRoundTrip(Format f) {
  const Bytes& bytes = fixture->payload[static_cast<int>(f)];
  if (bytes.empty()) Die(std::string(FormatName(f)) + ": capture wrote nothing");
  World& to = fixture->load;
  Poison(to);
  std::string error;
  if (!ApplyOnce(f, bytes, to, &error)) {
    Die(std::string(FormatName(f)) + ": apply failed" + (error.empty() ? "" : ": " + error));
  }
  for (std::size_t i = 0; i < kObjects; ++i) {
    const std::string field = Differs(*fixture->save.order[i], *to.order[i], to);
    if (!field.empty()) {
      Die(std::string(FormatName(f)) + ": the round trip changed field " + field + " of object " +
          std::to_string(i) + " (" + fixture->save.order[i]->id.ToString() + ")");
    }
  }
  // A second capture must give the same bytes (nothing in a capture may depend on the last).
  if (CaptureOnce(f) != bytes) Die(std::string(FormatName(f)) + ": capture is not repeatable");
}

void CheckRollyRecords() {
  auto payload = rolly::record::DecodePayload(fixture->payload[0]);
  if (!payload.ok()) Die("rolly: DecodePayload: " + std::string(payload.status().message()));
  for (std::size_t i = 0; i < kObjects; ++i) {
    const auto& r = payload->records[i];
    if (r.subject != fixture->save.order[i]->id ||
        r.kind != static_cast<std::uint8_t>(rolly::record::RecordKind::kActor)) {
      Die("rolly: record " + std::to_string(i + 1) + " is not the actor captured there");
    }
  }
}

void BuildFixture() {
  auto* f = new Fixture;
  fixture = f;
  Rng rng(kSeed);
  Allocate(f->save, rng, nullptr);
  Fill(f->save, rng);
  std::vector<Guid> ids;
  for (const Actor* a : f->save.order) ids.push_back(a->id);
  Allocate(f->load, rng, &ids);
  for (const Actor* a : f->save.order) f->target_ids.push_back(a->target ? a->target->id : Guid());
  for (Format fmt : kFormats) {
    const int i = static_cast<int>(fmt);
    f->payload[i] = CaptureOnce(fmt);
    const Bytes& p = f->payload[i];
    Bytes frame(ZSTD_compressBound(p.size()));
    const std::size_t n = ZSTD_compress(frame.data(), frame.size(), p.data(), p.size(), kZstdLevel);
    if (ZSTD_isError(n)) Die("zstd compression failed");
    f->zstd_size[i] = n;
  }
  CheckRollyRecords();
  for (Format fmt : kFormats) CheckRoundTrip(fmt);
}

void BM_Capture(benchmark::State& state, Format f) {
  World& w = fixture->save;
  for (auto _ : state) {
    switch (f) {
      case Format::kRolly: {
        Bytes b = fixture->rolly.Capture(w);
        if (b.empty()) state.SkipWithError("capture failed");
        benchmark::DoNotOptimize(b.data());
        break;
      }
      case Format::kProtobuf: {
        std::string s = ProtobufCapture(w);
        if (s.empty()) state.SkipWithError("capture failed");
        benchmark::DoNotOptimize(s.data());
        break;
      }
      case Format::kFlatBuffers: {
        flatbuffers::DetachedBuffer b = FlatBuffersCapture(w);
        benchmark::DoNotOptimize(b.data());
        break;
      }
      case Format::kCereal: {
        std::string s = CerealCapture(w);
        benchmark::DoNotOptimize(s.data());
        break;
      }
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kObjects));
}

void BM_Apply(benchmark::State& state, Format f) {
  const Bytes& bytes = fixture->payload[static_cast<int>(f)];
  World& w = fixture->load;
  for (auto _ : state) {
    bool ok = false;
    switch (f) {
      case Format::kRolly:
        ok = fixture->rolly.Apply(bytes, w);
        break;
      case Format::kProtobuf:
        ok = ProtobufApply(bytes, w);
        break;
      case Format::kFlatBuffers:
        ok = FlatBuffersApply(bytes, w);
        break;
      case Format::kCereal:
        ok = CerealApply(bytes, w);
        break;
    }
    if (!ok) state.SkipWithError("apply failed");
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kObjects));
}

void BM_Walk(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Walk(fixture->save));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kObjects));
}

// Not a format: the ID -> live object look-ups alone that every format's apply makes for its
// references (one per non-null target, through the same map), for reading the apply figures.
void BM_Links(benchmark::State& state) {
  World& w = fixture->load;
  for (auto _ : state) {
    std::uintptr_t sum = 0;
    for (const Guid& id : fixture->target_ids) {
      if (!id.is_none()) sum += reinterpret_cast<std::uintptr_t>(FindLive(w, id));
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kObjects));
}

std::string CaseName(const char* op, Format f) { return std::string(op) + "/" + FormatName(f); }

void RegisterAll() {
  for (Format f : kFormats) {
    benchmark::RegisterBenchmark(CaseName("Capture", f).c_str(), [f](benchmark::State& s) {
      BM_Capture(s, f);
    })->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(CaseName("Apply", f).c_str(), [f](benchmark::State& s) {
      BM_Apply(s, f);
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("Walk/floor", BM_Walk)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Resolve/links", BM_Links)->Unit(benchmark::kMillisecond);
}

// ---------------------------------------------------------------------------------------------
// The summary.

std::string Cell(double v, const char* fmt = "%.0f") { return rolly::bench::Cell(v, fmt); }
using rolly::bench::Mark;

double PerObjectNs(double seconds) { return seconds * 1e9 / kObjects; }
double Ratio(double a, double b) { return a > 0 && b > 0 ? a / b : 0; }
// A ratio as "2.50x", or "-" when either side was not measured.
std::string Times(double ratio, const char* fmt = "%.2fx") { return Cell(ratio, fmt); }

void PrintSummary(const CapturingReporter& rep) {
  std::printf(
      "\nSummary: %zu actors allocated apart, visited shuffled; per object (CPU time, best "
      "repetition; bytes = whole payload / objects, zstd level %d over the whole payload)\n\n",
      kObjects, kZstdLevel);
  std::printf("%-12s %11s %9s %10s %11s | %13s %11s\n", "format", "capture ns", "apply ns",
              "raw bytes", "zstd bytes", "capture/rolly", "apply/rolly");
  const double rc = PerObjectNs(rep.Seconds(CaseName("Capture", Format::kRolly)));
  const double ra = PerObjectNs(rep.Seconds(CaseName("Apply", Format::kRolly)));
  for (Format f : kFormats) {
    const int i = static_cast<int>(f);
    const double c = PerObjectNs(rep.Seconds(CaseName("Capture", f)));
    const double a = PerObjectNs(rep.Seconds(CaseName("Apply", f)));
    std::printf("%-12s %11s %9s %10s %11s | %13s %11s\n", FormatName(f), Cell(c, "%.1f").c_str(),
                Cell(a, "%.1f").c_str(),
                Cell(static_cast<double>(fixture->payload[i].size()) / kObjects, "%.1f").c_str(),
                Cell(static_cast<double>(fixture->zstd_size[i]) / kObjects, "%.1f").c_str(),
                Times(Ratio(c, rc)).c_str(), Times(Ratio(a, ra)).c_str());
  }
  const double walk = PerObjectNs(rep.Seconds("Walk/floor"));
  std::printf("%-12s %11s %9s %10s %11s | %13s %11s  (walk: reads every saved field)\n", "floor",
              Cell(walk, "%.1f").c_str(), Cell(walk, "%.1f").c_str(), "-", "-",
              Times(Ratio(walk, rc)).c_str(), Times(Ratio(walk, ra)).c_str());
  std::printf("rolly over the floor: capture %s, apply %s\n",
              Times(Ratio(rc, walk), "%.1fx").c_str(), Times(Ratio(ra, walk), "%.1fx").c_str());
  std::printf(
      "of every format's apply: %s ns per object are the ID -> live object look-ups of its\n"
      "references alone (Resolve/links: the same unordered_map, one look-up per non-null target)\n",
      Cell(PerObjectNs(rep.Seconds("Resolve/links")), "%.1f").c_str());

  const int r = static_cast<int>(Format::kRolly);
  const double raw = static_cast<double>(fixture->payload[r].size()) / kObjects;
  const double zstd = static_cast<double>(fixture->zstd_size[r]) / kObjects;
  const double pc = Ratio(PerObjectNs(rep.Seconds(CaseName("Capture", Format::kProtobuf))), rc);
  const double pa = Ratio(PerObjectNs(rep.Seconds(CaseName("Apply", Format::kProtobuf))), ra);
  std::printf("\nTargets (rolly, per object)\n");
  std::printf("  capture              %8s ns     <= 100 ns   %s\n", Cell(rc, "%.1f").c_str(),
              Mark(rc, 100, false));
  std::printf("  capture vs protobuf  %9s      >= 4x       %s\n", Times(pc).c_str(),
              Mark(pc, 4, true));
  std::printf("  apply                %8s ns     <= 200 ns   %s\n", Cell(ra, "%.1f").c_str(),
              Mark(ra, 200, false));
  std::printf("  apply vs protobuf    %9s      >= 3x       %s\n", Times(pa).c_str(),
              Mark(pa, 3, true));
  std::printf("  raw                  %8s bytes  <= 100      %s\n", Cell(raw, "%.1f").c_str(),
              Mark(raw, 100, false));
  std::printf("  zstd level %d         %8s bytes  <= 55       %s\n", kZstdLevel,
              Cell(zstd, "%.1f").c_str(), Mark(zstd, 55, false));

  std::printf("\nSpread per benchmark (worst/best repetition):");
  int col = 0;
  std::vector<std::string> names;
  for (Format f : kFormats) {
    names.push_back(CaseName("Capture", f));
    names.push_back(CaseName("Apply", f));
  }
  names.push_back("Walk/floor");
  names.push_back("Resolve/links");
  for (const std::string& n : names) {
    if (rep.Seconds(n) <= 0) continue;
    std::printf("%s%-22s %.2f", col++ % 3 == 0 ? "\n  " : "   ", n.c_str(), rep.Spread(n));
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  rolly::bench::TuneAllocator();
  // Short defaults; flags given on the command line win.
  if (!rolly::bench::InitializeWithDefaults(
          argc, argv,
          {"--benchmark_min_time=0.3", "--benchmark_repetitions=7",
           "--benchmark_enable_random_interleaving=true"})) {
    return 1;
  }

  BuildFixture();
  RegisterAll();
  CapturingReporter reporter(CapturingReporter::Time::kCpu);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(reporter);
  benchmark::Shutdown();
  return reporter.errors() ? 1 : 0;
}
