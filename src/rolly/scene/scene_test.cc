#include "rolly/scene/scene.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rolly/core/status_matchers.h"
#include "rolly/scene/sample_game.h"

namespace rolly::scene {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// What happened, in order: the host's moments and the probe actors' begin and end play.
std::vector<std::string>* g_log = nullptr;

void Log(std::string line) {
  if (g_log) g_log->push_back(std::move(line));
}

// An interface some actors implement, and one that does.
class Switchable {
 public:
  virtual ~Switchable() = default;
  bool on = false;
};
class SwitchActor : public Actor, public Switchable {};

// What a probe's EndPlay runs besides its log line, while set.
std::function<void(Actor&)> g_probe_end_play;

class ProbeActor : public Actor {
 public:
  void BeginPlay() override { Log("BeginPlay " + label); }
  void EndPlay() override {
    Log("EndPlay " + label + (pal ? " with its pal" : ""));
    if (g_probe_end_play) g_probe_end_play(*this);
  }
  std::string label;
  std::map<Name, std::int32_t> counts;
  std::optional<std::int32_t> maybe;
  std::set<Name> flags;
  reflect::Vector3d where;
  Guid token;
  Actor* pal = nullptr;
  Component* gadget = nullptr;
  Switchable* toggle = nullptr;
};

class RecordingEvents : public world::HostEvents {
 public:
  void OnActorsInitialized() override { Log("ActorsInitialized"); }
  void OnBeginPlay() override { Log("WorldBeginPlay"); }
  void OnLevelAdded(Name level) override { Log("LevelAdded " + level.str()); }
  void OnLevelRemoved(Name level) override { Log("LevelRemoved " + level.str()); }
  void OnComponentCreated(Guid actor, const world::ComponentView& c) override {
    Log("ComponentCreated " + actor.ToString() + " " + c.name.str() + " " +
        (c.object.cls ? c.object.cls->name().str() : "?"));
  }
};

constexpr const char* kDoorId = "00000000-0000-4000-8000-000000000001";
constexpr const char* kChestId = "00000000-0000-4000-8000-000000000002";
constexpr const char* kAliceId = "00000000-0000-4000-8000-000000000003";
constexpr const char* kBobId = "00000000-0000-4000-8000-000000000004";
constexpr const char* kProbeId = "00000000-0000-4000-8000-000000000005";
constexpr const char* kCellarId = "00000000-0000-4000-8000-000000000006";

Guid G(const char* text) { return *Guid::Parse(text); }

// A small map touching every kind of value the scene sets.
std::string SmallMap() {
  return std::string(R"({
  "name": "small",
  "levels": [{"name": "Main"}, {"name": "Cellar", "loaded": false}],
  "game_instance": {"class": "GameInstance", "subsystems": ["QuestLog"]},
  "game_mode": "SampleGameMode",
  "game_state": {"class": "SampleGameState", "values": {"Day": 3, "TimeOfDay": 20.5}},
  "level_script": "LevelScript",
  "players": [{"controller": "SamplePlayerController", "pawn": "SamplePawn",
               "player_state": {"class": "SamplePlayerState", "values": {"Gold": 7}}}],
  "actors": [
    {"class": "Door", "id": ")") +
         kDoorId + R"(", "tags": ["Front", "Wood"],
     "values": {"Open": true, "State": "Locked", "LockCode": 1234},
     "transform": {"translation": [1, 2, 3], "rotation": [0, 0, 0, 1], "scale": [1, 1, 2]}},
    {"class": "Chest", "id": ")" +
         kChestId + R"(", "saving": "Always", "owner": ")" + kAliceId + R"(",
     "values": {"Inventory": [{"Item": "Apple", "Count": 3, "Durability": 0.5}, {"Item": "Sword"}]}},
    {"class": "Character", "id": ")" +
         kAliceId + R"(",
     "values": {"Name": "Alice", "Health": 80, "Friend": ")" +
         kBobId + R"("},
     "components": [{"name": "Inventory", "values": {"Capacity": 12}},
                    {"name": "Light", "class": "LampComponent", "values": {"Broken": true}}]},
    {"class": "Character", "id": ")" +
         kBobId + R"(", "attach": {"parent": ")" + kDoorId +
         R"(", "socket": "Hinge"}, "values": {"Name": "Bob", "Target": ")" + kAliceId + R"("}},
    {"class": "ProbeActor", "id": ")" +
         kProbeId + R"(", "saving": "Never",
     "values": {"Counts": {"a": 1, "b": 2}, "Maybe": 5, "Flags": ["x", "y"], "Where": [1, 2, 3],
                "Token": ")" +
         kDoorId + R"("}},
    {"class": "Lamp", "id": ")" +
         kCellarId + R"(", "level": "Cellar",
     "values": {"On": true, "Color": [1, 0, 0]}}
  ]
})";
}

class SceneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_log = &log_;
    RegisterSceneTypes(registry_);
    RegisterSampleGame(registry_);
    registry_.Class<ProbeActor>("ProbeActor")
        .Base<Actor>()
        .Field("Counts", &ProbeActor::counts, reflect::kSaveGame)
        .Field("Maybe", &ProbeActor::maybe, reflect::kSaveGame)
        .Field("Flags", &ProbeActor::flags, reflect::kSaveGame)
        .Field("Where", &ProbeActor::where, reflect::kSaveGame)
        .Field("Token", &ProbeActor::token, reflect::kSaveGame)
        .Field("Pal", &ProbeActor::pal, reflect::kSaveGame)
        .Field("Gadget", &ProbeActor::gadget, reflect::kSaveGame)
        .Field("Toggle", &ProbeActor::toggle, reflect::kSaveGame);
    registry_.Class<Switchable>("Switchable");
    registry_.Class<SwitchActor>("SwitchActor").Base<Actor>().Interface<Switchable>();
    ASSERT_OK(registry_.Finish());
    scene_ = std::make_unique<Scene>(registry_);
    scene_->SetEvents(&events_);
    scene_->AddMap("maps/small.json", SmallMap());
  }
  void TearDown() override {
    g_probe_end_play = nullptr;
    scene_.reset();
    g_log = nullptr;
  }

  // A map with one actor whose JSON is `actor`.
  Status OpenOneActor(const std::string& actor) {
    scene_->AddMap("maps/one.json", R"({"actors": [)" + actor + "]}");
    return scene_->OpenMap("maps/one.json");
  }

  // Starts a 300-actor sample map; the IDs of its persistent level's actors, in the scene's
  // order.
  std::vector<Guid> StartSampleMap() {
    scene_->AddMap("maps/sample.json", BuildSampleMap(300, 11));
    EXPECT_OK(scene_->Start("maps/sample.json"));
    std::vector<Guid> ids;
    for (const world::ActorView& a : Actors(Name("Persistent"))) ids.push_back(a.id);
    return ids;
  }

  std::vector<world::ActorView> Actors(Name level) {
    std::vector<world::ActorView> out;
    scene_->VisitActors(level, [&out](const world::ActorView& a) { out.push_back(a); });
    return out;
  }

  std::vector<std::string> log_;
  reflect::TypeRegistry registry_;
  RecordingEvents events_;
  std::unique_ptr<Scene> scene_;
};

TEST_F(SceneTest, HasNoWorldBeforeStart) {
  EXPECT_FALSE(scene_->HasWorld());
  EXPECT_TRUE(scene_->IsAuthority());
  EXPECT_EQ(scene_->CurrentMap(), "");
  EXPECT_TRUE(scene_->Levels().empty());
  EXPECT_THAT(scene_->SpawnActor(Name("Door"), Name(), {}), StatusIs(StatusCode::kInvalidInput));
  scene_->SetAuthority(false);
  EXPECT_FALSE(scene_->IsAuthority());
}

TEST_F(SceneTest, LoadsAMapAndSetsInitialValues) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  EXPECT_TRUE(scene_->HasWorld());
  EXPECT_EQ(scene_->CurrentMap(), "maps/small.json");
  EXPECT_THAT(scene_->Levels(), ElementsAre(Name("Main")));
  EXPECT_THAT(scene_->MapLevels(), ElementsAre(Name("Main"), Name("Cellar")));

  auto* door = scene_->FindActorAs<Door>(G(kDoorId));
  ASSERT_NE(door, nullptr);
  EXPECT_TRUE(door->open);
  EXPECT_EQ(door->state, DoorState::kLocked);
  EXPECT_EQ(door->lock_code, 1234);
  EXPECT_THAT(door->tags, ElementsAre(Name("Front"), Name("Wood")));
  EXPECT_EQ(door->transform.translation.z, 3);
  EXPECT_EQ(door->transform.scale.z, 2);
  EXPECT_FALSE(door->spawned);
  EXPECT_EQ(door->level, Name("Main"));

  auto* chest = scene_->FindActorAs<Chest>(G(kChestId));
  ASSERT_NE(chest, nullptr);
  ASSERT_EQ(chest->inventory.size(), 2u);
  EXPECT_EQ(chest->inventory[0], (ItemStack{Name("Apple"), 3, 0.5f}));
  EXPECT_EQ(chest->inventory[1], (ItemStack{Name("Sword"), 0, 1.0f}));
  EXPECT_EQ(chest->saving, world::Saving::kAlways);
  EXPECT_EQ(chest->owner_id, G(kAliceId));

  auto* alice = scene_->FindActorAs<Character>(G(kAliceId));
  auto* bob = scene_->FindActorAs<Character>(G(kBobId));
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  EXPECT_EQ(alice->name, "Alice");
  EXPECT_EQ(alice->health, 80);
  EXPECT_EQ(alice->friend_character, bob);
  EXPECT_EQ(bob->target, alice);
  EXPECT_EQ(bob->attach_parent, G(kDoorId));
  EXPECT_EQ(bob->attach_socket, Name("Hinge"));
  auto* inventory = dynamic_cast<InventoryComponent*>(alice->FindComponent(Name("Inventory")));
  ASSERT_NE(inventory, nullptr);
  EXPECT_EQ(inventory->capacity, 12);
  EXPECT_EQ(inventory->owner, alice);
  auto* light = dynamic_cast<LampComponent*>(alice->FindComponent(Name("Light")));
  ASSERT_NE(light, nullptr);
  EXPECT_TRUE(light->broken);
  EXPECT_EQ(light->owner, alice);

  auto* probe = scene_->FindActorAs<ProbeActor>(G(kProbeId));
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->counts.at(Name("b")), 2);
  EXPECT_EQ(probe->maybe, 5);
  EXPECT_EQ(probe->flags.size(), 2u);
  EXPECT_EQ(probe->where.y, 2);
  EXPECT_EQ(probe->token, G(kDoorId));

  // The sublevel is not loaded: its lamp does not exist yet.
  EXPECT_EQ(scene_->FindActor(G(kCellarId)), nullptr);

  auto* state = dynamic_cast<SampleGameState*>(scene_->game_state());
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->day, 3);
  EXPECT_EQ(state->time_of_day, 20.5f);
  ASSERT_EQ(scene_->players().size(), 1u);
  EXPECT_EQ(dynamic_cast<SamplePlayerState*>(scene_->players()[0].player_state)->gold, 7);
}

TEST_F(SceneTest, ListsGlobalsByRoleAndClass) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  std::vector<world::GlobalView> globals;
  scene_->ListGlobals(&globals);
  std::vector<std::string> seen;
  for (const auto& g : globals) {
    ASSERT_TRUE(g.object);
    seen.push_back(g.role.str() + ":" + g.object.cls->name().str());
  }
  EXPECT_THAT(seen, ElementsAre("GameInstance:GameInstance", "Subsystem:QuestLog",
                                "GameMode:SampleGameMode", "GameState:SampleGameState",
                                "LevelScript:LevelScript"));
  // The object is the most derived class's address.
  EXPECT_EQ(globals[1].object.ptr, scene_->GetSubsystem<QuestLog>());
}

TEST_F(SceneTest, ListsActorsAndComponentsAsTheirMostDerivedClass) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  std::vector<world::ActorView> actors = Actors(Name("Main"));
  ASSERT_EQ(actors.size(), 6u);  // five placed, the player's pawn
  world::ActorView alice;
  ASSERT_TRUE(scene_->FindActor(G(kAliceId), &alice));
  EXPECT_EQ(alice.object.cls->name(), Name("Character"));
  EXPECT_EQ(alice.object.ptr, scene_->FindActorAs<Character>(G(kAliceId)));
  std::vector<world::ComponentView> components;
  scene_->ListComponents(alice, &components);
  ASSERT_EQ(components.size(), 2u);
  EXPECT_EQ(components[0].name, Name("Inventory"));
  EXPECT_EQ(components[0].object.cls->name(), Name("InventoryComponent"));
  EXPECT_EQ(components[1].object.cls->name(), Name("LampComponent"));
  world::ActorView none;
  EXPECT_FALSE(scene_->FindActor(Guid(1, 2), &none));
  // A view whose object is not an actor (a host's contract broken) lists nothing, the actor's
  // class seen before it or not.
  std::vector<world::GlobalView> globals;
  scene_->ListGlobals(&globals);
  ASSERT_GE(globals.size(), 3u);
  for (int twice = 0; twice < 2; ++twice) {
    world::ActorView odd = alice;
    odd.object = globals[2].object;  // the game mode
    components.clear();
    scene_->ListComponents(odd, &components);
    EXPECT_TRUE(components.empty());
  }
  components.clear();
  scene_->ListComponents(alice, &components);
  EXPECT_EQ(components.size(), 2u);
  world::ActorView probe;
  ASSERT_TRUE(scene_->FindActor(G(kProbeId), &probe));
  EXPECT_EQ(probe.saving, world::Saving::kNever);
}

// The views FindActors hands over, by position (none: null), and the same through FindActor.
struct FoundView {
  Guid id;
  world::Object object;
  Name level;
  bool spawned = false;
  world::Saving saving = world::Saving::kWithSavedState;
  bool player_pawn = false;
  reflect::Transformd transform;
  Guid owner, attach_parent;
  Name attach_socket;
  explicit FoundView(const world::ActorView& v)
      : id(v.id),
        object(v.object),
        level(v.level),
        spawned(v.spawned),
        saving(v.saving),
        player_pawn(v.player_pawn),
        transform(v.transform),
        owner(v.owner),
        attach_parent(v.attach_parent),
        attach_socket(v.attach_socket) {}
  friend bool operator==(const FoundView& a, const FoundView& b) {
    return a.id == b.id && a.object.cls == b.object.cls && a.object.ptr == b.object.ptr &&
           a.level == b.level && a.spawned == b.spawned && a.saving == b.saving &&
           a.player_pawn == b.player_pawn && a.transform == b.transform && a.owner == b.owner &&
           a.attach_parent == b.attach_parent && a.attach_socket == b.attach_socket;
  }
};
using FoundViews = std::vector<std::optional<FoundView>>;

FoundViews FindEach(world::Host& host, const std::vector<Guid>& ids, bool default_call) {
  FoundViews out;
  auto found = [&](std::size_t k, const world::ActorView* v) {
    EXPECT_EQ(k, out.size());
    out.push_back(v ? std::optional<FoundView>(FoundView(*v)) : std::nullopt);
  };
  if (default_call) {
    host.world::Host::FindActors(ids, found);
  } else {
    host.FindActors(ids, found);
  }
  return out;
}

FoundViews FindOneByOne(world::Host& host, const std::vector<Guid>& ids) {
  FoundViews out;
  for (Guid id : ids) {
    world::ActorView v;
    out.push_back(host.FindActor(id, &v) ? std::optional<FoundView>(FoundView(v)) : std::nullopt);
  }
  return out;
}

// FindActors answers as FindActor does, in order, for present and absent IDs, repeated ones and
// more IDs than the scene looks ahead; its default (the host's) does too.
TEST_F(SceneTest, FindActorsAnswersAsFindActorDoes) {
  std::vector<Guid> ids = {G(kAliceId), Guid(1, 2)};
  EXPECT_EQ(FindEach(*scene_, ids, false), FoundViews(2));  // no world: none found
  EXPECT_EQ(FindEach(*scene_, ids, true), FoundViews(2));
  ASSERT_OK(scene_->Start("maps/small.json"));
  ids.clear();
  for (int round = 0; round < 5; ++round) {
    for (const world::ActorView& a : Actors(Name("Main"))) {
      ids.push_back(a.id);
      ids.push_back(Guid(7, static_cast<std::uint64_t>(ids.size())));  // absent
    }
  }
  ids.push_back(G(kCellarId));  // in a level not loaded
  ids.push_back(Guid());
  ASSERT_GT(ids.size(), 40u);
  const FoundViews want = FindOneByOne(*scene_, ids);
  EXPECT_EQ(std::count(want.begin(), want.end(), std::nullopt), 32);
  EXPECT_EQ(FindEach(*scene_, ids, false), want);
  EXPECT_EQ(FindEach(*scene_, ids, true), want);
  EXPECT_TRUE(FindEach(*scene_, {}, false).empty());
  EXPECT_TRUE(FindEach(*scene_, {}, true).empty());
  // A shorter list than the scene looks ahead.
  const std::vector<Guid> few = {ids[2], ids[1], ids[0]};
  EXPECT_EQ(FindEach(*scene_, few, false), FindOneByOne(*scene_, few));
}

// FindActors matches IDs against its actors in their order first: IDs in that order with gaps
// shorter and longer than its window, a run of absent IDs, destroyed actors, jumps far ahead and
// back, and the same IDs backwards are all answered as FindActor answers them.
TEST_F(SceneTest, FindActorsAnswersAsFindActorDoesInAnyOrder) {
  const std::vector<Guid> all = StartSampleMap();
  ASSERT_GT(all.size(), 200u);
  scene_->DestroyActors({all[3], all[4], all[50]});
  // An actor between BeginSpawn and FinishSpawn is there too.
  const reflect::ClassInfo* crate = registry_.FindClass(Name("Crate"));
  ASSERT_NE(crate, nullptr);
  ASSERT_OK(scene_->BeginSpawn(Name(), *crate, Guid(5, 5), {}).status());
  std::vector<Guid> ids = {Guid(5, 5)};
  std::size_t gap = 0;
  for (std::size_t i = 0; i < all.size(); i += 1 + gap % 13, ++gap) {
    ids.push_back(all[i]);
    if (gap % 29 == 0) {
      for (std::uint64_t absent = 0; absent < 20; ++absent) ids.push_back(Guid(9, absent + i));
    }
  }
  // Jumps far ahead and back, past a doubling search's first steps.
  for (std::size_t i : {std::size_t{0}, all.size() / 2, all.size() / 2 + 40, all.size() - 1,
                        std::size_t{1}, all.size() / 3}) {
    ids.push_back(all[i]);
  }
  ids.push_back(all[3]);
  ids.push_back(Guid(5, 5));
  const FoundViews want = FindOneByOne(*scene_, ids);
  EXPECT_TRUE(want.front().has_value());
  EXPECT_EQ(FindEach(*scene_, ids, false), want);
  std::reverse(ids.begin(), ids.end());
  EXPECT_EQ(FindEach(*scene_, ids, false), FindOneByOne(*scene_, ids));
}

// PlaceAll places as Place does, one after another, whatever the order: gaps, absent IDs, an
// actor placed twice (the later placement wins), a deferred spawn, and the list backwards; the
// host's default does too.
TEST_F(SceneTest, PlaceAllPlacesAsPlaceDoesInAnyOrder) {
  std::vector<Guid> all = StartSampleMap();
  ASSERT_GT(all.size(), 200u);
  const reflect::ClassInfo* crate = registry_.FindClass(Name("Crate"));
  ASSERT_NE(crate, nullptr);
  ASSERT_OK(scene_->BeginSpawn(Name(), *crate, Guid(5, 5), {}).status());
  all.push_back(Guid(5, 5));
  std::vector<std::pair<Guid, world::Placement>> placements;
  auto place = [&](Guid id) {
    const auto k = static_cast<double>(placements.size());
    world::Placement p;
    p.transform.translation = {k, -k, 2 * k};
    p.owner = Guid(7, placements.size());
    p.attach_parent = Guid(8, placements.size());
    p.attach_socket = Name("socket" + std::to_string(placements.size() % 3));
    placements.emplace_back(id, p);
  };
  place(Guid(5, 5));
  std::size_t gap = 0;
  for (std::size_t i = 0; i < all.size(); i += 1 + gap % 13, ++gap) {
    place(all[i]);
    if (gap % 29 == 0) {
      for (std::uint64_t absent = 0; absent < 20; ++absent) place(Guid(9, absent + i));
    }
  }
  place(all[3]);
  const world::Placement unplaced;
  for (int backwards = 0; backwards < 2; ++backwards) {
    for (int via = 0; via < 2; ++via) {
      for (Guid id : all) scene_->Place(id, unplaced);
      for (const auto& [id, p] : placements) scene_->Place(id, p);
      const FoundViews want = FindOneByOne(*scene_, all);
      for (Guid id : all) scene_->Place(id, unplaced);
      if (via == 0) {
        scene_->PlaceAll(placements);
      } else {
        scene_->world::Host::PlaceAll(placements);
      }
      EXPECT_EQ(FindOneByOne(*scene_, all), want) << backwards << " " << via;
    }
    std::reverse(placements.begin(), placements.end());
  }
}

TEST_F(SceneTest, PlayersAreListedWithTheirPawnMarked) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  std::vector<world::PlayerView> players;
  scene_->ListPlayers(&players);
  ASSERT_EQ(players.size(), 1u);
  EXPECT_EQ(players[0].index, 0);
  EXPECT_EQ(players[0].controller.cls->name(), Name("SamplePlayerController"));
  EXPECT_EQ(players[0].pawn.cls->name(), Name("SamplePawn"));
  EXPECT_EQ(players[0].player_state.cls->name(), Name("SamplePlayerState"));
  int pawns = 0;
  for (const world::ActorView& a : Actors(Name("Main"))) {
    if (!a.player_pawn) continue;
    ++pawns;
    EXPECT_EQ(a.object.ptr, players[0].pawn.ptr);
    EXPECT_EQ(a.id, players[0].pawn_id);
    EXPECT_TRUE(a.spawned);
  }
  EXPECT_EQ(pawns, 1);
}

TEST_F(SceneTest, MomentsComeInOrder) {
  ASSERT_OK(OpenOneActor(R"({"class": "ProbeActor", "id": ")" + std::string(kProbeId) +
                         R"("}, {"class": "ProbeActor", "id": ")" + kDoorId +
                         R"(", "values": {}})"));
  EXPECT_THAT(log_, ElementsAre("ActorsInitialized", "BeginPlay ", "BeginPlay ", "WorldBeginPlay"));
  EXPECT_TRUE(scene_->HasBegunPlay());
}

TEST_F(SceneTest, OpenMapTearsDownAndKeepsTheGameInstance) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  GameInstance* instance = scene_->game_instance();
  QuestLog* quests = scene_->GetSubsystem<QuestLog>();
  quests->quests.push_back(std::make_unique<Quest>());
  scene_->FindActorAs<ProbeActor>(G(kProbeId))->label = "old";
  log_.clear();
  ASSERT_OK(OpenOneActor(R"({"class": "ProbeActor", "id": ")" + std::string(kBobId) + R"("})"));
  EXPECT_THAT(log_,
              ElementsAre("EndPlay old", "ActorsInitialized", "BeginPlay ", "WorldBeginPlay"));
  EXPECT_EQ(scene_->game_instance(), instance);
  EXPECT_EQ(scene_->GetSubsystem<QuestLog>(), quests);
  EXPECT_EQ(quests->quests.size(), 1u);
  EXPECT_EQ(scene_->FindActor(G(kDoorId)), nullptr);
  EXPECT_EQ(scene_->game_mode(), nullptr);  // the new map names none
  EXPECT_EQ(scene_->ActorCount(), 1u);
  EXPECT_EQ(scene_->CurrentMap(), "maps/one.json");

  // Start begins a new game: a new game instance.
  ASSERT_OK(scene_->Start("maps/small.json"));
  EXPECT_TRUE(scene_->GetSubsystem<QuestLog>()->quests.empty());
}

TEST_F(SceneTest, MapErrorsAreClearAndKeepTheWorld) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  EXPECT_THAT(scene_->OpenMap("maps/none.json"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(OpenOneActor(R"({"class": "Dragon", "id": ")" + std::string(kBobId) + R"("})"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("unknown class \"Dragon\"")));
  EXPECT_THAT(OpenOneActor(R"({"class": "LampComponent", "id": ")" + std::string(kBobId) + R"("})"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("is not a Actor")));
  EXPECT_THAT(OpenOneActor(R"({"class": "Door", "id": "not-a-guid"})"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("not-a-guid")));
  EXPECT_THAT(OpenOneActor(R"({"class": "Door", "id": ")" + std::string(kBobId) +
                           R"("}, {"class": "Door", "id": ")" + kBobId + R"("})"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("used twice")));
  EXPECT_THAT(OpenOneActor(R"({"class": "Door", "id": ")" + std::string(kBobId) +
                           R"(", "values": {"Colour": 1}})"),
              StatusIs(StatusCode::kInvalidInput,
                       AllOf(HasSubstr(kBobId), HasSubstr("Door has no field \"Colour\""))));
  EXPECT_THAT(OpenOneActor(R"({"class": "Door", "id": ")" + std::string(kBobId) +
                           R"(", "values": {"Open": "yes"}})"),
              StatusIs(StatusCode::kInvalidInput,
                       AllOf(HasSubstr(kBobId), HasSubstr("field Open"), HasSubstr("boolean"))));
  EXPECT_THAT(OpenOneActor(R"({"class": "Door", "id": ")" + std::string(kBobId) +
                           R"(", "values": {"State": "Ajar"}})"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("Ajar")));
  EXPECT_THAT(OpenOneActor(R"({"class": "Door", "id": ")" + std::string(kBobId) +
                           R"(", "values": {"LockCode": 1.5}})"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("integer")));
  EXPECT_THAT(OpenOneActor(R"({"class": "Chest", "id": ")" + std::string(kBobId) +
                           R"(", "values": {"Inventory": [{"Count": "3"}]}})"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("Inventory[0] field Count")));
  EXPECT_THAT(OpenOneActor(R"({"class": "Character", "id": ")" + std::string(kBobId) +
                           R"(", "values": {"Friend": ")" + kDoorId + R"("}})"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("is loaded")));
  EXPECT_THAT(OpenOneActor(R"({"class": "Door", "id": ")" + std::string(kBobId) +
                           R"(", "owner": ")" + kDoorId + R"("})"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("not an actor of the map")));
  // A level loaded later is checked when its map opens.
  scene_->AddMap("maps/later.json",
                 R"({"levels": ["Main", {"name": "Later", "loaded": false}], "actors": [)"
                 R"({"class": "Door", "level": "Later", "id": ")" +
                     std::string(kBobId) + R"(", "values": {"Open": 3}}]})");
  EXPECT_THAT(scene_->OpenMap("maps/later.json"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("field Open")));
  scene_->AddMap("maps/bad.json", "{ not json");
  EXPECT_THAT(scene_->OpenMap("maps/bad.json"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("not valid JSON")));
  // Every failure left the first map running.
  EXPECT_EQ(scene_->CurrentMap(), "maps/small.json");
  EXPECT_NE(scene_->FindActor(G(kDoorId)), nullptr);
}

// A map opened without some of its placed actors (a load's, Host::OpenMapWithout): they are not
// made, a reference to one is left empty and an owner or attachment naming one none, and each
// left out is reported before the map's actors are initialized. An actor of a level not loaded,
// or one the map lacks, is not left out; nor is anything on the next OpenMap.
TEST_F(SceneTest, OpenMapWithoutLeavesThoseActorsOut) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  GuidSet leave_out;
  for (const char* id : {kAliceId, kDoorId, kCellarId, "00000000-0000-4000-8000-0000000000ff"}) {
    leave_out.Insert(G(id));
  }
  GuidSet left_out;
  struct Counting : RecordingEvents {
    const GuidSet* left_out = nullptr;
    std::size_t at_actors_initialized = 0;
    void OnActorsInitialized() override { at_actors_initialized = left_out->size(); }
  } counting;
  counting.left_out = &left_out;
  scene_->SetEvents(&counting);
  ASSERT_OK(scene_->OpenMapWithout("maps/small.json", leave_out, &left_out));
  scene_->SetEvents(&events_);
  EXPECT_EQ(counting.at_actors_initialized, 2u);
  EXPECT_EQ(left_out.size(), 2u);
  EXPECT_TRUE(left_out.Contains(G(kAliceId)));
  EXPECT_TRUE(left_out.Contains(G(kDoorId)));
  EXPECT_EQ(scene_->FindActor(G(kAliceId)), nullptr);
  EXPECT_EQ(scene_->FindActor(G(kDoorId)), nullptr);
  EXPECT_EQ(scene_->ActorCount(), 4u);  // the chest, Bob, the probe and the player's pawn
  auto* bob = scene_->FindActorAs<Character>(G(kBobId));
  ASSERT_NE(bob, nullptr);
  EXPECT_EQ(bob->target, nullptr);
  EXPECT_TRUE(bob->attach_parent.is_none());
  EXPECT_TRUE(bob->attach_socket.is_none());
  EXPECT_TRUE(scene_->FindActor(G(kChestId))->owner_id.is_none());
  EXPECT_EQ(scene_->FindActorAs<ProbeActor>(G(kProbeId))->token, G(kDoorId));  // a value, kept
  ASSERT_OK(scene_->AddLevel(Name("Cellar")));
  EXPECT_NE(scene_->FindActor(G(kCellarId)), nullptr);

  // A map that fails to open leaves the world, and reports nothing left out.
  GuidSet none;
  scene_->AddMap("maps/bad.json", "{ not json");
  EXPECT_THAT(scene_->OpenMapWithout("maps/bad.json", leave_out, &none),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(scene_->FindActor(G(kAliceId)), nullptr);
  // The next OpenMap builds the whole map again.
  ASSERT_OK(scene_->OpenMap("maps/small.json"));
  EXPECT_EQ(scene_->FindActorAs<Character>(G(kBobId))->target,
            scene_->FindActorAs<Character>(G(kAliceId)));
  EXPECT_EQ(scene_->FindActor(G(kBobId))->attach_parent, G(kDoorId));
}

TEST_F(SceneTest, SpawnActorBeginsPlayAtOnce) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  log_.clear();
  ASSERT_OK_AND_ASSIGN(ProbeActor * probe, scene_->SpawnActor<ProbeActor>());
  EXPECT_THAT(log_, ElementsAre("BeginPlay "));
  EXPECT_TRUE(probe->spawned);
  EXPECT_TRUE(probe->begun_play);
  EXPECT_FALSE(probe->id.is_none());
  EXPECT_EQ(probe->level, Name("Main"));
  EXPECT_THAT(scene_->SpawnActor(Name("Quest"), Name(), {}), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(scene_->SpawnActor(Name("Door"), Name("Cellar"), {}),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("not loaded")));
}

TEST_F(SceneTest, AnIdSourceGivesSpawnedActorsAndPawnsTheirIds) {
  std::uint64_t next = 1;
  Guid forced;  // when set, the source gives it once
  scene_->SetIdSource([&] {
    if (!forced.is_none()) return std::exchange(forced, Guid());
    return Guid(7, next++);
  });
  ASSERT_OK(scene_->Start("maps/small.json"));
  ASSERT_EQ(scene_->players().size(), 1u);
  ASSERT_NE(scene_->players()[0].pawn, nullptr);
  EXPECT_EQ(scene_->players()[0].pawn->id, Guid(7, 1));
  ASSERT_OK_AND_ASSIGN(ProbeActor * probe, scene_->SpawnActor<ProbeActor>());
  EXPECT_EQ(probe->id, Guid(7, 2));
  const std::size_t actors = scene_->ActorCount();
  // An ID the world has, or none: the spawn fails and the world stays as it was.
  forced = Guid(7, 2);
  EXPECT_THAT(scene_->SpawnActor<ProbeActor>().status(),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("AlreadyExists")));
  scene_->SetIdSource([] { return Guid(); });
  EXPECT_THAT(scene_->SpawnActor<ProbeActor>().status(), StatusIs(StatusCode::kInvalidInput));
  EXPECT_EQ(scene_->ActorCount(), actors);
  // A map whose pawn would get a placed actor's ID does not open; the running world stays.
  scene_->SetIdSource([] { return G(kDoorId); });
  EXPECT_THAT(scene_->OpenMap("maps/small.json"),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("AlreadyExists")));
  EXPECT_EQ(scene_->FindActor(Guid(7, 2)), probe);
  // Empty: random IDs again.
  scene_->SetIdSource({});
  ASSERT_OK_AND_ASSIGN(ProbeActor * random, scene_->SpawnActor<ProbeActor>());
  EXPECT_FALSE(random->id.is_none());
  EXPECT_NE(random->id.high(), 7u);
}

TEST_F(SceneTest, DeferredSpawnBeginsPlayAtFinish) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  log_.clear();
  const Guid id = Guid::Random();
  reflect::Transformd t;
  t.translation.x = 5;
  ASSERT_OK_AND_ASSIGN(world::ActorView view,
                       scene_->BeginSpawn(Name(), *registry_.FindClass<ProbeActor>(), id, t));
  EXPECT_EQ(view.id, id);
  EXPECT_TRUE(view.spawned);
  EXPECT_EQ(view.transform.translation.x, 5);
  EXPECT_EQ(view.object.cls->name(), Name("ProbeActor"));
  // A component made before the spawn finishes is part of the spawn: no event.
  ASSERT_OK(scene_->AddComponent(id, Name("Extra"), Name("LampComponent")).status());
  EXPECT_TRUE(log_.empty());
  scene_->FinishSpawn(id);
  EXPECT_THAT(log_, ElementsAre("BeginPlay "));
  // Finishing it again, or finishing an actor never deferred, does nothing; a component added
  // now is reported.
  scene_->FinishSpawn(id);
  scene_->ForEachActor([&](Actor& a) { scene_->FinishSpawn(a.id); });
  EXPECT_THAT(log_, ElementsAre("BeginPlay "));
  ASSERT_OK(scene_->AddComponent(id, Name("Later"), Name("LampComponent")).status());
  EXPECT_THAT(log_, ElementsAre("BeginPlay ",
                                "ComponentCreated " + id.ToString() + " Later LampComponent"));
  // Destroyed while deferred: it never begins play, and its ID can be spawned again.
  const Guid again = Guid::Random();
  const reflect::ClassInfo& probe = *registry_.FindClass<ProbeActor>();
  ASSERT_OK(scene_->BeginSpawn(Name(), probe, again, {}).status());
  scene_->DestroyActor(again);
  scene_->FinishSpawn(again);
  EXPECT_EQ(scene_->FindActor(again), nullptr);
  ASSERT_OK(scene_->BeginSpawn(Name(), probe, again, {}).status());
  scene_->FinishSpawn(again);
  EXPECT_EQ(std::count(log_.begin(), log_.end(), "BeginPlay "), 2);
  EXPECT_THAT(scene_->BeginSpawn(Name(), *registry_.FindClass<Door>(), id, {}),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("AlreadyExists")));
  EXPECT_THAT(scene_->BeginSpawn(Name(), *registry_.FindClass<QuestLog>(), Guid::Random(), {}),
              StatusIs(StatusCode::kInvalidInput));
}

// FinishSpawn finds each deferred actor whatever the order it is asked in: the order the spawns
// began (as a load finishes them), ahead of it, behind it, in reverse, with actors spawned and
// destroyed between, and again once finished. Each begins play once, when finished.
TEST_F(SceneTest, DeferredSpawnsFinishInAnyOrder) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  const reflect::ClassInfo& probe = *registry_.FindClass<ProbeActor>();
  std::vector<Guid> ids;
  for (int i = 0; i < 12; ++i) {
    ids.push_back(Guid::Random());
    ASSERT_OK_AND_ASSIGN(const world::ActorView view,
                         scene_->BeginSpawn(Name(), probe, ids.back(), {}));
    static_cast<ProbeActor*>(view.object.ptr)->label = std::to_string(i);
  }
  log_.clear();
  for (const int i : {0, 1, 5, 2, 3}) scene_->FinishSpawn(ids[i]);
  scene_->DestroyActor(ids[4]);
  scene_->FinishSpawn(ids[4]);
  ASSERT_OK_AND_ASSIGN(Actor * between, scene_->SpawnActor(Name("ProbeActor"), Name(), {}));
  for (const int i : {6, 7, 8, 11, 10, 9, 0, 5}) scene_->FinishSpawn(ids[i]);
  std::vector<std::string> began;
  for (const std::string& line : log_) {
    if (line.starts_with("BeginPlay")) began.push_back(line);
  }
  EXPECT_THAT(began, ElementsAre("BeginPlay 0", "BeginPlay 1", "BeginPlay 5", "BeginPlay 2",
                                 "BeginPlay 3", "BeginPlay ", "BeginPlay 6", "BeginPlay 7",
                                 "BeginPlay 8", "BeginPlay 11", "BeginPlay 10", "BeginPlay 9"));
  EXPECT_EQ(scene_->FindActor(ids[4]), nullptr);
  EXPECT_NE(scene_->FindActor(between->id), nullptr);
}

// What BeginSpawns answered for each request: the view's parts a spawn sets, or the status.
struct SpawnAnswer {
  StatusCode code = StatusCode::kOk;
  std::string message;
  Guid id;
  const reflect::ClassInfo* cls = nullptr;
  Name level;
  bool spawned = false;
  reflect::Transformd transform;
  friend bool operator==(const SpawnAnswer&, const SpawnAnswer&) = default;
};

std::vector<SpawnAnswer> SpawnEach(world::Host& host, const std::vector<world::SpawnRequest>& r,
                                   bool default_call) {
  std::vector<SpawnAnswer> out;
  auto spawned = [&](std::size_t k, const Result<world::ActorView>& v) {
    EXPECT_EQ(k, out.size());
    // Answered right after its own spawn: the next request's actor is not made yet (when its ID
    // is a fresh one, Guid(8, ...), asked for the first time).
    if (k + 1 < r.size() && r[k + 1].id.high() == 8 &&
        std::none_of(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(k + 1),
                     [&](const world::SpawnRequest& e) { return e.id == r[k + 1].id; })) {
      world::ActorView next;
      EXPECT_FALSE(host.FindActor(r[k + 1].id, &next)) << k;
    }
    SpawnAnswer a;
    if (v.ok()) {
      a = {StatusCode::kOk, "", v->id, v->object.cls, v->level, v->spawned, v->transform};
    } else {
      a.code = v.status().code();
      a.message = std::string(v.status().message());
    }
    out.push_back(a);
  };
  if (default_call) {
    host.world::Host::BeginSpawns(r, spawned);
  } else {
    host.BeginSpawns(r, spawned);
  }
  return out;
}

// BeginSpawns answers as BeginSpawn does, in order, for more spawns than the scene looks ahead:
// actors made deferred, and refusals for an ID taken (by the map, or by an earlier spawn of the
// same call), a level not loaded and a class that is not an actor's. Its default (the host's)
// does too, and with no world each is refused.
TEST_F(SceneTest, BeginSpawnsAnswersAsBeginSpawnDoes) {
  const reflect::ClassInfo& probe = *registry_.FindClass<ProbeActor>();
  const reflect::ClassInfo& crate = *registry_.FindClass<Crate>();
  std::vector<world::SpawnRequest> requests;
  for (std::uint64_t i = 0; i < 20; ++i) {
    reflect::Transformd t;
    t.translation.x = static_cast<double>(i);
    requests.push_back({Name(), i % 3 == 0 ? &crate : &probe, Guid(8, i), t});
  }
  requests[4].id = G(kAliceId);                        // the map's
  requests[9].id = Guid(8, 2);                         // spawned just before
  requests[11].level = Name("Cellar");                 // not loaded
  requests[15].cls = registry_.FindClass<QuestLog>();  // not an actor's
  requests[17].level = Name("Main");
  const std::vector<SpawnAnswer> none = SpawnEach(*scene_, requests, false);
  ASSERT_EQ(none.size(), requests.size());
  for (const SpawnAnswer& a : none) EXPECT_EQ(a.code, StatusCode::kInvalidInput);
  EXPECT_EQ(SpawnEach(*scene_, requests, true), none);

  ASSERT_OK(scene_->Start("maps/small.json"));
  Scene other(registry_);
  other.AddMap("maps/small.json", SmallMap());
  ASSERT_OK(other.Start("maps/small.json"));
  log_.clear();
  const std::vector<SpawnAnswer> got = SpawnEach(*scene_, requests, false);
  EXPECT_EQ(SpawnEach(other, requests, true), got);
  ASSERT_EQ(got.size(), requests.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (k == 4 || k == 9) {
      EXPECT_EQ(got[k].code, StatusCode::kInvalidInput) << k;
      EXPECT_THAT(got[k].message, HasSubstr("AlreadyExists")) << k;
    } else if (k == 11 || k == 15) {
      EXPECT_EQ(got[k].code, StatusCode::kInvalidInput) << k;
    } else {
      ASSERT_EQ(got[k].code, StatusCode::kOk) << k << " " << got[k].message;
      EXPECT_EQ(got[k].id, requests[k].id);
      EXPECT_EQ(got[k].cls, requests[k].cls);
      EXPECT_EQ(got[k].level, Name("Main"));
      EXPECT_TRUE(got[k].spawned);
      EXPECT_EQ(got[k].transform.translation.x, static_cast<double>(k));
      EXPECT_NE(scene_->FindActor(requests[k].id), nullptr);
    }
  }
  // Deferred: none began play until finished.
  EXPECT_EQ(std::count(log_.begin(), log_.end(), "BeginPlay "), 0);
  scene_->FinishSpawn(requests[1].id);
  EXPECT_EQ(std::count(log_.begin(), log_.end(), "BeginPlay "), 1);
  EXPECT_TRUE(SpawnEach(*scene_, {}, false).empty());
}

// A listener that respawns and destroys actors when the map's actors are initialized, as a load
// does: those actors run no begin play until the world's.
class LoadingEvents : public RecordingEvents {
 public:
  void OnActorsInitialized() override {
    RecordingEvents::OnActorsInitialized();
    scene->DestroyActor(G(kProbeId));
    Result<world::ActorView> v =
        scene->BeginSpawn(Name(), *scene->registry().FindClass<ProbeActor>(), G(kCellarId), {});
    ASSERT_TRUE(v.ok());
    static_cast<ProbeActor*>(v->object.ptr)->label = "respawned";
    scene->FinishSpawn(G(kCellarId));
  }
  Scene* scene = nullptr;
};

TEST_F(SceneTest, ActorsChangedBeforeBeginPlayRunNoEarlyPlay) {
  LoadingEvents loading;
  loading.scene = scene_.get();
  scene_->SetEvents(&loading);
  ASSERT_OK(scene_->Start("maps/small.json"));
  // The destroyed probe ran no begin or end play; the respawned one began with the world.
  EXPECT_THAT(log_, ElementsAre("ActorsInitialized", "BeginPlay respawned", "WorldBeginPlay"));
}

TEST_F(SceneTest, DestroyActorEndsPlayAndLetsGo) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  scene_->FindActorAs<ProbeActor>(G(kProbeId))->label = "p";
  log_.clear();
  scene_->DestroyActor(G(kProbeId));
  EXPECT_THAT(log_, ElementsAre("EndPlay p"));
  EXPECT_EQ(scene_->FindActor(G(kProbeId)), nullptr);
  scene_->DestroyActor(G(kProbeId));  // a no-op
  // References, attachments and owners pointing at a destroyed actor are cleared.
  auto* bob = scene_->FindActorAs<Character>(G(kBobId));
  scene_->DestroyActor(G(kAliceId));
  EXPECT_EQ(bob->target, nullptr);
  EXPECT_TRUE(scene_->FindActor(G(kChestId))->owner_id.is_none());
  scene_->DestroyActor(G(kDoorId));
  EXPECT_TRUE(bob->attach_parent.is_none());
  // A player's pawn destroyed leaves the player without one.
  scene_->DestroyActor(scene_->players()[0].pawn->id);
  EXPECT_EQ(scene_->players()[0].pawn, nullptr);
}

// A reference to a component of an actor destroyed, or of one its level's removal takes, is
// cleared as a reference to the actor is; other actors going leave it.
TEST_F(SceneTest, ReferencesToADestroyedActorsComponentsAreCleared) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  auto* probe = scene_->FindActorAs<ProbeActor>(G(kProbeId));
  probe->gadget = scene_->FindActor(G(kAliceId))->FindComponent(Name("Light"));
  ASSERT_NE(probe->gadget, nullptr);
  scene_->DestroyActor(G(kBobId));
  EXPECT_NE(probe->gadget, nullptr);
  scene_->DestroyActor(G(kAliceId));
  EXPECT_EQ(probe->gadget, nullptr);

  ASSERT_OK(scene_->AddLevel(Name("Cellar")));
  ASSERT_OK_AND_ASSIGN(Component * made, scene_->AddComponent(G(kCellarId), Name("Spare"),
                                                              Name("LampComponent")));
  probe->pal = scene_->FindActor(G(kCellarId));
  probe->gadget = made;
  ASSERT_OK(scene_->RemoveLevel(Name("Cellar")));
  EXPECT_EQ(probe->pal, nullptr);
  EXPECT_EQ(probe->gadget, nullptr);
}

// A reference through an interface to an actor destroyed is cleared too (the interface sits at
// an offset in the actor); one to an actor that stays is kept.
TEST_F(SceneTest, ReferencesThroughAnInterfaceToADestroyedActorAreCleared) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  auto* probe = scene_->FindActorAs<ProbeActor>(G(kProbeId));
  ASSERT_OK_AND_ASSIGN(Actor * kept, scene_->SpawnActor(Name("SwitchActor"), Name(), {}));
  ASSERT_OK_AND_ASSIGN(Actor * doomed, scene_->SpawnActor(Name("SwitchActor"), Name(), {}));
  auto* doomed_switch = static_cast<Switchable*>(static_cast<SwitchActor*>(doomed));
  ASSERT_NE(static_cast<void*>(doomed_switch), static_cast<void*>(doomed));
  probe->toggle = static_cast<SwitchActor*>(kept);
  scene_->DestroyActor(doomed->id);
  EXPECT_EQ(probe->toggle, static_cast<SwitchActor*>(kept));
  probe->toggle = static_cast<SwitchActor*>(scene_->FindActor(kept->id));
  const Guid kept_id = kept->id;
  scene_->DestroyActor(kept_id);
  EXPECT_EQ(probe->toggle, nullptr);
}

// An EndPlay that spawns into the level being removed is refused: the level is no longer loaded,
// and no actor of it outlives its removal.
TEST_F(SceneTest, ASpawnIntoALevelBeingRemovedIsRefused) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  ASSERT_OK(scene_->AddLevel(Name("Cellar")));
  ASSERT_OK(scene_->SpawnActor(Name("ProbeActor"), Name("Cellar"), {}).status());
  std::vector<Status> spawns;
  g_probe_end_play = [&](Actor& a) {
    spawns.push_back(scene_->SpawnActor(Name("ProbeActor"), a.level, {}).status());
  };
  ASSERT_OK(scene_->RemoveLevel(Name("Cellar")));
  g_probe_end_play = nullptr;
  ASSERT_EQ(spawns.size(), 1u);
  EXPECT_THAT(spawns[0], StatusIs(StatusCode::kInvalidInput, HasSubstr("not loaded")));
  int left = 0;
  scene_->ForEachActor([&](Actor& a) { left += a.level == Name("Cellar") ? 1 : 0; });
  EXPECT_EQ(left, 0);
}

// Removing a level ends the play of each of its actors before any of them goes: each sees the
// other still there.
TEST_F(SceneTest, RemovingALevelEndsEveryActorsPlayFirst) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  ASSERT_OK(scene_->AddLevel(Name("Cellar")));
  std::vector<Guid> probes;
  for (const char* label : {"first", "second"}) {
    ASSERT_OK_AND_ASSIGN(Actor * a,
                         scene_->SpawnActor(Name("ProbeActor"), Name("Cellar"), {}));
    static_cast<ProbeActor*>(a)->label = label;
    probes.push_back(a->id);
  }
  scene_->FindActorAs<ProbeActor>(probes[0])->pal = scene_->FindActor(probes[1]);
  scene_->FindActorAs<ProbeActor>(probes[1])->pal = scene_->FindActor(probes[0]);
  log_.clear();
  ASSERT_OK(scene_->RemoveLevel(Name("Cellar")));
  ASSERT_FALSE(log_.empty());
  EXPECT_EQ(log_.front(), "LevelRemoved Cellar");
  EXPECT_THAT(std::vector<std::string>(log_.begin() + 1, log_.end()),
              UnorderedElementsAre("EndPlay first with its pal", "EndPlay second with its pal"));
  EXPECT_EQ(scene_->FindActor(probes[0]), nullptr);
  EXPECT_EQ(scene_->FindActor(probes[1]), nullptr);
}

// An EndPlay that destroys actors of the same DestroyActors call, before and after its own place
// in it: each ends play once, every one goes, and none is touched after it went.
TEST_F(SceneTest, AnEndPlayThatDestroysOthersOfTheSameCallEndsEachOnce) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  std::vector<Guid> probes;
  for (const char* label : {"first", "second", "third"}) {
    ASSERT_OK_AND_ASSIGN(Actor * a, scene_->SpawnActor(Name("ProbeActor"), Name(), {}));
    static_cast<ProbeActor*>(a)->label = label;
    probes.push_back(a->id);
  }
  scene_->FindActorAs<ProbeActor>(probes[1])->pal = scene_->FindActor(probes[0]);
  g_probe_end_play = [&](Actor& a) {
    auto& probe = static_cast<ProbeActor&>(a);
    if (probe.label == "first") scene_->DestroyActor(probes[2]);
    if (probe.label == "second") scene_->DestroyActor(probes[0]);
  };
  log_.clear();
  scene_->DestroyActors({probes[0], probes[1], probes[2]});
  g_probe_end_play = nullptr;
  EXPECT_THAT(log_, ElementsAre("EndPlay first", "EndPlay third", "EndPlay second with its pal"));
  for (Guid id : probes) EXPECT_EQ(scene_->FindActor(id), nullptr);
}

TEST_F(SceneTest, AttachAndOwner) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  ASSERT_OK(scene_->Attach(G(kChestId), G(kAliceId), Name("Back")));
  world::ActorView v;
  ASSERT_TRUE(scene_->FindActor(G(kChestId), &v));
  EXPECT_EQ(v.attach_parent, G(kAliceId));
  EXPECT_EQ(v.attach_socket, Name("Back"));
  EXPECT_EQ(v.owner, G(kAliceId));
  // Bob is attached to the door; the door to Bob would be a cycle.
  EXPECT_THAT(scene_->Attach(G(kDoorId), G(kBobId)), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(scene_->Attach(G(kDoorId), G(kDoorId)), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(scene_->Attach(Guid(1, 1), G(kDoorId)), StatusIs(StatusCode::kNotFound));
  ASSERT_OK(scene_->Attach(G(kChestId), Guid()));
  EXPECT_TRUE(scene_->FindActor(G(kChestId))->attach_parent.is_none());
  ASSERT_OK(scene_->SetOwner(G(kDoorId), G(kBobId)));
  EXPECT_EQ(scene_->FindActor(G(kDoorId))->owner_id, G(kBobId));
  EXPECT_THAT(scene_->SetOwner(G(kDoorId), Guid(1, 1)), StatusIs(StatusCode::kNotFound));

  world::Placement p;
  p.transform.translation.y = 9;
  p.owner = G(kAliceId);
  p.attach_parent = G(kBobId);
  p.attach_socket = Name("Hand");
  scene_->Place(G(kDoorId), p);
  ASSERT_TRUE(scene_->FindActor(G(kDoorId), &v));
  EXPECT_EQ(v.transform.translation.y, 9);
  EXPECT_EQ(v.owner, G(kAliceId));
  EXPECT_EQ(v.attach_parent, G(kBobId));
  EXPECT_EQ(v.attach_socket, Name("Hand"));
}

TEST_F(SceneTest, ComponentsMadeInPlayAreReported) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  log_.clear();
  ASSERT_OK_AND_ASSIGN(Component * c, scene_->AddComponent(G(kAliceId), Name("Backpack"),
                                                           Name("InventoryComponent")));
  EXPECT_EQ(c->owner, scene_->FindActor(G(kAliceId)));
  EXPECT_THAT(log_, ElementsAre("ComponentCreated " + std::string(kAliceId) +
                                " Backpack InventoryComponent"));
  EXPECT_THAT(scene_->AddComponent(G(kAliceId), Name("Backpack"), Name("InventoryComponent")),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(scene_->AddComponent(G(kAliceId), Name("X"), Name("Door")),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(scene_->AddComponent(Guid(1, 1), Name("X"), Name("LampComponent")),
              StatusIs(StatusCode::kNotFound));
}

TEST_F(SceneTest, SublevelsAddAndRemove) {
  ASSERT_OK(scene_->Start("maps/small.json"));
  log_.clear();
  ASSERT_OK(scene_->AddLevel(Name("Cellar")));
  EXPECT_THAT(log_, ElementsAre("LevelAdded Cellar"));
  EXPECT_THAT(scene_->Levels(), ElementsAre(Name("Main"), Name("Cellar")));
  auto* lamp = scene_->FindActorAs<Lamp>(G(kCellarId));
  ASSERT_NE(lamp, nullptr);
  EXPECT_TRUE(lamp->on);
  EXPECT_TRUE(lamp->begun_play);
  EXPECT_EQ(lamp->color, (reflect::Color{1, 0, 0, 1}));
  EXPECT_EQ(Actors(Name("Cellar")).size(), 1u);
  EXPECT_THAT(scene_->AddLevel(Name("Cellar")), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(scene_->AddLevel(Name("Attic")), StatusIs(StatusCode::kNotFound));
  ASSERT_OK(scene_->SpawnActor(Name("Crate"), Name("Cellar"), {}).status());
  EXPECT_EQ(Actors(Name("Cellar")).size(), 2u);

  log_.clear();
  ASSERT_OK(scene_->RemoveLevel(Name("Cellar")));
  EXPECT_THAT(log_, ElementsAre("LevelRemoved Cellar"));
  EXPECT_TRUE(Actors(Name("Cellar")).empty());
  EXPECT_EQ(scene_->FindActor(G(kCellarId)), nullptr);
  EXPECT_THAT(scene_->RemoveLevel(Name("Cellar")), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(scene_->RemoveLevel(Name("Main")), StatusIs(StatusCode::kInvalidInput));
}

TEST_F(SceneTest, AddLevelThatFailsLeavesNothing) {
  scene_->AddMap("maps/levels.json",
                 R"({"levels": ["Main", {"name": "A", "loaded": false},
                                {"name": "B", "loaded": false}], "actors": [
                     {"class": "Character", "level": "A", "id": ")" +
                     std::string(kAliceId) + R"("},
                     {"class": "Crate", "level": "B", "id": ")" +
                     kDoorId + R"("},
                     {"class": "Character", "level": "B", "id": ")" +
                     kBobId + R"(", "values": {"Friend": ")" + kAliceId + R"("}}]})");
  ASSERT_OK(scene_->Start("maps/levels.json"));
  log_.clear();
  // Bob's friend is in level A, not loaded: B does not load, and none of its actors stays.
  EXPECT_THAT(scene_->AddLevel(Name("B")),
              StatusIs(StatusCode::kInvalidInput, HasSubstr("field Friend")));
  EXPECT_EQ(scene_->ActorCount(), 0u);
  EXPECT_THAT(scene_->Levels(), ElementsAre(Name("Main")));
  EXPECT_TRUE(log_.empty());
  ASSERT_OK(scene_->AddLevel(Name("A")));
  ASSERT_OK(scene_->AddLevel(Name("B")));
  EXPECT_EQ(scene_->FindActorAs<Character>(G(kBobId))->friend_character,
            scene_->FindActorAs<Character>(G(kAliceId)));
  // Removing A clears Bob's reference to Alice.
  ASSERT_OK(scene_->RemoveLevel(Name("A")));
  EXPECT_EQ(scene_->FindActorAs<Character>(G(kBobId))->friend_character, nullptr);
}

// --- The sample game --------------------------------------------------------------------------

TEST_F(SceneTest, ShippedSampleMapIsTheBuilderOutput) {
  const std::string built = BuildSampleMap(kSampleMapActors, kSampleMapSeed);
  if (std::getenv("ROLLY_UPDATE_SAMPLE_MAP") != nullptr) {
    std::ofstream(kSampleMapPath, std::ios::binary) << built;
  }
  std::ifstream in(kSampleMapPath, std::ios::binary);
  ASSERT_TRUE(in) << "run from the source root; regenerate with ROLLY_UPDATE_SAMPLE_MAP=1";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), built) << "regenerate with ROLLY_UPDATE_SAMPLE_MAP=1";
  EXPECT_LT(text.str().size(), 100u * 1024u);
}

TEST_F(SceneTest, SampleMapLoadsWithEveryClass) {
  ASSERT_OK(scene_->Start(kSampleMapPath));
  std::set<std::string> classes;
  scene_->ForEachActor([&](Actor& a) {
    classes.insert(registry_.DynamicClass(*registry_.FindClass<Actor>(), &a).cls->name().str());
  });
  EXPECT_EQ(classes,
            (std::set<std::string>{"Chest", "Character", "Crate", "Door", "Lamp", "SamplePawn"}));
  ASSERT_OK(scene_->AddLevel(Name("Cellar")));
  EXPECT_FALSE(Actors(Name("Cellar")).empty());
}

TEST_F(SceneTest, SampleMapBuilderIsDeterministic) {
  EXPECT_EQ(BuildSampleMap(200, 5), BuildSampleMap(200, 5));
  EXPECT_NE(BuildSampleMap(200, 5), BuildSampleMap(200, 6));
  scene_->AddMap("maps/big.json", BuildSampleMap(10000, 5));
  ASSERT_OK(scene_->Start("maps/big.json"));
  std::size_t persistent = Actors(Name("Persistent")).size();
  ASSERT_OK(scene_->AddLevel(Name("Cellar")));
  EXPECT_EQ(persistent + Actors(Name("Cellar")).size(), 10001u);  // and the player's pawn
}

TEST_F(SceneTest, PlaySampleChangesEveryClass) {
  scene_->AddMap("maps/play.json", BuildSampleMap(300, 9));
  ASSERT_OK(scene_->Start("maps/play.json"));
  // What each class holds before play.
  auto snapshot = [&]() {
    std::map<std::string, std::string> s;
    scene_->ForEachActor([&](Actor& a) {
      std::ostringstream o;
      if (auto* d = dynamic_cast<Door*>(&a)) o << d->open << int(d->state) << d->lock_code;
      if (auto* c = dynamic_cast<Chest*>(&a))
        for (auto& i : c->inventory) o << i.item.str() << i.count;
      if (auto* l = dynamic_cast<Lamp*>(&a)) {
        o << l->on << l->color.r << l->intensity
          << static_cast<LampComponent*>(l->FindComponent(Name("Bulb")))->flicker;
      }
      if (auto* ch = dynamic_cast<Character*>(&a))
        o << ch->health << ch->friend_character << ch->target << ch->components.size();
      if (auto* cr = dynamic_cast<Crate*>(&a)) o << cr->hits;
      if (auto* p = dynamic_cast<Pickup*>(&a)) o << p->value << p->attach_parent.ToString();
      if (auto* p = dynamic_cast<SamplePawn*>(&a)) o << p->stamina;
      s[registry_.DynamicClass(*registry_.FindClass<Actor>(), &a).cls->name().str() + " " +
        a.id.ToString()] = o.str();
    });
    return s;
  };
  const auto before = snapshot();
  auto* state = dynamic_cast<SampleGameState*>(scene_->game_state());
  const float time_before = state->time_of_day;
  log_.clear();
  ASSERT_OK(PlaySample(*scene_, 200, 42));
  const auto after = snapshot();

  std::set<std::string> changed;
  std::size_t crates_before = 0, crates_after = 0, pickups = 0;
  for (const auto& [key, value] : before) {
    const std::string cls = key.substr(0, key.find(' '));
    if (cls == "Crate") ++crates_before;
    auto it = after.find(key);
    if (it == after.end() || it->second != value) changed.insert(cls);
  }
  for (const auto& [key, value] : after) {
    const std::string cls = key.substr(0, key.find(' '));
    if (cls == "Crate") ++crates_after;
    if (cls == "Pickup") ++pickups;
  }
  EXPECT_EQ(changed,
            (std::set<std::string>{"Chest", "Character", "Crate", "Door", "Lamp", "SamplePawn"}));
  EXPECT_LT(crates_after, crates_before);
  EXPECT_GT(pickups, 0u);
  scene_->ForEachActor([&](Actor& a) {
    if (auto* p = dynamic_cast<Pickup*>(&a)) {
      EXPECT_TRUE(p->spawned);
      EXPECT_NE(scene_->FindActorAs<Character>(p->attach_parent), nullptr);
      EXPECT_EQ(p->owner_id, p->attach_parent);
    }
  });
  const QuestLog* quests = scene_->GetSubsystem<QuestLog>();
  ASSERT_FALSE(quests->quests.empty());
  EXPECT_NE(quests->quests[0]->reward, nullptr);
  EXPECT_NE(state->time_of_day, time_before);
  auto* player_state = dynamic_cast<SamplePlayerState*>(scene_->players()[0].player_state);
  EXPECT_GT(player_state->score, 0);
  bool backpack_reported = false;
  for (const std::string& line : log_)
    backpack_reported =
        backpack_reported || line.find("Backpack InventoryComponent") != std::string::npos;
  EXPECT_TRUE(backpack_reported);

  // The same seed on the same map changes the same things (spawned IDs aside).
  Scene other(registry_);
  other.AddMap("maps/play.json", BuildSampleMap(300, 9));
  ASSERT_OK(other.Start("maps/play.json"));
  ASSERT_OK(PlaySample(other, 200, 42));
  std::vector<std::string> mine, theirs;
  scene_->ForEachActor([&](Actor& a) {
    if (auto* c = dynamic_cast<Character*>(&a)) mine.push_back(std::to_string(c->health));
  });
  other.ForEachActor([&](Actor& a) {
    if (auto* c = dynamic_cast<Character*>(&a)) theirs.push_back(std::to_string(c->health));
  });
  EXPECT_EQ(mine, theirs);
}

TEST_F(SceneTest, PlaySampleNeedsASampleWorld) {
  EXPECT_THAT(PlaySample(*scene_, 10, 1), StatusIs(StatusCode::kInvalidInput));
}

}  // namespace
}  // namespace rolly::scene
