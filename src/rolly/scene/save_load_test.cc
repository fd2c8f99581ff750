// End-to-end tests of saving and loading a running world: the reference scene (Scene and the
// sample game) saved and loaded through game::SaveSystem and a store::Store over a MemoryBackend.
// Worlds are compared field by field (world::CaptureForCompare + world::DiffWorlds), and the golden
// world fixtures under tests/fixtures/world/ are loaded and compared with their expected dump.
//
// To write the golden world fixtures again (only when they must change, which they must not for
// a release that has shipped):
//   ROLLY_UPDATE_WORLD_FIXTURES=1 ./save_load_test --gtest_filter='WorldFixtures.*'
// The fixtures are found under $ROLLY_SOURCE_DIR/tests/fixtures (ctest runs from the source
// root), else next to this source file.
//
// Thread rules: every test drives Tick/Flush on the test thread, which is the game thread.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "rolly/core/checksum.h"
#include "rolly/core/mailbox.h"
#include "rolly/core/side_task.h"
#include "rolly/core/fixture_files.h"
#include "rolly/core/status_matchers.h"
#include "rolly/core/worker_pool.h"
#include "rolly/format/file.h"
#include "rolly/format/format_test_util.h"
#include "rolly/game/save_system.h"
#include "rolly/record/record_codec.h"
#include "rolly/scene/objects.h"
#include "rolly/scene/internal/chunk_input.h"
#include "rolly/scene/sample_game.h"
#include "rolly/scene/scene.h"
#include "rolly/store/fault_backend.h"
#include "rolly/store/file_name.h"
#include "rolly/store/memory_backend.h"
#include "rolly/store/store.h"
#include "rolly/world/sections.h"
#include "rolly/world/world.h"
#include "rolly/world/world_diff.h"

// While set on a thread, that thread's next array allocation of at least this many bytes throws
// std::bad_alloc, and the setting goes back to 0 (off): an allocation failing in a capture's copy
// (ObjectCopies takes its blocks as arrays), for the helper's tests below.
thread_local std::size_t fail_array_new_from = 0;

void* operator new[](std::size_t size) {
  if (fail_array_new_from != 0 && size >= fail_array_new_from) {
    fail_array_new_from = 0;
    throw std::bad_alloc();
  }
  return ::operator new(size);
}
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }

namespace rolly {
// Results print as their status in failure messages.
template <typename T>
void PrintTo(const Result<T>& result, std::ostream* os) {
  *os << (result.ok() ? std::string("Ok") : result.status().ToString());
}
}  // namespace rolly

namespace rolly::scene {
namespace {

namespace fs = std::filesystem;
using game::LoadOutcome;
using game::LoadStage;
using game::MapChoice;
using game::SaveOutcome;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAreArray;

// --- Classes of the tests' own (registered next to the sample game's) -------------------------

// Where OnSaved hooks note the objects they ran on (the tests' own classes below), when set.
std::vector<const void*>* g_saved = nullptr;

// What each of those hooks does: notes `self` there and counts the hook.
void NoteSaved(const void* self, int* saved) {
  if (g_saved) g_saved->push_back(self);
  ++*saved;
}

// An object the game registers by name (World::Register), with an OnLoaded hook.
class Settings {
 public:
  virtual ~Settings() = default;
  void AfterLoad() {
    ++loaded;
    if (on_loaded) on_loaded();
  }
  void AfterSave() { ++saved; }
  std::int32_t volume = 5;
  std::string language = "en";
  int loaded = 0;
  int saved = 0;
  std::function<void()> on_loaded;
};

// A world subsystem some maps have.
class Weather : public WorldSubsystem {
 public:
  float rain = 0;
};

// An actor class the second registry of the "absent objects" tests does not know.
class Statue : public Actor {
 public:
  std::int32_t polish = 0;
};

// A component class the second registry does not know either.
class PlaqueComponent : public Component {
 public:
  std::string text;
};

// A plaque with an OnSaved hook.
class HookedPlaque : public PlaqueComponent {
 public:
  void Saved() { NoteSaved(this, &saved); }
  int saved = 0;
};

// The Statue of a later version: renamed, its field too (loaded through redirects).
class Monument : public Actor {
 public:
  std::int32_t shine = 0;
};

// A crate that notes its begin play.
std::vector<Guid>* g_begun = nullptr;
class WatchedCrate : public Crate {
 public:
  void BeginPlay() override {
    if (g_begun) g_begun->push_back(id);
  }
};

// A crate that counts its hooks (level memory runs pre-save hooks, never OnSaved).
class HookedCrate : public Crate {
 public:
  void PreSave() {
    ++pre_saves;
    pre_save_thread = std::this_thread::get_id();
  }
  void Saved() {
    NoteSaved(this, &saved);
    if (on_saved) on_saved();
  }
  int pre_saves = 0;
  std::thread::id pre_save_thread;
  int saved = 0;
  std::function<void()> on_saved;
};

// A registered object whose OnPreSave hook writes a saved field of an actor: the game's last word
// before a save, which the save must hold.
class Steward {
 public:
  virtual ~Steward() = default;
  void PreSave() {
    if (hero != nullptr) hero->health = health;
  }
  std::int32_t visits = 0;
  Character* hero = nullptr;
  std::int32_t health = 0;
};

// Host-listed globals and a player part with OnSaved hooks: a world subsystem (gone with its map),
// a game-instance subsystem (outlives every map) and a player controller.
class HookedWeather : public Weather {
 public:
  void Saved() { NoteSaved(this, &saved); }
  int saved = 0;
};
class HookedJournal : public Subsystem {
 public:
  void Saved() { NoteSaved(this, &saved); }
  std::int32_t pages = 0;
  int saved = 0;
};
class HookedController : public SamplePlayerController {
 public:
  void Saved() { NoteSaved(this, &saved); }
  int saved = 0;
};

// A player controller that holds a reference to a component.
class AimingController : public SamplePlayerController {
 public:
  PlaqueComponent* aimed = nullptr;
};

// An entry owned through a saved field, with an OnSaved hook its owner's class lacks.
class LedgerEntry {
 public:
  virtual ~LedgerEntry() = default;
  void Saved() { NoteSaved(this, &saved); }
  std::int32_t amount = 0;
  int saved = 0;
};
class Ledger : public Actor {
 public:
  std::unique_ptr<LedgerEntry> entry;
};

// Owned by hoards and vaults: enough of them make a file pass its bound of 262,144 owned objects.
class Coin {
 public:
  virtual ~Coin() = default;
  std::int32_t value = 0;
};
// A hoard is a class the second registry does not know (as Statue); a vault both know.
class Hoard : public Actor {
 public:
  std::vector<std::unique_ptr<Coin>> coins;
};
class Vault : public Actor {
 public:
  void Saved() { ++saved; }
  std::vector<std::unique_ptr<Coin>> coins;
  int saved = 0;
};
// A registered object that watches actors: references from the globals chunk (never copied: the
// quest log owns objects) into the world chunk and a player's.
// A component, and an actor, that hold references to an actor, a global and a component.
class LeashComponent : public Component {
 public:
  Actor* tied_to = nullptr;
  QuestLog* log = nullptr;
  Component* toy = nullptr;
};
class Kennel : public Actor {
 public:
  Actor* pet = nullptr;
  QuestLog* log = nullptr;
  Actor* neighbour = nullptr;
  Component* toy = nullptr;
};

class Lookout {
 public:
  Character* watched = nullptr;
  Actor* pawn = nullptr;
};

// Components whose loading runs the game's code, for the tests of hooks that change the records
// waiting for their components (World::OnComponentCreated). Each test sets what that code does;
// its fixture clears it.
std::function<void(PlaqueComponent&)> g_plaque_loaded;
std::function<void(std::unique_ptr<Coin>)> g_purse_coin;

// A plaque with an OnLoaded hook.
class LoadHookPlaque : public PlaqueComponent {
 public:
  void Loaded() {
    if (g_plaque_loaded) g_plaque_loaded(*this);
  }
};

// A purse whose setter, while g_purse_coin is set, hands the coin a load gives it to that keeper
// (which may outlive the purse) instead of keeping it. The coin's own saved fields apply after the
// setter returns.
class HandingPurse : public Component {
 public:
  void SetCoin(std::unique_ptr<Coin> given) {
    if (g_purse_coin) {
      g_purse_coin(std::move(given));
    } else {
      coin = std::move(given);
    }
  }
  std::unique_ptr<Coin> coin;
};

// An actor whose setter, while g_forge_heat is set, runs it: the game's code, which a load runs in
// its first pass for a forge spawned again, before the forge finishes spawning.
std::function<void(Actor&)> g_forge_heat;
// Runs when a forge begins play, while set.
std::function<void(Actor&)> g_forge_begun;
// Runs when a forge ends play, while set.
std::function<void(Actor&)> g_forge_ended;
class Forge : public Actor {
 public:
  void SetHeat(std::int32_t given) {
    heat = given;
    if (g_forge_heat) g_forge_heat(*this);
  }
  void BeginPlay() override {
    if (g_forge_begun) g_forge_begun(*this);
  }
  void EndPlay() override {
    if (g_forge_ended) g_forge_ended(*this);
  }
  std::int32_t heat = 0;
};

void RegisterKennel(reflect::TypeRegistry& r) {
  r.Class<Kennel>("Kennel")
      .Base<Actor>()
      .Field("Pet", &Kennel::pet, reflect::kSaveGame)
      .Field("Log", &Kennel::log, reflect::kSaveGame)
      .Field("Neighbour", &Kennel::neighbour, reflect::kSaveGame)
      .Field("Toy", &Kennel::toy, reflect::kSaveGame);
}

std::unique_ptr<reflect::TypeRegistry> MakeRegistry(bool with_statue = true,
                                                    bool with_test_classes = true) {
  auto r = std::make_unique<reflect::TypeRegistry>();
  RegisterSceneTypes(*r);
  RegisterSampleGame(*r);
  if (with_test_classes) {
    r->Class<Settings>("Settings")
        .Field("Volume", &Settings::volume, reflect::kSaveGame)
        .Field("Language", &Settings::language, reflect::kSaveGame)
        .OnLoaded(&Settings::AfterLoad)
        .OnSaved(&Settings::AfterSave);
    r->Class<Weather>("Weather").Base<WorldSubsystem>().Field("Rain", &Weather::rain,
                                                              reflect::kSaveGame);
    r->Class<Steward>("Steward")
        .Field("Visits", &Steward::visits, reflect::kSaveGame)
        .OnPreSave(&Steward::PreSave);
    r->Class<WatchedCrate>("WatchedCrate").Base<Crate>();
    r->Class<HookedWeather>("HookedWeather").Base<Weather>().OnSaved(&HookedWeather::Saved);
    r->Class<HookedJournal>("HookedJournal")
        .Base<Subsystem>()
        .Field("Pages", &HookedJournal::pages, reflect::kSaveGame)
        .OnSaved(&HookedJournal::Saved);
    r->Class<HookedController>("HookedController")
        .Base<SamplePlayerController>()
        .OnSaved(&HookedController::Saved);
    r->Class<LedgerEntry>("LedgerEntry")
        .Field("Amount", &LedgerEntry::amount, reflect::kSaveGame)
        .OnSaved(&LedgerEntry::Saved);
    r->Class<Ledger>("Ledger").Base<Actor>().Field("Entry", &Ledger::entry, reflect::kSaveGame);
    r->Class<HookedCrate>("HookedCrate")
        .Base<Crate>()
        .OnPreSave(&HookedCrate::PreSave)
        .OnSaved(&HookedCrate::Saved);
    r->Class<Coin>("Coin").Field("Value", &Coin::value, reflect::kSaveGame);
    r->Class<LeashComponent>("LeashComponent")
        .Base<Component>()
        .Field("TiedTo", &LeashComponent::tied_to, reflect::kSaveGame)
        .Field("Log", &LeashComponent::log, reflect::kSaveGame)
        .Field("Toy", &LeashComponent::toy, reflect::kSaveGame);
    RegisterKennel(*r);
    r->Class<Lookout>("Lookout")
        .Field("Watched", &Lookout::watched, reflect::kSaveGame)
        .Field("Pawn", &Lookout::pawn, reflect::kSaveGame);
    r->Class<Vault>("Vault")
        .Base<Actor>()
        .Field("Coins", &Vault::coins, reflect::kSaveGame)
        .OnSaved(&Vault::Saved);
    r->Class<HandingPurse>("HandingPurse")
        .Base<Component>()
        .Field("Coin", &HandingPurse::coin, reflect::kSaveGame, &HandingPurse::SetCoin);
    r->Class<Forge>("Forge").Base<Actor>().Field("Heat", &Forge::heat, reflect::kSaveGame,
                                                 &Forge::SetHeat);
    if (with_statue) {
      r->Class<Hoard>("Hoard").Base<Actor>().Field("Coins", &Hoard::coins, reflect::kSaveGame);
      r->Class<Statue>("Statue").Base<Actor>().Field("Polish", &Statue::polish, reflect::kSaveGame);
      r->Class<PlaqueComponent>("PlaqueComponent")
          .Base<Component>()
          .Field("Text", &PlaqueComponent::text, reflect::kSaveGame);
      r->Class<HookedPlaque>("HookedPlaque").Base<PlaqueComponent>().OnSaved(&HookedPlaque::Saved);
      r->Class<LoadHookPlaque>("LoadHookPlaque")
          .Base<PlaqueComponent>()
          .OnLoaded(&LoadHookPlaque::Loaded);
      r->Class<AimingController>("AimingController")
          .Base<SamplePlayerController>()
          .Field("Aimed", &AimingController::aimed, reflect::kSaveGame);
    }
  }
  if (!r->Finish().ok()) return nullptr;
  return r;
}

// A later version of the game: Statue renamed Monument, its "Polish" renamed "Shine".
std::unique_ptr<reflect::TypeRegistry> MakeRenamedRegistry() {
  auto r = std::make_unique<reflect::TypeRegistry>();
  RegisterSceneTypes(*r);
  RegisterSampleGame(*r);
  r->Class<Weather>("Weather").Base<WorldSubsystem>().Field("Rain", &Weather::rain,
                                                            reflect::kSaveGame);
  r->Class<PlaqueComponent>("PlaqueComponent")
      .Base<Component>()
      .Field("Text", &PlaqueComponent::text, reflect::kSaveGame);
  r->Class<Monument>("Monument").Base<Actor>().Field("Shine", &Monument::shine, reflect::kSaveGame);
  if (!r->redirects().AddClass("Statue", "Monument").ok()) return nullptr;
  if (!r->redirects().AddProperty("Monument", "Polish", "Shine").ok()) return nullptr;
  if (!r->Finish().ok()) return nullptr;
  return r;
}

// --- Maps -----------------------------------------------------------------------------------

constexpr const char* kMap = "maps/e2e.json";
constexpr const char* kOtherMap = "maps/other.json";
constexpr const char* kSmallMap = "maps/small.json";

constexpr const char* kDoorId = "00000000-0000-4000-8000-00000000a001";
constexpr const char* kHeroId = "00000000-0000-4000-8000-00000000a002";
constexpr const char* kStatueId = "00000000-0000-4000-8000-00000000a003";
constexpr const char* kCellarCrateId = "00000000-0000-4000-8000-00000000a004";
constexpr const char* kChestId = "00000000-0000-4000-8000-00000000a005";

Guid G(const char* text) { return *Guid::Parse(text); }

struct SmallMapOptions {
  bool statue = true;
  bool weather = true;
  // The class of the actor with kDoorId.
  std::string door_class = "Door";
  // The statue's class and field.
  std::string statue_class = "Statue";
  std::string statue_field = "Polish";
  // The world subsystem's class (when `weather`), a second game-instance subsystem's (none when
  // empty), and the player controller's.
  std::string weather_class = "Weather";
  std::string journal_class = "";
  std::string controller_class = "SamplePlayerController";
};

// A small map: a door, a character, a chest, a statue (optional), a crate in the "Cellar"
// sublevel (not loaded at the start), the sample globals, a Weather subsystem (optional), one
// player.
std::string SmallMap(const SmallMapOptions& o = {}) {
  std::string actors = std::string(R"({"class": ")") + o.door_class + R"(", "id": ")" + kDoorId +
                       R"(", "transform": {"translation": [1, 2, 3]}},
    {"class": "Character", "id": ")" +
                       kHeroId +
                       R"(", "values": {"Name": "Hero", "Health": 90}},
    {"class": "Chest", "id": ")" +
                       kChestId +
                       R"(", "values": {"Inventory": [{"Item": "Apple", "Count": 2}]}},
    {"class": "Crate", "id": ")" +
                       kCellarCrateId + R"(", "level": "Cellar", "saving": "Always"})";
  if (o.statue) {
    actors += R"(,
    {"class": ")" +
              o.statue_class + R"(", "id": ")" + kStatueId + R"(", "values": {")" + o.statue_field +
              R"(": 1},
     "components": [{"name": "Plaque", "class": "PlaqueComponent", "values": {"Text": "old"}}]})";
  }
  return std::string(R"({
  "name": "small",
  "levels": [{"name": "Persistent"}, {"name": "Cellar", "loaded": false}],
  "game_instance": {"class": "GameInstance", "subsystems": ["QuestLog")" +
         (o.journal_class.empty() ? "" : ", \"" + o.journal_class + "\"") + R"(]},
  "game_mode": "SampleGameMode",
  "game_state": "SampleGameState",
  "world_subsystems": )") +
         (o.weather ? "[\"" + o.weather_class + "\"]" : "[]") + R"(,
  "level_script": "LevelScript",
  "players": [{"controller": ")" + o.controller_class + R"(", "pawn": "SamplePawn",
               "player_state": "SamplePlayerState"}],
  "actors": [
    )" + actors +
         R"(
  ]
})";
}

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// --- A game: a scene, a store and a save system over the test's backend ---------------------

// A scene that cannot leave actors out of a map it opens (Host::OpenMapWithout's default): a
// load that opens its map destroys the actors its save holds destroyed once the map is built.
class WholeMapScene : public Scene {
 public:
  using Scene::Scene;
  Status OpenMapWithout(std::string_view map, const GuidSet& leave_out,
                        GuidSet* left_out) override {
    return world::Host::OpenMapWithout(map, leave_out, left_out);
  }
};

struct Game {
  // `whole_maps`: on a WholeMapScene.
  Game(const reflect::TypeRegistry& registry, store::Backend& backend, Mailbox& mailbox,
       WorkerPool& workers, bool whole_maps = false, store::StoreOptions store_options = {})
      : own_scene(whole_maps ? std::make_unique<WholeMapScene>(registry)
                             : std::make_unique<Scene>(registry)),
        scene(*own_scene),
        store(backend, workers, mailbox, std::move(store_options)),
        saves(store, scene, registry, mailbox, workers) {}
  std::unique_ptr<Scene> own_scene;
  Scene& scene;
  store::Store store;
  game::SaveSystem saves;
};

Mailbox::Clock::time_point Deadline() { return Mailbox::Clock::now() + std::chrono::seconds(20); }

// The save system's events, one line each.
class RecordingEvents : public game::SaveEvents {
 public:
  void OnSaveFinished(std::string_view slot, const Status& status) override {
    log.push_back("SaveFinished " + std::string(slot) + " " +
                  std::string(StatusCodeName(status.code())));
  }
  void OnLoadStarted(std::string_view slot) override {
    log.push_back("LoadStarted " + std::string(slot));
  }
  void OnLoadProgress(std::string_view slot, LoadStage stage) override {
    (void)slot;
    log.push_back("Progress " + std::string(game::LoadStageName(stage)));
    if (on_progress) on_progress(stage);
  }
  void OnLoadFinished(std::string_view slot, const Status& status) override {
    log.push_back("LoadFinished " + std::string(slot) + " " +
                  std::string(StatusCodeName(status.code())));
  }
  void OnLoadCancelled(std::string_view slot) override {
    log.push_back("LoadCancelled " + std::string(slot));
  }
  std::vector<std::string> log;
  std::function<void(LoadStage)> on_progress;
};

Result<SaveOutcome> SaveNow(Game& g, std::string_view slot) {
  std::optional<Result<SaveOutcome>> got;
  g.saves.Save(slot, {.title = "test"}, [&](Result<SaveOutcome> r) { got.emplace(std::move(r)); });
  Status flushed = g.saves.Flush(Deadline());
  if (!got) return flushed.ok() ? BlockedError("the save never called back") : flushed;
  return std::move(*got);
}

Result<LoadOutcome> LoadNow(game::SaveSystem& saves, std::string_view slot,
                            MapChoice map = MapChoice::kOpenSavedMap) {
  std::optional<Result<LoadOutcome>> got;
  saves.Load(slot, {.map = map}, [&](Result<LoadOutcome> r) { got.emplace(std::move(r)); });
  Status flushed = saves.Flush(Deadline());
  if (!got) return flushed.ok() ? BlockedError("the load never called back") : flushed;
  return std::move(*got);
}

Result<LoadOutcome> LoadNow(Game& g, std::string_view slot,
                            MapChoice map = MapChoice::kOpenSavedMap) {
  return LoadNow(g.saves, slot, map);
}

Result<std::vector<world::WorldChunk>> Capture(Game& g) {
  return world::CaptureForCompare(g.saves.world());
}

std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

#define EXPECT_SAME_WORLD(a, b)                                               \
  do {                                                                        \
    Result<std::vector<std::string>> diff_ = world::DiffWorlds((a), (b), 40); \
    ASSERT_OK(diff_);                                                         \
    EXPECT_THAT(*diff_, IsEmpty()) << Lines(*diff_);                          \
  } while (false)

class SaveLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = MakeRegistry();
    ASSERT_NE(registry_, nullptr);
  }

  // The check of AWaitingComponentRecordsReferencesAreResolvedWhenItApplies (defined with it).
  void ExpectLeashesTied(std::string_view slot, bool saved_again, Guid spawned_id);

  // Saves `g` into `slot` and runs `meanwhile` while the save is being written (before its
  // callback can run); once it is written, returns the objects whose OnSaved hooks ran, in order.
  std::vector<const void*> SaveWhile(Game& g, std::string_view slot,
                                     const std::function<void()>& meanwhile) {
    std::vector<const void*> saved;
    g_saved = &saved;
    std::optional<Result<SaveOutcome>> got;
    g.saves.Save(slot, {}, [&](Result<SaveOutcome> r) { got.emplace(std::move(r)); });
    EXPECT_FALSE(got.has_value()) << "the save is still being written";
    meanwhile();
    EXPECT_OK(g.saves.Flush(Deadline()));
    g_saved = nullptr;
    if (!got.has_value()) {
      ADD_FAILURE() << "no callback";
    } else {
      EXPECT_OK(got->status());
    }
    return saved;
  }

  // The sample map with a forge, a kennel, a vault and a statue placed first, of IDs ForgeIds.
  struct ForgeIds {
    Guid forge = G("00000000-0000-4000-8000-00000000c001");
    Guid kennel = G("00000000-0000-4000-8000-00000000c002");
    Guid vault = G("00000000-0000-4000-8000-00000000c003");
    Guid statue = G("00000000-0000-4000-8000-00000000c004");
  };
  std::string ForgeMap() const {
    std::string map = sample_map_;
    map.insert(map.find('[', map.find("\"actors\"")) + 1,
               R"({"class": "Forge", "id": "00000000-0000-4000-8000-00000000c001"},
                  {"class": "Kennel", "id": "00000000-0000-4000-8000-00000000c002"},
                  {"class": "Vault", "id": "00000000-0000-4000-8000-00000000c003"},
                  {"class": "Statue", "id": "00000000-0000-4000-8000-00000000c004"},)");
    return map;
  }

  std::unique_ptr<Game> NewGame(const reflect::TypeRegistry* registry = nullptr,
                                bool whole_maps = false) {
    auto g = std::make_unique<Game>(registry ? *registry : *registry_, backend_, mailbox_,
                                    workers_, whole_maps, store_options_);
    g->scene.AddMap(kMap, sample_map_);
    g->scene.AddMap(kOtherMap, BuildSampleMap(20, 5));
    g->scene.AddMap(kSmallMap, SmallMap());
    return g;
  }

  // A game on the sample map after `steps` steps of play.
  std::unique_ptr<Game> PlayedGame(int steps = 60, std::uint64_t seed = 3) {
    auto g = NewGame();
    Status s = g->scene.Start(kMap);
    EXPECT_OK(s);
    if (s.ok()) {
      EXPECT_OK(PlaySample(g->scene, steps, seed));
    }
    return g;
  }

  // The "Backpack" components play added, by character.
  static std::vector<Guid> Backpacks(const Scene& scene) {
    std::vector<Guid> out;
    scene.ForEachActor([&](Actor& a) {
      if (dynamic_cast<Character*>(&a) && a.FindComponent(Name("Backpack"))) out.push_back(a.id);
    });
    return out;
  }

  // Makes the components play added, as the game would after a load.
  static void AddBackpacks(Scene& scene, const std::vector<Guid>& ids) {
    for (Guid id : ids) {
      if (scene.FindActor(id) == nullptr) continue;
      EXPECT_OK(scene.AddComponent(id, Name("Backpack"), Name("InventoryComponent")).status());
    }
  }

  std::unique_ptr<reflect::TypeRegistry> registry_;
  std::string sample_map_ = BuildSampleMap(300, 11);
  store::StoreOptions store_options_;  // the stores of the games NewGame makes
  store::MemoryBackend backend_;
  Mailbox mailbox_;
  WorkerPool workers_{2};
};

// --- 1. Round trips ---------------------------------------------------------------------------

TEST_F(SaveLoadTest, RoundTripOpeningTheSavedMapGivesTheSameWorld) {
  auto a = PlayedGame();
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));
  ASSERT_OK(SaveNow(*a, "slot1"));
  const std::vector<Guid> backpacks = Backpacks(a->scene);
  ASSERT_FALSE(backpacks.empty()) << "play adds a Backpack in 60 steps";

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "slot1"));
  EXPECT_EQ(out.map, kMap);
  EXPECT_EQ(b->scene.CurrentMap(), kMap);
  EXPECT_EQ(out.report.waiting, backpacks.size()) << Lines(out.report.messages);
  EXPECT_EQ(out.report.class_mismatches, 0u) << Lines(out.report.messages);
  // The components play added are made again by the game; their records apply then.
  AddBackpacks(b->scene, backpacks);
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  EXPECT_SAME_WORLD(saved, loaded);
}

TEST_F(SaveLoadTest, RoundTripOpeningTheSameMapGivesTheSameWorld) {
  auto a = PlayedGame();
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));
  ASSERT_OK(SaveNow(*a, "slot1"));
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  ASSERT_OK(LoadNow(*b, "slot1"));
  AddBackpacks(b->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  EXPECT_SAME_WORLD(saved, loaded);
}

// A load that opens its map has the scene leave out the placed actors the save holds destroyed
// (Host::OpenMapWithout) instead of making them and destroying them; among them actors the map
// has others refer to, attach to, or be owned by. The world, the report and the next save are
// those of a host that cannot, which destroys them once the map is built.
TEST_F(SaveLoadTest, ALoadOpeningItsMapLeavesOutTheActorsTheSaveHoldsDestroyed) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kMap));
  std::vector<Guid> parents, owners, referred;
  a->scene.ForEachActor([&](Actor& x) {
    if (!x.attach_parent.is_none() && parents.size() < 3) parents.push_back(x.attach_parent);
    if (!x.owner_id.is_none() && owners.size() < 3) owners.push_back(x.owner_id);
  });
  ASSERT_FALSE(parents.empty()) << "the sample map attaches actors";
  ASSERT_FALSE(owners.empty()) << "the sample map gives actors owners";
  ASSERT_OK(PlaySample(a->scene, 60, 3));
  a->scene.ForEachActor([&](Actor& x) {
    auto* c = dynamic_cast<Character*>(&x);
    if (c != nullptr && c->friend_character != nullptr && !c->friend_character->spawned &&
        referred.size() < 3) {
      referred.push_back(c->friend_character->id);
    }
  });
  std::vector<Guid> doomed = referred;
  doomed.insert(doomed.end(), parents.begin(), parents.end());
  doomed.insert(doomed.end(), owners.begin(), owners.end());
  a->scene.DestroyActors(doomed);
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));
  ASSERT_OK(SaveNow(*a, "left"));

  auto b = NewGame();
  auto c = NewGame(nullptr, /*whole_maps=*/true);
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK(c->scene.Start(kOtherMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome left, LoadNow(*b, "left"));
  ASSERT_OK_AND_ASSIGN(LoadOutcome destroyed, LoadNow(*c, "left"));
  EXPECT_GE(left.report.removed, parents.size() + owners.size());
  EXPECT_EQ(left.report.removed, destroyed.report.removed);
  EXPECT_EQ(left.report.applied, destroyed.report.applied);
  EXPECT_EQ(left.report.spawned, destroyed.report.spawned);
  EXPECT_EQ(left.report.kept, destroyed.report.kept);
  EXPECT_EQ(left.report.messages, destroyed.report.messages);
  for (Guid id : doomed) EXPECT_EQ(b->scene.FindActor(id), nullptr) << id.ToString();
  AddBackpacks(b->scene, Backpacks(a->scene));
  AddBackpacks(c->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  ASSERT_OK_AND_ASSIGN(auto loaded_whole, Capture(*c));
  EXPECT_SAME_WORLD(saved, loaded);
  EXPECT_SAME_WORLD(loaded_whole, loaded);

  // The next save holds them destroyed: a game that loads it keeping its map removes them.
  ASSERT_OK(SaveNow(*b, "again"));
  auto d = NewGame();
  ASSERT_OK(d->scene.Start(kMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome again, LoadNow(*d, "again", MapChoice::kKeepCurrentMap));
  EXPECT_EQ(again.report.removed, left.report.removed);
  for (Guid id : doomed) EXPECT_EQ(d->scene.FindActor(id), nullptr) << id.ToString();
  AddBackpacks(d->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded_again, Capture(*d));
  EXPECT_SAME_WORLD(saved, loaded_again);
}

TEST_F(SaveLoadTest, RoundTripKeepingTheCurrentMapGivesTheSameWorld) {
  auto a = PlayedGame();
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));
  ASSERT_OK(SaveNow(*a, "slot1"));
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  ASSERT_OK(PlaySample(b->scene, 25, 99));  // a world that moved on differently
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "slot1", MapChoice::kKeepCurrentMap));
  EXPECT_GT(out.report.spawned, 0u);
  EXPECT_GT(out.report.removed, 0u);
  AddBackpacks(b->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  // Spawned actors b made in its own play are not in the save; they stay (a load only spawns
  // what the world lacks). Compare without them.
  ASSERT_OK_AND_ASSIGN(auto diff, world::DiffWorlds(saved, loaded, 1000));
  for (const std::string& line : diff) {
    EXPECT_THAT(line, HasSubstr("(missing) != ")) << "a value differs: " << line;
  }
}

TEST_F(SaveLoadTest, RoundTripKeepingAFreshCopyOfTheMapGivesTheSameWorld) {
  auto a = PlayedGame();
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));
  ASSERT_OK(SaveNow(*a, "slot1"));
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  ASSERT_OK(LoadNow(*b, "slot1", MapChoice::kKeepCurrentMap));
  AddBackpacks(b->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  EXPECT_SAME_WORLD(saved, loaded);
}

// --- 2. What comes back ------------------------------------------------------------------------

// An object the game reaches two ways (the quest log, a subsystem, also registered by name) saves
// a record each way. A load applies the first only: the quest log owns its quests, and a second
// record would make them again, destroying those whose OnLoaded is still to run. The second is
// reported not applied; the quests come back once.
TEST_F(SaveLoadTest, AnObjectThatOwnsReachedTwoWaysTakesOneRecord) {
  auto a = PlayedGame(200, 4);
  auto* log = a->scene.GetSubsystem<QuestLog>();
  ASSERT_NE(log, nullptr);
  ASSERT_GE(log->quests.size(), 3u);
  const reflect::ClassInfo* log_class = registry_->FindClass<QuestLog>();
  ASSERT_TRUE(log_class->Plan().owns);
  ASSERT_OK(a->saves.world().Register(Name("quests"), {log_class, log}));
  ASSERT_OK(SaveNow(*a, "twice"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  auto* log2 = b->scene.GetSubsystem<QuestLog>();
  ASSERT_NE(log2, nullptr);
  ASSERT_OK(b->saves.world().Register(Name("quests"), {log_class, log2}));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "twice"));
  EXPECT_THAT(out.report.messages,
              Contains(HasSubstr("QuestLog took a record already in this load")))
      << Lines(out.report.messages);
  ASSERT_EQ(log2->quests.size(), log->quests.size());
  for (std::size_t i = 0; i < log->quests.size(); ++i) {
    EXPECT_EQ(log2->quests[i]->id, log->quests[i]->id);
    EXPECT_EQ(log2->quests[i]->step, log->quests[i]->step);
  }
}

TEST_F(SaveLoadTest, GlobalsComeBack) {
  auto a = PlayedGame(200, 4);
  auto* mode = dynamic_cast<SampleGameMode*>(a->scene.game_mode());
  auto* state = dynamic_cast<SampleGameState*>(a->scene.game_state());
  auto* log = a->scene.GetSubsystem<QuestLog>();
  ASSERT_TRUE(mode && state && log);
  mode->difficulty = 7;
  ASSERT_GE(log->quests.size(), 3u);
  ASSERT_OK(SaveNow(*a, "g"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK(LoadNow(*b, "g"));
  auto* mode2 = dynamic_cast<SampleGameMode*>(b->scene.game_mode());
  auto* state2 = dynamic_cast<SampleGameState*>(b->scene.game_state());
  auto* log2 = b->scene.GetSubsystem<QuestLog>();
  ASSERT_TRUE(mode2 && state2 && log2);
  EXPECT_EQ(mode2->difficulty, 7);
  EXPECT_EQ(state2->time_of_day, state->time_of_day);
  EXPECT_EQ(state2->day, state->day);
  ASSERT_EQ(log2->quests.size(), log->quests.size());
  for (std::size_t i = 0; i < log->quests.size(); ++i) {
    const Quest& q = *log->quests[i];
    const Quest& q2 = *log2->quests[i];
    EXPECT_EQ(q2.id, q.id);
    EXPECT_EQ(q2.step, q.step);
    EXPECT_EQ(q2.done, q.done);
    ASSERT_NE(q2.reward, nullptr);
    EXPECT_NE(q2.reward.get(), q.reward.get());
    EXPECT_EQ(q2.reward->item, q.reward->item);
    EXPECT_EQ(q2.reward->gold, q.reward->gold);
  }
}

TEST_F(SaveLoadTest, RegisteredObjectsComeBackAndALateRegisterGetsItsValues) {
  auto a = PlayedGame(10);
  Settings settings, late;
  settings.volume = 9;
  settings.language = "fr";
  late.volume = 2;
  late.language = "de";
  const reflect::ClassInfo* cls = registry_->FindClass<Settings>();
  ASSERT_OK(a->saves.world().Register(Name("settings"), {cls, &settings}));
  ASSERT_OK(a->saves.world().Register(Name("late"), {cls, &late}));
  ASSERT_OK(SaveNow(*a, "r"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  Settings settings2, late2;
  ASSERT_OK(b->saves.world().Register(Name("settings"), {cls, &settings2}));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "r"));
  EXPECT_EQ(settings2.volume, 9);
  EXPECT_EQ(settings2.language, "fr");
  EXPECT_EQ(settings2.loaded, 1) << "its OnLoaded hook runs once";
  EXPECT_GE(out.report.kept, 1u) << "the record of \"late\" is kept";
  // Registered after the load: it gets its values at once.
  EXPECT_EQ(late2.volume, 5);
  ASSERT_OK(b->saves.world().Register(Name("late"), {cls, &late2}));
  EXPECT_EQ(late2.volume, 2);
  EXPECT_EQ(late2.language, "de");
  EXPECT_EQ(late2.loaded, 1);
}

TEST_F(SaveLoadTest, PlacedActorsGetTheirValuesAndTransforms) {
  auto a = PlayedGame(100, 8);
  std::vector<Guid> doors, characters, lamps, chests;
  a->scene.ForEachActor([&](Actor& x) {
    if (dynamic_cast<Door*>(&x)) doors.push_back(x.id);
    if (dynamic_cast<Character*>(&x)) characters.push_back(x.id);
    if (dynamic_cast<Lamp*>(&x)) lamps.push_back(x.id);
    if (dynamic_cast<Chest*>(&x)) chests.push_back(x.id);
  });
  // A transform, tags and a scale changed in play.
  Actor* moved = a->scene.FindActor(doors.front());
  moved->transform.translation = {10.5, -3.25, 7};
  moved->transform.rotation = {0, 0, 0.6, 0.8};
  moved->transform.scale = {2, 2, 0.5};
  moved->tags = {Name("Moved"), Name("Twice")};
  ASSERT_OK(SaveNow(*a, "p"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK(LoadNow(*b, "p"));
  for (Guid id : doors) {
    auto* d = a->scene.FindActorAs<Door>(id);
    auto* d2 = b->scene.FindActorAs<Door>(id);
    ASSERT_NE(d2, nullptr) << id.ToString();
    EXPECT_EQ(d2->open, d->open);
    EXPECT_EQ(d2->state, d->state);
    EXPECT_EQ(d2->lock_code, d->lock_code);
    EXPECT_EQ(d2->tags, d->tags);
    EXPECT_EQ(d2->transform.translation, d->transform.translation);
    EXPECT_EQ(d2->transform.rotation, d->transform.rotation);
    EXPECT_EQ(d2->transform.scale, d->transform.scale);
  }
  for (Guid id : characters) {
    auto* c = a->scene.FindActorAs<Character>(id);
    auto* c2 = b->scene.FindActorAs<Character>(id);
    ASSERT_NE(c2, nullptr);
    EXPECT_EQ(c2->health, c->health);
    EXPECT_EQ(c2->name, c->name);
    EXPECT_EQ(c2->experience_level, c->experience_level);
    EXPECT_EQ(c2->transform.translation, c->transform.translation);
  }
  for (Guid id : lamps) {
    auto* l = a->scene.FindActorAs<Lamp>(id);
    auto* l2 = b->scene.FindActorAs<Lamp>(id);
    ASSERT_NE(l2, nullptr);
    EXPECT_EQ(l2->on, l->on);
    EXPECT_EQ(l2->color, l->color);
    EXPECT_EQ(l2->intensity, l->intensity);
    EXPECT_EQ(l2->attach_parent, l->attach_parent);
    EXPECT_EQ(l2->attach_socket, l->attach_socket);
  }
  for (Guid id : chests) {
    auto* c = a->scene.FindActorAs<Chest>(id);
    auto* c2 = b->scene.FindActorAs<Chest>(id);
    ASSERT_NE(c2, nullptr);
    EXPECT_EQ(c2->inventory, c->inventory);
    EXPECT_EQ(c2->owner_id, c->owner_id);
  }
}

TEST_F(SaveLoadTest, SpawnedActorsComeBackWithTheirIdsAttachedAndOwned) {
  auto a = PlayedGame(100, 6);
  std::vector<Pickup*> pickups;
  a->scene.ForEachActor([&](Actor& x) {
    if (auto* p = dynamic_cast<Pickup*>(&x)) pickups.push_back(p);
  });
  ASSERT_GE(pickups.size(), 5u);
  ASSERT_OK(SaveNow(*a, "s"));

  for (MapChoice choice : {MapChoice::kOpenSavedMap, MapChoice::kKeepCurrentMap}) {
    SCOPED_TRACE(choice == MapChoice::kOpenSavedMap ? "open saved map" : "keep current map");
    auto b = NewGame();
    ASSERT_OK(b->scene.Start(kMap));
    ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "s", choice));
    EXPECT_EQ(out.report.spawned, pickups.size());
    for (Pickup* p : pickups) {
      auto* p2 = b->scene.FindActorAs<Pickup>(p->id);
      ASSERT_NE(p2, nullptr) << p->id.ToString();
      EXPECT_TRUE(p2->spawned);
      EXPECT_EQ(p2->value, p->value);
      EXPECT_EQ(p2->kind, p->kind);
      EXPECT_EQ(p2->transform.translation, p->transform.translation);
      EXPECT_EQ(p2->transform.rotation, p->transform.rotation);
      EXPECT_EQ(p2->attach_parent, p->attach_parent);
      EXPECT_EQ(p2->attach_socket, Name("Hand"));
      EXPECT_EQ(p2->owner_id, p->owner_id);
      EXPECT_FALSE(p2->owner_id.is_none());
      EXPECT_NE(b->scene.FindActorAs<Character>(p2->owner_id), nullptr);
      EXPECT_TRUE(p2->begun_play);
    }
  }
}

TEST_F(SaveLoadTest, PlacedActorsDestroyedInPlayAreGoneAndNeverBeginPlay) {
  std::vector<Guid> begun;
  g_begun = &begun;
  sample_map_ = Replace(sample_map_, "\"Crate\"", "\"WatchedCrate\"");
  auto a = PlayedGame(100, 2);
  std::set<Guid> crates_before;
  {
    auto fresh = NewGame();
    ASSERT_OK(fresh->scene.Start(kMap));
    fresh->scene.ForEachActor([&](Actor& x) {
      if (dynamic_cast<WatchedCrate*>(&x)) crates_before.insert(x.id);
    });
  }
  std::set<Guid> destroyed = crates_before;
  a->scene.ForEachActor([&](Actor& x) { destroyed.erase(x.id); });
  ASSERT_GE(destroyed.size(), 3u);
  ASSERT_OK(SaveNow(*a, "d"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  begun.clear();
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "d"));
  EXPECT_EQ(out.report.removed, destroyed.size());
  for (Guid id : destroyed) {
    EXPECT_EQ(b->scene.FindActor(id), nullptr) << id.ToString();
    EXPECT_THAT(begun, Not(Contains(id))) << "a destroyed crate began play: " << id.ToString();
  }
  // The crates that stayed began play, once.
  for (Guid id : crates_before) {
    if (destroyed.count(id)) continue;
    EXPECT_EQ(std::count(begun.begin(), begun.end(), id), 1) << id.ToString();
  }
  // And the next save holds them destroyed still.
  ASSERT_OK(SaveNow(*b, "d2"));
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kMap));
  ASSERT_OK(LoadNow(*c, "d2", MapChoice::kKeepCurrentMap));
  for (Guid id : destroyed) EXPECT_EQ(c->scene.FindActor(id), nullptr) << id.ToString();
  g_begun = nullptr;
}

TEST_F(SaveLoadTest, PlacedActorsDestroyedInPlayAreHeldDestroyedInWhateverOrderTheHostVisits) {
  // The capture matches the actors a host visits against the placed ones in the map's order,
  // with a few actors' look-ahead: a run of destroyed actors longer than that, scattered ones, and
  // a host visiting last to first must all give the same tombstones.
  // (Reversed once the map is up: the world notes the placed actors in the order visited then.)
  class ReversedVisitScene : public Scene {
   public:
    using Scene::Scene;
    void VisitActors(Name level,
                     const std::function<void(const world::ActorView&)>& visit) override {
      if (!reversed) return Scene::VisitActors(level, visit);
      std::vector<world::ActorView> views;
      Scene::VisitActors(level, [&](const world::ActorView& v) { views.push_back(v); });
      for (auto it = views.rbegin(); it != views.rend(); ++it) visit(*it);
    }
    bool reversed = false;
  };
  ReversedVisitScene reversed(*registry_);
  store::Store store(backend_, workers_, mailbox_);
  game::SaveSystem reversed_saves(store, reversed, *registry_, mailbox_, workers_);
  reversed.AddMap(kMap, sample_map_);
  ASSERT_OK(reversed.Start(kMap));
  reversed.reversed = true;
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kMap));

  std::vector<Guid> placed;
  std::size_t actors = 0;
  a->scene.ForEachActor([&](Actor& x) {
    ++actors;
    if (!x.spawned) placed.push_back(x.id);
  });
  ASSERT_GE(placed.size(), 120u);
  std::vector<Guid> destroyed(placed.begin() + 10, placed.begin() + 40);
  for (std::size_t i = 45; i < placed.size(); i += 7) destroyed.push_back(placed[i]);
  destroyed.push_back(placed.back());
  for (Guid id : destroyed) {
    a->scene.DestroyActor(id);
    reversed.DestroyActor(id);
  }
  // Spawned actors visited among the placed ones change nothing.
  const reflect::ClassInfo* crate = registry_->FindClass(Name("Crate"));
  ASSERT_NE(crate, nullptr);
  for (std::uint64_t i = 1; i <= 3; ++i) {
    for (Scene* scene : {&a->scene, static_cast<Scene*>(&reversed)}) {
      ASSERT_OK(scene->BeginSpawn(Name(), *crate, Guid(0xABC, i), {}).status());
      scene->FinishSpawn(Guid(0xABC, i));
    }
  }

  ASSERT_OK_AND_ASSIGN(auto in_order, Capture(*a));
  ASSERT_OK_AND_ASSIGN(auto backwards, world::CaptureForCompare(reversed_saves.world()));
  EXPECT_SAME_WORLD(in_order, backwards);
  ASSERT_OK(SaveNow(*a, "t"));
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "t"));
  EXPECT_EQ(out.report.removed, destroyed.size());
  for (Guid id : destroyed) EXPECT_EQ(b->scene.FindActor(id), nullptr) << id.ToString();
  std::size_t left = 0;
  b->scene.ForEachActor([&](Actor&) { ++left; });
  EXPECT_EQ(left, actors - destroyed.size() + 3);
}

TEST_F(SaveLoadTest, SpawnedActorsDestroyedInPlayAreNotSpawnedAgain) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(Pickup * keep, a->scene.SpawnActor<Pickup>());
  ASSERT_OK_AND_ASSIGN(Pickup * gone, a->scene.SpawnActor<Pickup>());
  keep->value = 1;
  gone->value = 2;
  const Guid keep_id = keep->id, gone_id = gone->id;
  ASSERT_OK(SaveNow(*a, "x"));  // both saved: the world holds this save now
  a->scene.DestroyActor(gone_id);
  ASSERT_OK(SaveNow(*a, "x"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "x"));
  EXPECT_NE(b->scene.FindActor(keep_id), nullptr);
  EXPECT_EQ(b->scene.FindActor(gone_id), nullptr);
  EXPECT_EQ(out.report.spawned, 1u);

  // Loaded, destroyed, saved again: it stays gone.
  b->scene.DestroyActor(keep_id);
  ASSERT_OK(SaveNow(*b, "y"));
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kSmallMap));
  ASSERT_OK(LoadNow(*c, "y"));
  EXPECT_EQ(c->scene.FindActor(keep_id), nullptr);
  EXPECT_EQ(c->scene.FindActor(gone_id), nullptr);
}

TEST_F(SaveLoadTest, ComponentsComeBackAndOneAddedInPlayWaitsForItsCreation) {
  auto a = PlayedGame(100, 9);
  std::vector<Guid> backpacks = Backpacks(a->scene);
  ASSERT_FALSE(backpacks.empty());
  const Guid who = backpacks.front();
  auto* bag =
      static_cast<InventoryComponent*>(a->scene.FindActor(who)->FindComponent(Name("Backpack")));
  bag->capacity = 33;
  auto* inv =
      static_cast<InventoryComponent*>(a->scene.FindActor(who)->FindComponent(Name("Inventory")));
  inv->capacity = 21;
  inv->items = {{Name("Key"), 3, 0.25f}};
  Lamp* lamp = nullptr;
  a->scene.ForEachActor([&](Actor& x) {
    if (!lamp) lamp = dynamic_cast<Lamp*>(&x);
  });
  ASSERT_NE(lamp, nullptr);
  auto* bulb = static_cast<LampComponent*>(lamp->FindComponent(Name("Bulb")));
  bulb->flicker = 0.75f;
  bulb->broken = true;
  ASSERT_OK(SaveNow(*a, "c"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "c"));
  EXPECT_EQ(out.report.waiting, backpacks.size());
  auto* inv2 =
      static_cast<InventoryComponent*>(b->scene.FindActor(who)->FindComponent(Name("Inventory")));
  EXPECT_EQ(inv2->capacity, 21);
  EXPECT_EQ(inv2->items, inv->items);
  auto* bulb2 =
      static_cast<LampComponent*>(b->scene.FindActor(lamp->id)->FindComponent(Name("Bulb")));
  EXPECT_EQ(bulb2->flicker, 0.75f);
  EXPECT_TRUE(bulb2->broken);
  // The Backpack is not there: it waits, and applies when the game makes it.
  EXPECT_EQ(b->scene.FindActor(who)->FindComponent(Name("Backpack")), nullptr);
  ASSERT_OK_AND_ASSIGN(Component * made,
                       b->scene.AddComponent(who, Name("Backpack"), Name("InventoryComponent")));
  auto* bag2 = static_cast<InventoryComponent*>(made);
  EXPECT_EQ(bag2->capacity, 33);
  EXPECT_EQ(bag2->items, bag->items);
}

TEST_F(SaveLoadTest, PlayersComeBack) {
  auto a = PlayedGame(100, 12);
  const LocalPlayer& p = a->scene.players().front();
  auto* pc = dynamic_cast<SamplePlayerController*>(p.controller);
  auto* pawn = dynamic_cast<SamplePawn*>(p.pawn);
  auto* ps = dynamic_cast<SamplePlayerState*>(p.player_state);
  ASSERT_TRUE(pc && pawn && ps);
  pawn->transform.rotation = {0, 0, 0.6, 0.8};
  ASSERT_OK(SaveNow(*a, "pl"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK(LoadNow(*b, "pl"));
  ASSERT_EQ(b->scene.players().size(), 1u);
  const LocalPlayer& p2 = b->scene.players().front();
  auto* pc2 = dynamic_cast<SamplePlayerController*>(p2.controller);
  auto* pawn2 = dynamic_cast<SamplePawn*>(p2.pawn);
  auto* ps2 = dynamic_cast<SamplePlayerState*>(p2.player_state);
  ASSERT_TRUE(pc2 && pawn2 && ps2);
  EXPECT_EQ(pc2->control_rotation, pc->control_rotation);
  EXPECT_EQ(pawn2->stamina, pawn->stamina);
  EXPECT_EQ(pawn2->transform.translation, pawn->transform.translation);
  EXPECT_EQ(pawn2->transform.rotation, pawn->transform.rotation);
  EXPECT_EQ(ps2->score, ps->score);
  EXPECT_EQ(ps2->gold, ps->gold);
  EXPECT_NE(ps->score, 0);
}

TEST_F(SaveLoadTest, APawnWhoseIdTheHostLeavesOutStillTakesItsSavedPlace) {
  // A host that names no pawn ID: the load finds the pawn among the actors.
  class NoPawnIdScene : public Scene {
   public:
    using Scene::Scene;
    void ListPlayers(std::vector<world::PlayerView>* out) override {
      Scene::ListPlayers(out);
      for (world::PlayerView& p : *out) p.pawn_id = Guid();
    }
  };
  auto a = PlayedGame(20, 4);
  auto* pawn = dynamic_cast<SamplePawn*>(a->scene.players().front().pawn);
  ASSERT_NE(pawn, nullptr);
  pawn->transform.translation = {3, -4, 5};
  pawn->transform.rotation = {0, 0, 0.6, 0.8};
  ASSERT_OK(SaveNow(*a, "np"));

  NoPawnIdScene scene(*registry_);
  store::Store store(backend_, workers_, mailbox_);
  game::SaveSystem saves(store, scene, *registry_, mailbox_, workers_);
  scene.AddMap(kMap, sample_map_);
  ASSERT_OK(scene.Start(kMap));
  ASSERT_OK(LoadNow(saves, "np", MapChoice::kKeepCurrentMap));
  auto* pawn2 = dynamic_cast<SamplePawn*>(scene.players().front().pawn);
  ASSERT_NE(pawn2, nullptr);
  EXPECT_EQ(pawn2->transform.translation, pawn->transform.translation);
  EXPECT_EQ(pawn2->transform.rotation, pawn->transform.rotation);
}

TEST_F(SaveLoadTest, ReferencesBetweenCharactersResolve) {
  auto a = PlayedGame(200, 13);
  std::map<Guid, std::pair<Guid, Guid>> refs;  // character -> (friend, target)
  a->scene.ForEachActor([&](Actor& x) {
    if (auto* c = dynamic_cast<Character*>(&x)) {
      refs[c->id] = {c->friend_character ? c->friend_character->id : Guid(),
                     c->target ? c->target->id : Guid()};
    }
  });
  int set = 0;
  for (const auto& [id, r] : refs) set += !r.first.is_none() + !r.second.is_none();
  ASSERT_GE(set, 10);
  ASSERT_OK(SaveNow(*a, "ref"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK(LoadNow(*b, "ref"));
  for (const auto& [id, r] : refs) {
    auto* c = b->scene.FindActorAs<Character>(id);
    if (c == nullptr) continue;  // a Cellar character: not loaded
    EXPECT_EQ(c->friend_character ? c->friend_character->id : Guid(), r.first) << id.ToString();
    EXPECT_EQ(c->target ? c->target->id : Guid(), r.second) << id.ToString();
    if (c->friend_character) {
      EXPECT_EQ(b->scene.FindActor(r.first), c->friend_character);
    }
  }
}

// A chunk that is not copied locates its references on the game thread, as its records are
// captured there; the copied chunks' references are located when their records are written. Both
// resolve the same way, within a chunk and across chunks.
TEST_F(SaveLoadTest, ReferencesFromAChunkNotCopiedAndFromCopiedChunksResolve) {
  auto a = PlayedGame(200, 13);
  std::vector<Character*> characters;
  a->scene.ForEachActor([&](Actor& x) {
    if (auto* c = dynamic_cast<Character*>(&x); c != nullptr && c->level == Name("Persistent")) {
      characters.push_back(c);
    }
  });
  ASSERT_GE(characters.size(), 2u);
  Lookout lookout;
  lookout.watched = characters[1];
  lookout.pawn = a->scene.players().front().pawn;
  ASSERT_NE(lookout.pawn, nullptr);
  ASSERT_OK(
      a->saves.world().Register(Name("lookout"), {registry_->FindClass<Lookout>(), &lookout}));
  characters[0]->target = characters[1];
  const Guid watched = characters[1]->id;
  const Guid first = characters[0]->id;
  ASSERT_OK(SaveNow(*a, "watch"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  Lookout loaded;
  ASSERT_OK(b->saves.world().Register(Name("lookout"), {registry_->FindClass<Lookout>(), &loaded}));
  ASSERT_OK(LoadNow(*b, "watch"));
  ASSERT_NE(loaded.watched, nullptr);
  EXPECT_EQ(loaded.watched, b->scene.FindActor(watched));
  EXPECT_EQ(loaded.pawn, b->scene.players().front().pawn);
  auto* c = b->scene.FindActorAs<Character>(first);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->target, loaded.watched);
}

// A load's second pass shared with another thread (World::SetApplyHelper) sets what the game
// thread alone sets and reports the same, message for message. What needs the game's code (a
// setter, an OnLoaded hook, an object that owns) and references the tables made before the
// hand-off do not resolve (an actor no record of the save took) are set on the game thread, in
// record order. Loaded three ways: on the game thread alone; with a helper that takes every block
// (its post runs the task to its end on a thread of its own before returning); and with the
// save system's workers, where either thread may take any block.
TEST_F(SaveLoadTest, ASecondPassSharedWithAWorkerSetsAndReportsWhatTheGameThreadAloneDoes) {
  constexpr const char* kForgeMap = "maps/forge.json";
  const ForgeIds ids;
  const Guid forge_id = ids.forge, kennel_id = ids.kennel, vault_id = ids.vault;
  const Guid statue_id = ids.statue;
  const std::string map = ForgeMap();
  // Where the game loads, the statue is a crate: its record is not applied (ClassMismatch), so
  // the kennel's reference to it finds the crate through the host.
  const std::string loading_map = Replace(map, "\"Statue\"", "\"Crate\"");
  auto a = NewGame();
  a->scene.AddMap(kForgeMap, map);
  ASSERT_OK(a->scene.Start(kForgeMap));
  ASSERT_OK(PlaySample(a->scene, 60, 3));
  a->scene.FindActorAs<Forge>(forge_id)->heat = 7;
  auto* kennel = a->scene.FindActorAs<Kennel>(kennel_id);
  kennel->log = a->scene.GetSubsystem<QuestLog>();
  kennel->neighbour = a->scene.FindActor(forge_id);
  kennel->pet = a->scene.FindActor(statue_id);
  a->scene.FindActorAs<Vault>(vault_id)->coins.push_back(std::make_unique<Coin>());
  a->scene.FindActorAs<Vault>(vault_id)->coins.back()->value = 9;
  ASSERT_OK(SaveNow(*a, "beside"));

  const std::thread::id game_thread = std::this_thread::get_id();
  std::vector<std::thread::id> heat_threads;
  g_forge_heat = [&](Actor&) { heat_threads.push_back(std::this_thread::get_id()); };
  struct Loaded {
    LoadOutcome outcome;
    std::vector<world::WorldChunk> world;
  };
  auto load = [&](std::optional<SideTask::Post> helper, std::size_t at_least = 1) -> Loaded {
    auto b = NewGame();
    b->scene.AddMap(kForgeMap, loading_map);
    EXPECT_OK(b->scene.Start(kForgeMap));
    if (helper) b->saves.world().SetApplyHelper(*helper, at_least);
    if (!helper) b->saves.world().SetApplyHelper({});
    Result<LoadOutcome> out = LoadNow(*b, "beside");
    EXPECT_OK(out.status());
    Loaded got;
    if (out.ok()) got.outcome = *out;
    auto* loaded = b->scene.FindActorAs<Kennel>(kennel_id);
    EXPECT_NE(loaded, nullptr);
    if (loaded != nullptr) {
      EXPECT_EQ(loaded->pet, b->scene.FindActor(statue_id));
      EXPECT_EQ(loaded->neighbour, b->scene.FindActor(forge_id));
      EXPECT_EQ(loaded->log, b->scene.GetSubsystem<QuestLog>());
    }
    EXPECT_EQ(b->scene.FindActorAs<Forge>(forge_id)->heat, 7);
    Result<std::vector<world::WorldChunk>> world = Capture(*b);
    EXPECT_OK(world.status());
    if (world.ok()) got.world = std::move(*world);
    return got;
  };
  const Loaded alone = load(std::nullopt);
  EXPECT_THAT(heat_threads, ElementsAre(game_thread));
  EXPECT_GE(alone.outcome.report.applied, 300u);
  EXPECT_EQ(alone.outcome.report.class_mismatches, 1u);

  heat_threads.clear();
  int posts = 0;
  const Loaded helped = load([&](std::function<void()> task) {
    ++posts;
    std::thread(std::move(task)).join();
  });
  // One post that wakes the helper's thread as the apply starts, one for the tables the passes
  // read (made beside the spawns: the scene left the actors the save holds destroyed out of the
  // map, so there is no removal), one for the second pass.
  EXPECT_EQ(posts, 3);
  EXPECT_THAT(heat_threads, ElementsAre(game_thread));
  EXPECT_SAME_WORLD(alone.world, helped.world);
  EXPECT_EQ(helped.outcome.report.applied, alone.outcome.report.applied);
  EXPECT_EQ(helped.outcome.report.messages, alone.outcome.report.messages);
  EXPECT_EQ(helped.outcome.report.messages_dropped, alone.outcome.report.messages_dropped);

  // An apply of fewer records than the helper is set for neither shares nor wakes it.
  posts = 0;
  const Loaded small = load(
      [&](std::function<void()> task) {
        ++posts;
        std::thread(std::move(task)).join();
      },
      alone.outcome.report.applied + 1000);
  EXPECT_EQ(posts, 0);
  EXPECT_SAME_WORLD(alone.world, small.world);

  heat_threads.clear();
  const Loaded pooled =
      load([this](std::function<void()> task) { workers_.Post(std::move(task)); });
  EXPECT_THAT(heat_threads, ElementsAre(game_thread));
  EXPECT_SAME_WORLD(alone.world, pooled.world);
  EXPECT_EQ(pooled.outcome.report.applied, alone.outcome.report.applied);
  EXPECT_EQ(pooled.outcome.report.messages, alone.outcome.report.messages);
  EXPECT_EQ(pooled.outcome.report.messages_dropped, alone.outcome.report.messages_dropped);
  g_forge_heat = nullptr;
}

// The game's code that the host's removal of actors runs (a placed forge the save holds destroyed
// ends play, in a load that keeps the map) runs while the helper makes the tables the shared
// second pass reads. Here that code also takes the world's helper away and registers an object:
// the load, which decided to share its pass before the removal, shares it with the helper it
// took all the same, and sets and reports what the game thread alone does. The helper's tasks
// run on threads of their own, beside the game thread.
TEST_F(SaveLoadTest, TheRemovalsGameCodeRunsBesideTheTablesOfASharedSecondPass) {
  constexpr const char* kForgeMap = "maps/forge.json";
  const ForgeIds ids;
  const Guid forge_id = ids.forge, kennel_id = ids.kennel, statue_id = ids.statue;
  const std::string map = ForgeMap();
  auto a = NewGame();
  a->scene.AddMap(kForgeMap, map);
  ASSERT_OK(a->scene.Start(kForgeMap));
  ASSERT_OK(PlaySample(a->scene, 60, 3));
  auto* kennel = a->scene.FindActorAs<Kennel>(kennel_id);
  ASSERT_NE(kennel, nullptr);
  kennel->pet = a->scene.FindActor(statue_id);
  kennel->log = a->scene.GetSubsystem<QuestLog>();
  a->scene.DestroyActor(forge_id);
  ASSERT_OK(SaveNow(*a, "ended"));

  struct Loaded {
    LoadOutcome outcome;
    std::vector<world::WorldChunk> world;
    int ended = 0;
    int posts = 0;
  };
  auto load = [&](bool helped) -> Loaded {
    Loaded got;
    auto b = NewGame();
    b->scene.AddMap(kForgeMap, map);
    EXPECT_OK(b->scene.Start(kForgeMap));
    std::vector<std::thread> threads;
    if (helped) {
      b->saves.world().SetApplyHelper(
          [&](std::function<void()> task) {
            ++got.posts;
            threads.emplace_back(std::move(task));
          },
          1);
    } else {
      b->saves.world().SetApplyHelper({});
    }
    Lookout lookout;
    g_forge_ended = [&](Actor&) {
      ++got.ended;
      b->saves.world().SetApplyHelper({});
      EXPECT_OK(b->saves.world().Register(Name("lookout"),
                                          {registry_->FindClass<Lookout>(), &lookout}));
    };
    Result<LoadOutcome> out = LoadNow(*b, "ended", MapChoice::kKeepCurrentMap);
    g_forge_ended = nullptr;
    for (std::thread& t : threads) t.join();
    EXPECT_OK(out.status());
    if (out.ok()) got.outcome = *out;
    EXPECT_EQ(b->scene.FindActor(forge_id), nullptr);
    auto* loaded = b->scene.FindActorAs<Kennel>(kennel_id);
    EXPECT_NE(loaded, nullptr);
    if (loaded != nullptr) {
      EXPECT_EQ(loaded->pet, b->scene.FindActor(statue_id));
      EXPECT_EQ(loaded->log, b->scene.GetSubsystem<QuestLog>());
    }
    Result<std::vector<world::WorldChunk>> world = Capture(*b);
    EXPECT_OK(world.status());
    if (world.ok()) got.world = std::move(*world);
    return got;
  };
  const Loaded alone = load(false);
  EXPECT_EQ(alone.ended, 1);
  EXPECT_GE(alone.outcome.report.applied, 300u);
  EXPECT_GE(alone.outcome.report.removed, 1u);
  const Loaded helped = load(true);
  EXPECT_EQ(helped.ended, 1);
  // One task woke the helper's thread as the apply started, one made the tables beside the
  // removal, one shared the second pass, though the world had no helper by then.
  EXPECT_EQ(helped.posts, 3);
  EXPECT_SAME_WORLD(alone.world, helped.world);
  EXPECT_EQ(helped.outcome.report.applied, alone.outcome.report.applied);
  EXPECT_EQ(helped.outcome.report.removed, alone.outcome.report.removed);
  EXPECT_EQ(helped.outcome.report.messages, alone.outcome.report.messages);
}

// A scene that answers one ID with another's actor (a host mapping two IDs to one object).
class AliasingScene : public Scene {
 public:
  using Scene::Scene;
  void FindActors(
      std::span<const Guid> ids,
      const std::function<void(std::size_t k, const world::ActorView* view)>& found) override {
    std::vector<Guid> asked(ids.begin(), ids.end());
    for (Guid& id : asked) {
      if (id == from) id = to;
    }
    Scene::FindActors(asked, found);
  }
  Guid from, to;
};

// The game at a later version: Statue saves "Shine", no longer "Polish".
std::unique_ptr<reflect::TypeRegistry> MakeShineRegistry() {
  auto r = std::make_unique<reflect::TypeRegistry>();
  RegisterSceneTypes(*r);
  RegisterSampleGame(*r);
  RegisterKennel(*r);
  r->Class<Statue>("Statue").Base<Actor>().Field("Shine", &Statue::polish, reflect::kSaveGame);
  if (!r->Finish().ok()) return nullptr;
  return r;
}

// The second pass shared with another thread keeps the one-thread report where it is hardest:
// more messages than a report keeps, from records set beside (a field no longer saved, on each of
// 1,100 statues) and from a record left to the game thread (a reference the host cannot find,
// which comes first); and a host answering two IDs with one object, whose two records must apply
// in record order although only the first needs the game thread.
TEST_F(SaveLoadTest, ASecondPassSharedWithAWorkerKeepsRecordOrderWithManyMessagesAndAnObjectTwice) {
  constexpr const char* kStatuesMap = "maps/statues.json";
  auto id = [](std::uint32_t n) { return Guid(0x5a, n); };
  const Guid first_kennel = id(1), second_kennel = id(2), gone = id(3);
  auto actor = [](std::string_view cls, Guid guid) {
    return "{\"class\": \"" + std::string(cls) + "\", \"id\": \"" + guid.ToString() + "\"},";
  };
  std::string actors = actor("Kennel", first_kennel) + actor("Kennel", second_kennel);
  std::string kept_actors = actors;
  actors += actor("Statue", gone);
  for (std::uint32_t n = 0; n < 1100; ++n) {
    actors += actor("Statue", id(100 + n));
    kept_actors += actor("Statue", id(100 + n));
  }
  std::string map = sample_map_;
  std::string loading_map = sample_map_;  // without the statue `gone`
  map.insert(map.find('[', map.find("\"actors\"")) + 1, actors);
  loading_map.insert(loading_map.find('[', loading_map.find("\"actors\"")) + 1, kept_actors);

  auto a = NewGame();
  a->scene.AddMap(kStatuesMap, map);
  ASSERT_OK(a->scene.Start(kStatuesMap));
  auto* first = a->scene.FindActorAs<Kennel>(first_kennel);
  auto* second = a->scene.FindActorAs<Kennel>(second_kennel);
  first->pet = a->scene.FindActor(gone);  // not found where the game loads: left
  first->neighbour = a->scene.FindActor(id(100));
  second->pet = a->scene.FindActor(id(101));
  ASSERT_OK(SaveNow(*a, "statues"));

  const std::unique_ptr<reflect::TypeRegistry> later = MakeShineRegistry();
  ASSERT_NE(later, nullptr);
  struct Loaded {
    LoadOutcome outcome;
    const Actor* pet = nullptr;
    const Actor* neighbour = nullptr;
    const Actor* expected_pet = nullptr;
  };
  auto load = [&](std::optional<SideTask::Post> helper) -> Loaded {
    AliasingScene scene(*later);
    scene.AddMap(kStatuesMap, loading_map);
    scene.from = second_kennel;  // both kennels' records go to the first kennel
    scene.to = first_kennel;
    store::Store store(backend_, workers_, mailbox_);
    game::SaveSystem saves(store, scene, *later, mailbox_, workers_);
    EXPECT_OK(scene.Start(kStatuesMap));
    saves.world().SetApplyHelper(helper ? *helper : SideTask::Post(), 1);
    Result<LoadOutcome> out = LoadNow(saves, "statues");
    EXPECT_OK(out.status());
    Loaded got;
    if (out.ok()) got.outcome = *out;
    auto* kennel = scene.FindActorAs<Kennel>(first_kennel);
    EXPECT_NE(kennel, nullptr);
    if (kennel != nullptr) {
      got.pet = kennel->pet;
      got.neighbour = kennel->neighbour;
    }
    got.expected_pet = scene.FindActor(id(101));
    return got;
  };
  const Loaded alone = load(std::nullopt);
  // The second kennel's record, the later one, wins: its pet, and no neighbour.
  EXPECT_EQ(alone.pet, alone.expected_pet);
  EXPECT_EQ(alone.neighbour, nullptr);
  EXPECT_EQ(alone.outcome.report.messages.size(), 1000u);  // record::Applier::kMaxMessages
  EXPECT_GT(alone.outcome.report.messages_dropped, 0u);
  // The find's message of the statue not there, then the second pass's: the first kennel's
  // reference, left to the game thread, before the statues' fields, set beside.
  const std::vector<std::string>& said = alone.outcome.report.messages;
  ASSERT_GE(said.size(), 3u);
  EXPECT_THAT(said[0], HasSubstr("is not there"));
  EXPECT_THAT(said[1], HasSubstr("was not found"));
  EXPECT_THAT(said[2], HasSubstr("Polish"));
  EXPECT_THAT(said.back(), HasSubstr("Polish"));

  const Loaded helped =
      load([](std::function<void()> task) { std::thread(std::move(task)).join(); });
  EXPECT_EQ(helped.pet, helped.expected_pet);
  EXPECT_EQ(helped.neighbour, nullptr);
  EXPECT_EQ(helped.outcome.report.applied, alone.outcome.report.applied);
  EXPECT_EQ(helped.outcome.report.messages, alone.outcome.report.messages);
  EXPECT_EQ(helped.outcome.report.messages_dropped, alone.outcome.report.messages_dropped);

  const Loaded pooled =
      load([this](std::function<void()> task) { workers_.Post(std::move(task)); });
  EXPECT_EQ(pooled.pet, pooled.expected_pet);
  EXPECT_EQ(pooled.neighbour, nullptr);
  EXPECT_EQ(pooled.outcome.report.applied, alone.outcome.report.applied);
  EXPECT_EQ(pooled.outcome.report.messages, alone.outcome.report.messages);
  EXPECT_EQ(pooled.outcome.report.messages_dropped, alone.outcome.report.messages_dropped);
}

// --- 3. Records of absent objects are kept and written back ------------------------------------

// ACTR is permanent (sections.h): every optional field at once, byte for byte as documented
// (u64 and f64 little-endian, a GUID as its high then its low u64), and back.
TEST(ActorSectionTest, EveryFieldIsWrittenInTheDocumentedForm) {
  world::ActorSection a;
  a.spawned = true;
  a.level = "Cellar";
  a.transform.translation = {1.5, -2.0, 3.25};
  a.transform.rotation = {0.5, 0.5, 0.5, 0.5};
  a.transform.scale = {2.0, 3.0, 4.0};
  a.owner = Guid(0x0102030405060708ull, 0x1112131415161718ull);
  a.attach_parent = Guid(0x2122232425262728ull, 0x3132333435363738ull);
  a.attach_socket = "hand_r";
  Bytes want;
  auto u64 = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) want.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  auto f64 = [&](double d) { u64(std::bit_cast<std::uint64_t>(d)); };
  auto text = [&](std::string_view t) {
    want.push_back(static_cast<std::uint8_t>(t.size()));  // a one-byte varint here
    want.insert(want.end(), t.begin(), t.end());
  };
  want.push_back(1 | 4 | 8 | 16 | 32 | 64);
  text("Cellar");
  for (double d : {1.5, -2.0, 3.25, 0.5, 0.5, 0.5, 0.5, 2.0, 3.0, 4.0}) f64(d);
  u64(0x0102030405060708ull);
  u64(0x1112131415161718ull);
  u64(0x2122232425262728ull);
  u64(0x3132333435363738ull);
  text("hand_r");
  EXPECT_EQ(world::EncodeActor(a), want);
  ByteSink appended;
  appended.U8(0xAA);
  world::AppendActor(a, &appended);
  const Bytes appended_bytes = appended.ToBytes();
  EXPECT_EQ(Bytes(appended_bytes.begin() + 1, appended_bytes.end()), want);
  ASSERT_OK_AND_ASSIGN(const world::ActorSection back, world::DecodeActor(want));
  EXPECT_EQ(back, a);
  // Read in place, the texts view the bytes.
  world::ActorSection view;
  ASSERT_OK(world::ReadActor(want, &view));
  EXPECT_TRUE(view.spawned && !view.destroyed);
  EXPECT_EQ(view.level, "Cellar");
  EXPECT_EQ(view.transform, a.transform);
  EXPECT_EQ(view.owner, a.owner);
  EXPECT_EQ(view.attach_parent, a.attach_parent);
  EXPECT_EQ(view.attach_socket, "hand_r");
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(view.level.data()), want.data() + 2);

  // No optional field: the flags and the translation alone (a view read before forgets them).
  world::ActorSection plain;
  plain.destroyed = true;
  want.clear();
  want.push_back(2);
  for (int i = 0; i < 3; ++i) f64(0.0);
  EXPECT_EQ(world::EncodeActor(plain), want);
  ASSERT_OK(world::ReadActor(want, &view));
  EXPECT_TRUE(!view.spawned && view.destroyed);
  EXPECT_TRUE(view.level.empty() && view.attach_socket.empty());
  EXPECT_EQ(view.transform, plain.transform);
  EXPECT_TRUE(view.owner.is_none() && view.attach_parent.is_none());
  // A flag no version defines.
  want[0] = 0x80;
  EXPECT_THAT(world::ReadActor(want, &view), StatusIs(StatusCode::kDamaged));
  EXPECT_THAT(world::DecodeActor(want), StatusIs(StatusCode::kDamaged));
}

// ACTR has one form: anything else is Damaged, each way it can differ.
TEST(ActorSectionTest, EveryOtherFormIsRefused) {
  Bytes bytes;
  auto u64 = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  auto f64 = [&](double d) { u64(std::bit_cast<std::uint64_t>(d)); };
  auto text = [&](std::string_view t) {
    bytes.push_back(static_cast<std::uint8_t>(t.size()));
    bytes.insert(bytes.end(), t.begin(), t.end());
  };
  auto translation = [&] {
    for (int i = 0; i < 3; ++i) f64(1.0);
  };
  struct Case {
    const char* what;
    std::function<void()> write;
  };
  const Case cases[] = {
      {"empty", [] {}},
      {"a flag no version defines", [&] { bytes.push_back(128), translation(); }},
      {"an empty level", [&] { bytes.push_back(64), text(""), translation(); }},
      {"a level not UTF-8", [&] { bytes.push_back(64), text("\xff"), translation(); }},
      {"a level with NUL",
       [&] { bytes.push_back(64), text(std::string_view("a\0b", 3)), translation(); }},
      {"a translation cut short", [&] { bytes.push_back(0), f64(1.0), f64(1.0); }},
      {"the identity rotation",
       [&] { bytes.push_back(16), translation(), f64(0), f64(0), f64(-0.0), f64(1); }},
      {"the identity scale", [&] { bytes.push_back(32), translation(), f64(1), f64(1), f64(1); }},
      {"no owner", [&] { bytes.push_back(4), translation(), u64(0), u64(0); }},
      {"no parent", [&] { bytes.push_back(8), translation(), u64(0), u64(0), text("s"); }},
      {"a socket cut short", [&] { bytes.push_back(8), translation(), u64(1), u64(2); }},
      {"a byte after", [&] { bytes.push_back(0), translation(), bytes.push_back(0); }},
      {"a level over 1,024 bytes",
       [&] {
         bytes.push_back(64);
         bytes.push_back(0x81), bytes.push_back(0x08);  // 1,025 as a varint
         bytes.insert(bytes.end(), 1025, 'a');
         translation();
       }},
      {"a socket not UTF-8",
       [&] { bytes.push_back(8), translation(), u64(1), u64(2), text("\xc3"); }},
      {"a socket with NUL",
       [&] { bytes.push_back(8), translation(), u64(1), u64(2), text(std::string_view("\0", 1)); }},
      {"a rotation cut short", [&] { bytes.push_back(16), translation(), f64(0.5), f64(0.5); }},
      {"a scale cut short", [&] { bytes.push_back(32), translation(), f64(2); }},
      {"an owner cut short", [&] { bytes.push_back(4), translation(), u64(1); }},
      {"a parent cut short", [&] { bytes.push_back(8), translation(), u64(1); }},
  };
  for (const Case& c : cases) {
    bytes.clear();
    c.write();
    world::ActorSection a;
    EXPECT_THAT(world::ReadActor(bytes, &a), StatusIs(StatusCode::kDamaged)) << c.what;
    world::ReadCheckedActor(bytes, &a);  // not what it is for, but it stays within the bytes
  }
  // Each of those fixed is read.
  bytes.clear();
  bytes.push_back(4 | 8 | 16 | 32 | 64);
  text("Cellar");
  translation();
  for (double d : {0.0, 0.0, 0.0, -1.0, 1.0, 1.0, 2.0}) f64(d);
  u64(1), u64(2), u64(3), u64(4), text("s");
  world::ActorSection a;
  ASSERT_OK(world::ReadActor(bytes, &a));
  EXPECT_EQ(a.transform.rotation.w, -1.0);
  EXPECT_EQ(a.transform.scale.z, 2.0);
  EXPECT_EQ(a.owner, Guid(1, 2));
  EXPECT_EQ(a.attach_parent, Guid(3, 4));
  EXPECT_EQ(a.attach_socket, "s");

  // COMP: the actor's ID and a name of 1 to 1,024 bytes of UTF-8 without NUL, and nothing after.
  auto comp = [&](std::string_view name, bool byte_after) {
    bytes.clear();
    u64(1), u64(2), text(name);
    if (byte_after) bytes.push_back(0);
    return bytes;
  };
  world::ComponentSection c;
  const Bytes light = comp("Light", false);  // the name read views these bytes
  ASSERT_OK(world::ReadComponent(light, &c));
  EXPECT_EQ(c.name, "Light");
  for (const Bytes& bad : {comp("", false), comp("\xff", false),
                           comp(std::string_view("a\0", 2), false), comp("Light", true),
                           Bytes{1, 2, 3}}) {
    EXPECT_THAT(world::ReadComponent(bad, &c), StatusIs(StatusCode::kDamaged));
    for (std::size_t n = 0; n <= bad.size(); ++n) {
      const Bytes prefix(bad.begin(), bad.begin() + static_cast<std::ptrdiff_t>(n));
      world::ReadCheckedComponent(prefix, &c);  // stays within the bytes
    }
  }
}

// A load reads again, without checking them again, the ACTR and COMP sections its check passed:
// what it reads is what the checking read gives, for every optional field present or not.
TEST(ActorSectionTest, CheckedSectionsReadAgainGiveWhatTheCheckRead) {
  for (int mask = 0; mask < 64; ++mask) {
    world::ActorSection a;
    a.spawned = mask & 1;
    a.destroyed = mask & 2;
    if (mask & 4) a.owner = Guid(7, 8);
    if (mask & 8) {
      a.attach_parent = Guid(9, 10);
      a.attach_socket = (mask & 2) ? "" : "hand_r";
    }
    if (mask & 16) a.transform.rotation = {0.5, 0.5, 0.5, 0.5};
    if (mask & 32) a.transform.scale = {2.0, 3.0, 4.0};
    a.level = (mask & 5) == 5 ? "Cellar" : "";
    a.transform.translation = {mask * 1.0, -2.0, 3.25};
    const Bytes bytes = world::EncodeActor(a);
    world::ActorSection checked, again;
    ASSERT_OK(world::ReadActor(bytes, &checked)) << mask;
    world::ReadCheckedActor(bytes, &again);
    EXPECT_EQ(again, checked) << mask;
    EXPECT_EQ(again, a) << mask;
    // Bytes it is not meant for are not read past their end (the sanitizers' build checks).
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const Bytes prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      world::ReadCheckedActor(prefix, &again);
    }
  }
  const world::ComponentSection comp{Guid(3, 4), "Light"};
  const Bytes bytes = world::EncodeComponent(comp);
  world::ComponentSection checked, again;
  ASSERT_OK(world::ReadComponent(bytes, &checked));
  world::ReadCheckedComponent(bytes, &again);
  EXPECT_EQ(again.actor, checked.actor);
  EXPECT_EQ(again.name, "Light");
  EXPECT_EQ(again.name.data(), checked.name.data());
}

// The rotation and scale are left out exactly when each of their numbers compares equal (==) to
// the identity's: -0 counts as 0; a NaN, the smallest denormal or the next double after 1 do not.
TEST(ActorSectionTest, RotationAndScaleAreLeftOutExactlyWhenEqualToTheIdentity) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double after_one = std::nextafter(1.0, 2.0);
  struct Case {
    reflect::Quatd rotation;
    reflect::Vector3d scale;
    bool rotated;
    bool scaled;
  };
  const Case cases[] = {
      {{0, 0, 0, 1}, {1, 1, 1}, false, false},
      {{-0.0, 0.0, -0.0, 1}, {1, 1, 1}, false, false},
      {{0, 0, 0, -1}, {1, 1, 1}, true, false},
      {{nan, 0, 0, 1}, {1, 1, 1}, true, false},
      {{0, 0, tiny, 1}, {1, 1, 1}, true, false},
      {{0, 0, 0, after_one}, {1, 1, 1}, true, false},
      {{0, 0, 0, 1}, {1, 1, after_one}, false, true},
      {{0, 0, 0, 1}, {-1, 1, 1}, false, true},
      {{0, 0, 0, 1}, {1, nan, 1}, false, true},
      {{0, 0, 0, 1}, {1, 1, -0.0}, false, true},
  };
  for (const Case& c : cases) {
    world::ActorSection a;
    a.transform.rotation = c.rotation;
    a.transform.scale = c.scale;
    const Bytes bytes = world::EncodeActor(a);
    ASSERT_FALSE(bytes.empty());
    EXPECT_EQ((bytes[0] & 16) != 0, c.rotated) << c.rotation.x << " " << c.rotation.w;
    EXPECT_EQ((bytes[0] & 32) != 0, c.scaled) << c.scale.x << " " << c.scale.z;
    EXPECT_EQ(bytes.size(), 1 + 8 * (3 + (c.rotated ? 4 : 0) + (c.scaled ? 3 : 0)));
  }
}

TEST_F(SaveLoadTest, ACapturedWorldIsDetachedOnceAndMadeOnceOnAnyThread) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  // A save held, so Make keeps records from it (the Cellar's crate, not loaded).
  ASSERT_OK(SaveNow(*a, "k"));
  std::unique_ptr<world::WorldCapture> expected = a->saves.world().BeginCapture();
  ASSERT_OK(expected->Run());
  ASSERT_OK_AND_ASSIGN(const std::vector<world::WorldChunk> want, expected->Finish());
  expected->Forget();

  std::unique_ptr<world::WorldCapture> cap = a->saves.world().BeginCapture();
  ASSERT_GT(cap->total(), 0u);
  EXPECT_THAT(cap->Detach(), StatusIs(StatusCode::kInvalidInput)) << "subjects left";
  ASSERT_OK(cap->Run());
  ASSERT_OK_AND_ASSIGN(world::CapturedWorld captured, cap->Detach());
  EXPECT_THAT(cap->Detach(), StatusIs(StatusCode::kInvalidInput)) << "detached twice";
  EXPECT_THAT(cap->Finish(), StatusIs(StatusCode::kInvalidInput)) << "finished once detached";
  // The game goes on meanwhile: the chunks are the capture's.
  a->scene.FindActorAs<Character>(G(kHeroId))->health = 1;
  Result<std::vector<world::WorldChunk>> made = Status(CancelledError("not made"));
  std::thread([&] { made = captured.Make(); }).join();
  ASSERT_OK(made.status());
  EXPECT_THAT(captured.Make(), StatusIs(StatusCode::kInvalidInput)) << "made twice";
  ASSERT_EQ(made->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*made)[i].id, want[i].id);
    EXPECT_EQ((*made)[i].key, want[i].key);
    EXPECT_EQ((*made)[i].payload, want[i].payload) << "chunk " << i;
  }
  cap->Forget();
}

// A save system destroyed while its save's chunks wait for a worker: they are never made (making
// them reads the registry, which need only outlive the system), nothing is written, and no
// callback reaches the system that went.
TEST_F(SaveLoadTest, ASaveSystemDestroyedBeforeItsChunksAreMadeWritesNothing) {
  Scene scene(*registry_);
  store::Store store(backend_, workers_, mailbox_);
  auto saves = std::make_unique<game::SaveSystem>(store, scene, *registry_, mailbox_, workers_);
  scene.AddMap(kSmallMap, SmallMap());
  ASSERT_OK(scene.Start(kSmallMap));
  // Both workers are held until well after the system is destroyed.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  for (int i = 0; i < 2; ++i) workers_.Post([released] { released.wait(); });
  bool called = false;
  saves->Save("gone", {}, [&](Result<SaveOutcome>) { called = true; });
  std::thread releaser([&release] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    release.set_value();
  });
  saves.reset();  // waits for the workers (the system's own rule), which then make nothing
  releaser.join();
  ASSERT_OK(store.FlushFor(std::chrono::seconds(20)));
  EXPECT_FALSE(called);
  std::optional<Status> loaded;
  store.Load("gone", [&](Result<store::LoadResult> r) { loaded = r.status(); });
  ASSERT_OK(store.FlushFor(std::chrono::seconds(20)));
  ASSERT_TRUE(loaded.has_value());
  EXPECT_THAT(*loaded, StatusIs(StatusCode::kNotFound));
}

// The chunks are made on a worker after Save returned: what the game does meanwhile (values, a
// placed actor destroyed, a level removed and remembered) must not reach the file.
TEST_F(SaveLoadTest, ASaveMadeOnAWorkerWritesTheWorldAsItWasWhenAsked) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK(a->scene.AddLevel(Name("Cellar")));
  ASSERT_OK(SaveNow(*a, "s"));  // a held save, so the maker keeps records from it
  a->scene.FindActorAs<Crate>(G(kCellarCrateId))->hits = 5;
  ASSERT_OK_AND_ASSIGN(const std::vector<world::WorldChunk> want, Capture(*a));

  // Every worker held, so the save's maker waits until the game has moved on.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  for (std::size_t i = 0; i < workers_.thread_count(); ++i) {
    workers_.Post([released] { released.wait(); });
  }
  std::optional<Result<SaveOutcome>> got;
  a->saves.Save("s", {.title = "test"}, [&](Result<SaveOutcome> r) { got.emplace(std::move(r)); });
  a->scene.FindActorAs<Character>(G(kHeroId))->health = 1;
  a->scene.DestroyActor(G(kDoorId));
  ASSERT_OK(a->scene.RemoveLevel(Name("Cellar")));
  release.set_value();
  ASSERT_OK(a->saves.Flush(Deadline()));
  ASSERT_TRUE(got.has_value());
  ASSERT_OK(got->status());

  std::optional<Result<store::LoadResult>> read;
  a->store.Load("s", [&](Result<store::LoadResult> r) { read.emplace(std::move(r)); });
  ASSERT_OK(a->store.Flush(Deadline()));
  ASSERT_TRUE(read.has_value());
  ASSERT_OK(*read);
  const std::vector<format::Chunk>& chunks = (*read)->file.chunks;
  ASSERT_EQ(chunks.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(chunks[i].id().view(), std::string_view(want[i].id.data(), 4));
    EXPECT_EQ(chunks[i].key(), want[i].key);
    EXPECT_EQ(chunks[i].data(), want[i].payload) << "chunk " << i;
  }
}

// A host whose FindActors breaks its contract (here: answers in reverse order) does not make a
// load read past its records: answers out of order are ignored, the actors not answered in order
// are taken as not there (their records kept), and the report says so.
TEST_F(SaveLoadTest, AHostAnsweringFindActorsOutOfOrderCostsOnlyThoseActors) {
  class ReversedScene : public Scene {
   public:
    using Scene::Scene;
    void FindActors(std::span<const Guid> ids,
                    const std::function<void(std::size_t, const world::ActorView*)>& found)
        override {
      for (std::size_t k = ids.size(); k-- > 0;) {
        world::ActorView view;
        found(k, FindActor(ids[k], &view) ? &view : nullptr);
      }
      found(ids.size(), nullptr);  // and one past the end
    }
  };
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  a->scene.FindActorAs<Character>(G(kHeroId))->health = 12;
  ASSERT_OK(SaveNow(*a, "r"));

  ReversedScene scene(*registry_);
  store::Store store(backend_, workers_, mailbox_);
  game::SaveSystem saves(store, scene, *registry_, mailbox_, workers_);
  scene.AddMap(kSmallMap, SmallMap());
  ASSERT_OK(scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(saves, "r", MapChoice::kKeepCurrentMap));
  EXPECT_THAT(Lines(out.report.messages), HasSubstr("FindActors answered 1 of"));
  EXPECT_GE(out.report.kept, 1u);
}

// The same for BeginSpawns: answers out of order or past the end are ignored, and the actors not
// answered for in order are taken as not spawned (their records kept; those the host made all
// the same destroyed again); each one answered in order is set. Hosts that answer in reverse,
// answer in order and then again, and never answer.
TEST_F(SaveLoadTest, AHostAnsweringBeginSpawnsOutOfOrderCostsOnlyThoseActors) {
  enum class Answers { kReversed, kTwice, kNone };
  class OddScene : public Scene {
   public:
    OddScene(const reflect::TypeRegistry& registry, Answers answers)
        : Scene(registry), answers_(answers) {}
    void BeginSpawns(
        std::span<const world::SpawnRequest> requests,
        const std::function<void(std::size_t, const Result<world::ActorView>&)>& spawned)
        override {
      const std::size_t n = requests.size();
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t k = answers_ == Answers::kReversed ? n - 1 - j : j;
        const world::SpawnRequest& r = requests[k];
        Result<world::ActorView> view = BeginSpawn(r.level, *r.cls, r.id, r.transform);
        if (answers_ != Answers::kNone) spawned(k, view);
      }
      if (answers_ == Answers::kNone) return;
      spawned(n, InvalidInputError("one past the end"));
      if (answers_ == Answers::kTwice) {
        world::ActorView view;
        ASSERT_TRUE(FindActor(requests[0].id, &view));
        spawned(0, view);
      }
    }

   private:
    Answers answers_;
  };
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  std::vector<Guid> ids;
  for (std::int32_t value : {1, 2, 3}) {
    ASSERT_OK_AND_ASSIGN(Pickup * p, a->scene.SpawnActor<Pickup>());
    p->value = value;
    ids.push_back(p->id);
  }
  ASSERT_OK(SaveNow(*a, "r"));

  struct Want {
    Answers answers;
    std::string message;
    std::size_t spawned;
  };
  for (const Want& want :
       {Want{Answers::kReversed, "answered 1 of 3 spawns in the order asked (3 answers out", 1},
        Want{Answers::kTwice, "answered 3 of 3 spawns in the order asked (2 answers out", 3},
        Want{Answers::kNone, "answered 0 of 3 spawns in the order asked (0 answers out", 0}}) {
    SCOPED_TRACE(want.message);
    OddScene scene(*registry_, want.answers);
    store::Store store(backend_, workers_, mailbox_);
    game::SaveSystem saves(store, scene, *registry_, mailbox_, workers_);
    scene.AddMap(kSmallMap, SmallMap());
    ASSERT_OK(scene.Start(kSmallMap));
    ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(saves, "r", MapChoice::kKeepCurrentMap));
    EXPECT_THAT(Lines(out.report.messages), HasSubstr(want.message));
    EXPECT_EQ(out.report.spawned, want.spawned);
    EXPECT_EQ(out.report.kept, 3 - want.spawned);
    // Each pickup answered for in order is there with its own value, its spawn finished; those
    // the host answered for out of order only are gone again. A host that never answers leaves
    // what it made, of which the load cannot know.
    std::size_t there = 0;
    for (std::size_t j = 0; j < ids.size(); ++j) {
      const Pickup* p = scene.FindActorAs<Pickup>(ids[j]);
      if (p == nullptr) continue;
      ++there;
      if (want.answers == Answers::kNone) continue;
      EXPECT_EQ(p->value, static_cast<std::int32_t>(j) + 1) << j;
      EXPECT_FALSE(p->deferred) << j;
    }
    EXPECT_EQ(there, want.answers == Answers::kNone ? 3u : want.spawned);
  }
}

// A load places the actors it spawned again, the players' pawns, and the actors whose saved
// placement is not the one the host's view reports, and no others: most placed actors never move,
// and each placement costs the host a look-up. Each part of a placement counts: every word of the
// transform bit for bit (a zero's sign too), the owner, the attachment and the socket alone.
TEST_F(SaveLoadTest, ALoadPlacesOnlyTheActorsNotWhereTheSaveHasThem) {
  class PlacingScene : public Scene {
   public:
    using Scene::Scene;
    void PlaceAll(std::span<const std::pair<Guid, world::Placement>> placements) override {
      for (const auto& entry : placements) placed.push_back(entry.first);
      Scene::PlaceAll(placements);
    }
    std::vector<Guid> placed;
  };
  // Two crates more on the small map: one never moves, one is attached at a socket.
  constexpr const char* kStillId = "00000000-0000-4000-8000-00000000b001";
  constexpr const char* kHungId = "00000000-0000-4000-8000-00000000b002";
  const std::string map =
      Replace(SmallMap(), "\"actors\": [",
              std::string("\"actors\": [{\"class\": \"Crate\", \"id\": \"") + kStillId +
                  "\"}, {\"class\": \"Crate\", \"id\": \"" + kHungId + "\"},");
  auto a = NewGame();
  a->scene.AddMap(kSmallMap, map);
  ASSERT_OK(a->scene.Start(kSmallMap));
  a->scene.FindActor(G(kDoorId))->transform.translation.x = 5;
  a->scene.FindActor(G(kChestId))->transform.translation.y = -0.0;  // the map's is +0
  a->scene.FindActor(G(kStatueId))->transform.scale.z = 2;
  a->scene.FindActor(G(kHeroId))->transform.rotation = {0, 0, 0.6, 0.8};
  ASSERT_OK(a->scene.Attach(G(kHungId), G(kDoorId), Name("Hook")));
  ASSERT_OK_AND_ASSIGN(Pickup * pickup, a->scene.SpawnActor<Pickup>());
  const Guid pickup_id = pickup->id;
  ASSERT_OK(SaveNow(*a, "p"));
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));

  for (MapChoice choice : {MapChoice::kOpenSavedMap, MapChoice::kKeepCurrentMap}) {
    const bool kept = choice == MapChoice::kKeepCurrentMap;
    SCOPED_TRACE(kept ? "the map kept" : "the saved map opened");
    PlacingScene scene(*registry_);
    store::Store store(backend_, workers_, mailbox_);
    game::SaveSystem saves(store, scene, *registry_, mailbox_, workers_);
    scene.AddMap(kSmallMap, map);
    ASSERT_OK(scene.Start(kSmallMap));
    ASSERT_EQ(scene.players().size(), 1u);
    std::vector<Guid> want = {G(kChestId), G(kStatueId), G(kHeroId), G(kHungId), pickup_id};
    std::vector<Guid> unplaced = {G(kStillId)};
    if (kept) {
      // In the world kept: the door is where the save has it already, the crate hangs at
      // another socket of the same door, and the still crate has an owner since.
      scene.FindActor(G(kDoorId))->transform.translation.x = 5;
      ASSERT_OK(scene.Attach(G(kHungId), G(kDoorId), Name("Hinge")));
      scene.FindActor(G(kStillId))->owner_id = G(kDoorId);
      want.push_back(G(kStillId));
      unplaced = {G(kDoorId)};
    } else {
      want.push_back(G(kDoorId));
    }
    ASSERT_OK(LoadNow(saves, "p", choice).status());
    // And the player's pawn, which takes its saved transform wherever it is.
    want.push_back(scene.players().front().pawn->id);
    EXPECT_THAT(scene.placed, UnorderedElementsAreArray(want));
    for (Guid id : unplaced) EXPECT_THAT(scene.placed, Not(Contains(id)));

    EXPECT_EQ(scene.FindActor(G(kDoorId))->transform.translation.x, 5);
    EXPECT_TRUE(std::signbit(scene.FindActor(G(kChestId))->transform.translation.y));
    EXPECT_EQ(scene.FindActor(G(kStatueId))->transform.scale.z, 2);
    EXPECT_EQ(scene.FindActor(G(kHeroId))->transform.rotation.w, 0.8);
    EXPECT_EQ(scene.FindActor(G(kHungId))->attach_parent, G(kDoorId));
    EXPECT_EQ(scene.FindActor(G(kHungId))->attach_socket, Name("Hook"));
    EXPECT_TRUE(scene.FindActor(G(kStillId))->owner_id.is_none());
    ASSERT_OK_AND_ASSIGN(auto loaded, world::CaptureForCompare(saves.world()));
    EXPECT_SAME_WORLD(saved, loaded);
  }
}

TEST_F(SaveLoadTest, RecordsOfAbsentObjectsAreKeptAndWrittenBack) {
  const std::unique_ptr<reflect::TypeRegistry> no_statue = MakeRegistry(/*with_statue=*/false);
  ASSERT_NE(no_statue, nullptr);
  const reflect::ClassInfo* settings_class = registry_->FindClass<Settings>();

  // a: everything present.
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  Settings settings;
  settings.volume = 9;
  ASSERT_OK(a->saves.world().Register(Name("settings"), {settings_class, &settings}));
  a->scene.GetWorldSubsystem<Weather>()->rain = 0.5f;
  a->scene.FindActorAs<Statue>(G(kStatueId))->polish = 7;
  static_cast<PlaqueComponent*>(a->scene.FindActor(G(kStatueId))->FindComponent(Name("Plaque")))
      ->text = "new";
  ASSERT_OK_AND_ASSIGN(Statue * spawned, a->scene.SpawnActor<Statue>());
  spawned->polish = 3;
  const Guid spawned_id = spawned->id;
  // A component of an unregistered class on an actor the second game has.
  ASSERT_OK(a->scene.AddComponent(G(kHeroId), Name("Badge"), Name("PlaqueComponent")));
  static_cast<PlaqueComponent*>(a->scene.FindActor(G(kHeroId))->FindComponent(Name("Badge")))
      ->text = "brave";
  ASSERT_OK(SaveNow(*a, "k"));

  // b: no statue class, no Weather, nothing registered.
  {
    auto b = NewGame(no_statue.get());
    b->scene.AddMap(kSmallMap, SmallMap({.statue = false, .weather = false}));
    ASSERT_OK(b->scene.Start(kSmallMap));
    ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "k"));
    EXPECT_GE(out.report.kept, 5u) << Lines(out.report.messages);
    b->scene.FindActorAs<Character>(G(kHeroId))->health = 12;
    ASSERT_OK(SaveNow(*b, "k"));
  }

  // c: everything present again.
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kSmallMap));
  Settings settings2;
  ASSERT_OK(c->saves.world().Register(Name("settings"), {settings_class, &settings2}));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*c, "k"));
  EXPECT_EQ(settings2.volume, 9) << "registered object";
  EXPECT_EQ(c->scene.GetWorldSubsystem<Weather>()->rain, 0.5f) << "world subsystem";
  EXPECT_EQ(c->scene.FindActorAs<Statue>(G(kStatueId))->polish, 7) << "placed actor";
  EXPECT_EQ(
      static_cast<PlaqueComponent*>(c->scene.FindActor(G(kStatueId))->FindComponent(Name("Plaque")))
          ->text,
      "new")
      << "its component";
  auto* spawned2 = c->scene.FindActorAs<Statue>(spawned_id);
  ASSERT_NE(spawned2, nullptr) << "spawned actor of the unknown class";
  EXPECT_EQ(spawned2->polish, 3);
  EXPECT_EQ(c->scene.FindActorAs<Character>(G(kHeroId))->health, 12) << "b's change is there";
  // The component of the class b did not know waits for its creation.
  ASSERT_OK_AND_ASSIGN(Component * badge,
                       c->scene.AddComponent(G(kHeroId), Name("Badge"), Name("PlaqueComponent")));
  EXPECT_EQ(static_cast<PlaqueComponent*>(badge)->text, "brave") << Lines(out.report.messages);
}

// A save whose kept records and captured ones together pass a bound of the file (here the owned
// objects) fails as its chunks are made, on the worker: nothing is written, the slot keeps its
// save, and the game saves again once it is back within the bound.
TEST_F(SaveLoadTest, ASaveWhoseKeptRecordsPassTheFilesBoundsWritesNothing) {
  const std::unique_ptr<reflect::TypeRegistry> no_hoard = MakeRegistry(/*with_statue=*/false);
  ASSERT_NE(no_hoard, nullptr);
  constexpr std::size_t kMaxOwned = record::FileBudget::kMaxOwned;
  constexpr std::size_t kHoard = 140'000;
  auto fill = [](std::vector<std::unique_ptr<Coin>>& coins, std::size_t n) {
    coins.clear();
    for (std::size_t i = 0; i < n; ++i) {
      coins.push_back(std::make_unique<Coin>());
      coins.back()->value = static_cast<std::int32_t>(i % 1000);
    }
  };

  // a: a hoard spawned in play.
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(Hoard * hoard, a->scene.SpawnActor<Hoard>());
  fill(hoard->coins, kHoard);
  const Guid hoard_id = hoard->id;
  ASSERT_OK(SaveNow(*a, "h"));

  // b knows no hoards: their record is kept. A vault that, with the hoard's coins, passes the
  // bound by one.
  auto b = NewGame(no_hoard.get());
  b->scene.AddMap(kSmallMap, SmallMap({.statue = false, .weather = false}));
  ASSERT_OK(b->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome loaded, LoadNow(*b, "h"));
  EXPECT_GE(loaded.report.kept, 1u);
  ASSERT_OK_AND_ASSIGN(Vault * vault, b->scene.SpawnActor<Vault>());
  fill(vault->coins, kMaxOwned - kHoard + 1);
  // The capture holds the vault's coins alone, within the bound: the kept record is refused as
  // the chunk is made.
  Result<SaveOutcome> refused = SaveNow(*b, "h");
  EXPECT_THAT(refused, StatusIs(StatusCode::kInvalidData,
                                AllOf(HasSubstr("a record added to a chunk"),
                                      HasSubstr("262,144 owned objects in the file"))));
  EXPECT_EQ(vault->saved, 0) << "no OnSaved for a save not written";
  EXPECT_EQ(b->scene.FindActorAs<Vault>(vault->id), vault);
  EXPECT_EQ(vault->coins.size(), kMaxOwned - kHoard + 1);

  // The slot still holds a's save, which loads whole.
  {
    auto c = NewGame();
    ASSERT_OK(c->scene.Start(kSmallMap));
    ASSERT_OK(LoadNow(*c, "h"));
    Hoard* back = c->scene.FindActorAs<Hoard>(hoard_id);
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(back->coins.size(), kHoard);
    EXPECT_EQ(c->scene.ActorCount(), a->scene.ActorCount()) << "no vault: b's save was not written";
  }

  // At the bound exactly, b's save is written, the hoard's record kept with it.
  vault->coins.pop_back();
  ASSERT_OK(SaveNow(*b, "h"));
  EXPECT_EQ(vault->saved, 1);
  auto d = NewGame();
  ASSERT_OK(d->scene.Start(kSmallMap));
  ASSERT_OK(LoadNow(*d, "h"));
  ASSERT_NE(d->scene.FindActorAs<Hoard>(hoard_id), nullptr);
  EXPECT_EQ(d->scene.FindActorAs<Hoard>(hoard_id)->coins.size(), kHoard);
  ASSERT_NE(d->scene.FindActorAs<Vault>(vault->id), nullptr);
  EXPECT_EQ(d->scene.FindActorAs<Vault>(vault->id)->coins.size(), kMaxOwned - kHoard);
}

// A placed actor destroyed in a sublevel the next game has not loaded stays destroyed.
TEST_F(SaveLoadTest, TombstoneOfALevelNotLoadedIsWrittenBack) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK(a->scene.AddLevel(Name("Cellar")));
  ASSERT_NE(a->scene.FindActor(G(kCellarCrateId)), nullptr);
  a->scene.DestroyActor(G(kCellarCrateId));
  ASSERT_OK(SaveNow(*a, "t1"));

  // Loaded with the cellar not loaded, then the cellar loads: the crate goes before begin play.
  {
    auto b = NewGame();
    ASSERT_OK(b->scene.Start(kSmallMap));
    ASSERT_OK(LoadNow(*b, "t1"));
    ASSERT_OK(b->scene.AddLevel(Name("Cellar")));
    EXPECT_EQ(b->scene.FindActor(G(kCellarCrateId)), nullptr) << "streamed level";
  }
  // Loaded and saved again with the cellar not loaded: the tombstone must be kept.
  {
    auto b = NewGame();
    ASSERT_OK(b->scene.Start(kSmallMap));
    ASSERT_OK(LoadNow(*b, "t1"));
    ASSERT_OK(SaveNow(*b, "t2"));
  }
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kSmallMap));
  ASSERT_OK(LoadNow(*c, "t2"));
  ASSERT_OK(c->scene.AddLevel(Name("Cellar")));
  EXPECT_EQ(c->scene.FindActor(G(kCellarCrateId)), nullptr)
      << "the crate destroyed in the cellar came back after a second save";
}

// Actors of a sublevel that was not loaded when the save loaded: their records are kept, and
// when the level streams in they get their values (else the next save writes the map's values
// over the saved ones).
TEST_F(SaveLoadTest, ActorsOfALevelStreamedInAfterALoadKeepTheirSavedValues) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK(a->scene.AddLevel(Name("Cellar")));
  a->scene.FindActorAs<Crate>(G(kCellarCrateId))->hits = 5;
  ASSERT_OK(SaveNow(*a, "c1"));
  {
    auto b = NewGame();
    ASSERT_OK(b->scene.Start(kSmallMap));
    ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "c1"));
    EXPECT_EQ(out.report.kept, 1u) << Lines(out.report.messages);
    ASSERT_OK(b->scene.AddLevel(Name("Cellar")));
    EXPECT_EQ(b->scene.FindActorAs<Crate>(G(kCellarCrateId))->hits, 5)
        << "the streamed-in crate did not get its saved values";
    ASSERT_OK(SaveNow(*b, "c2"));
  }
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kSmallMap));
  ASSERT_OK(c->scene.AddLevel(Name("Cellar")));
  ASSERT_OK(LoadNow(*c, "c2", MapChoice::kKeepCurrentMap));
  EXPECT_EQ(c->scene.FindActorAs<Crate>(G(kCellarCrateId))->hits, 5)
      << "the crate's saved value was lost by the second save";
}

// A later version renamed a class and a field, with redirects: placed and spawned actors of the
// old name load into the new class.
TEST_F(SaveLoadTest, RenamedClassesAndFieldsLoadThroughRedirects) {
  const std::unique_ptr<reflect::TypeRegistry> renamed = MakeRenamedRegistry();
  ASSERT_NE(renamed, nullptr);
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  a->scene.FindActorAs<Statue>(G(kStatueId))->polish = 7;
  ASSERT_OK_AND_ASSIGN(Statue * spawned, a->scene.SpawnActor<Statue>());
  spawned->polish = 3;
  const Guid spawned_id = spawned->id;
  ASSERT_OK(SaveNow(*a, "old"));

  auto b = NewGame(renamed.get());
  b->scene.AddMap(kSmallMap, SmallMap({.statue_class = "Monument", .statue_field = "Shine"}));
  ASSERT_OK(b->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "old"));
  EXPECT_EQ(out.report.class_mismatches, 0u) << Lines(out.report.messages);
  auto* placed = b->scene.FindActorAs<Monument>(G(kStatueId));
  ASSERT_NE(placed, nullptr);
  EXPECT_EQ(placed->shine, 7);
  auto* again = b->scene.FindActorAs<Monument>(spawned_id);
  ASSERT_NE(again, nullptr) << Lines(out.report.messages);
  EXPECT_EQ(again->shine, 3);
}

// --- 4. Class mismatch ---------------------------------------------------------------------------

TEST_F(SaveLoadTest, ARecordOfAnotherClassIsNotAppliedAndIsReported) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  a->scene.FindActorAs<Door>(G(kDoorId))->lock_code = 4321;
  a->scene.FindActor(G(kDoorId))->transform.translation = {9, 9, 9};
  a->scene.FindActorAs<Character>(G(kHeroId))->health = 5;
  ASSERT_OK(SaveNow(*a, "m"));

  auto b = NewGame();
  b->scene.AddMap("maps/mismatch.json", SmallMap({.door_class = "Chest"}));
  b->scene.AddMap(kSmallMap, SmallMap({.door_class = "Chest"}));
  ASSERT_OK(b->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "m"));
  EXPECT_EQ(out.report.class_mismatches, 1u);
  EXPECT_THAT(out.report.messages,
              Contains(AllOf(HasSubstr("ClassMismatch"), HasSubstr(kDoorId), HasSubstr("Chest"))))
      << Lines(out.report.messages);
  auto* chest = b->scene.FindActorAs<Chest>(G(kDoorId));
  ASSERT_NE(chest, nullptr);
  EXPECT_TRUE(chest->inventory.empty());
  EXPECT_EQ(chest->transform.translation, (reflect::Vector3d{1, 2, 3})) << "not placed either";
  EXPECT_EQ(b->scene.FindActorAs<Character>(G(kHeroId))->health, 5) << "the rest applies";
}

// --- 5. Gates and statuses ---------------------------------------------------------------------

TEST_F(SaveLoadTest, CallsOffTheGameThreadAreRefusedAtTheNextTick) {
  auto g = PlayedGame(10);
  ASSERT_OK(SaveNow(*g, "there"));
  std::optional<Result<SaveOutcome>> saved;
  std::optional<Result<LoadOutcome>> loaded;
  std::thread::id save_thread, load_thread;
  std::thread t([&] {
    g->saves.Save("off", {}, [&](Result<SaveOutcome> r) {
      saved.emplace(std::move(r));
      save_thread = std::this_thread::get_id();
    });
    g->saves.Load("there", {}, [&](Result<LoadOutcome> r) {
      loaded.emplace(std::move(r));
      load_thread = std::this_thread::get_id();
    });
  });
  t.join();
  EXPECT_FALSE(saved.has_value());
  EXPECT_FALSE(loaded.has_value());
  g->saves.Tick();
  ASSERT_TRUE(saved.has_value());
  ASSERT_TRUE(loaded.has_value());
  EXPECT_THAT(*saved, StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(*loaded, StatusIs(StatusCode::kInvalidInput));
  EXPECT_EQ(save_thread, std::this_thread::get_id());
  EXPECT_EQ(load_thread, std::this_thread::get_id());
  EXPECT_FALSE(g->saves.loading());
  EXPECT_THAT(LoadNow(*g, "off"), StatusIs(StatusCode::kNotFound));
}

TEST_F(SaveLoadTest, CallsWithoutAWorldAreInvalidInput) {
  auto g = NewGame();
  ASSERT_FALSE(g->scene.HasWorld());
  EXPECT_THAT(SaveNow(*g, "a"), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(LoadNow(*g, "a"), StatusIs(StatusCode::kInvalidInput));
  EXPECT_EQ(backend_.used(), 0u);
}

TEST_F(SaveLoadTest, CallsOnAClientAreNotAuthority) {
  auto g = PlayedGame(10);
  ASSERT_OK(SaveNow(*g, "a"));
  g->scene.SetAuthority(false);
  ASSERT_OK_AND_ASSIGN(auto before, Capture(*g));
  EXPECT_THAT(SaveNow(*g, "b"), StatusIs(StatusCode::kNotAuthority));
  EXPECT_THAT(LoadNow(*g, "a"), StatusIs(StatusCode::kNotAuthority));
  ASSERT_OK_AND_ASSIGN(auto after, Capture(*g));
  EXPECT_SAME_WORLD(before, after);
  g->scene.SetAuthority(true);
  EXPECT_THAT(LoadNow(*g, "b"), StatusIs(StatusCode::kNotFound));
}

TEST_F(SaveLoadTest, SlotNamesAreOneTo1024BytesWithoutNulAndNotReserved) {
  auto g = PlayedGame(10);
  const std::string longest(1024, 's');
  ASSERT_OK(SaveNow(*g, longest));
  ASSERT_OK(LoadNow(*g, longest));
  const std::size_t used = backend_.used();
  const std::string bad[] = {
      std::string(), std::string(1025, 's'), std::string("a\0b", 3), "rolly.x",
      "rolly.",      std::string("\xff\xfe")};
  for (const std::string& slot : bad) {
    SCOPED_TRACE(slot.size() > 20 ? std::to_string(slot.size()) + " bytes" : slot);
    EXPECT_THAT(SaveNow(*g, slot), StatusIs(StatusCode::kInvalidInput));
    EXPECT_THAT(LoadNow(*g, slot), StatusIs(StatusCode::kInvalidInput));
  }
  EXPECT_EQ(backend_.used(), used) << "a refused call wrote something";
}

TEST_F(SaveLoadTest, ASaveWhileALoadSetsValuesIsBusy) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  for (MapChoice choice : {MapChoice::kOpenSavedMap, MapChoice::kKeepCurrentMap}) {
    auto b = NewGame();
    ASSERT_OK(b->scene.Start(kMap));
    RecordingEvents events;
    b->saves.SetEvents(&events);
    std::optional<Result<SaveOutcome>> inner;
    std::optional<Result<LoadOutcome>> inner_load;
    events.on_progress = [&](LoadStage stage) {
      if (stage != LoadStage::kSettingValues) return;
      b->saves.Save("inner", {}, [&](Result<SaveOutcome> r) { inner.emplace(std::move(r)); });
      b->saves.Load("s", {}, [&](Result<LoadOutcome> r) { inner_load.emplace(std::move(r)); });
    };
    EXPECT_OK(LoadNow(*b, "s", choice));
    ASSERT_TRUE(inner.has_value());
    EXPECT_THAT(*inner, StatusIs(StatusCode::kBusy));
    ASSERT_TRUE(inner_load.has_value());
    EXPECT_THAT(*inner_load, StatusIs(StatusCode::kBusy));
    b->saves.SetEvents(nullptr);
  }
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kMap));
  EXPECT_THAT(LoadNow(*c, "inner"), StatusIs(StatusCode::kNotFound));
}

TEST_F(SaveLoadTest, ASaveFromALoadedHookIsBusy) {
  const reflect::ClassInfo* cls = registry_->FindClass<Settings>();
  auto a = PlayedGame(10);
  Settings settings;
  ASSERT_OK(a->saves.world().Register(Name("settings"), {cls, &settings}));
  ASSERT_OK(SaveNow(*a, "s"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  Settings settings2;
  std::optional<Result<SaveOutcome>> inner;
  settings2.on_loaded = [&] {
    b->saves.Save("inner", {}, [&](Result<SaveOutcome> r) { inner.emplace(std::move(r)); });
  };
  ASSERT_OK(b->saves.world().Register(Name("settings"), {cls, &settings2}));
  EXPECT_OK(LoadNow(*b, "s"));
  EXPECT_EQ(settings2.loaded, 1);
  ASSERT_TRUE(inner.has_value());
  EXPECT_THAT(*inner, StatusIs(StatusCode::kBusy));
}

// A load refused at once fires no event (the load running has its own), and a load started from
// a load's callback has its events after that load's end. Flush past its deadline is Busy.
TEST_F(SaveLoadTest, ARefusedLoadFiresNoEventAndALoadFromACallbackComesAfter) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  ASSERT_OK(SaveNow(*a, "t"));
  RecordingEvents events;
  a->saves.SetEvents(&events);
  std::optional<Result<LoadOutcome>> refused, second;
  a->saves.Load("s", {}, [&](Result<LoadOutcome> r) {
    EXPECT_OK(r);
    a->saves.Load("t", {}, [&](Result<LoadOutcome> r2) { second.emplace(std::move(r2)); });
  });
  a->saves.Load("s", {}, [&](Result<LoadOutcome> r) { refused.emplace(std::move(r)); });
  ASSERT_OK(a->saves.Flush(Deadline()));
  ASSERT_TRUE(refused && second);
  EXPECT_THAT(*refused, StatusIs(StatusCode::kBusy));
  EXPECT_OK(*second);
  const std::vector<std::string> one_load = {"Progress Reading", "Progress Loading Assets",
                                             "Progress Opening Map", "Progress Setting Values"};
  std::vector<std::string> want = {"LoadStarted s"};
  want.insert(want.end(), one_load.begin(), one_load.end());
  want.push_back("LoadFinished s Ok");
  want.push_back("LoadStarted t");
  want.insert(want.end(), one_load.begin(), one_load.end());
  want.push_back("LoadFinished t Ok");
  EXPECT_EQ(events.log, want);
  a->saves.SetEvents(nullptr);

  // A save the backend answers slowly outlasts a Flush whose deadline has passed.
  store::FaultBackend slow(&backend_);
  slow.Add(store::FaultRule::Delay(std::chrono::milliseconds(300)).On(store::Op::kWrite));
  Game g(*registry_, slow, mailbox_, workers_);
  g.scene.AddMap(kSmallMap, SmallMap());
  ASSERT_OK(g.scene.Start(kSmallMap));
  std::optional<Result<SaveOutcome>> saved;
  g.saves.Save("slow", {}, [&](Result<SaveOutcome> r) { saved.emplace(std::move(r)); });
  EXPECT_THAT(g.saves.Flush(Mailbox::Clock::now()), StatusIs(StatusCode::kBusy));
  ASSERT_OK(g.saves.Flush(Deadline()));
  ASSERT_TRUE(saved.has_value());
  EXPECT_OK(*saved);
}

// A scene whose OpenMap throws while armed: a host's map loading failing by an exception.
class ThrowingScene : public Scene {
 public:
  using Scene::Scene;
  Status OpenMap(std::string_view map) override {
    if (armed) throw std::runtime_error("the map's assets");
    return Scene::OpenMap(map);
  }
  void PlaceAll(std::span<const std::pair<Guid, world::Placement>> placements) override {
    if (armed_place) throw std::runtime_error("a placement");
    Scene::PlaceAll(placements);
  }
  bool armed = false;
  bool armed_place = false;
};

// A load whose host throws ends with the exception out of the Tick that ran it: the save system
// is not left loading (Busy) and nothing stays armed to apply to the next map opened.
TEST_F(SaveLoadTest, ALoadWhoseHostThrowsEndsAndLeavesNothingArmed) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  ThrowingScene scene(*registry_);
  scene.AddMap(kMap, sample_map_);
  scene.AddMap(kOtherMap, BuildSampleMap(20, 5));
  store::Store store(backend_, workers_, mailbox_);
  game::SaveSystem saves(store, scene, *registry_, mailbox_, workers_);
  ASSERT_OK(scene.Start(kOtherMap));
  RecordingEvents events;
  saves.SetEvents(&events);
  scene.armed = true;
  bool called = false;
  saves.Load("s", {}, [&](Result<LoadOutcome>) { called = true; });
  EXPECT_THROW(saves.Flush(Deadline()).IgnoreError(), std::runtime_error);
  EXPECT_FALSE(saves.loading());
  EXPECT_FALSE(called);
  scene.armed = false;
  // The next map opens without the save applied to it.
  events.log.clear();
  ASSERT_OK(scene.OpenMap(kMap));
  EXPECT_TRUE(events.log.empty()) << Lines(events.log);
  ASSERT_OK(saves.Flush(Deadline()));
  // Saves and loads go on.
  std::optional<Result<SaveOutcome>> saved;
  saves.Save("t", {}, [&](Result<SaveOutcome> r) { saved.emplace(std::move(r)); });
  ASSERT_OK(saves.Flush(Deadline()));
  ASSERT_TRUE(saved.has_value());
  EXPECT_OK(*saved);
  std::optional<Result<LoadOutcome>> loaded;
  saves.Load("s", {}, [&](Result<LoadOutcome> r) { loaded.emplace(std::move(r)); });
  ASSERT_OK(saves.Flush(Deadline()));
  ASSERT_TRUE(loaded.has_value());
  EXPECT_OK(*loaded);
  saves.SetEvents(nullptr);

  // The host throwing while values are set (keeping the map): the World is not left applying.
  scene.armed_place = true;
  game::LoadOptions keep;
  keep.map = game::MapChoice::kKeepCurrentMap;
  saves.Load("s", keep, [&](Result<LoadOutcome>) { called = true; });
  EXPECT_THROW(saves.Flush(Deadline()).IgnoreError(), std::runtime_error);
  EXPECT_FALSE(called);
  EXPECT_FALSE(saves.loading());
  EXPECT_FALSE(saves.world().applying());
  scene.armed_place = false;
  saved.reset();
  saves.Save("t", {}, [&](Result<SaveOutcome> r) { saved.emplace(std::move(r)); });
  ASSERT_OK(saves.Flush(Deadline()));
  ASSERT_TRUE(saved.has_value());
  EXPECT_OK(*saved);
}

TEST_F(SaveLoadTest, ALoadWhileALoadRunsIsBusy) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  std::optional<Result<LoadOutcome>> first, second;
  a->saves.Load("s", {}, [&](Result<LoadOutcome> r) { first.emplace(std::move(r)); });
  EXPECT_TRUE(a->saves.loading());
  a->saves.Load("s", {}, [&](Result<LoadOutcome> r) { second.emplace(std::move(r)); });
  ASSERT_OK(a->saves.Flush(Deadline()));
  ASSERT_TRUE(first && second);
  EXPECT_OK(*first);
  EXPECT_THAT(*second, StatusIs(StatusCode::kBusy));
}

TEST_F(SaveLoadTest, ALoadOfAMissingSlotIsNotFound) {
  auto g = PlayedGame(10);
  RecordingEvents events;
  g->saves.SetEvents(&events);
  EXPECT_THAT(LoadNow(*g, "missing"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(events.log, ElementsAre("LoadStarted missing", "Progress Reading",
                                      "LoadFinished missing NotFound"));
  g->saves.SetEvents(nullptr);
}

TEST_F(SaveLoadTest, ALoadOfAMapTheGameLacksIsNotFoundAndChangesNothing) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  auto b = std::make_unique<Game>(*registry_, backend_, mailbox_, workers_);
  b->scene.AddMap(kOtherMap, BuildSampleMap(20, 5));
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK_AND_ASSIGN(auto before, Capture(*b));
  EXPECT_THAT(LoadNow(*b, "s"), StatusIs(StatusCode::kNotFound));
  EXPECT_EQ(b->scene.CurrentMap(), kOtherMap);
  ASSERT_OK_AND_ASSIGN(auto after, Capture(*b));
  EXPECT_SAME_WORLD(before, after);
}

// A load's records are checked on the worker that read the save, as the read ends: its first
// step on the game thread comes once both are done, and a load that keeps the map ends at that
// Tick. (When the read's answer was a step of its own, the check started only at a Tick, and a
// game ticking once a frame waited a frame more for every load.)
TEST_F(SaveLoadTest, ALoadChecksTheSaveAsItIsReadAndEndsAtTheFirstTickAfter) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  // Nothing else answers meanwhile on the mailbox the games share: a's save is done with its
  // store too (its index write can call back after the save did).
  ASSERT_OK(a->saves.Flush(Deadline()));
  ASSERT_OK(a->store.Flush(Deadline()));
  ASSERT_OK(b->saves.Flush(Deadline()));
  ASSERT_OK(b->store.Flush(Deadline()));
  ASSERT_EQ(mailbox_.pending(), 0u);
  std::optional<Result<LoadOutcome>> got;
  game::LoadOptions options;
  options.map = MapChoice::kKeepCurrentMap;
  b->saves.Load("s", options, [&](Result<LoadOutcome> r) { got.emplace(std::move(r)); });
  // The first step, not run yet.
  const auto deadline = Deadline();
  while (mailbox_.pending() == 0 && Mailbox::Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(mailbox_.pending(), 1u);
  b->saves.Tick();
  ASSERT_TRUE(got.has_value()) << "the load waited for another Tick";
  EXPECT_OK(got->status());
  EXPECT_FALSE(b->saves.loading());
}

TEST_F(SaveLoadTest, CancelBeforeTheMapOpensStopsTheLoad) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  RecordingEvents events;
  b->saves.SetEvents(&events);
  ASSERT_OK_AND_ASSIGN(auto before, Capture(*b));
  std::optional<Result<LoadOutcome>> got;
  b->saves.Load("s", {}, [&](Result<LoadOutcome> r) { got.emplace(std::move(r)); });
  EXPECT_OK(b->saves.CancelLoad());
  EXPECT_FALSE(got.has_value()) << "the callback runs on a later Tick";
  ASSERT_OK(b->saves.Flush(Deadline()));
  ASSERT_TRUE(got.has_value());
  EXPECT_THAT(*got, StatusIs(StatusCode::kCancelled));
  EXPECT_THAT(events.log, ElementsAre("LoadStarted s", "Progress Reading", "LoadCancelled s"));
  EXPECT_EQ(b->scene.CurrentMap(), kOtherMap);
  ASSERT_OK_AND_ASSIGN(auto after, Capture(*b));
  EXPECT_SAME_WORLD(before, after);
  EXPECT_FALSE(b->saves.loading());
  EXPECT_THAT(b->saves.CancelLoad(), StatusIs(StatusCode::kInvalidInput));
  // A load after the cancelled one runs.
  EXPECT_OK(LoadNow(*b, "s"));
  b->saves.SetEvents(nullptr);
}

TEST_F(SaveLoadTest, CancelOnceTheMapOpensIsBusy) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  RecordingEvents events;
  b->saves.SetEvents(&events);
  std::vector<Status> cancels;
  events.on_progress = [&](LoadStage stage) {
    if (stage == LoadStage::kOpeningMap || stage == LoadStage::kSettingValues)
      cancels.push_back(b->saves.CancelLoad());
  };
  EXPECT_OK(LoadNow(*b, "s"));
  ASSERT_EQ(cancels.size(), 2u);
  EXPECT_THAT(cancels[0], StatusIs(StatusCode::kBusy));
  EXPECT_THAT(cancels[1], StatusIs(StatusCode::kBusy));
  EXPECT_EQ(b->scene.CurrentMap(), kMap);
  b->saves.SetEvents(nullptr);
}

// A cancel the save system accepts (Ok) stops the load: here from the Loading Assets event, before
// the map opens.
TEST_F(SaveLoadTest, ACancelAcceptedWhileAssetsLoadStopsTheLoad) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK_AND_ASSIGN(auto before, Capture(*b));
  RecordingEvents events;
  b->saves.SetEvents(&events);
  std::optional<Status> cancel;
  events.on_progress = [&](LoadStage stage) {
    if (stage == LoadStage::kLoadingAssets) cancel = b->saves.CancelLoad();
  };
  Result<LoadOutcome> got = LoadNow(*b, "s");
  b->saves.SetEvents(nullptr);
  ASSERT_TRUE(cancel.has_value());
  if (cancel->ok()) {
    EXPECT_THAT(got, StatusIs(StatusCode::kCancelled))
        << "CancelLoad said Ok, yet the load went on";
    EXPECT_THAT(events.log, Contains("LoadCancelled s"));
    EXPECT_EQ(b->scene.CurrentMap(), kOtherMap);
    ASSERT_OK_AND_ASSIGN(auto after, Capture(*b));
    EXPECT_SAME_WORLD(before, after);
  } else {
    EXPECT_THAT(*cancel, StatusIs(StatusCode::kBusy));
    EXPECT_OK(got.status());
  }
}

// A save asked for while a load still reads is not refused: the gates stop saves only once the
// load's map opens.
TEST_F(SaveLoadTest, ASaveWhileALoadReadsRuns) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  std::optional<Result<LoadOutcome>> loaded;
  std::optional<Result<SaveOutcome>> saved;
  a->saves.Load("s", {}, [&](Result<LoadOutcome> r) { loaded.emplace(std::move(r)); });
  a->saves.Save("t", {}, [&](Result<SaveOutcome> r) { saved.emplace(std::move(r)); });
  ASSERT_OK(a->saves.Flush(Deadline()));
  ASSERT_TRUE(loaded && saved);
  EXPECT_OK(loaded->status());
  EXPECT_OK(saved->status());
}

// A game torn down with calls still running runs none of their callbacks and touches nothing
// that is gone (run under the sanitizers).
TEST_F(SaveLoadTest, AGameDestroyedWithCallsRunningIsSafe) {
  auto a = PlayedGame(10);
  ASSERT_OK(SaveNow(*a, "s"));
  int called = 0;
  {
    auto b = PlayedGame(10);
    b->saves.Save("t", {}, [&](Result<SaveOutcome>) { ++called; });
    b->saves.Load("s", {}, [&](Result<LoadOutcome>) { ++called; });
    b->saves.Save("rolly.x", {}, [&](Result<SaveOutcome>) { ++called; });
  }
  mailbox_.Drain();
  workers_.WaitUntilIdle();
  mailbox_.Drain();
  EXPECT_EQ(called, 0);
  EXPECT_OK(LoadNow(*a, "s").status());
}

TEST_F(SaveLoadTest, RegisterRefusesBadNamesAndTakenOnes) {
  auto g = PlayedGame(1);
  const reflect::ClassInfo* cls = registry_->FindClass<Settings>();
  Settings s1, s2;
  world::World& w = g->saves.world();
  EXPECT_THAT(w.Register(Name(""), {cls, &s1}), StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(w.Register(Name(std::string(1025, 'n')), {cls, &s1}),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_OK(w.Register(Name(std::string(1024, 'n')), {cls, &s1}));
  EXPECT_THAT(w.Register(Name(std::string(1024, 'n')), {cls, &s2}),
              StatusIs(StatusCode::kInvalidInput));
  EXPECT_THAT(w.Register(Name("null"), {cls, nullptr}), StatusIs(StatusCode::kInvalidInput));
  EXPECT_OK(SaveNow(*g, "r").status());
}

TEST_F(SaveLoadTest, CancelWithoutALoadIsInvalidInput) {
  auto g = PlayedGame(10);
  EXPECT_THAT(g->saves.CancelLoad(), StatusIs(StatusCode::kInvalidInput));
}

TEST_F(SaveLoadTest, ACaptureThatRefusesWritesNothingAndTheSlotKeepsItsSave) {
  auto a = PlayedGame(30);
  ASSERT_OK_AND_ASSIGN(auto first, Capture(*a));
  ASSERT_OK(SaveNow(*a, "s"));
  Character* c = nullptr;
  a->scene.ForEachActor([&](Actor& x) {
    if (!c) c = dynamic_cast<Character*>(&x);
  });
  ASSERT_NE(c, nullptr);
  c->name = "bad \xff\xfe name";
  a->scene.GetSubsystem<QuestLog>()->quests.clear();  // a change that must not reach the slot
  RecordingEvents events;
  a->saves.SetEvents(&events);
  EXPECT_THAT(SaveNow(*a, "s"), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(SaveNow(*a, "fresh"), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(events.log,
              ElementsAre("SaveFinished s InvalidData", "SaveFinished fresh InvalidData"));
  a->saves.SetEvents(nullptr);

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  ASSERT_OK(LoadNow(*b, "s"));
  AddBackpacks(b->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  EXPECT_SAME_WORLD(first, loaded);
  EXPECT_THAT(LoadNow(*b, "fresh"), StatusIs(StatusCode::kNotFound));
}

// The sample world's chunk is captured in two halves (WorldCapture): a door whose state has no
// enum name passes its step (a copy does not look at enum numbers) and is refused when its record
// is written from the copy, off the game thread. The save fails the same way: InvalidData naming
// the door, nothing written, no OnSaved, and the world untouched.
TEST_F(SaveLoadTest, ACopiedSubjectRefusedOffTheGameThreadWritesNothing) {
  auto a = PlayedGame(30);
  Settings settings;
  ASSERT_OK(a->saves.world().Register(Name("settings"),
                                      {registry_->FindClass<Settings>(), &settings}));
  ASSERT_OK(SaveNow(*a, "s"));
  EXPECT_EQ(settings.saved, 1);
  ASSERT_OK_AND_ASSIGN(auto first, Capture(*a));
  Door* door = nullptr;
  a->scene.ForEachActor([&](Actor& x) {
    if (!door) door = dynamic_cast<Door*>(&x);
  });
  ASSERT_NE(door, nullptr);
  door->state = static_cast<DoorState>(7);
  a->scene.GetSubsystem<QuestLog>()->quests.clear();  // a change that must not reach the slot
  RecordingEvents events;
  a->saves.SetEvents(&events);
  EXPECT_THAT(SaveNow(*a, "s"),
              StatusIs(StatusCode::kInvalidData,
                       AllOf(HasSubstr("Door " + door->id.ToString()), HasSubstr("DoorState"))));
  EXPECT_THAT(events.log, ElementsAre("SaveFinished s InvalidData"));
  a->saves.SetEvents(nullptr);
  EXPECT_EQ(settings.saved, 1) << "no OnSaved for a save not written";
  EXPECT_EQ(static_cast<int>(door->state), 7);

  // The slot still holds the first save.
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  Settings loaded_settings;
  ASSERT_OK(b->saves.world().Register(Name("settings"),
                                      {registry_->FindClass<Settings>(), &loaded_settings}));
  ASSERT_OK(LoadNow(*b, "s"));
  AddBackpacks(b->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  EXPECT_SAME_WORLD(first, loaded);
}

// Each component's record has the ID its identity derives (DeriveComponentId of its actor's ID
// and its name), whether its chunk is copied by the steps and written off the game thread (the
// sample world) or written by the steps (a world holding a class that is not plain: a hoard owns
// its coins). A component's ID is derived late in both.
TEST_F(SaveLoadTest, ComponentIdsAreTheDerivedOnesWhetherTheChunkIsCopiedOrNot) {
  auto g = PlayedGame(30);
  auto check = [&](std::size_t* components) {
    ASSERT_OK_AND_ASSIGN(auto chunks, Capture(*g));
    for (const world::WorldChunk& c : chunks) {
      if (c.id != world::kWorldChunk) continue;
      ASSERT_OK_AND_ASSIGN(record::CheckedPayload payload,
                           record::CheckedPayload::Check(c.payload));
      for (std::size_t i = 0; i < payload.size(); ++i) {
        ByteView section;
        if (!payload.Find(i, world::kComponentSection, &section)) continue;
        ASSERT_OK_AND_ASSIGN(world::ComponentSection comp, world::DecodeComponent(section));
        EXPECT_EQ(payload.subject(i), world::DeriveComponentId(comp.actor, Name(comp.name)))
            << comp.name;
        ++*components;
      }
    }
  };
  std::size_t copied = 0;
  check(&copied);
  EXPECT_GT(copied, 10u);
  ASSERT_OK(g->scene.SpawnActor<Hoard>().status());
  std::size_t stepped = 0;
  check(&stepped);
  EXPECT_EQ(stepped, copied);
}

// A long name (a level, socket or component name over 1,024 bytes) refuses the capture too: a
// save, and each step or run of a capture, with the same status, capturing nothing.
TEST_F(SaveLoadTest, ACaptureOfALongSocketNameIsInvalidData) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK(a->scene.Attach(G(kChestId), G(kDoorId), Name(std::string(1025, 'k'))));
  EXPECT_THAT(SaveNow(*a, "s"), StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(LoadNow(*a, "s"), StatusIs(StatusCode::kNotFound));

  std::unique_ptr<world::WorldCapture> cap = a->saves.world().BeginCapture();
  ASSERT_GT(cap->total(), 0u);
  const Status step = cap->Step();
  EXPECT_THAT(step, StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(std::string(step.message()), HasSubstr("cannot be saved"));
  EXPECT_EQ(cap->Step(), step) << "asked again";
  EXPECT_EQ(cap->Run(), step);
  EXPECT_EQ(cap->captured(), 0u);
  EXPECT_FALSE(cap->done());
  cap->Forget();
}

// A capture taken one step at a time (as a save spread over frames takes it) makes the chunks one
// Run makes, each step taking one subject; a step once done captures nothing more.
TEST_F(SaveLoadTest, ACaptureTakenStepByStepMakesWhatRunMakes) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK(SaveNow(*a, "k"));
  std::unique_ptr<world::WorldCapture> run = a->saves.world().BeginCapture();
  ASSERT_OK(run->Run());
  ASSERT_OK_AND_ASSIGN(const std::vector<world::WorldChunk> want, run->Finish());
  run->Forget();

  std::unique_ptr<world::WorldCapture> cap = a->saves.world().BeginCapture();
  ASSERT_EQ(cap->total(), run->total());
  for (std::size_t k = 0; k < cap->total(); ++k) {
    ASSERT_FALSE(cap->done());
    ASSERT_EQ(cap->captured(), k);
    ASSERT_OK(cap->Step());
  }
  EXPECT_TRUE(cap->done());
  ASSERT_OK(cap->Step());
  ASSERT_OK(cap->Run());
  EXPECT_EQ(cap->captured(), cap->total());
  ASSERT_OK_AND_ASSIGN(const std::vector<world::WorldChunk> got, cap->Finish());
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id);
    EXPECT_EQ(got[i].key, want[i].key);
    EXPECT_EQ(got[i].payload, want[i].payload) << "chunk " << i;
  }
  cap->Forget();
}

// --- A capture with a helper (World::BeginCapture's second thread) ------------------------------

// What one capture made, and how many steps its Run took to be done.
struct Captured {
  std::vector<world::WorldChunk> chunks;
  std::size_t total = 0;
  std::size_t steps = 0;
};

// Captures `g`'s world (begun with `helper`) one step at a time, as Run takes it.
Result<Captured> CaptureWith(Game& g, const record::CheckedPayload::Post& helper) {
  std::unique_ptr<world::WorldCapture> cap = g.saves.world().BeginCapture(helper);
  Captured out;
  out.total = cap->total();
  while (!cap->done()) {
    const Status step = cap->Step();
    if (!step.ok()) {
      cap->Forget();
      return step;
    }
    ++out.steps;
  }
  Result<std::vector<world::WorldChunk>> chunks = cap->Finish();
  cap->Forget();
  if (!chunks.ok()) return chunks.status();
  out.chunks = std::move(chunks).value();
  return out;
}

void ExpectSameChunks(const std::vector<world::WorldChunk>& got,
                      const std::vector<world::WorldChunk>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id);
    EXPECT_EQ(got[i].key, want[i].key);
    EXPECT_EQ(got[i].payload, want[i].payload) << "chunk " << i;
  }
}

// Tasks posted to it wait until Run: the helper never starts before the listing ends.
struct LatePost {
  record::CheckedPayload::Post Post() {
    return [this](std::function<void()> task) { tasks.push_back(std::move(task)); };
  }
  void Run() {
    for (auto& task : tasks) task();
    tasks.clear();
  }
  std::vector<std::function<void()>> tasks;
};

// Each task posted runs on a thread of its own, started before the post returns.
struct ThreadPost {
  record::CheckedPayload::Post Post() {
    return [this](std::function<void()> task) {
      auto started = std::make_shared<std::promise<void>>();
      std::future<void> running = started->get_future();
      threads.emplace_back([started, task = std::move(task)] {
        started->set_value();
        task();
      });
      running.wait();
    };
  }
  ~ThreadPost() {
    for (std::thread& t : threads) t.join();
  }
  std::vector<std::thread> threads;
};

// A capture begun with a helper makes the chunks one without makes, on a played sample world, with
// the helper on a thread of its own, on the save system's pool, or never starting before the
// listing ends (the game thread copies then). The world chunk's subjects it copied are passed in
// one step; the globals (a chunk not copied: the quest log owns its quests), the tombstones and
// the players are captured by the steps. The first capture of a World knows only its placed
// actors to reserve room for, and is helped while that room lasts; the next are helped
// throughout.
// A copy that throws (an allocation failing) ends the capture with its exception, whether the
// helper's task or the game thread (the task not started when the listing ended) was copying,
// as it does without a helper; the World captures as before afterwards.
TEST_F(SaveLoadTest, ACopyThatThrowsEndsAHelpedCaptureWithItsException) {
  auto a = PlayedGame(60);
  world::World& w = a->saves.world();
  constexpr std::size_t kCopyBlockBytes = std::size_t{1} << 18;  // an ObjectCopies block
  LatePost late;
  const record::CheckedPayload::Post later = late.Post();
  EXPECT_THROW(w.BeginCapture([&](std::function<void()> task) {
    later(std::move(task));
    fail_array_new_from = kCopyBlockBytes;  // the game thread's first block, once it copies
  }),
               std::bad_alloc);
  EXPECT_EQ(fail_array_new_from, 0u) << "the game thread copied";
  fail_array_new_from = 0;
  late.Run();  // finds the copying over, and does nothing
  // The task started on a thread of its own: it copies, unless the game thread ends its listing
  // before the task claims the copying (then as above). Both threads' copies fail, so the
  // capture throws either way; which one threw is not checked.
  {
    ThreadPost threads;
    const record::CheckedPayload::Post post = threads.Post();
    EXPECT_THROW(w.BeginCapture([&](std::function<void()> task) {
      post([task = std::move(task)] {
        fail_array_new_from = kCopyBlockBytes;
        task();
      });
      fail_array_new_from = kCopyBlockBytes;
    }),
                 std::bad_alloc);
    fail_array_new_from = 0;
  }
  ASSERT_OK_AND_ASSIGN(const Captured helped, CaptureWith(*a, ThreadPost().Post()));
  ASSERT_OK_AND_ASSIGN(const Captured plain, CaptureWith(*a, {}));
  EXPECT_LT(helped.steps, helped.total) << "the helper copied";
  ExpectSameChunks(helped.chunks, plain.chunks);
}

TEST_F(SaveLoadTest, ACaptureWithAHelperMakesWhatOneWithoutMakes) {
  auto a = PlayedGame(60);
  ASSERT_OK_AND_ASSIGN(const Captured first, CaptureWith(*a, ThreadPost().Post()));
  // Helped while the room it starts with lasted: one for each of the map's placed actors (all of
  // the sample's classes hold state) and a thirty-second more. The components come on top.
  std::size_t placed = 0;
  a->scene.ForEachActor([&](Actor& actor) { placed += actor.spawned ? 0 : 1; });
  EXPECT_LT(first.steps, first.total - placed * 9 / 10);
  EXPECT_GT(first.steps, 80u);
  ASSERT_OK_AND_ASSIGN(const Captured want, CaptureWith(*a, {}));
  EXPECT_EQ(want.steps, want.total);
  ExpectSameChunks(first.chunks, want.chunks);
  {
    ThreadPost threads;
    ASSERT_OK_AND_ASSIGN(const Captured got, CaptureWith(*a, threads.Post()));
    ExpectSameChunks(got.chunks, want.chunks);
    EXPECT_LT(got.steps, 80u) << "of " << got.total;
  }
  {
    ASSERT_OK_AND_ASSIGN(const Captured got,
                         CaptureWith(*a, [this](std::function<void()> task) {
                           workers_.Post(std::move(task));
                         }));
    ExpectSameChunks(got.chunks, want.chunks);
    EXPECT_LT(got.steps, 80u);
  }
  LatePost late;
  ASSERT_OK_AND_ASSIGN(const Captured got, CaptureWith(*a, late.Post()));
  ExpectSameChunks(got.chunks, want.chunks);
  EXPECT_LT(got.steps, 80u) << "copied by the game thread as it ended the listing";
  ASSERT_EQ(late.tasks.size(), 1u);
  late.Run();  // finds the work taken: copies nothing, touches nothing
  // (Every round trip above saves through SaveSystem::Save, which begins with a helper.)
}

// The helper copies only classes without hooks: at the first actor with an OnPreSave or OnSaved
// hook it stops, and the steps capture that one (its hook runs once, on the game thread) and the
// rest. A class that cannot be copied (a hoard owns its coins) makes the world chunk one the steps
// capture whole: what the helper copied goes, and the next capture does not ask it to copy.
TEST_F(SaveLoadTest, AHelperStopsAtAClassWithHooksAndGivesUpAChunkNotCopied) {
  auto a = PlayedGame(30);
  ASSERT_OK_AND_ASSIGN(HookedCrate * hooked, a->scene.SpawnActor<HookedCrate>());
  ASSERT_OK_AND_ASSIGN(const Captured warm, CaptureWith(*a, {}));  // sizes the next captures
  ASSERT_OK_AND_ASSIGN(const Captured want, CaptureWith(*a, {}));
  ASSERT_EQ(hooked->pre_saves, 2);
  {
    ThreadPost threads;
    ASSERT_OK_AND_ASSIGN(const Captured got, CaptureWith(*a, threads.Post()));
    ExpectSameChunks(got.chunks, want.chunks);
    EXPECT_EQ(hooked->pre_saves, 3) << "once, by its step";
    EXPECT_EQ(hooked->pre_save_thread, std::this_thread::get_id());
    // The hooked crate was spawned last, so the helper copied the actors before it.
    EXPECT_LT(got.steps, 80u) << "of " << got.total;
  }

  ASSERT_OK_AND_ASSIGN(Hoard * hoard, a->scene.SpawnActor<Hoard>());
  hoard->coins.push_back(std::make_unique<Coin>());
  a->scene.DestroyActor(hooked->id);
  ASSERT_OK_AND_ASSIGN(const Captured whole, CaptureWith(*a, {}));
  EXPECT_EQ(whole.steps, whole.total);
  {
    // The last capture found the chunk not copied: this one is not helped at all.
    ThreadPost threads;
    ASSERT_OK_AND_ASSIGN(const Captured got, CaptureWith(*a, threads.Post()));
    ExpectSameChunks(got.chunks, whole.chunks);
    EXPECT_EQ(got.steps, got.total);
    EXPECT_TRUE(threads.threads.empty()) << "no task posted";
  }
  // The hoard gone, the world chunk is copied again; a helper that copied it all while the
  // listing went on then meets the hoard spawned last, and its copies go.
  a->scene.DestroyActor(hoard->id);
  ASSERT_OK_AND_ASSIGN(const Captured plain, CaptureWith(*a, {}));
  ASSERT_OK_AND_ASSIGN(Hoard * late_hoard, a->scene.SpawnActor<Hoard>());
  late_hoard->coins.push_back(std::make_unique<Coin>());
  ASSERT_OK_AND_ASSIGN(const Captured want_late, CaptureWith(*a, {}));
  a->scene.DestroyActor(late_hoard->id);
  ASSERT_OK_AND_ASSIGN(const Captured plain_again, CaptureWith(*a, {}));
  ExpectSameChunks(plain_again.chunks, plain.chunks);
  ASSERT_OK_AND_ASSIGN(late_hoard, a->scene.SpawnActor<Hoard>());
  late_hoard->coins.push_back(std::make_unique<Coin>());
  {
    ThreadPost threads;
    ASSERT_OK_AND_ASSIGN(const Captured got, CaptureWith(*a, threads.Post()));
    EXPECT_EQ(threads.threads.size(), 1u) << "asked: the last capture's chunk was copied";
    EXPECT_EQ(got.steps, got.total) << "the chunk is captured whole by the steps";
    ASSERT_EQ(got.chunks.size(), want_late.chunks.size());
    for (std::size_t i = 0; i < got.chunks.size(); ++i) {
      if (got.chunks[i].id == world::kWorldChunk) continue;  // the hoard has another ID
      EXPECT_EQ(got.chunks[i].payload, want_late.chunks[i].payload) << "chunk " << i;
    }
  }
}

// A global's OnPreSave hook runs in its step, after the listing, and may change actors: a capture
// with one is not helped, so the actors are copied after it ran, as without a helper.
TEST_F(SaveLoadTest, AGlobalsPreSaveHookIsInTheSaveWithAHelperToo) {
  auto a = PlayedGame(30);
  ASSERT_OK_AND_ASSIGN(const Captured warm, CaptureWith(*a, {}));
  Steward steward;
  a->scene.ForEachActor([&](Actor& x) {
    if (steward.hero == nullptr) steward.hero = dynamic_cast<Character*>(&x);
  });
  ASSERT_NE(steward.hero, nullptr);
  steward.health = 12;
  ASSERT_OK(a->saves.world().Register(Name("steward"),
                                      {registry_->FindClass<Steward>(), &steward}));
  ASSERT_OK_AND_ASSIGN(const Captured want, CaptureWith(*a, {}));
  steward.hero->health = 1;
  ThreadPost threads;
  ASSERT_OK_AND_ASSIGN(const Captured got, CaptureWith(*a, threads.Post()));
  ExpectSameChunks(got.chunks, want.chunks);
  EXPECT_TRUE(threads.threads.empty()) << "no task posted";
  EXPECT_EQ(got.steps, got.total);
}

// A post that runs the task at once, on the game thread, leaves the copying to the game thread.
TEST_F(SaveLoadTest, AHelperPostedToTheGameThreadItselfLeavesItTheWork) {
  auto a = PlayedGame(30);
  ASSERT_OK_AND_ASSIGN(const Captured warm, CaptureWith(*a, {}));
  ASSERT_OK_AND_ASSIGN(const Captured want, CaptureWith(*a, {}));
  int posted = 0;
  ASSERT_OK_AND_ASSIGN(const Captured got,
                       CaptureWith(*a, [&posted](std::function<void()> task) {
                         ++posted;
                         task();
                       }));
  EXPECT_EQ(posted, 1);
  ExpectSameChunks(got.chunks, want.chunks);
  EXPECT_LT(got.steps, 80u) << "copied by the game thread as it ended the listing";
}

// A subject the helper cannot copy (a character's name that is not UTF-8) fails the capture with
// the status and message it fails with unhelped, at the same subject: the step that comes to it
// copies it again, and the subjects before it count as captured.
TEST_F(SaveLoadTest, ASubjectTheHelperCannotCopyFailsTheCaptureAsWithoutAHelper) {
  auto a = PlayedGame(30);
  ASSERT_OK_AND_ASSIGN(const Captured warm, CaptureWith(*a, {}));
  Character* c = nullptr;
  a->scene.ForEachActor([&](Actor& x) {
    if (dynamic_cast<Character*>(&x)) c = static_cast<Character*>(&x);  // the last one
  });
  ASSERT_NE(c, nullptr);
  c->name = "bad \xff\xfe name";
  auto refusal = [&](const record::CheckedPayload::Post& helper, std::size_t* captured) {
    std::unique_ptr<world::WorldCapture> cap = a->saves.world().BeginCapture(helper);
    Status run = cap->Run();
    *captured = cap->captured();
    EXPECT_EQ(cap->Run(), run) << "asked again";
    cap->Forget();
    return run;
  };
  std::size_t want_at = 0;
  const Status want = refusal({}, &want_at);
  ASSERT_THAT(want, StatusIs(StatusCode::kInvalidData, HasSubstr(c->id.ToString())));
  ThreadPost threads;
  std::size_t got_at = 0;
  EXPECT_EQ(refusal(threads.Post(), &got_at), want);
  EXPECT_EQ(got_at, want_at);
  LatePost late;
  EXPECT_EQ(refusal(late.Post(), &got_at), want);
  EXPECT_EQ(got_at, want_at);
  late.Run();
}

// OnSaved hooks run only once the store reported the save written: not for a capture that refused,
// not for a full disk (NoSpace, the slot keeps its previous save).
TEST_F(SaveLoadTest, SavedHooksRunOnlyAfterTheWrite) {
  // Room for about two saves of the world as it starts.
  std::size_t one_save = 0;
  {
    store::MemoryBackend scratch;
    auto s = std::make_unique<Game>(*registry_, scratch, mailbox_, workers_);
    s->scene.AddMap(kMap, sample_map_);
    ASSERT_OK(s->scene.Start(kMap));
    ASSERT_OK(SaveNow(*s, "s"));
    one_save = scratch.used();
  }
  store::MemoryBackend small(one_save * 22 / 10);
  auto g = std::make_unique<Game>(*registry_, small, mailbox_, workers_);
  g->scene.AddMap(kMap, sample_map_);
  ASSERT_OK(g->scene.Start(kMap));
  Settings settings;
  ASSERT_OK(
      g->saves.world().Register(Name("settings"), {registry_->FindClass<Settings>(), &settings}));
  std::optional<Result<SaveOutcome>> got;
  g->saves.Save("s", {}, [&](Result<SaveOutcome> r) { got.emplace(std::move(r)); });
  EXPECT_EQ(settings.saved, 0) << "OnSaved ran before the store wrote";
  ASSERT_OK(g->saves.Flush(Deadline()));
  ASSERT_TRUE(got.has_value());
  ASSERT_OK(got->status());
  EXPECT_EQ(settings.saved, 1);
  ASSERT_OK_AND_ASSIGN(auto first, Capture(*g));

  // A capture that refuses.
  Character* c = nullptr;
  g->scene.ForEachActor([&](Actor& x) {
    if (!c) c = dynamic_cast<Character*>(&x);
  });
  const std::string name = c->name;
  c->name = "\xc3";
  EXPECT_THAT(SaveNow(*g, "s"), StatusIs(StatusCode::kInvalidData));
  EXPECT_EQ(settings.saved, 1);
  c->name = name;

  // A full disk: the world grew past the backend's room.
  ASSERT_OK(PlaySample(g->scene, 400, 3));
  for (int i = 0; i < 3000; ++i) {
    ASSERT_OK_AND_ASSIGN(Pickup * p, g->scene.SpawnActor<Pickup>());
    p->kind = Name("Gem" + std::to_string(i));
    p->value = i;
  }
  EXPECT_THAT(SaveNow(*g, "s"), StatusIs(StatusCode::kNoSpace));
  EXPECT_EQ(settings.saved, 1);
  auto b = std::make_unique<Game>(*registry_, small, mailbox_, workers_);
  b->scene.AddMap(kMap, sample_map_);
  ASSERT_OK(b->scene.Start(kMap));
  Settings settings2;
  ASSERT_OK(
      b->saves.world().Register(Name("settings"), {registry_->FindClass<Settings>(), &settings2}));
  ASSERT_OK(LoadNow(*b, "s"));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  ASSERT_OK_AND_ASSIGN(auto diff, world::DiffWorlds(first, loaded, 1000));
  for (const std::string& line : diff) {
    // Only the components play added (not made again here) may differ.
    EXPECT_THAT(line, HasSubstr("!= (missing)")) << line;
  }
}

// What the game destroys while a save is being written gets no OnSaved hook once the write ends
// (the save kept only its address): an actor, the component of another, and a registered object
// let go of. What is still there gets its hook once.
TEST_F(SaveLoadTest, ObjectsDestroyedWhileTheirSaveIsWrittenGetNoSavedHook) {
  auto g = NewGame();
  ASSERT_OK(g->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(HookedCrate * kept, g->scene.SpawnActor<HookedCrate>());
  ASSERT_OK_AND_ASSIGN(HookedCrate * doomed, g->scene.SpawnActor<HookedCrate>());
  ASSERT_OK_AND_ASSIGN(HookedCrate * carrier, g->scene.SpawnActor<HookedCrate>());
  ASSERT_OK_AND_ASSIGN(Component * plaque,
                       g->scene.AddComponent(G(kHeroId), Name("Plaque"), Name("HookedPlaque")));
  ASSERT_OK_AND_ASSIGN(Component * carried,
                       g->scene.AddComponent(carrier->id, Name("Plaque"), Name("HookedPlaque")));
  const reflect::ClassInfo* settings_class = registry_->FindClass<Settings>();
  Settings stays, let_go;
  ASSERT_OK(g->saves.world().Register(Name("stays"), {settings_class, &stays}));
  ASSERT_OK(g->saves.world().Register(Name("let_go"), {settings_class, &let_go}));
  const void* doomed_at = doomed;
  const void* carrier_at = carrier;
  const void* carried_at = carried;
  const std::vector<const void*> saved = SaveWhile(*g, "d", [&] {
    EXPECT_EQ(doomed->pre_saves, 1);
    g->scene.DestroyActor(doomed->id);
    g->scene.DestroyActor(carrier->id);
    g->saves.world().Unregister(Name("let_go"));
  });
  EXPECT_THAT(saved, Not(Contains(doomed_at)));
  EXPECT_THAT(saved, Not(Contains(carrier_at)));
  EXPECT_THAT(saved, Not(Contains(carried_at)));
  EXPECT_EQ(kept->saved, 1);
  EXPECT_EQ(static_cast<HookedPlaque*>(plaque)->saved, 1);
  EXPECT_EQ(stays.saved, 1);
  EXPECT_EQ(let_go.saved, 0);
  EXPECT_EQ(saved.size(), 2u) << "the kept crate and the hero's plaque";
}

// OnSaved hooks run in capture order, each subject checked right before its own: a hook that
// destroys a later subject keeps that one's hook from running.
TEST_F(SaveLoadTest, ASavedHookThatDestroysALaterSubjectSkipsItsHook) {
  auto g = NewGame();
  ASSERT_OK(g->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(HookedCrate * first, g->scene.SpawnActor<HookedCrate>());
  ASSERT_OK_AND_ASSIGN(HookedCrate * second, g->scene.SpawnActor<HookedCrate>());
  const Guid second_id = second->id;
  const void* second_at = second;
  first->on_saved = [&] { g->scene.DestroyActor(second_id); };
  std::vector<const void*> saved;
  g_saved = &saved;
  ASSERT_OK(SaveNow(*g, "h"));
  g_saved = nullptr;
  EXPECT_EQ(first->saved, 1);
  EXPECT_EQ(g->scene.FindActor(second_id), nullptr);
  EXPECT_THAT(saved, Not(Contains(second_at)));
}

// The object at a captured address is checked to be the same one: a registered object the game
// let go of, with another made at its address and registered under another name, gets no hook.
TEST_F(SaveLoadTest, AnAddressReusedWhileTheSaveIsWrittenGetsNoSavedHook) {
  auto g = NewGame();
  ASSERT_OK(g->scene.Start(kSmallMap));
  const reflect::ClassInfo* settings_class = registry_->FindClass<Settings>();
  alignas(Settings) unsigned char room[sizeof(Settings)];
  auto* first = new (room) Settings;
  ASSERT_OK(g->saves.world().Register(Name("first"), {settings_class, first}));
  std::optional<Result<SaveOutcome>> got;
  g->saves.Save("r", {}, [&](Result<SaveOutcome> r) { got.emplace(std::move(r)); });
  ASSERT_FALSE(got.has_value()) << "the save is still being written";
  g->saves.world().Unregister(Name("first"));
  first->~Settings();
  auto* second = new (room) Settings;
  ASSERT_OK(g->saves.world().Register(Name("second"), {settings_class, second}));
  ASSERT_OK(g->saves.Flush(Deadline()));
  ASSERT_TRUE(got.has_value());
  ASSERT_OK(got->status());
  EXPECT_EQ(second->saved, 0);
  g->saves.world().Unregister(Name("second"));
  second->~Settings();
}

// Opening a map while a save is written: what the old world held gets no hook (its objects are
// gone, and new ones may sit at their addresses under the same IDs); registered objects do.
TEST_F(SaveLoadTest, AMapOpenedWhileTheSaveIsWrittenEndsTheOldWorldsHooks) {
  auto g = NewGame();
  ASSERT_OK(g->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(HookedCrate * crate, g->scene.SpawnActor<HookedCrate>());
  const void* crate_at = crate;
  Settings stays;
  ASSERT_OK(g->saves.world().Register(Name("stays"), {registry_->FindClass<Settings>(), &stays}));
  const std::vector<const void*> saved = SaveWhile(*g, "m", [&] {
    ASSERT_OK(g->scene.OpenMap(kSmallMap));
  });
  EXPECT_THAT(saved, Not(Contains(crate_at)));
  EXPECT_EQ(stays.saved, 1);
}

// Host-listed globals are found again by role and class, player parts by index and part: a map
// opened while the save is written ends the hooks of the old world's subsystems and players'
// parts (the host made new ones), not those of the game instance's subsystems.
TEST_F(SaveLoadTest, AMapOpenedWhileTheSaveIsWrittenEndsTheHooksOfItsGlobalsAndPlayers) {
  auto g = NewGame();
  g->scene.AddMap(kSmallMap, SmallMap({.weather_class = "HookedWeather",
                                       .journal_class = "HookedJournal",
                                       .controller_class = "HookedController"}));
  ASSERT_OK(g->scene.Start(kSmallMap));
  auto* weather = g->scene.GetWorldSubsystem<HookedWeather>();
  auto* journal = g->scene.GetSubsystem<HookedJournal>();
  ASSERT_EQ(g->scene.players().size(), 1u);
  auto* controller = dynamic_cast<HookedController*>(g->scene.players()[0].controller);
  ASSERT_NE(weather, nullptr);
  ASSERT_NE(journal, nullptr);
  ASSERT_NE(controller, nullptr);
  // Nothing in the way: each gets its hook once.
  ASSERT_OK(SaveNow(*g, "m"));
  EXPECT_EQ(weather->saved, 1);
  EXPECT_EQ(journal->saved, 1);
  EXPECT_EQ(controller->saved, 1);

  const void* weather_at = weather;
  const void* controller_at = controller;
  const std::vector<const void*> saved = SaveWhile(*g, "m", [&] {
    ASSERT_OK(g->scene.OpenMap(kSmallMap));
  });
  EXPECT_EQ(journal->saved, 2) << "the game instance's subsystem outlives the map";
  EXPECT_THAT(saved, ElementsAre(journal));
  EXPECT_THAT(saved, Not(Contains(weather_at)));
  EXPECT_THAT(saved, Not(Contains(controller_at)));
  EXPECT_EQ(g->scene.GetWorldSubsystem<HookedWeather>()->saved, 0) << "not captured";
  EXPECT_EQ(dynamic_cast<HookedController*>(g->scene.players()[0].controller)->saved, 0);
}

// An object owned through a saved field whose class has an OnSaved hook its owner's lacks: its
// hook runs once the write ends, and not when its owner was destroyed meanwhile.
TEST_F(SaveLoadTest, AnOwnedObjectsSavedHookRunsOnlyWhileItsOwnerIsThere) {
  auto g = NewGame();
  ASSERT_OK(g->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(Ledger * kept, g->scene.SpawnActor<Ledger>());
  ASSERT_OK_AND_ASSIGN(Ledger * doomed, g->scene.SpawnActor<Ledger>());
  kept->entry = std::make_unique<LedgerEntry>();
  doomed->entry = std::make_unique<LedgerEntry>();
  const LedgerEntry* kept_entry = kept->entry.get();
  const void* doomed_entry = doomed->entry.get();
  const std::vector<const void*> saved = SaveWhile(*g, "o", [&] {
    g->scene.DestroyActor(doomed->id);
  });
  EXPECT_EQ(kept_entry->saved, 1);
  EXPECT_THAT(saved, ElementsAre(kept_entry));
  EXPECT_THAT(saved, Not(Contains(doomed_entry)));
}

// --- 6. Events ---------------------------------------------------------------------------------

TEST_F(SaveLoadTest, EventsComeInOrder) {
  auto a = PlayedGame(10);
  RecordingEvents events;
  a->saves.SetEvents(&events);
  ASSERT_OK(SaveNow(*a, "e"));
  EXPECT_THAT(events.log, ElementsAre("SaveFinished e Ok"));
  events.log.clear();
  ASSERT_OK(LoadNow(*a, "e"));
  EXPECT_THAT(events.log,
              ElementsAre("LoadStarted e", "Progress Reading", "Progress Loading Assets",
                          "Progress Opening Map", "Progress Setting Values", "LoadFinished e Ok"));
  events.log.clear();
  ASSERT_OK(LoadNow(*a, "e", MapChoice::kKeepCurrentMap));
  EXPECT_THAT(events.log,
              ElementsAre("LoadStarted e", "Progress Reading", "Progress Loading Assets",
                          "Progress Setting Values", "LoadFinished e Ok"));
  a->saves.SetEvents(nullptr);
}

// --- 7. A damaged record anywhere refuses the whole load -----------------------------------------

// Re-writes the newest save of `slot` with `edit` applied to the payload of chunk `id`; the
// format's checksums are recomputed on write, so only the record check can find the damage.
void DamageChunk(Game& g, std::string_view slot, std::string_view id,
                 const std::function<bool(Bytes&)>& edit) {
  std::optional<Result<store::LoadResult>> read;
  g.store.Load(slot, [&](Result<store::LoadResult> r) { read.emplace(std::move(r)); });
  ASSERT_OK(g.store.Flush(Deadline()));
  ASSERT_TRUE(read.has_value());
  ASSERT_OK(*read);
  format::File file = std::move((*read)->file);
  bool edited = false;
  for (format::Chunk& c : file.chunks) {
    const format::ChunkId chunk_id = c.id();
    if (chunk_id.view() != id) continue;
    Bytes data = c.data();
    ASSERT_TRUE(edit(data)) << "nothing to damage in " << id;
    c.set_data(std::move(data));
    edited = true;
  }
  ASSERT_TRUE(edited) << "no chunk " << id;
  std::optional<Result<store::SaveInfo>> wrote;
  g.store.Save(slot, std::move(file),
               [&](Result<store::SaveInfo> r) { wrote.emplace(std::move(r)); });
  ASSERT_OK(g.store.Flush(Deadline()));
  ASSERT_TRUE(wrote.has_value());
  ASSERT_OK(*wrote);
}

// Replaces the byte at `offset` past the first `pattern` in `data` with `to`.
// The world chunks of a save file (GLOB, WRLD, PLYR), taken out of it as a load takes them.
std::vector<world::WorldChunk> WorldChunksOf(format::File& file) {
  std::vector<world::WorldChunk> chunks;
  for (format::Chunk& c : file.chunks) {
    const format::ChunkId chunk_id = c.id();
    const std::string_view id = chunk_id.view();
    if (id != "GLOB" && id != "WRLD" && id != "PLYR") continue;
    world::WorldChunk w;
    std::copy_n(id.data(), 4, w.id.begin());
    w.key = c.key();
    w.payload = c.TakeData();
    chunks.push_back(std::move(w));
  }
  return chunks;
}

bool Poke(Bytes& data, std::string_view pattern, std::size_t offset, std::uint8_t to) {
  std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  const std::size_t at = text.find(pattern);
  if (at == std::string_view::npos) return false;
  data[at + offset] = to;
  return true;
}

TEST_F(SaveLoadTest, ADamagedRecordAnywhereRefusesTheWholeLoad) {
  struct Case {
    const char* chunk;
    std::function<bool(Bytes&)> edit;
    const char* what;
  };
  const Case cases[] = {
      // A character's name string stops being UTF-8.
      {"WRLD", [](Bytes& d) { return Poke(d, "npc_", 0, 0xFF); }, "string value"},
      // The ACTR flags of some actor get a bit no version defines.
      {"WRLD", [](Bytes& d) { return Poke(d, "ACTR", 5, 0x80); }, "ACTR flags"},
      // A global's role string stops being UTF-8.
      {"GLOB", [](Bytes& d) { return Poke(d, "\x09GameState", 1, 0xFF); }, "GLBL role"},
      // A player's part is not 0..2.
      {"PLYR", [](Bytes& d) { return Poke(d, std::string_view("PLYR\x02\x00", 6), 6, 7); },
       "PLYR part"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.chunk) + " " + c.what);
    auto a = PlayedGame(60);
    ASSERT_OK(SaveNow(*a, "dmg"));
    DamageChunk(*a, "dmg", c.chunk, c.edit);
    for (MapChoice choice : {MapChoice::kOpenSavedMap, MapChoice::kKeepCurrentMap}) {
      auto b = NewGame();
      ASSERT_OK(b->scene.Start(kMap));
      ASSERT_OK(PlaySample(b->scene, 20, 77));
      ASSERT_OK_AND_ASSIGN(auto before, Capture(*b));
      std::set<Guid> ids;
      b->scene.ForEachActor([&](Actor& x) { ids.insert(x.id); });
      RecordingEvents events;
      b->saves.SetEvents(&events);
      EXPECT_THAT(LoadNow(*b, "dmg", choice),
                  StatusIs(StatusCode::kDamaged, HasSubstr(std::string("chunk ") + c.chunk)));
      EXPECT_THAT(events.log, Contains("LoadFinished dmg Damaged"));
      b->saves.SetEvents(nullptr);
      std::set<Guid> ids_after;
      b->scene.ForEachActor([&](Actor& x) { ids_after.insert(x.id); });
      EXPECT_EQ(ids, ids_after) << "an actor was removed or spawned";
      ASSERT_OK_AND_ASSIGN(auto after, Capture(*b));
      EXPECT_SAME_WORLD(before, after);
    }
  }
}

// Edits save `slot` into a file no save writes: a tombstone of actor `id` besides its records,
// first among the world chunk's records or last.
void AddTombstoneOf(Game& g, std::string_view slot, Guid id, bool first) {
  DamageChunk(g, slot, "WRLD", [&](Bytes& data) {
    Result<record::Payload> p = record::DecodePayload(data);
    if (!p.ok()) return false;
    for (const record::Record& r : p->records) {
      if (r.subject != id || r.Find(world::kActorSection) == nullptr) continue;
      record::Record tombstone = r;
      for (record::Section& s : tombstone.sections) {
        if (record::SameSection(s.id, world::kActorSection)) {
          world::ActorSection destroyed;
          destroyed.destroyed = true;
          s.bytes = world::EncodeActor(destroyed);
        }
      }
      p->records.insert(first ? p->records.begin() : p->records.end(), std::move(tombstone));
      Result<Bytes> out = record::EncodePayload(*p);
      if (!out.ok()) return false;
      data = *out;
      return true;
    }
    return false;
  });
}

// A file no save writes: an actor held destroyed that also has a live record, and a record of
// its component. The actor goes, and neither record is applied (their objects go first).
TEST_F(SaveLoadTest, AnActorHeldDestroyedWithOtherRecordsOfItGoesAndTheyAreNotApplied) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK(SaveNow(*a, "dup"));
  AddTombstoneOf(*a, "dup", G(kHeroId), /*first=*/false);
  for (MapChoice choice : {MapChoice::kOpenSavedMap, MapChoice::kKeepCurrentMap}) {
    auto b = NewGame();
    ASSERT_OK(b->scene.Start(kSmallMap));
    ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "dup", choice));
    EXPECT_EQ(b->scene.FindActor(G(kHeroId)), nullptr);
    EXPECT_EQ(out.report.removed, 1u);
    EXPECT_THAT(out.report.messages,
                Contains(AllOf(HasSubstr(kHeroId), HasSubstr("holds its actor destroyed"))))
        << Lines(out.report.messages);
  }
}

// Two tombstones of one actor (a file no save writes): it is removed once.
TEST_F(SaveLoadTest, AnActorWithTwoTombstonesIsRemovedOnce) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  a->scene.DestroyActor(G(kHeroId));
  ASSERT_OK(SaveNow(*a, "twice"));
  // The save holds the hero as a tombstone already; a second one goes first.
  AddTombstoneOf(*a, "twice", G(kHeroId), /*first=*/true);
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "twice", MapChoice::kKeepCurrentMap));
  EXPECT_EQ(b->scene.FindActor(G(kHeroId)), nullptr);
  EXPECT_EQ(out.report.removed, 1u);
  EXPECT_THAT(out.report.messages, Not(Contains(HasSubstr("was not applied"))))
      << Lines(out.report.messages);
}

// The same, with a tombstone that comes before the records it drops, among hundreds of placed
// actors the save holds destroyed (and their components: more objects than the smallest filter
// of the objects that go is sized for).
TEST_F(SaveLoadTest, ATombstoneBeforeOtherRecordsOfItsActorAmongManyDropsThem) {
  sample_map_ = BuildSampleMap(1200, 11);
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kMap));
  std::vector<Guid> placed;
  a->scene.ForEachActor([&](Actor& x) {
    if (!x.spawned && !x.components.empty()) placed.push_back(x.id);
  });
  ASSERT_GT(placed.size(), 302u);
  const Guid kept = placed.back();  // held both as it is and as destroyed
  for (std::size_t k = 0; k < 300; ++k) a->scene.DestroyActor(placed[k]);
  ASSERT_OK(SaveNow(*a, "many"));
  AddTombstoneOf(*a, "many", kept, /*first=*/true);
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "many", MapChoice::kKeepCurrentMap));
  EXPECT_EQ(out.report.removed, 301u);
  EXPECT_EQ(b->scene.FindActor(kept), nullptr);
  EXPECT_EQ(b->scene.FindActor(placed[0]), nullptr);
  EXPECT_NE(b->scene.FindActor(placed[300]), nullptr);
  // The actor's record and each of its components' are reported, and nothing else is dropped.
  std::size_t dropped = 0;
  for (const std::string& m : out.report.messages) {
    if (m.find("holds its actor destroyed") == std::string::npos) continue;
    ++dropped;
  }
  EXPECT_GE(dropped, 2u) << Lines(out.report.messages);
  EXPECT_THAT(out.report.messages, Contains(AllOf(HasSubstr(kept.ToString()),
                                                  HasSubstr("holds its actor destroyed"))));
  EXPECT_EQ(dropped, out.report.messages.size()) << Lines(out.report.messages);
}

// A save writes its chunks at the store's write options: compression off stores them as they
// are, and the world loads back the same; a level zstd lacks fails the save with InvalidInput and
// writes nothing, the slot keeping its older save.
TEST_F(SaveLoadTest, ASaveFollowsTheStoresWriteOptions) {
  auto packed = PlayedGame();
  ASSERT_OK_AND_ASSIGN(SaveOutcome packed_save, SaveNow(*packed, "packed"));
  store_options_.write.compress = false;
  auto a = PlayedGame();  // the same play, so the same world
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));
  ASSERT_OK_AND_ASSIGN(SaveOutcome plain_save, SaveNow(*a, "plain"));
  EXPECT_EQ(plain_save.records, packed_save.records);
  EXPECT_GT(plain_save.info.size, packed_save.info.size * 3 / 2) << "the chunks were compressed";
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK(LoadNow(*b, "plain"));
  AddBackpacks(b->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  EXPECT_SAME_WORLD(saved, loaded);

  store_options_.write = {.compress = true, .zstd_level = 1000};  // (zstd's levels end at 22)
  auto c = PlayedGame(90);
  EXPECT_THAT(SaveNow(*c, "plain"), StatusIs(StatusCode::kInvalidInput, HasSubstr("zstd level")));
  EXPECT_EQ(c->saves.world().held(), nullptr) << "a save that failed became the held save";
  auto d = NewGame();
  ASSERT_OK(d->scene.Start(kOtherMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*d, "plain"));
  EXPECT_EQ(out.copy, plain_save.info.copy) << "the failed save wrote the slot";
  EXPECT_FALSE(out.recovered);
  AddBackpacks(d->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto again, Capture(*d));
  EXPECT_SAME_WORLD(saved, again);
}

// --- 8. Many actors ----------------------------------------------------------------------------

// The check counts the world chunk's actors spawned in play, by which a load reserves its list of
// actors to spawn again: exactly, on one thread, split in two halves, and checked as a load
// decodes it alike.
TEST_F(SaveLoadTest, TheCheckCountsTheActorsSpawnedInPlay) {
  sample_map_ = BuildSampleMap(10000, 21);
  auto a = PlayedGame(2000, 21);
  // (Each local player's own pawn is spawned too, and saved in its player's chunk.)
  std::size_t spawned = 0;
  a->scene.ForEachActor([&](Actor& x) { spawned += x.spawned ? 1 : 0; });
  ASSERT_EQ(a->scene.players().size(), 1u);
  ASSERT_TRUE(a->scene.players().front().pawn->spawned);
  --spawned;
  ASSERT_GT(spawned, 100u);
  ASSERT_OK_AND_ASSIGN(const std::vector<world::WorldChunk> chunks, Capture(*a));
  const record::CheckedPayload::Post in_turn = [](std::function<void()> task) { task(); };
  for (const bool split : {false, true}) {
    SCOPED_TRACE(split ? "split in two halves" : "on one thread");
    ASSERT_OK_AND_ASSIGN(
        std::shared_ptr<const world::LoadedGame> game,
        world::LoadedGame::Check(chunks, *registry_, split ? in_turn : nullptr));
    bool world_met = false;
    for (const world::LoadedGame::Chunk& c : game->chunks()) {
      if (c.id != world::kWorldChunk) {
        EXPECT_EQ(c.spawned, 0u);
        continue;
      }
      world_met = true;
      if (split) {
        EXPECT_GE(c.payload.bytes().size(), record::CheckedPayload::kSplitBytes);
      }
      EXPECT_EQ(c.spawned, spawned);
    }
    EXPECT_TRUE(world_met);
  }
  // A load from the file checks the world chunk as it is decoded (CheckWhileFilled); the game it
  // loaded is held after it.
  ASSERT_OK(SaveNow(*a, "big"));
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "big"));
  EXPECT_EQ(out.report.spawned, spawned);
  const std::shared_ptr<const world::LoadedGame> held = b->saves.world().held();
  ASSERT_NE(held, nullptr);
  const world::LoadedGame::Chunk* loaded = held->Find(world::kWorldChunk, held->map());
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->spawned, spawned);
}

TEST_F(SaveLoadTest, TenThousandActorsRoundTrip) {
  sample_map_ = BuildSampleMap(10000, 21);
  auto a = PlayedGame(2000, 21);
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));
  ASSERT_OK_AND_ASSIGN(SaveOutcome so, SaveNow(*a, "big"));
  EXPECT_GT(so.records, 9000u);
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK(LoadNow(*b, "big"));
  AddBackpacks(b->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  EXPECT_SAME_WORLD(saved, loaded);

  // Its world chunk is large enough that a load checks it in two halves on two workers. Damaged
  // in the second half (the last actor record's ACTR flags), it is refused as the check in order
  // refuses it, with the same message, and the world stays as it was.
  DamageChunk(*a, "big", "WRLD", [](Bytes& d) {
    const std::string_view text(reinterpret_cast<const char*>(d.data()), d.size());
    const std::size_t at = text.rfind("ACTR");
    if (at == std::string_view::npos) return false;
    d[at + 5] = 0x80;
    return true;
  });
  std::optional<Result<store::LoadResult>> read;
  a->store.Load("big", [&](Result<store::LoadResult> r) { read.emplace(std::move(r)); });
  ASSERT_OK(a->store.Flush(Deadline()));
  ASSERT_TRUE(read.has_value());
  ASSERT_OK(*read);
  std::vector<world::WorldChunk> chunks = WorldChunksOf((*read)->file);
  for (const world::WorldChunk& w : chunks) {
    if (w.id == world::kWorldChunk) {
      EXPECT_GE(w.payload.size(), record::CheckedPayload::kSplitBytes);
    }
  }
  const auto in_order = world::LoadedGame::Check(std::move(chunks), *registry_);
  ASSERT_THAT(in_order, StatusIs(StatusCode::kDamaged, HasSubstr("chunk WRLD")));
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kOtherMap));
  ASSERT_OK_AND_ASSIGN(auto before, Capture(*c));
  EXPECT_EQ(LoadNow(*c, "big").status(), in_order.status());
  ASSERT_OK_AND_ASSIGN(auto after, Capture(*c));
  EXPECT_SAME_WORLD(before, after);
}

// A world chunk large enough to be decoded while it is checked, whose frame passes every check
// the read makes but does not decode (its middle garbled behind recomputed checksums): the load
// reads again, the store decoding, which takes the other copy, the older save, as a load always
// did.
TEST_F(SaveLoadTest, AWorldChunkThatDoesNotDecodeIsLoadedFromTheOtherCopy) {
  sample_map_ = BuildSampleMap(10000, 21);
  auto a = PlayedGame(2000, 21);
  ASSERT_OK_AND_ASSIGN(SaveOutcome older_save, SaveNow(*a, "big"));
  ASSERT_OK_AND_ASSIGN(auto older, Capture(*a));
  const std::vector<Guid> backpacks = Backpacks(a->scene);
  ASSERT_OK(PlaySample(a->scene, 200, 5));
  ASSERT_OK_AND_ASSIGN(SaveOutcome newer_save, SaveNow(*a, "big"));
  ASSERT_NE(newer_save.info.copy, older_save.info.copy);

  ASSERT_OK_AND_ASSIGN(const store::FileName name,
                       store::FileName::ForSlot("rolly", "big", newer_save.info.copy));
  std::optional<Bytes> bytes = backend_.Peek(name);
  ASSERT_TRUE(bytes.has_value());
  format::ReadOptions left;
  left.leave_encoded_from = 0;
  ASSERT_OK_AND_ASSIGN(const format::File file, format::Read(*bytes, left));
  ByteView frame;
  for (const format::Chunk& c : file.chunks) {
    const format::ChunkId id = c.id();
    if (id.view() != "WRLD") continue;
    frame = c.stored();
    // Large enough for the load to decode it while checking it.
    EXPECT_GE(c.decoded_size(), record::CheckedPayload::kSplitBytes);
  }
  ASSERT_GT(frame.size(), 128u * 1024);
  const auto at = std::search(bytes->begin(), bytes->end(), frame.begin(), frame.end());
  ASSERT_NE(at, bytes->end());
  const std::size_t frame_at = static_cast<std::size_t>(at - bytes->begin());
  // Garbled bytes may fall on a block's header (which the read checks) or on literals (which
  // decode to other bytes): the first place from the middle on where they make the frame fail
  // only to decode.
  std::optional<Bytes> garbled;
  for (std::size_t k = 0; k < 64 && !garbled; ++k) {
    const std::size_t from = frame.size() / 2 + k * 997;
    if (from + 64 > frame.size()) break;
    Bytes b = *bytes;
    std::fill_n(b.begin() + static_cast<std::ptrdiff_t>(frame_at + from), 64, std::uint8_t{0xFF});
    format_testing::Reseal(&b);
    const Status whole = format::Read(b).status();
    if (format::Read(b, left).ok() &&
        whole.message().find("does not decode") != std::string::npos) {
      garbled = std::move(b);
    }
  }
  ASSERT_TRUE(garbled.has_value());
  backend_.Poke(name, *garbled);

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "big"));
  EXPECT_EQ(out.copy, older_save.info.copy);
  EXPECT_TRUE(out.recovered);
  AddBackpacks(b->scene, backpacks);
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  EXPECT_SAME_WORLD(older, loaded);

  // A load cancelled as it starts still checks what it read, so the store learns the copy it
  // took does not decode (here through a backend object of its own, whose stores know nothing
  // yet): the next save then goes over that copy, and the older save stays.
  ASSERT_OK_AND_ASSIGN(const store::FileName older_name,
                       store::FileName::ForSlot("rolly", "big", older_save.info.copy));
  const std::optional<Bytes> older_bytes = backend_.Peek(older_name);
  ASSERT_TRUE(older_bytes.has_value());
  store::FaultBackend fresh(&backend_);
  Game c(*registry_, fresh, mailbox_, workers_);
  c.scene.AddMap(kOtherMap, BuildSampleMap(20, 5));
  ASSERT_OK(c.scene.Start(kOtherMap));
  std::optional<Result<LoadOutcome>> cancelled;
  c.saves.Load("big", {}, [&](Result<LoadOutcome> r) { cancelled.emplace(std::move(r)); });
  ASSERT_OK(c.saves.CancelLoad());
  ASSERT_OK(c.saves.Flush(Deadline()));
  ASSERT_TRUE(cancelled.has_value());
  EXPECT_THAT(*cancelled, StatusIs(StatusCode::kCancelled));
  ASSERT_OK_AND_ASSIGN(SaveOutcome after_cancel, SaveNow(c, "big"));
  EXPECT_EQ(after_cancel.info.copy, newer_save.info.copy);
  EXPECT_EQ(backend_.Peek(older_name), older_bytes);
}

// --- More: the comparison itself, waiting components, other maps -------------------------------

// The comparison the tests rely on sees a change of any kind.
TEST_F(SaveLoadTest, TheComparisonSeesChanges) {
  auto a = PlayedGame(10);
  ASSERT_OK_AND_ASSIGN(auto before, Capture(*a));
  ASSERT_OK(PlaySample(a->scene, 10, 5));
  ASSERT_OK_AND_ASSIGN(auto after, Capture(*a));
  ASSERT_OK_AND_ASSIGN(auto diff, world::DiffWorlds(before, after, 1000));
  EXPECT_GE(diff.size(), 10u) << Lines(diff);
  EXPECT_THAT(diff, Contains(HasSubstr("TimeOfDay")));
  EXPECT_THAT(diff, Contains(HasSubstr("ControlRotation")));
  EXPECT_THAT(diff, Contains(HasSubstr("ACTR")));
}

// A component record waiting for its component is a record whose object is not there: a save
// made before the game creates the component keeps it (docs/world.md, "What a load does", 3).
TEST_F(SaveLoadTest, AWaitingComponentRecordIsKeptByTheNextSave) {
  auto a = PlayedGame(100, 9);
  const std::vector<Guid> backpacks = Backpacks(a->scene);
  ASSERT_FALSE(backpacks.empty());
  auto* bag = static_cast<InventoryComponent*>(
      a->scene.FindActor(backpacks.front())->FindComponent(Name("Backpack")));
  bag->capacity = 44;
  ASSERT_OK(SaveNow(*a, "w"));
  {
    auto b = NewGame();
    ASSERT_OK(b->scene.Start(kMap));
    ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "w"));
    EXPECT_EQ(out.report.waiting, backpacks.size());
    ASSERT_OK(SaveNow(*b, "w2"));  // an autosave before the game made the backpacks
  }
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*c, "w2"));
  EXPECT_EQ(out.report.waiting, backpacks.size()) << "the Backpack records were dropped";
  ASSERT_OK_AND_ASSIGN(Component * made, c->scene.AddComponent(backpacks.front(), Name("Backpack"),
                                                               Name("InventoryComponent")));
  EXPECT_EQ(static_cast<InventoryComponent*>(made)->capacity, 44);
}

// The small map's statue's Plaque, or null.
Component* Plaque(Game& g) {
  Actor* statue = g.scene.FindActor(G(kStatueId));
  return statue ? statue->FindComponent(Name("Plaque")) : nullptr;
}

// A component record that waits resolves its references when it applies, as the world is then:
// to a placed actor, to an actor the load spawned again and to another actor's component (saved
// by their records), to a local player's pawn and to a global (saved by the IDs a capture derives);
// and so it does once a save wrote it again while it waited (which keeps every reference by ID).
TEST_F(SaveLoadTest, AWaitingComponentRecordsReferencesAreResolvedWhenItApplies) {
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(Statue * spawned, a->scene.SpawnActor<Statue>());
  const Guid spawned_id = spawned->id;
  auto tie = [](Game& g, std::string_view name, Actor* to) -> Status {
    ROLLY_ASSIGN_OR_RETURN(Component * made,
                           g.scene.AddComponent(G(kHeroId), Name(name), Name("LeashComponent")));
    static_cast<LeashComponent*>(made)->tied_to = to;
    static_cast<LeashComponent*>(made)->log = g.scene.GetSubsystem<QuestLog>();
    static_cast<LeashComponent*>(made)->toy = Plaque(g);
    return OkStatus();
  };
  ASSERT_NE(a->scene.GetSubsystem<QuestLog>(), nullptr);
  ASSERT_NE(Plaque(*a), nullptr);
  ASSERT_EQ(a->scene.players().size(), 1u);
  ASSERT_OK(tie(*a, "ToStatue", a->scene.FindActor(G(kStatueId))));
  ASSERT_OK(tie(*a, "ToSpawned", spawned));
  ASSERT_OK(tie(*a, "ToPawn", a->scene.players().front().pawn));
  ASSERT_OK(SaveNow(*a, "leash"));

  for (const bool saved_again : {false, true}) {
    SCOPED_TRACE(saved_again ? "saved again while waiting" : "loaded");
    ASSERT_NO_FATAL_FAILURE(ExpectLeashesTied("leash", saved_again, spawned_id));
  }
}

// Loads `slot` (when `saved_again`, a game loads it and saves it as "again" first, and that is
// loaded), makes the three leashes whose records wait, and expects each tied as the test tied it.
void SaveLoadTest::ExpectLeashesTied(std::string_view slot, bool saved_again, Guid spawned_id) {
  if (saved_again) {
    auto between = NewGame();
    ASSERT_OK(between->scene.Start(kSmallMap));
    ASSERT_OK(LoadNow(*between, slot));
    ASSERT_OK(SaveNow(*between, "again"));
    slot = "again";
  }
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, slot));
  EXPECT_EQ(out.report.waiting, 3u) << Lines(out.report.messages);
  auto made = [&](std::string_view name) -> LeashComponent* {
    Result<Component*> c = b->scene.AddComponent(G(kHeroId), Name(name), Name("LeashComponent"));
    return c.ok() ? static_cast<LeashComponent*>(*c) : nullptr;
  };
  const std::pair<const char*, Actor*> expected[] = {
      {"ToStatue", b->scene.FindActor(G(kStatueId))},
      {"ToSpawned", b->scene.FindActor(spawned_id)},
      {"ToPawn", b->scene.players().front().pawn}};
  ASSERT_NE(Plaque(*b), nullptr);
  for (const auto& [name, to] : expected) {
    ASSERT_NE(to, nullptr) << name;
    LeashComponent* leash = made(name);
    ASSERT_NE(leash, nullptr) << name;
    EXPECT_EQ(leash->tied_to, to) << name;
    EXPECT_EQ(leash->log, b->scene.GetSubsystem<QuestLog>()) << name;
    EXPECT_EQ(leash->toy, Plaque(*b)) << name;
  }
}

// The subject ID sections.h derives from `identity` ("registered\n" and the name, say), worked
// out from its text: world::Derive*Id takes Names, and would make one of it.
Guid DerivedIdOf(std::string_view identity) {
  auto digest = [&](std::string_view prefix) {
    const std::string text = std::string(prefix) + std::string(identity);
    return Checksum::Of(ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()))
        .bits();
  };
  return Guid(digest("rolly.id.a:"), digest("rolly.id.b:"));
}

// Rewrites the records of chunk `chunk` of the newest save of `slot`: `edit` is given each
// section `id` with its record (the payload's tables too), and says whether it changed it. Fails
// the test when none changed.
void EditSections(
    Game& g, std::string_view slot, std::string_view chunk, record::SectionId id,
    const std::function<bool(const record::ChunkTables&, record::Record&, record::Section&)>&
        edit) {
  DamageChunk(g, slot, chunk, [&](Bytes& data) {
    Result<record::Payload> p = record::DecodePayload(data);
    if (!p.ok()) return false;
    bool edited = false;
    for (record::Record& r : p->records) {
      for (record::Section& s : r.sections) {
        if (record::SameSection(s.id, id) && edit(p->tables, r, s)) edited = true;
      }
    }
    Result<Bytes> out = record::EncodePayload(*p);
    if (!edited || !out.ok()) return false;
    data = *std::move(out);
    return true;
  });
}

// Edits the newest save of `slot` into the one a game calling level `from` `to` would write.
void RenameLevel(Game& g, std::string_view slot, std::string_view from, std::string_view to) {
  EditSections(g, slot, "WRLD", world::kActorSection,
               [&](const record::ChunkTables&, record::Record&, record::Section& s) {
                 Result<world::ActorSection> a = world::DecodeActor(s.bytes);
                 if (!a.ok() || a->level != from) return false;
                 a->level = to;
                 s.bytes = world::EncodeActor(*a);
                 return true;
               });
}

// The same for the global registered as `from` (when `registered`) or of role `from`: it is
// given `to`, and the subject ID a game naming it so derives.
void RenameGlobal(Game& g, std::string_view slot, bool registered, std::string_view from,
                  std::string_view to) {
  EditSections(g, slot, "GLOB", world::kGlobalSection,
               [&](const record::ChunkTables& tables, record::Record& r, record::Section& s) {
                 Result<world::GlobalSection> global = world::DecodeGlobal(s.bytes);
                 if (!global.ok() || global->registered != registered || global->name != from) {
                   return false;
                 }
                 const std::string cls(tables.name_text(tables.layouts().at(r.layout).name));
                 global->name = std::string(to);
                 s.bytes = world::EncodeGlobal(*global);
                 r.subject = registered ? DerivedIdOf("registered\n" + global->name)
                                        : DerivedIdOf("global\n" + global->name + "\n" + cls);
                 return true;
               });
}

// The records of the chunks `id` of the newest save of `slot`.
Result<std::vector<record::Record>> RecordsOf(Game& g, std::string_view slot, std::string_view id) {
  std::optional<Result<store::LoadResult>> read;
  g.store.Load(slot, [&](Result<store::LoadResult> r) { read.emplace(std::move(r)); });
  ROLLY_RETURN_IF_ERROR(g.store.Flush(Deadline()));
  if (!read) return BlockedError("the load never called back");
  ROLLY_RETURN_IF_ERROR(read->status());
  std::vector<record::Record> out;
  for (format::Chunk& c : (*read)->file.chunks) {
    const format::ChunkId chunk_id = c.id();
    if (chunk_id.view() != id) continue;
    ROLLY_ASSIGN_OR_RETURN(record::Payload p, record::DecodePayload(c.data()));
    out.insert(out.end(), p.records.begin(), p.records.end());
  }
  return out;
}

// The ID sections.h derives for component `name` of `actor`, worked out as DerivedIdOf does.
Guid DerivedComponentIdOf(Guid actor, std::string_view name) {
  std::string identity = "component\n";
  std::uint8_t id[16];
  StoreU64(id, actor.high());
  StoreU64(id + 8, actor.low());
  identity.append(reinterpret_cast<const char*>(id), sizeof id);
  identity.append(name);
  return DerivedIdOf(identity);
}

// The same for components named `from`: they are named `to`, with the IDs that name derives.
void RenameComponents(Game& g, std::string_view slot, std::string_view from, std::string_view to) {
  EditSections(g, slot, "WRLD", world::kComponentSection,
               [&](const record::ChunkTables&, record::Record& r, record::Section& s) {
                 Result<world::ComponentSection> c = world::DecodeComponent(s.bytes);
                 if (!c.ok() || c->name != from) return false;
                 c->name = to;
                 s.bytes = world::EncodeComponent(*c);
                 r.subject = DerivedComponentIdOf(c->actor, to);
                 return true;
               });
}

// A component record waiting for its component to be created keeps its name as the file's text:
// a file may name any number of components the game never makes, and a Name lives as long as the
// process. The component made later under that name still gets the record.
TEST_F(SaveLoadTest, AWaitingComponentsNameIsNotInterned) {
  // A text of its own for each run, so that the component made at the end (which makes the Name)
  // leaves the next run's unknown.
  static int runs = 0;
  const std::string name = "BackpackOfNoGame" + std::to_string(++runs);
  auto a = PlayedGame(100, 9);
  const std::vector<Guid> backpacks = Backpacks(a->scene);
  ASSERT_FALSE(backpacks.empty());
  ASSERT_EQ(DerivedComponentIdOf(backpacks.front(), "Backpack"),
            world::DeriveComponentId(backpacks.front(), Name("Backpack")));
  static_cast<InventoryComponent*>(
      a->scene.FindActor(backpacks.front())->FindComponent(Name("Backpack")))
      ->capacity = 44;
  ASSERT_OK(SaveNow(*a, "w"));
  ASSERT_NO_FATAL_FAILURE(RenameComponents(*a, "w", "Backpack", name));
  ASSERT_FALSE(Name::Find(name).has_value());

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "w"));
  EXPECT_EQ(out.report.waiting, backpacks.size());
  EXPECT_FALSE(Name::Find(name).has_value()) << "the waiting records interned their name";
  ASSERT_OK_AND_ASSIGN(Component * made, b->scene.AddComponent(backpacks.front(), Name(name),
                                                               Name("InventoryComponent")));
  EXPECT_EQ(static_cast<InventoryComponent*>(made)->capacity, 44);
}

// A save from a game with a level, a registered object and a role this one lacks (its names are
// ones the process has never made): loading it, and saving again, interns none of them, since a
// Name lives as long as the process. The level's actors are kept and written back by the next
// save; the globals match nothing (not the object this game registers, nor the global of that
// class) and are kept as not there, and written back too. The file is saved under names the game
// has, then renamed record by record, so nothing in this program makes a Name of the new texts.
TEST_F(SaveLoadTest, ASavesLevelAndGlobalNamesTheGameLacksAreNotInterned) {
  const std::string level = "CellarOfNoGame";
  const std::string registered = "SettingsOfNoGame";
  const std::string role = "RoleOfNoGame";
  auto expect_unknown = [&](const char* when) {
    for (const std::string& text : {level, registered, role}) {
      EXPECT_FALSE(Name::Find(text).has_value()) << text << " was made a Name: " << when;
    }
  };
  // The IDs a game of those names derives, worked out as sections.h does.
  ASSERT_EQ(DerivedIdOf("registered\nsettings"), world::DeriveRegisteredId(Name("settings")));
  ASSERT_EQ(DerivedIdOf("global\nGameState\nSampleGameState"),
            world::DeriveGlobalId(Name("GameState"), Name("SampleGameState")));
  const Guid registered_id = DerivedIdOf("registered\n" + registered);
  const Guid role_id = DerivedIdOf("global\n" + role + "\nSampleGameState");
  const reflect::ClassInfo* settings_class = registry_->FindClass<Settings>();

  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK(a->scene.AddLevel(Name("Cellar")));
  a->scene.FindActorAs<Crate>(G(kCellarCrateId))->hits = 5;
  Settings settings;
  settings.volume = 9;
  ASSERT_OK(a->saves.world().Register(Name("settings"), {settings_class, &settings}));
  dynamic_cast<SampleGameState*>(a->scene.game_state())->day = 42;
  ASSERT_OK(SaveNow(*a, "u"));
  ASSERT_NO_FATAL_FAILURE(RenameLevel(*a, "u", "Cellar", level));
  ASSERT_NO_FATAL_FAILURE(RenameGlobal(*a, "u", true, "settings", registered));
  ASSERT_NO_FATAL_FAILURE(RenameGlobal(*a, "u", false, world::kRoleGameState, role));
  expect_unknown("the file made");

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kSmallMap));
  Settings mine;
  ASSERT_OK(b->saves.world().Register(Name("settings"), {settings_class, &mine}));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "u"));
  expect_unknown("loaded");
  EXPECT_EQ(out.report.kept, 3u) << Lines(out.report.messages);
  EXPECT_THAT(out.report.messages,
              AllOf(Contains(HasSubstr("global " + registered + " (Settings) is not there")),
                    Contains(HasSubstr("global " + role + " (SampleGameState) is not there"))));
  EXPECT_EQ(mine.volume, 5);
  EXPECT_EQ(mine.loaded, 0);
  EXPECT_EQ(dynamic_cast<SampleGameState*>(b->scene.game_state())->day, 1) << "the map's, not 42";
  ASSERT_OK(SaveNow(*b, "u2"));
  expect_unknown("saved again");

  // The next save holds the three records, under the names the file gave them.
  ASSERT_OK_AND_ASSIGN(std::vector<record::Record> actors, RecordsOf(*b, "u2", "WRLD"));
  std::vector<std::string> crate_levels;
  for (const record::Record& r : actors) {
    const record::Section* s = r.Find(world::kActorSection);
    if (r.subject != G(kCellarCrateId) || s == nullptr) continue;
    ASSERT_OK_AND_ASSIGN(world::ActorSection placed, world::DecodeActor(s->bytes));
    crate_levels.emplace_back(placed.level);
  }
  EXPECT_THAT(crate_levels, ElementsAre(level));
  ASSERT_OK_AND_ASSIGN(std::vector<record::Record> globals, RecordsOf(*b, "u2", "GLOB"));
  std::vector<std::string> unknown;  // the globals under the new names: subject and name
  for (const record::Record& r : globals) {
    const record::Section* s = r.Find(world::kGlobalSection);
    ASSERT_NE(s, nullptr);
    ASSERT_OK_AND_ASSIGN(world::GlobalSection global, world::DecodeGlobal(s->bytes));
    if (global.name == registered || global.name == role) {
      unknown.push_back(r.subject.ToString() + " " + global.name);
    }
  }
  EXPECT_THAT(unknown, UnorderedElementsAreArray({registered_id.ToString() + " " + registered,
                                                  role_id.ToString() + " " + role}));
  expect_unknown("the next save read");

  // Named back, the crate's record written back holds its saved values.
  ASSERT_NO_FATAL_FAILURE(RenameLevel(*b, "u2", level, "Cellar"));
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kSmallMap));
  ASSERT_OK(LoadNow(*c, "u2"));
  ASSERT_OK(c->scene.AddLevel(Name("Cellar")));
  ASSERT_NE(c->scene.FindActorAs<Crate>(G(kCellarCrateId)), nullptr);
  EXPECT_EQ(c->scene.FindActorAs<Crate>(G(kCellarCrateId))->hits, 5);
  expect_unknown("named back and loaded");
}

// A game that travelled to another map saves both maps (the other map's WRLD chunk is kept
// whole, docs/world.md) and that save loads.
TEST_F(SaveLoadTest, ASaveAfterTravellingToAnotherMapLoads) {
  auto a = PlayedGame(30);
  ASSERT_OK(SaveNow(*a, "t1"));
  ASSERT_OK(a->scene.OpenMap(kOtherMap));  // travel
  ASSERT_OK(PlaySample(a->scene, 20, 4));
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));
  ASSERT_OK(SaveNow(*a, "t2"));
  int worlds = 0;
  for (const world::WorldChunk& c : saved) worlds += c.id == world::kWorldChunk;
  EXPECT_EQ(worlds, 2) << "the first map's WRLD chunk is kept whole";

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kMap));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "t2"));
  EXPECT_EQ(b->scene.CurrentMap(), kOtherMap);
  AddBackpacks(b->scene, Backpacks(a->scene));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  EXPECT_SAME_WORLD(saved, loaded);
}

// A load that keeps the current map applies a save of another map's globals and players only;
// the next save keeps the other map's actors, and loads.
TEST_F(SaveLoadTest, KeepingTheMapWithASaveOfAnotherMapAppliesGlobalsAndPlayersOnly) {
  auto a = PlayedGame(30);
  dynamic_cast<SampleGameState*>(a->scene.game_state())->day = 9;
  dynamic_cast<SamplePlayerState*>(a->scene.players().front().player_state)->score = 1234;
  ASSERT_OK(SaveNow(*a, "o"));

  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  std::set<Guid> ids;
  b->scene.ForEachActor([&](Actor& x) { ids.insert(x.id); });
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "o", MapChoice::kKeepCurrentMap));
  EXPECT_EQ(b->scene.CurrentMap(), kOtherMap);
  EXPECT_EQ(dynamic_cast<SampleGameState*>(b->scene.game_state())->day, 9);
  EXPECT_EQ(dynamic_cast<SamplePlayerState*>(b->scene.players().front().player_state)->score, 1234);
  EXPECT_EQ(out.report.spawned, 0u);
  EXPECT_EQ(out.report.removed, 0u);
  std::set<Guid> ids_after;
  b->scene.ForEachActor([&](Actor& x) { ids_after.insert(x.id); });
  EXPECT_EQ(ids, ids_after);

  ASSERT_OK(SaveNow(*b, "o2"));
  auto c = NewGame();
  ASSERT_OK(c->scene.Start(kMap));
  EXPECT_OK(LoadNow(*c, "o2").status());
}

// --- 9. Streamed levels and level memory (docs/world.md, "Streamed levels") --------------------

constexpr const char* kStreamedMap = "maps/streamed.json";
constexpr const char* kCellarLampId = "00000000-0000-4000-8000-00000000b001";
constexpr const char* kCellarDoorId = "00000000-0000-4000-8000-00000000b002";
constexpr const char* kCellarMoleId = "00000000-0000-4000-8000-00000000b003";
constexpr const char* kCellarHookedId = "00000000-0000-4000-8000-00000000b004";
constexpr const char* kAtticCrateId = "00000000-0000-4000-8000-00000000b005";

// A door in the persistent level; a crate, a lamp, a door, a character and a hooked crate in the
// "Cellar" sublevel; a crate in the "Attic" sublevel. Neither sublevel is loaded at the start.
std::string StreamedMap() {
  return std::string(R"({
  "name": "streamed",
  "levels": [{"name": "Persistent"}, {"name": "Cellar", "loaded": false},
             {"name": "Attic", "loaded": false}],
  "game_instance": {"class": "GameInstance", "subsystems": ["QuestLog"]},
  "game_mode": "SampleGameMode",
  "game_state": "SampleGameState",
  "world_subsystems": [],
  "level_script": "LevelScript",
  "players": [{"controller": "SamplePlayerController", "pawn": "SamplePawn",
               "player_state": "SamplePlayerState"}],
  "actors": [
    {"class": "Door", "id": ")") +
         kDoorId + R"("},
    {"class": "Crate", "id": ")" + kCellarCrateId +
         R"(", "level": "Cellar", "saving": "Always"},
    {"class": "Lamp", "id": ")" + kCellarLampId +
         R"(", "level": "Cellar", "transform": {"translation": [4, 5, 6]}},
    {"class": "Door", "id": ")" + kCellarDoorId + R"(", "level": "Cellar"},
    {"class": "Character", "id": ")" + kCellarMoleId +
         R"(", "level": "Cellar", "values": {"Name": "Mole"}},
    {"class": "HookedCrate", "id": ")" + kCellarHookedId +
         R"(", "level": "Cellar", "saving": "Always"},
    {"class": "Crate", "id": ")" + kAtticCrateId +
         R"(", "level": "Attic", "saving": "Always"}
  ]
})";
}

class LevelMemoryTest : public SaveLoadTest {
 protected:
  const Name kCellar{"Cellar"};
  const Name kAttic{"Attic"};

  // Saves slot "k" of a game with both levels loaded and a kennel spawned in the Attic whose toy
  // is the Cellar lamp's Bulb (its ID in `*id`); `remove_attic`: the Attic removed first.
  void SaveKennelWithABulb(bool remove_attic, Guid* id) {
    auto a = StreamedGame();
    ASSERT_OK(a->scene.AddLevel(kCellar));
    ASSERT_OK(a->scene.AddLevel(kAttic));
    ASSERT_NE(Bulb(*a), nullptr);
    ASSERT_OK_AND_ASSIGN(Kennel * kennel, a->scene.SpawnActor<Kennel>(kAttic));
    *id = kennel->id;
    kennel->toy = Bulb(*a);
    if (remove_attic) {
      ASSERT_OK(a->scene.RemoveLevel(kAttic));
    }
    ASSERT_OK(SaveNow(*a, "k"));
  }

  // A game on the streamed map, its level reports noted in `reports`.
  std::unique_ptr<Game> StreamedGame() {
    auto g = NewGame();
    g->scene.AddMap(kStreamedMap, StreamedMap());
    EXPECT_OK(g->scene.Start(kStreamedMap));
    g->saves.world().SetLevelListener(
        [this](const world::LevelReport& r) { reports.push_back(r); });
    return g;
  }

  static Crate* CellarCrate(Game& g) { return g.scene.FindActorAs<Crate>(G(kCellarCrateId)); }
  static Crate* AtticCrate(Game& g) { return g.scene.FindActorAs<Crate>(G(kAtticCrateId)); }
  static Lamp* CellarLamp(Game& g) { return g.scene.FindActorAs<Lamp>(G(kCellarLampId)); }
  static LampComponent* Bulb(Game& g) {
    Lamp* lamp = CellarLamp(g);
    return lamp ? static_cast<LampComponent*>(lamp->FindComponent(Name("Bulb"))) : nullptr;
  }

  // Changes every kind of thing a Cellar save holds: values, a component, a placement.
  static void ChangeCellar(Game& g) {
    CellarCrate(g)->hits = 7;
    CellarLamp(g)->on = true;
    Bulb(g)->flicker = 0.25f;
    CellarLamp(g)->transform.translation.x = 40;
    g.scene.FindActorAs<Door>(G(kCellarDoorId))->state = DoorState::kLocked;
  }

  // Whether the Cellar holds ChangeCellar's changes.
  static void ExpectCellarChanged(Game& g) {
    ASSERT_NE(CellarCrate(g), nullptr);
    EXPECT_EQ(CellarCrate(g)->hits, 7);
    EXPECT_TRUE(CellarLamp(g)->on);
    EXPECT_EQ(Bulb(g)->flicker, 0.25f);
    EXPECT_EQ(CellarLamp(g)->transform.translation.x, 40);
    EXPECT_EQ(CellarLamp(g)->transform.translation.y, 5);
    EXPECT_EQ(g.scene.FindActorAs<Door>(G(kCellarDoorId))->state, DoorState::kLocked);
  }

  std::vector<world::LevelReport> reports;
};

TEST_F(LevelMemoryTest, ChangesToALevelComeBackWhenItIsAddedAgain) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_EQ(reports.size(), 0u) << "no save is held: nothing applies to the first add";
  ChangeCellar(*a);
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  EXPECT_EQ(CellarCrate(*a), nullptr);
  EXPECT_TRUE(a->saves.world().RemembersLevel(kCellar));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].event, world::LevelReport::Event::kRemembered);
  EXPECT_EQ(reports[0].level, kCellar);
  EXPECT_OK(reports[0].status);
  // Five actors and the lamp's and the character's components that hold saved state.
  EXPECT_GE(reports[0].records, 5u);

  ASSERT_OK(a->scene.AddLevel(kCellar));
  ExpectCellarChanged(*a);
  EXPECT_FALSE(a->saves.world().RemembersLevel(kCellar)) << "the memory is dropped once applied";
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].event, world::LevelReport::Event::kApplied);
  EXPECT_TRUE(reports[1].from_memory);
  EXPECT_OK(reports[1].status);
  EXPECT_GE(reports[1].apply.applied, 5u) << Lines(reports[1].apply.messages);

  // A second trip: the level remembers the newer state, not the first one.
  CellarCrate(*a)->hits = 8;
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  ASSERT_OK(a->scene.AddLevel(kCellar));
  EXPECT_EQ(CellarCrate(*a)->hits, 8);
}

TEST_F(LevelMemoryTest, ASaveWhileALevelIsOutWritesWhatItRemembered) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ChangeCellar(*a);
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  ASSERT_OK(SaveNow(*a, "m"));
  EXPECT_FALSE(a->saves.world().RemembersLevel(kCellar)) << "the held save holds it now";
  // The same game: the held save's records apply.
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ExpectCellarChanged(*a);
  ASSERT_FALSE(reports.empty());
  EXPECT_FALSE(reports.back().from_memory);

  auto b = StreamedGame();
  ASSERT_OK(LoadNow(*b, "m"));
  EXPECT_EQ(CellarCrate(*b), nullptr) << "the cellar is not loaded";
  ASSERT_OK(b->scene.AddLevel(kCellar));
  ExpectCellarChanged(*b);
}

// Saves to different slots finish in any order: a save whose capture began before the held
// save's, or before a load, is not held over it, and the level memory stays as that newer save
// left it.
TEST_F(LevelMemoryTest, ASaveCapturedBeforeTheHeldOneOrALoadIsNotHeldOverIt) {
  auto a = StreamedGame();
  world::World& w = a->saves.world();
  auto held_from = [&](world::WorldCapture& capture) {
    EXPECT_OK(capture.Run());
    Result<std::vector<world::WorldChunk>> chunks = capture.Finish();
    EXPECT_OK(chunks);
    if (!chunks.ok()) return std::shared_ptr<const world::LoadedGame>();
    Result<std::shared_ptr<const world::LoadedGame>> game =
        world::LoadedGame::Check(*std::move(chunks), *registry_);
    EXPECT_OK(game);
    return game.ok() ? *game : nullptr;
  };
  ASSERT_OK(a->scene.AddLevel(kCellar));
  // Each capture's steps run before the world changes (its objects must stay while it steps).
  std::unique_ptr<world::WorldCapture> older = w.BeginCapture();  // the Cellar as the map has it
  const auto older_game = held_from(*older);
  ChangeCellar(*a);
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  std::unique_ptr<world::WorldCapture> newer = w.BeginCapture();  // the Cellar remembered
  const auto newer_game = held_from(*newer);
  ASSERT_NE(older_game, nullptr);
  ASSERT_NE(newer_game, nullptr);
  EXPECT_LT(older->mark().capture, newer->mark().capture);

  // The newer save's write ends first; the older one's after it changes nothing.
  EXPECT_TRUE(w.SetHeld(newer_game, newer->mark()));
  EXPECT_FALSE(w.RemembersLevel(kCellar)) << "the held save holds it now";
  EXPECT_FALSE(w.SetHeld(older_game, older->mark()));
  EXPECT_EQ(w.held(), newer_game);
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ExpectCellarChanged(*a);

  // An older save ends after the newer one it came before: held, then the newer one still is.
  auto b = StreamedGame();
  world::World& wb = b->saves.world();
  std::unique_ptr<world::WorldCapture> first = wb.BeginCapture();
  std::unique_ptr<world::WorldCapture> second = wb.BeginCapture();
  const auto first_game = held_from(*first);
  const auto second_game = held_from(*second);
  EXPECT_TRUE(wb.SetHeld(first_game, first->mark()));
  EXPECT_TRUE(wb.SetHeld(second_game, second->mark()));
  EXPECT_EQ(wb.held(), second_game);

  // A load holds its save over any save whose capture began before it, even one that ends after.
  std::unique_ptr<world::WorldCapture> before_load = wb.BeginCapture();
  const auto before_load_game = held_from(*before_load);
  ASSERT_OK(wb.Apply(newer_game, nullptr));
  EXPECT_FALSE(wb.SetHeld(before_load_game, before_load->mark()));
  EXPECT_EQ(wb.held(), newer_game);
  std::unique_ptr<world::WorldCapture> after_load = wb.BeginCapture();
  const auto after_load_game = held_from(*after_load);
  EXPECT_TRUE(wb.SetHeld(after_load_game, after_load->mark()));
  EXPECT_EQ(wb.held(), after_load_game);
  for (auto* c : {older.get(), newer.get(), first.get(), second.get(), before_load.get(),
                  after_load.get()}) {
    c->Forget();
  }
}

// The level's placed actors are not destroyed for the next save because the level left, and one
// destroyed in play stays destroyed through level memory and a save made while the level is out.
TEST_F(LevelMemoryTest, APlacedActorDestroyedInALevelStaysDestroyed) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  a->scene.DestroyActor(G(kCellarCrateId));
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  ASSERT_OK(a->scene.AddLevel(kCellar));
  EXPECT_EQ(CellarCrate(*a), nullptr) << "level memory lost the tombstone";
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().apply.removed, 1u);
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  ASSERT_OK(SaveNow(*a, "d"));

  auto b = StreamedGame();
  ASSERT_OK(LoadNow(*b, "d"));
  ASSERT_OK(b->scene.AddLevel(kCellar));
  EXPECT_EQ(CellarCrate(*b), nullptr) << "the crate came back after a save with the level out";
  EXPECT_NE(CellarLamp(*b), nullptr) << "a placed actor was held destroyed because its level left";
  EXPECT_NE(b->scene.FindActor(G(kCellarDoorId)), nullptr);

  // Saved again with the level out and no memory (the held save's records are written back).
  ASSERT_OK(b->scene.RemoveLevel(kCellar));
  ASSERT_OK(SaveNow(*b, "d2"));
  auto c = StreamedGame();
  ASSERT_OK(LoadNow(*c, "d2"));
  ASSERT_OK(c->scene.AddLevel(kCellar));
  EXPECT_EQ(CellarCrate(*c), nullptr);
  EXPECT_NE(CellarLamp(*c), nullptr);
}

TEST_F(LevelMemoryTest, ASpawnedActorInALevelSurvivesTheRoundTrip) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  reflect::Transformd at;
  at.translation.z = 3;
  ASSERT_OK_AND_ASSIGN(Actor * spawned, a->scene.SpawnActor(Name("Pickup"), kCellar, at));
  const Guid id = spawned->id;
  static_cast<Pickup*>(spawned)->value = 11;
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  EXPECT_EQ(a->scene.FindActor(id), nullptr);
  ASSERT_OK(a->scene.AddLevel(kCellar));
  auto* back = a->scene.FindActorAs<Pickup>(id);
  ASSERT_NE(back, nullptr) << "the spawned pickup did not come back with its level";
  EXPECT_EQ(back->value, 11);
  EXPECT_EQ(back->level, kCellar);
  EXPECT_EQ(back->transform.translation.z, 3);
  EXPECT_TRUE(back->begun_play);
  EXPECT_EQ(reports.back().apply.spawned, 1u);

  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  ASSERT_OK(SaveNow(*a, "p"));
  auto b = StreamedGame();
  ASSERT_OK(LoadNow(*b, "p"));
  EXPECT_EQ(b->scene.FindActor(id), nullptr);
  ASSERT_OK(b->scene.AddLevel(kCellar));
  back = b->scene.FindActorAs<Pickup>(id);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->value, 11);
  EXPECT_EQ(back->level, kCellar);
}

// A spawned actor of the held save destroyed in play while its level was in does not come back
// from the held save when the level is out: the level's memory replaces all of its held records.
TEST_F(LevelMemoryTest, ASpawnedActorDestroyedInALevelDoesNotComeBackFromTheHeldSave) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK_AND_ASSIGN(Actor * spawned, a->scene.SpawnActor(Name("Pickup"), kCellar, {}));
  const Guid id = spawned->id;
  ASSERT_OK(SaveNow(*a, "s1"));

  auto b = StreamedGame();
  ASSERT_OK(LoadNow(*b, "s1"));
  ASSERT_OK(b->scene.AddLevel(kCellar));
  ASSERT_NE(b->scene.FindActor(id), nullptr);
  b->scene.DestroyActor(id);
  ASSERT_OK(b->scene.RemoveLevel(kCellar));
  ASSERT_OK(SaveNow(*b, "s2"));
  ASSERT_OK(b->scene.AddLevel(kCellar));
  EXPECT_EQ(b->scene.FindActor(id), nullptr);

  auto c = StreamedGame();
  ASSERT_OK(LoadNow(*c, "s2"));
  ASSERT_OK(c->scene.AddLevel(kCellar));
  EXPECT_EQ(c->scene.FindActor(id), nullptr) << "the held save's pickup came back";
}

// A load, keeping the map or opening it, drops all level memory: the loaded save's state wins.
TEST_F(LevelMemoryTest, ALoadDropsLevelMemory) {
  for (MapChoice map : {MapChoice::kKeepCurrentMap, MapChoice::kOpenSavedMap}) {
    SCOPED_TRACE(map == MapChoice::kKeepCurrentMap ? "keeping the map" : "opening the map");
    auto a = StreamedGame();
    ASSERT_OK(a->scene.AddLevel(kCellar));
    ASSERT_OK(a->scene.AddLevel(kAttic));
    CellarCrate(*a)->hits = 1;
    ASSERT_OK(SaveNow(*a, "older"));
    CellarCrate(*a)->hits = 9;
    AtticCrate(*a)->hits = 9;
    ASSERT_OK(a->scene.RemoveLevel(kCellar));
    ASSERT_OK(a->scene.RemoveLevel(kAttic));
    ASSERT_TRUE(a->saves.world().RemembersLevel(kCellar));
    ASSERT_OK(LoadNow(*a, "older", map));
    EXPECT_FALSE(a->saves.world().RemembersLevel(kCellar));
    EXPECT_FALSE(a->saves.world().RemembersLevel(kAttic));
    ASSERT_OK(a->scene.AddLevel(kCellar));
    EXPECT_EQ(CellarCrate(*a)->hits, 1);
    ASSERT_OK(a->scene.AddLevel(kAttic));
    EXPECT_EQ(AtticCrate(*a)->hits, 0);
  }
}

// A map opening (a travel, no load) drops level memory with the rest of the world that went.
TEST_F(LevelMemoryTest, OpeningAMapDropsLevelMemory) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  CellarCrate(*a)->hits = 4;
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  ASSERT_TRUE(a->saves.world().RemembersLevel(kCellar));
  ASSERT_OK(a->scene.OpenMap(kStreamedMap));
  EXPECT_FALSE(a->saves.world().RemembersLevel(kCellar));
  ASSERT_OK(a->scene.AddLevel(kCellar));
  EXPECT_EQ(CellarCrate(*a)->hits, 0);
}

// A save drops only the memory taken before its capture began: a level removed between the
// capture and the save's completion keeps its memory, which wins at its next add.
TEST_F(LevelMemoryTest, ALevelRemovedWhileASaveIsWrittenKeepsItsMemory) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK(a->scene.AddLevel(kAttic));
  AtticCrate(*a)->hits = 2;
  ASSERT_OK(a->scene.RemoveLevel(kAttic));  // before the capture: the save holds it
  CellarCrate(*a)->hits = 4;
  std::optional<Result<SaveOutcome>> got;
  a->saves.Save("w", {}, [&](Result<SaveOutcome> r) { got.emplace(std::move(r)); });
  ASSERT_FALSE(got.has_value()) << "the save is still being written";
  CellarCrate(*a)->hits = 6;
  ASSERT_OK(a->scene.RemoveLevel(kCellar));  // after the capture, before the save is held
  ASSERT_OK(a->saves.Flush(Deadline()));
  ASSERT_TRUE(got.has_value());
  ASSERT_OK(got->status());
  EXPECT_FALSE(a->saves.world().RemembersLevel(kAttic)) << "the save holds the attic";
  EXPECT_TRUE(a->saves.world().RemembersLevel(kCellar)) << "the cellar's memory was lost";
  ASSERT_OK(a->scene.AddLevel(kCellar));
  EXPECT_EQ(CellarCrate(*a)->hits, 6);
  ASSERT_OK(a->scene.AddLevel(kAttic));
  EXPECT_EQ(AtticCrate(*a)->hits, 2);

  // What the save wrote: the cellar as the capture saw it, the attic from its memory.
  auto b = StreamedGame();
  ASSERT_OK(LoadNow(*b, "w"));
  ASSERT_OK(b->scene.AddLevel(kCellar));
  EXPECT_EQ(CellarCrate(*b)->hits, 4);
  ASSERT_OK(b->scene.AddLevel(kAttic));
  EXPECT_EQ(AtticCrate(*b)->hits, 2);
}

// A level removed and added again while a save is written makes its actors again under the same
// IDs (perhaps at the same addresses): the save's OnSaved hooks never reach them.
TEST_F(LevelMemoryTest, ALevelRemovedAndAddedWhileASaveIsWrittenGetsNoSavedHooks) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  std::optional<Result<SaveOutcome>> got;
  a->saves.Save("w", {}, [&](Result<SaveOutcome> r) { got.emplace(std::move(r)); });
  ASSERT_FALSE(got.has_value()) << "the save is still being written";
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  ASSERT_OK(a->scene.AddLevel(kCellar));
  auto* again = a->scene.FindActorAs<HookedCrate>(G(kCellarHookedId));
  ASSERT_NE(again, nullptr);
  ASSERT_OK(a->saves.Flush(Deadline()));
  ASSERT_TRUE(got.has_value());
  ASSERT_OK(got->status());
  EXPECT_EQ(again->saved, 0);
  // A save with the level in place runs its hook.
  ASSERT_OK(SaveNow(*a, "w"));
  EXPECT_EQ(again->saved, 1);
}

// A level whose capture fails keeps nothing (InvalidData, reported); nothing crashes, its next
// add applies the held save's records, and saves go on.
TEST_F(LevelMemoryTest, ALevelWhoseCaptureFailsKeepsNothing) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  CellarCrate(*a)->hits = 1;
  ASSERT_OK(SaveNow(*a, "f"));
  CellarCrate(*a)->hits = 2;
  ASSERT_OK(a->scene.Attach(G(kCellarCrateId), G(kCellarDoorId), Name(std::string(1025, 'k'))));
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  EXPECT_FALSE(a->saves.world().RemembersLevel(kCellar));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].event, world::LevelReport::Event::kNotRemembered);
  EXPECT_EQ(reports[0].level, kCellar);
  EXPECT_THAT(reports[0].status, StatusIs(StatusCode::kInvalidData));
  EXPECT_THAT(reports[0].status.message(), HasSubstr("1,024 bytes"));
  ASSERT_OK(SaveNow(*a, "f2"));
  ASSERT_OK(a->scene.AddLevel(kCellar));
  EXPECT_EQ(CellarCrate(*a)->hits, 1) << "the held save's records apply";
  EXPECT_EQ(CellarCrate(*a)->attach_parent, Guid());
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].event, world::LevelReport::Event::kApplied);
  EXPECT_FALSE(reports[1].from_memory);
}

// The same for a refusal only the writing of a record finds (an enum number without a name: a
// copied chunk's record is written from its copy once every step ran).
TEST_F(LevelMemoryTest, ALevelWhoseRecordIsRefusedWhenWrittenKeepsNothing) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  CellarCrate(*a)->hits = 1;
  ASSERT_OK(SaveNow(*a, "f"));
  CellarCrate(*a)->hits = 2;
  a->scene.FindActorAs<Door>(G(kCellarDoorId))->state = static_cast<DoorState>(9);
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  EXPECT_FALSE(a->saves.world().RemembersLevel(kCellar));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].event, world::LevelReport::Event::kNotRemembered);
  EXPECT_THAT(reports[0].status,
              StatusIs(StatusCode::kInvalidData,
                       AllOf(HasSubstr(std::string("Door ") + kCellarDoorId),
                             HasSubstr("DoorState"))));
  ASSERT_OK(a->scene.AddLevel(kCellar));
  EXPECT_EQ(CellarCrate(*a)->hits, 1) << "the held save's records apply";
}

// The memory's capture runs pre-save hooks, never OnSaved hooks; a save then writing it runs
// OnSaved only on objects it captured itself.
TEST_F(LevelMemoryTest, ALevelsCaptureRunsPreSaveHooksOnly) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  auto* hooked = a->scene.FindActorAs<HookedCrate>(G(kCellarHookedId));
  ASSERT_NE(hooked, nullptr);
  int pre_saves = 0;
  int saved = 0;
  hooked->hits = 3;
  // The hooks are counted on the object while it lives: removal destroys it right after.
  a->saves.world().SetLevelListener([&](const world::LevelReport& r) {
    if (r.event != world::LevelReport::Event::kRemembered) return;
    auto* h = a->scene.FindActorAs<HookedCrate>(G(kCellarHookedId));
    pre_saves = h->pre_saves;
    saved = h->saved;
  });
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  EXPECT_EQ(pre_saves, 1);
  EXPECT_EQ(saved, 0);
  ASSERT_OK(SaveNow(*a, "h"));
  ASSERT_OK(a->scene.AddLevel(kCellar));
  hooked = a->scene.FindActorAs<HookedCrate>(G(kCellarHookedId));
  EXPECT_EQ(hooked->hits, 3);
  EXPECT_EQ(hooked->saved, 0);
}

// A component record waiting in a level (its component is made in play) goes with the level's
// memory and is written by the next save.
TEST_F(LevelMemoryTest, AComponentRecordWaitingInALevelIsKept) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK_AND_ASSIGN(Component * made, a->scene.AddComponent(G(kCellarMoleId), Name("Backpack"),
                                                               Name("InventoryComponent")));
  static_cast<InventoryComponent*>(made)->capacity = 44;
  ASSERT_OK(SaveNow(*a, "b"));

  auto b = StreamedGame();
  ASSERT_OK(LoadNow(*b, "b"));
  ASSERT_OK(b->scene.AddLevel(kCellar));  // from the held save
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().apply.waiting, 1u);
  ASSERT_OK(b->scene.RemoveLevel(kCellar));
  ASSERT_OK(b->scene.AddLevel(kCellar));  // from memory
  ASSERT_TRUE(reports.back().from_memory);
  EXPECT_EQ(reports.back().apply.waiting, 1u) << "the memory lost the waiting record";
  ASSERT_OK(b->scene.RemoveLevel(kCellar));
  ASSERT_OK(b->scene.AddLevel(kCellar));  // from memory again
  EXPECT_EQ(reports.back().apply.waiting, 1u);
  ASSERT_OK(SaveNow(*b, "b2"));  // the level loaded, the record waits on a memory's records

  auto c = StreamedGame();
  ASSERT_OK(LoadNow(*c, "b2"));
  ASSERT_OK(c->scene.AddLevel(kCellar));
  ASSERT_OK_AND_ASSIGN(made, c->scene.AddComponent(G(kCellarMoleId), Name("Backpack"),
                                                   Name("InventoryComponent")));
  EXPECT_EQ(static_cast<InventoryComponent*>(made)->capacity, 44);
}

// A client keeps no level memory (it never saves).
TEST_F(LevelMemoryTest, AClientKeepsNoLevelMemory) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  CellarCrate(*a)->hits = 5;
  a->scene.SetAuthority(false);
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  EXPECT_FALSE(a->saves.world().RemembersLevel(kCellar));
  EXPECT_THAT(reports, IsEmpty());
}

// A streamed level's apply takes only that level's records, and its memory captures only that
// level's actors: their references to a global, to a local player's pawn and to an actor of
// another level (each saved by its subject ID) find the objects there now, from the held save and
// from the level's memory.
TEST_F(LevelMemoryTest, ALevelsReferencesOutOfItAreKept) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK(a->scene.AddLevel(kAttic));
  ASSERT_EQ(a->scene.players().size(), 1u);
  ASSERT_NE(a->scene.GetSubsystem<QuestLog>(), nullptr);
  ASSERT_OK_AND_ASSIGN(Kennel * kennel, a->scene.SpawnActor<Kennel>(kCellar));
  const Guid id = kennel->id;
  kennel->pet = a->scene.players().front().pawn;
  kennel->log = a->scene.GetSubsystem<QuestLog>();
  kennel->neighbour = AtticCrate(*a);
  ASSERT_OK(SaveNow(*a, "k"));

  auto b = StreamedGame();
  ASSERT_OK(LoadNow(*b, "k"));
  ASSERT_OK(b->scene.AddLevel(kAttic));
  for (int from_memory = 0; from_memory < 2; ++from_memory) {
    ASSERT_OK(b->scene.AddLevel(kCellar));
    ASSERT_FALSE(reports.empty());
    EXPECT_EQ(reports.back().from_memory, from_memory == 1);
    auto* again = b->scene.FindActorAs<Kennel>(id);
    ASSERT_NE(again, nullptr) << Lines(reports.back().apply.messages);
    EXPECT_EQ(again->pet, b->scene.players().front().pawn) << from_memory;
    EXPECT_EQ(again->log, b->scene.GetSubsystem<QuestLog>()) << from_memory;
    EXPECT_EQ(again->neighbour, AtticCrate(*b)) << from_memory;
    ASSERT_OK(b->scene.RemoveLevel(kCellar));
  }
}

// A level's memory saves a reference to a component of another level's actor by the component's
// subject ID, as a whole save does: a load of a save that wrote that memory finds it.
TEST_F(LevelMemoryTest, ALevelsMemorySavesAReferenceToAnotherLevelsComponent) {
  Guid id;
  // The Attic remembered, and written by the save from its memory.
  ASSERT_NO_FATAL_FAILURE(SaveKennelWithABulb(true, &id));

  auto b = StreamedGame();
  ASSERT_OK(b->scene.AddLevel(kCellar));
  ASSERT_OK(b->scene.AddLevel(kAttic));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "k", MapChoice::kKeepCurrentMap));
  auto* again = b->scene.FindActorAs<Kennel>(id);
  ASSERT_NE(again, nullptr) << Lines(out.report.messages);
  EXPECT_EQ(again->toy, Bulb(*b)) << Lines(out.report.messages);
}

// A streamed level's apply finds a component of another level's actor that its records point to,
// through the component's record (its actor and name), once that level is there: from the held
// save, from the level's memory, and from a save that carried the level's records over while it
// was out (which keeps every reference by ID). Before, the reference is left as it was.
TEST_F(LevelMemoryTest, ALevelsReferenceToAnotherLevelsComponentIsResolved) {
  Guid id;
  ASSERT_NO_FATAL_FAILURE(SaveKennelWithABulb(false, &id));

  auto b = StreamedGame();
  ASSERT_OK(LoadNow(*b, "k"));
  ASSERT_OK(b->scene.AddLevel(kCellar));
  ASSERT_NE(Bulb(*b), nullptr);
  for (int from_memory = 0; from_memory < 2; ++from_memory) {
    ASSERT_OK(b->scene.AddLevel(kAttic));
    ASSERT_FALSE(reports.empty());
    EXPECT_EQ(reports.back().from_memory, from_memory == 1);
    auto* again = b->scene.FindActorAs<Kennel>(id);
    ASSERT_NE(again, nullptr) << Lines(reports.back().apply.messages);
    EXPECT_EQ(again->toy, Bulb(*b)) << from_memory << Lines(reports.back().apply.messages);
    ASSERT_OK(b->scene.RemoveLevel(kAttic));
  }
  ASSERT_OK(SaveNow(*b, "carried"));  // the Attic out: its records carried over by ID
  auto c = StreamedGame();
  ASSERT_OK(LoadNow(*c, "carried"));
  ASSERT_OK(c->scene.AddLevel(kCellar));
  ASSERT_NE(Bulb(*c), nullptr);
  ASSERT_OK(c->scene.AddLevel(kAttic));
  auto* carried = c->scene.FindActorAs<Kennel>(id);
  ASSERT_NE(carried, nullptr);
  EXPECT_EQ(carried->toy, Bulb(*c)) << Lines(reports.back().apply.messages);

  auto early = StreamedGame();
  ASSERT_OK(LoadNow(*early, "k"));
  ASSERT_OK(early->scene.AddLevel(kAttic));  // the Cellar, and its lamp's Bulb, not there yet
  auto* alone = early->scene.FindActorAs<Kennel>(id);
  ASSERT_NE(alone, nullptr);
  EXPECT_EQ(alone->toy, nullptr);
}

// A save writes the placed actors destroyed in play in the order the host visited them as their
// levels came (levels in Levels() order), the order a load that opens the map meets them in: not
// by ID, and not by the slots streaming gave them, so the same world writes the same records.
TEST_F(LevelMemoryTest, TombstonesComeInTheOrderTheirLevelsActorsWereVisited) {
  // IDs that fall along the map, so ID order is the reverse of the map's.
  auto id = [](std::uint64_t level, std::uint64_t k) { return Guid(level, 100 - k); };
  std::string actors;
  for (std::uint64_t level : {1, 2}) {
    for (std::uint64_t k = 0; k < 4; ++k) {
      actors += std::string(actors.empty() ? "" : ",\n") + R"({"class": "Crate", "id": ")" +
                id(level, k).ToString() + R"(", "level": ")" +
                (level == 1 ? "Cellar" : "Attic") + R"(", "saving": "Always"})";
    }
  }
  const std::string map = Replace(StreamedMap(), R"("actors": [)", "\"actors\": [" + actors + ",");
  auto play = [&](bool streamed_before) -> std::vector<Guid> {
    auto g = NewGame();
    g->scene.AddMap("maps/falling.json", map);
    EXPECT_OK(g->scene.Start("maps/falling.json"));
    if (streamed_before) {  // the levels' slots freed, to be taken again the other way round
      EXPECT_OK(g->scene.AddLevel(kAttic));
      EXPECT_OK(g->scene.AddLevel(kCellar));
      EXPECT_OK(g->scene.RemoveLevel(kCellar));
      EXPECT_OK(g->scene.RemoveLevel(kAttic));
    }
    EXPECT_OK(g->scene.AddLevel(kCellar));
    EXPECT_OK(g->scene.AddLevel(kAttic));
    for (std::uint64_t level : {1, 2}) {
      for (std::uint64_t k : {0, 2, 3}) g->scene.DestroyActor(id(level, k));
    }
    EXPECT_OK(SaveNow(*g, "t"));
    Result<std::vector<record::Record>> records = RecordsOf(*g, "t", "WRLD");
    EXPECT_OK(records.status());
    std::vector<Guid> tombstones;
    for (const record::Record& r : records.ok() ? *records : std::vector<record::Record>()) {
      for (const record::Section& section : r.sections) {
        if (section.id != world::kActorSection) continue;
        Result<world::ActorSection> a = world::DecodeActor(section.bytes);
        if (a.ok() && a->destroyed) tombstones.push_back(r.subject);
      }
    }
    return tombstones;
  };
  const std::vector<Guid> want = {id(1, 0), id(1, 2), id(1, 3), id(2, 0), id(2, 2), id(2, 3)};
  EXPECT_EQ(play(false), want);
  EXPECT_EQ(play(true), want);
}

// --- 9b. Hooks that change the waiting component records ----------------------------------------
//
// A component record waiting for its component applies when the host reports the component
// created (World::OnComponentCreated), and that apply runs the game's code: setters and OnLoaded
// hooks. The code may create another waiting component (the call comes back in), remove a level
// (whose waiting records go) or add one (whose records wait too). Each record still applies once,
// and nothing is read from what went. Some of these tests depend on the order the records wait
// in, which is the order they were loaded: each says why it needs its order.

class WaitingHookTest : public LevelMemoryTest {
 protected:
  // The hooks are the tests' lambdas, which hold their locals: none may outlive its test.
  void TearDown() override {
    g_plaque_loaded = nullptr;
    g_purse_coin = nullptr;
    g_forge_heat = nullptr;
    g_forge_begun = nullptr;
    LevelMemoryTest::TearDown();
  }

  // Makes the plaque `name` of `actor` in play, with `text`.
  static Status AddPlaque(Game& g, Guid actor, std::string_view name, std::string text) {
    ROLLY_ASSIGN_OR_RETURN(Component * made,
                           g.scene.AddComponent(actor, Name(name), Name("LoadHookPlaque")));
    static_cast<PlaqueComponent*>(made)->text = std::move(text);
    return OkStatus();
  }
  static Status AddPlaque(Game& g, const char* actor, std::string_view name, std::string text) {
    return AddPlaque(g, G(actor), name, std::move(text));
  }

  // Makes the Cellar mole's backpack in play, with `capacity`.
  static Result<InventoryComponent*> AddBackpack(Game& g, std::int32_t capacity) {
    ROLLY_ASSIGN_OR_RETURN(
        Component * made,
        g.scene.AddComponent(G(kCellarMoleId), Name("Backpack"), Name("InventoryComponent")));
    auto* bag = static_cast<InventoryComponent*>(made);
    bag->capacity = capacity;
    return bag;
  }
  // Makes the Cellar mole's backpack in play with capacity 10 (saved so when `older_held`),
  // changes it to 44, and takes the Cellar out and in again: its record waits from the level's
  // memory.
  void WaitFromMemory(Game& g, bool older_held) {
    ASSERT_OK(g.scene.AddLevel(kCellar));
    ASSERT_OK_AND_ASSIGN(InventoryComponent * bag, AddBackpack(g, 10));
    if (older_held) {
      ASSERT_OK(SaveNow(g, "older"));
    }
    bag->capacity = 44;
    ASSERT_OK(g.scene.RemoveLevel(kCellar));
    ASSERT_OK(g.scene.AddLevel(kCellar));
    ASSERT_TRUE(reports.back().from_memory);
    ASSERT_EQ(reports.back().apply.waiting, 1u) << Lines(reports.back().apply.messages);
  }

  // Makes the Cellar mole's backpack, as the game makes it after a load, and returns its
  // capacity (-1: it was not made).
  static std::int32_t MakeBackpack(Game& g) {
    Result<Component*> made =
        g.scene.AddComponent(G(kCellarMoleId), Name("Backpack"), Name("InventoryComponent"));
    return made.ok() ? static_cast<InventoryComponent*>(*made)->capacity : -1;
  }

  // Makes the plaque `name` of `actor`, as the game makes it after a load, and returns its text
  // (or why it was not made).
  static std::string MakePlaque(Game& g, Guid actor, std::string_view name) {
    Result<Component*> made = g.scene.AddComponent(actor, Name(name), Name("LoadHookPlaque"));
    return made.ok() ? static_cast<PlaqueComponent*>(*made)->text : made.status().ToString();
  }
  static std::string MakePlaque(Game& g, const char* actor, std::string_view name) {
    return MakePlaque(g, G(actor), name);
  }

  // The text of the plaque `name` of `actor` as it is now.
  static std::string TextOf(Game& g, const char* actor, std::string_view name) {
    Actor* a = g.scene.FindActor(G(actor));
    Component* c = a ? a->FindComponent(Name(name)) : nullptr;
    return c ? static_cast<PlaqueComponent*>(c)->text : "(none)";
  }
};

// The hook of the second plaque creates the first, whose record waits before the second's (an
// actor's components are saved, and wait, in the order they were made): the call comes back in
// and takes that record out of the list while the outer call applies. Both apply; the third, made
// after, still finds its own record. (Erasing the outer call's record afterwards by its old place
// in the list took the third's record, leaving the second's.)
TEST_F(WaitingHookTest, AHookThatCreatesAWaitingComponentLeavesTheOthersWaiting) {
  auto a = StreamedGame();
  ASSERT_OK(AddPlaque(*a, kDoorId, "First", "one"));
  ASSERT_OK(AddPlaque(*a, kDoorId, "Second", "two"));
  ASSERT_OK(AddPlaque(*a, kDoorId, "Third", "three"));
  ASSERT_OK(SaveNow(*a, "h"));

  auto b = StreamedGame();
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "h"));
  ASSERT_EQ(out.report.waiting, 3u) << Lines(out.report.messages);
  std::vector<std::string> loaded;  // the plaques whose OnLoaded ran, in order
  std::optional<std::string> inner;
  g_plaque_loaded = [&](PlaqueComponent& p) {
    loaded.push_back(p.name.str());
    if (p.name == Name("Second")) inner = MakePlaque(*b, kDoorId, "First");
  };
  EXPECT_EQ(MakePlaque(*b, kDoorId, "Second"), "two");
  EXPECT_EQ(inner, "one") << "the plaque made inside the hook";
  EXPECT_EQ(TextOf(*b, kDoorId, "First"), "one");
  EXPECT_EQ(MakePlaque(*b, kDoorId, "Third"), "three") << "the third plaque's record was lost";
  EXPECT_THAT(loaded, ElementsAre("Second", "First", "Third"));
}

// The hook of an Attic plaque removes the Cellar, whose waiting record (a backpack) is before the
// plaque's in the list, the Cellar having been added first: the list shrinks while the plaque's
// record applies. The second Attic plaque still finds its record, and the backpack's goes with
// the Cellar's memory, to wait again when the Cellar comes back. (Erasing the applied record
// afterwards by its old place in the list took the second plaque's record.)
TEST_F(WaitingHookTest, AHookThatRemovesALevelLeavesTheOthersWaiting) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK(a->scene.AddLevel(kAttic));
  ASSERT_OK(AddBackpack(*a, 44).status());
  ASSERT_OK(AddPlaque(*a, kAtticCrateId, "First", "one"));
  ASSERT_OK(AddPlaque(*a, kAtticCrateId, "Second", "two"));
  ASSERT_OK(SaveNow(*a, "h"));

  auto b = StreamedGame();
  ASSERT_OK(LoadNow(*b, "h"));
  ASSERT_OK(b->scene.AddLevel(kCellar));
  ASSERT_EQ(reports.back().apply.waiting, 1u);
  ASSERT_OK(b->scene.AddLevel(kAttic));
  ASSERT_EQ(reports.back().apply.waiting, 2u);
  std::optional<Status> removed;
  g_plaque_loaded = [&](PlaqueComponent& p) {
    if (p.name == Name("First")) removed = b->scene.RemoveLevel(kCellar);
  };
  EXPECT_EQ(MakePlaque(*b, kAtticCrateId, "First"), "one");
  ASSERT_TRUE(removed.has_value());
  EXPECT_OK(*removed);
  EXPECT_TRUE(b->saves.world().RemembersLevel(kCellar));
  EXPECT_EQ(MakePlaque(*b, kAtticCrateId, "Second"), "two")
      << "the second plaque's record was lost";

  ASSERT_OK(b->scene.AddLevel(kCellar));
  ASSERT_TRUE(reports.back().from_memory);
  EXPECT_EQ(reports.back().apply.waiting, 1u) << "the backpack's record was lost";
  EXPECT_EQ(MakeBackpack(*b), 44);
}

// The hook of the only waiting plaque adds the Cellar, whose backpack's record waits too: the list
// grows while the plaque's record applies (past its room, with one record waiting before, so its
// elements move). Both records apply. (Erasing the applied record afterwards through a place in
// the list that had moved read and wrote memory freed.)
TEST_F(WaitingHookTest, AHookThatAddsALevelWithWaitingRecordsKeepsThemWaiting) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK(AddBackpack(*a, 44).status());
  ASSERT_OK(AddPlaque(*a, kDoorId, "First", "one"));
  ASSERT_OK(SaveNow(*a, "h"));

  auto b = StreamedGame();  // the map opens without the Cellar
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "h"));
  ASSERT_EQ(out.report.waiting, 1u) << Lines(out.report.messages);
  std::optional<Status> added;
  g_plaque_loaded = [&](PlaqueComponent& p) {
    if (p.name == Name("First")) added = b->scene.AddLevel(kCellar);
  };
  EXPECT_EQ(MakePlaque(*b, kDoorId, "First"), "one");
  ASSERT_TRUE(added.has_value());
  EXPECT_OK(*added);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().level, kCellar);
  EXPECT_EQ(reports.back().apply.waiting, 1u);
  EXPECT_EQ(MakeBackpack(*b), 44)
      << "the backpack's record was lost";
}

// The last holder of a save goes while its record is read. A level's memory, once applied, is
// held by nothing but the level's records that still wait (no save is held here). A purse of the
// level hands the coin its record sets to a keeper, then removes its own level: the purse goes,
// and with it the level's waiting records. The coin's own saved fields, applied after the setter
// returns, are still read from the memory's bytes, which the apply keeps until it ends. (Before,
// the memory was freed under the read; then the applied record was erased from an empty list.)
TEST_F(WaitingHookTest, ASetterThatRemovesItsOwnLevelLeavesTheRecordItReadsAlive) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK_AND_ASSIGN(Component * made, a->scene.AddComponent(G(kCellarMoleId), Name("Purse"),
                                                               Name("HandingPurse")));
  auto* purse = static_cast<HandingPurse*>(made);
  purse->coin = std::make_unique<Coin>();
  purse->coin->value = 7;
  ASSERT_OK(a->scene.RemoveLevel(kCellar));  // the purse's record goes into the level's memory
  ASSERT_OK(a->scene.AddLevel(kCellar));     // the purse is not made again: its record waits
  ASSERT_TRUE(reports.back().from_memory);
  ASSERT_EQ(reports.back().apply.waiting, 1u) << Lines(reports.back().apply.messages);
  ASSERT_FALSE(a->saves.world().RemembersLevel(kCellar));
  ASSERT_EQ(a->saves.world().held(), nullptr);

  std::vector<std::unique_ptr<Coin>> kept;
  std::optional<Status> removed;
  g_purse_coin = [&](std::unique_ptr<Coin> coin) {
    kept.push_back(std::move(coin));
    removed = a->scene.RemoveLevel(kCellar);  // the purse must not be touched after this
  };
  ASSERT_OK(a->scene.AddComponent(G(kCellarMoleId), Name("Purse"), Name("HandingPurse")).status());
  ASSERT_TRUE(removed.has_value());
  EXPECT_OK(*removed);
  EXPECT_EQ(a->scene.FindActor(G(kCellarMoleId)), nullptr);
  EXPECT_TRUE(a->saves.world().RemembersLevel(kCellar));
  ASSERT_EQ(kept.size(), 1u);
  ASSERT_NE(kept[0], nullptr);
  EXPECT_EQ(kept[0]->value, 7);
}

// A load replaces the world's state: the records still waiting from an earlier load go, and the
// new load's own records wait in their place. (Before, a second load keeping the map left the
// first one's record waiting ahead of its own, and the plaque got the first one's text.) The
// next save writes the second load's record.
TEST_F(WaitingHookTest, ASecondLoadsWaitingRecordWinsOverTheFirsts) {
  for (MapChoice map : {MapChoice::kKeepCurrentMap, MapChoice::kOpenSavedMap}) {
    SCOPED_TRACE(map == MapChoice::kKeepCurrentMap ? "keeping the map" : "opening the map");
    auto a = StreamedGame();
    ASSERT_OK(AddPlaque(*a, kDoorId, "First", "old"));
    ASSERT_OK(SaveNow(*a, "s1"));
    static_cast<PlaqueComponent*>(a->scene.FindActor(G(kDoorId))->FindComponent(Name("First")))
        ->text = "new";
    ASSERT_OK(SaveNow(*a, "s2"));

    auto b = StreamedGame();
    ASSERT_OK_AND_ASSIGN(LoadOutcome first, LoadNow(*b, "s1", map));
    ASSERT_EQ(first.report.waiting, 1u) << Lines(first.report.messages);
    ASSERT_OK_AND_ASSIGN(LoadOutcome second, LoadNow(*b, "s2", map));
    ASSERT_EQ(second.report.waiting, 1u) << Lines(second.report.messages);
    ASSERT_OK(SaveNow(*b, "s3"));  // before the plaque is made: its record is kept
    EXPECT_EQ(MakePlaque(*b, kDoorId, "First"), "new") << "the first load's record applied";

    auto c = StreamedGame();
    ASSERT_OK(LoadNow(*c, "s3"));
    EXPECT_EQ(MakePlaque(*c, kDoorId, "First"), "new");
  }
}

// A record waiting from a level's memory goes at a load too: the loaded save's record of the
// component waits in its place. (Before, a load keeping the map left the memory's record waiting
// ahead of the loaded one.)
TEST_F(WaitingHookTest, ALoadDropsARecordWaitingFromLevelMemory) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK_AND_ASSIGN(InventoryComponent * bag, AddBackpack(*a, 10));
  ASSERT_OK(SaveNow(*a, "s"));
  bag->capacity = 44;
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_TRUE(reports.back().from_memory);
  ASSERT_EQ(reports.back().apply.waiting, 1u) << Lines(reports.back().apply.messages);

  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*a, "s", MapChoice::kKeepCurrentMap));
  ASSERT_EQ(out.report.waiting, 1u) << Lines(out.report.messages);
  EXPECT_EQ(MakeBackpack(*a), 10) << "the memory's record applied";
}

// A record waiting from a level's memory (a component made in play, not made again since the
// level came back) is written by the next save, once, and wins over an older record of it in the
// held save. (Before, the save wrote the held save's record, or none when it had none.)
TEST_F(WaitingHookTest, ARecordWaitingFromLevelMemoryIsSaved) {
  for (const bool older_held : {false, true}) {
    SCOPED_TRACE(older_held ? "an older save held" : "no save held");
    reports.clear();
    auto a = StreamedGame();
    ASSERT_NO_FATAL_FAILURE(WaitFromMemory(*a, older_held));
    ASSERT_OK(SaveNow(*a, "p"));

    auto c = StreamedGame();
    ASSERT_OK(LoadNow(*c, "p"));
    ASSERT_OK(c->scene.AddLevel(kCellar));
    EXPECT_EQ(reports.back().apply.waiting, 1u) << "the save lost the backpack's record, or "
                                                   "wrote it twice";
    EXPECT_EQ(MakeBackpack(*c), 44);
  }
}

// The same record is kept by the level's memory when the level goes again before the component
// is made, and waits again at the next add. (Before, the second removal dropped it, or kept the
// held save's older record.)
TEST_F(WaitingHookTest, ARecordWaitingFromLevelMemoryIsKeptByTheNextRemoval) {
  for (const bool older_held : {false, true}) {
    SCOPED_TRACE(older_held ? "an older save held" : "no save held");
    reports.clear();
    auto a = StreamedGame();
    ASSERT_NO_FATAL_FAILURE(WaitFromMemory(*a, older_held));
    ASSERT_OK(a->scene.RemoveLevel(kCellar));
    ASSERT_OK(a->scene.AddLevel(kCellar));
    ASSERT_TRUE(reports.back().from_memory);
    EXPECT_EQ(reports.back().apply.waiting, 1u) << "the memory lost the backpack's record, or "
                                                   "kept it twice";
    EXPECT_EQ(MakeBackpack(*a), 44);
  }
}

// A save holds the records that waited when its subjects were listed: a component made after
// that (here between the steps and the records' making; a pre-save hook could make one too) is
// not in the save, so the record it took from level memory must be.
TEST_F(WaitingHookTest, ARecordTakenAfterASavesListingIsStillSaved) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK(AddBackpack(*a, 44).status());
  ASSERT_OK(a->scene.RemoveLevel(kCellar));
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_EQ(reports.back().apply.waiting, 1u) << Lines(reports.back().apply.messages);
  std::unique_ptr<world::WorldCapture> capture = a->saves.world().BeginCapture();
  ASSERT_OK(capture->Run());
  ASSERT_EQ(MakeBackpack(*a), 44);
  ASSERT_OK_AND_ASSIGN(std::vector<world::WorldChunk> chunks, capture->Finish());
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const world::LoadedGame> saved,
                       world::LoadedGame::Check(std::move(chunks), *registry_));

  auto c = StreamedGame();
  ASSERT_OK(c->saves.world().Apply(saved, nullptr));
  ASSERT_OK(c->scene.AddLevel(kCellar));
  EXPECT_EQ(reports.back().apply.waiting, 1u) << "the save lost the backpack's record";
  EXPECT_EQ(MakeBackpack(*c), 44);
}

// The host reports no component made while its actor spawns. A forge spawned again by a load
// makes its plaque in a setter, in the load's first pass, after the plaque's record began to wait:
// the load matches that record again after that pass, and the plaque gets it before the forge
// finishes spawning and begins play.
TEST_F(WaitingHookTest, AComponentMadeWhileItsActorSpawnsAgainGetsItsRecord) {
  auto a = StreamedGame();
  ASSERT_OK_AND_ASSIGN(Actor * forge, a->scene.SpawnActor(Name("Forge"), Name(), {}));
  const Guid id = forge->id;
  static_cast<Forge*>(forge)->heat = 5;
  ASSERT_OK(AddPlaque(*a, id, "First", "saved"));
  ASSERT_OK(AddPlaque(*a, id, "Second", "kept"));
  ASSERT_OK(SaveNow(*a, "f"));

  // Keeping the map, the forge begins play as it finishes spawning; opening it, after the load.
  for (MapChoice map : {MapChoice::kKeepCurrentMap, MapChoice::kOpenSavedMap}) {
    SCOPED_TRACE(map == MapChoice::kKeepCurrentMap ? "keeping the map" : "opening it");
    auto b = StreamedGame();
    std::optional<Result<Component*>> made;
    g_forge_heat = [&](Actor& f) {
      made = b->scene.AddComponent(f.id, Name("First"), Name("LoadHookPlaque"));
    };
    int loaded = 0;
    g_plaque_loaded = [&](PlaqueComponent&) { ++loaded; };
    std::string at_begin_play = "(not begun)";
    g_forge_begun = [&](Actor& f) {
      Component* c = f.FindComponent(Name("First"));
      at_begin_play = c ? static_cast<PlaqueComponent*>(c)->text : "(no plaque)";
    };
    ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "f", map));
    g_forge_heat = nullptr;
    g_forge_begun = nullptr;
    ASSERT_EQ(out.report.spawned, 1u) << Lines(out.report.messages);
    EXPECT_EQ(out.report.waiting, 1u) << "only the Second plaque, never made, waits\n"
                                      << Lines(out.report.messages);
    ASSERT_TRUE(made.has_value()) << "the forge's setter did not run";
    ASSERT_OK_AND_ASSIGN(Component * plaque, *made);
    EXPECT_EQ(static_cast<PlaqueComponent*>(plaque)->text, "saved");
    EXPECT_EQ(at_begin_play, "saved") << "set before its actor began play";
    EXPECT_EQ(loaded, 1) << "its OnLoaded runs once, with the load's";
    EXPECT_EQ(MakePlaque(*b, id, "Second"), "kept");
  }
}

// A load matches the component records of the actors it spawns again as each actor spawns, when
// they come in the spawns' order. One that does not (a record that waited through a save, which
// writes it after the actors it listed) is found by its actor once all are spawned, and waits
// again for its component.
TEST_F(WaitingHookTest, ASpawnedActorsComponentRecordOutOfTheSpawnsOrderIsFoundAfterThem) {
  auto a = StreamedGame();
  ASSERT_OK_AND_ASSIGN(Actor * first, a->scene.SpawnActor(Name("Forge"), Name(), {}));
  const Guid first_id = first->id;
  ASSERT_OK(AddPlaque(*a, first_id, "First", "waited"));
  ASSERT_OK(SaveNow(*a, "f"));

  auto b = StreamedGame();
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "f"));
  ASSERT_EQ(out.report.waiting, 1u) << Lines(out.report.messages);
  ASSERT_OK_AND_ASSIGN(Actor * second, b->scene.SpawnActor(Name("Forge"), Name(), {}));
  const Guid second_id = second->id;
  ASSERT_OK(AddPlaque(*b, second_id, "Second", "made"));
  ASSERT_OK(SaveNow(*b, "g"));

  auto c = StreamedGame();
  ASSERT_OK_AND_ASSIGN(LoadOutcome again, LoadNow(*c, "g"));
  EXPECT_EQ(again.report.spawned, 2u) << Lines(again.report.messages);
  EXPECT_EQ(again.report.waiting, 2u) << Lines(again.report.messages);
  EXPECT_EQ(MakePlaque(*c, first_id, "First"), "waited");
  EXPECT_EQ(MakePlaque(*c, second_id, "Second"), "made");
}

// A streamed level's apply of the held save matches only the records it left waiting itself, not
// those an earlier apply of the same save left for the same component. (Here a client, which keeps
// no level memory, destroys a forge the load spawned again in the Cellar and takes the level out
// and in again: the load's record still waits for the forge that went.)
TEST_F(WaitingHookTest, ALevelsApplyMatchesOnlyTheRecordsItLeftWaiting) {
  auto a = StreamedGame();
  ASSERT_OK(a->scene.AddLevel(kCellar));
  ASSERT_OK_AND_ASSIGN(Actor * forge, a->scene.SpawnActor(Name("Forge"), kCellar, {}));
  const Guid id = forge->id;
  ASSERT_OK(AddPlaque(*a, id, "First", "saved"));
  ASSERT_OK(SaveNow(*a, "f"));

  auto b = StreamedGame();
  ASSERT_OK(b->scene.AddLevel(kCellar));
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "f", MapChoice::kKeepCurrentMap));
  ASSERT_EQ(out.report.waiting, 1u) << Lines(out.report.messages);
  b->scene.DestroyActor(id);
  b->scene.SetAuthority(false);
  ASSERT_OK(b->scene.RemoveLevel(kCellar));
  Component* made = nullptr;
  g_forge_heat = [&](Actor& f) {
    Result<Component*> c = b->scene.AddComponent(f.id, Name("First"), Name("LoadHookPlaque"));
    if (c.ok()) made = *c;
  };
  int loaded = 0;
  g_plaque_loaded = [&](PlaqueComponent&) { ++loaded; };
  ASSERT_OK(b->scene.AddLevel(kCellar));
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().apply.spawned, 1u) << Lines(reports.back().apply.messages);
  EXPECT_EQ(reports.back().apply.waiting, 0u) << Lines(reports.back().apply.messages);
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(static_cast<PlaqueComponent*>(made)->text, "saved");
  EXPECT_EQ(loaded, 1) << "the plaque took one record";
}

// A component made while its actor spawns again, of another class than its record's: the record is
// not applied (ClassMismatch, reported) and does not wait.
TEST_F(WaitingHookTest, AComponentMadeWhileItsActorSpawnsAsAnotherClassIsAMismatch) {
  auto a = StreamedGame();
  ASSERT_OK_AND_ASSIGN(Actor * forge, a->scene.SpawnActor(Name("Forge"), Name(), {}));
  ASSERT_OK(AddPlaque(*a, forge->id, "First", "saved"));
  ASSERT_OK(SaveNow(*a, "f"));

  auto b = StreamedGame();
  Component* made = nullptr;
  g_forge_heat = [&](Actor& f) {
    Result<Component*> c = b->scene.AddComponent(f.id, Name("First"), Name("PlaqueComponent"));
    if (c.ok()) made = *c;
  };
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "f"));
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(out.report.waiting, 0u) << Lines(out.report.messages);
  EXPECT_EQ(out.report.class_mismatches, 1u) << Lines(out.report.messages);
  EXPECT_THAT(out.report.messages, Contains(HasSubstr("ClassMismatch")));
  EXPECT_EQ(static_cast<PlaqueComponent*>(made)->text, "");
}

// A component made while its actor spawns again is taken after the first pass, which may have
// made the load's table of objects by subject (here for a kennel's reference to a global): a
// player's reference to the component, set in the second pass, finds it all the same.
TEST_F(WaitingHookTest, AReferenceToAComponentMadeWhileItsActorSpawnsIsResolved) {
  auto a = NewGame();
  a->scene.AddMap(kSmallMap, SmallMap({.controller_class = "AimingController"}));
  ASSERT_OK(a->scene.Start(kSmallMap));
  ASSERT_OK_AND_ASSIGN(Actor * forge, a->scene.SpawnActor(Name("Forge"), Name(), {}));
  const Guid id = forge->id;
  ASSERT_OK_AND_ASSIGN(Component * plaque,
                       a->scene.AddComponent(id, Name("First"), Name("LoadHookPlaque")));
  ASSERT_OK_AND_ASSIGN(Kennel * kennel, a->scene.SpawnActor<Kennel>());
  kennel->log = a->scene.GetSubsystem<QuestLog>();
  auto* controller = dynamic_cast<AimingController*>(a->scene.players().at(0).controller);
  ASSERT_NE(controller, nullptr);
  controller->aimed = static_cast<PlaqueComponent*>(plaque);
  ASSERT_OK(SaveNow(*a, "f"));

  auto b = NewGame();
  b->scene.AddMap(kSmallMap, SmallMap({.controller_class = "AimingController"}));
  ASSERT_OK(b->scene.Start(kSmallMap));
  Component* made = nullptr;
  g_forge_heat = [&](Actor& f) {
    Result<Component*> c = b->scene.AddComponent(f.id, Name("First"), Name("LoadHookPlaque"));
    if (c.ok()) made = *c;
  };
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "f"));
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(out.report.waiting, 0u) << Lines(out.report.messages);
  auto* controller2 = dynamic_cast<AimingController*>(b->scene.players().at(0).controller);
  ASSERT_NE(controller2, nullptr);
  EXPECT_EQ(controller2->aimed, made) << Lines(out.report.messages);
}

// A record waits for a component its actor has when a save lists its subjects: the game spawned
// the actor again itself, deferred, and made the component before the spawn finished (the host
// reports no such component). The save holds the component as it is, once; the waiting record,
// older, is not written as well. (Writing it too put two records of the plaque in the save.)
TEST_F(WaitingHookTest, ARecordWaitingForACapturedComponentIsNotSaved) {
  auto a = StreamedGame();
  ASSERT_OK_AND_ASSIGN(Actor * forge, a->scene.SpawnActor(Name("Forge"), Name(), {}));
  const Guid id = forge->id;
  ASSERT_OK(AddPlaque(*a, id, "First", "saved"));
  ASSERT_OK(SaveNow(*a, "f"));

  auto b = StreamedGame();
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "f"));
  ASSERT_EQ(out.report.waiting, 1u) << Lines(out.report.messages);
  // The game destroys the forge and spawns it again under its ID, making the plaque meanwhile.
  b->scene.DestroyActor(id);
  const reflect::ClassInfo* forge_class = registry_->FindClass(Name("Forge"));
  ASSERT_NE(forge_class, nullptr);
  ASSERT_OK(b->scene.BeginSpawn(Name(), *forge_class, id, {}).status());
  ASSERT_OK(AddPlaque(*b, id, "First", "changed"));
  b->scene.FinishSpawn(id);
  ASSERT_OK(SaveNow(*b, "g"));

  auto c = StreamedGame();
  ASSERT_OK_AND_ASSIGN(out, LoadNow(*c, "g"));
  EXPECT_EQ(out.report.waiting, 1u) << "the save wrote the waiting record as well\n"
                                    << Lines(out.report.messages);
  EXPECT_EQ(MakePlaque(*c, id, "First"), "changed");
}

// A record waiting for a component of an actor destroyed since (a pickup spawned again by a load,
// destroyed in play before its plaque is made) is not written by the next save: the pickup is
// not in it, and a load of it would keep the plaque's record for an actor never there. (Writing
// it made every later save carry it.)
TEST_F(WaitingHookTest, ARecordWaitingForADestroyedActorsComponentIsNotSaved) {
  auto a = StreamedGame();
  ASSERT_OK_AND_ASSIGN(Actor * pickup, a->scene.SpawnActor(Name("Pickup"), Name(), {}));
  const Guid id = pickup->id;
  ASSERT_OK(AddPlaque(*a, id, "First", "one"));
  ASSERT_OK(SaveNow(*a, "s"));

  auto b = StreamedGame();
  ASSERT_OK_AND_ASSIGN(LoadOutcome out, LoadNow(*b, "s"));
  ASSERT_EQ(out.report.spawned, 1u) << Lines(out.report.messages);
  ASSERT_EQ(out.report.waiting, 1u) << Lines(out.report.messages);
  b->scene.DestroyActor(id);
  ASSERT_EQ(b->scene.FindActor(id), nullptr);
  ASSERT_OK(SaveNow(*b, "t"));

  auto c = StreamedGame();
  ASSERT_OK_AND_ASSIGN(out, LoadNow(*c, "t"));
  EXPECT_EQ(c->scene.FindActor(id), nullptr);
  EXPECT_EQ(out.report.spawned, 0u);
  EXPECT_EQ(out.report.kept, 0u) << "the save wrote the destroyed pickup's plaque record\n"
                                 << Lines(out.report.messages);
  EXPECT_EQ(out.report.waiting, 0u) << Lines(out.report.messages);
}

// --- 10. Golden world fixtures --------------------------------------------------------------------

fs::path FixturesDir() { return rolly::fixture_files::FixturesRoot(); }

constexpr const char* kFixtureSlot = "sample";

class WorldFixtures : public ::testing::Test {
 protected:
  void SetUp() override {
    // Only the shipped classes: the fixtures must load in any later version.
    registry_ = MakeRegistry(false, false);
    ASSERT_NE(registry_, nullptr);
  }
  std::unique_ptr<Game> NewGame() {
    auto g = std::make_unique<Game>(*registry_, backend_, mailbox_, workers_);
    g->scene.AddMap(kSampleMapPath, BuildSampleMap(kSampleMapActors, kSampleMapSeed));
    g->scene.AddMap(kOtherMap, BuildSampleMap(20, 5));
    return g;
  }

  // The checked world of the save file `bytes`.
  static Result<std::shared_ptr<const world::LoadedGame>> CheckBytes(
      const reflect::TypeRegistry& registry, const Bytes& bytes) {
    ROLLY_ASSIGN_OR_RETURN(format::File file, format::Read(bytes));
    return world::LoadedGame::Check(WorldChunksOf(file), registry);
  }

  // Makes the components the save holds that the loaded world lacks (those play added), as the
  // game would after a load: their records apply when they are created.
  static void MakeSavedComponents(Scene& scene, const world::LoadedGame& game) {
    for (const world::LoadedGame::Chunk& c : game.chunks()) {
      if (c.id != world::kWorldChunk) continue;
      for (std::size_t i = 0; i < c.payload.size(); ++i) {
        ByteView section;
        if (!c.payload.Find(i, world::kComponentSection, &section)) continue;
        Result<world::ComponentSection> comp = world::DecodeComponent(section);
        ASSERT_OK(comp);
        Actor* actor = scene.FindActor(comp->actor);
        if (actor == nullptr || actor->FindComponent(Name(comp->name))) continue;
        const record::ChunkTables& tables = c.payload.tables();
        const Name cls = tables.names()[tables.layouts()[c.payload.layout(i)].name];
        EXPECT_OK(scene.AddComponent(comp->actor, Name(comp->name), cls).status());
      }
    }
  }

  // Loads the saved world in `bytes` into `g` as a load that opens the saved map does, then
  // makes the components play added.
  static Status LoadBytes(Game& g, const Bytes& bytes, world::ApplyReport* report) {
    ROLLY_ASSIGN_OR_RETURN(auto game, CheckBytes(g.scene.registry(), bytes));
    std::optional<Status> applied;
    const std::string map = game->map();
    g.saves.world().ApplyAtActorsInitialized(game, nullptr, [&](Status s, world::ApplyReport r) {
      applied = s;
      *report = std::move(r);
    });
    Status opened = g.scene.OpenMap(map);
    g.saves.world().CancelPendingApply();
    ROLLY_RETURN_IF_ERROR(opened);
    if (!applied) return NotFoundError("the map opened without its actors initialized");
    ROLLY_RETURN_IF_ERROR(*applied);
    MakeSavedComponents(g.scene, *game);
    return OkStatus();
  }

  std::unique_ptr<reflect::TypeRegistry> registry_;
  store::MemoryBackend backend_;
  Mailbox mailbox_;
  WorkerPool workers_{2};
};

using rolly::fixture_files::ReadFileBytes;
using rolly::fixture_files::ReadText;

TEST_F(WorldFixtures, Regenerate) {
  if (std::getenv("ROLLY_UPDATE_WORLD_FIXTURES") == nullptr) {
    GTEST_SKIP() << "set ROLLY_UPDATE_WORLD_FIXTURES=1 to write the world fixtures again";
  }
  auto a = NewGame();
  ASSERT_OK(a->scene.Start(kSampleMapPath));
  ASSERT_OK(PlaySample(a->scene, 30, 7));
  ASSERT_OK_AND_ASSIGN(auto saved, Capture(*a));
  ASSERT_OK(SaveNow(*a, kFixtureSlot));
  ASSERT_OK_AND_ASSIGN(store::FileName name,
                       store::FileName::ForSlot("rolly", kFixtureSlot, store::Copy::kA));
  std::optional<Bytes> bytes = backend_.Peek(name);
  ASSERT_TRUE(bytes.has_value());

  // What a load of the file gives, which must be the world saved.
  auto b = NewGame();
  ASSERT_OK(b->scene.Start(kOtherMap));
  world::ApplyReport report;
  ASSERT_OK(LoadBytes(*b, *bytes, &report));
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*b));
  ASSERT_OK_AND_ASSIGN(auto diff, world::DiffWorlds(saved, loaded));
  ASSERT_THAT(diff, IsEmpty()) << "a load does not give the world saved:\n" << Lines(diff);
  ASSERT_OK_AND_ASSIGN(std::string dump, world::DumpWorld(loaded));

  const fs::path dir = FixturesDir() / "world";
  fs::create_directories(dir);
  std::ofstream(dir / "sample.rsav", std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes->data()),
             static_cast<std::streamsize>(bytes->size()));
  std::ofstream(dir / "sample.expected.txt", std::ios::binary) << dump;
}

TEST_F(WorldFixtures, SampleLoadsIntoTheExpectedWorld) {
  const fs::path dir = FixturesDir() / "world";
  ASSERT_TRUE(fs::exists(dir / "sample.rsav")) << dir;
  const Bytes bytes = ReadFileBytes(dir / "sample.rsav");
  const std::string expected = ReadText(dir / "sample.expected.txt");
  ASSERT_FALSE(expected.empty());
  auto g = NewGame();
  ASSERT_OK(g->scene.Start(kOtherMap));
  world::ApplyReport report;
  ASSERT_OK(LoadBytes(*g, bytes, &report));
  EXPECT_EQ(g->scene.CurrentMap(), kSampleMapPath);
  EXPECT_EQ(report.class_mismatches, 0u) << Lines(report.messages);
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*g));
  ASSERT_OK_AND_ASSIGN(std::string dump, world::DumpWorld(loaded));
  EXPECT_EQ(dump, expected);
}

// The same file through the store and the save system.
TEST_F(WorldFixtures, SampleLoadsThroughTheSaveSystem) {
  const fs::path dir = FixturesDir() / "world";
  const Bytes bytes = ReadFileBytes(dir / "sample.rsav");
  ASSERT_FALSE(bytes.empty()) << dir;
  ASSERT_OK_AND_ASSIGN(store::FileName name,
                       store::FileName::ForSlot("rolly", kFixtureSlot, store::Copy::kA));
  backend_.Poke(name, bytes);
  auto g = NewGame();
  ASSERT_OK(g->scene.Start(kOtherMap));
  ASSERT_OK(LoadNow(*g, kFixtureSlot));
  ASSERT_OK_AND_ASSIGN(auto game, CheckBytes(*registry_, bytes));
  MakeSavedComponents(g->scene, *game);
  ASSERT_OK_AND_ASSIGN(auto loaded, Capture(*g));
  ASSERT_OK_AND_ASSIGN(std::string dump, world::DumpWorld(loaded));
  EXPECT_EQ(dump, ReadText(dir / "sample.expected.txt"));
}

// The seeds of fuzz/world_apply_fuzzer (fuzz/corpus/world_apply_fuzzer/): the golden fixture's
// world chunks in the fuzzer's input form (scene/internal/chunk_input.h): all three, the world
// chunk alone, the globals and players together; and small edge cases. Written with
//
//     ROLLY_UPDATE_FUZZ_SEEDS=1 ROLLY_SOURCE_DIR=$PWD build/src/rolly/scene/save_load_test
//         --gtest_filter='WorldFixtures.WriteFuzzSeeds'   (one command line)
//
// after checking that every seed made of the fixture's chunks passes LoadedGame::Check.
TEST_F(WorldFixtures, WriteFuzzSeeds) {
  if (std::getenv("ROLLY_UPDATE_FUZZ_SEEDS") == nullptr) {
    GTEST_SKIP() << "set ROLLY_UPDATE_FUZZ_SEEDS=1 to write the world fuzzer's seeds";
  }
  const Bytes bytes = ReadFileBytes(FixturesDir() / "world" / "sample.rsav");
  ASSERT_OK_AND_ASSIGN(format::File file, format::Read(bytes));
  const std::vector<world::WorldChunk> chunks = WorldChunksOf(file);
  auto only = [&](std::initializer_list<world::ChunkId> ids) {
    std::vector<world::WorldChunk> out;
    for (const world::WorldChunk& c : chunks) {
      if (std::find(ids.begin(), ids.end(), c.id) != ids.end()) out.push_back(c);
    }
    return out;
  };
  const std::vector<std::pair<std::string, std::vector<world::WorldChunk>>> seeds = {
      {"sample_all", chunks},
      {"sample_world", only({world::kWorldChunk})},
      {"sample_globals_players", only({world::kGlobalChunk, world::kPlayerChunk})},
  };
  const fs::path dir = FixturesDir().parent_path().parent_path() / "fuzz" / "corpus" /
                       "world_apply_fuzzer";
  fs::create_directories(dir);
  for (const auto& [name, seed] : seeds) {
    ASSERT_FALSE(seed.empty()) << name;
    const Bytes input = scene_internal::EncodeChunkInput(seed);
    ASSERT_OK(world::LoadedGame::Check(
                  scene_internal::DecodeChunkInput(input, kSampleMapPath), *registry_)
                  .status())
        << name;
    rolly::fixture_files::WriteFileBytes(dir / name, input);
  }
  const Bytes all = scene_internal::EncodeChunkInput(chunks);
  rolly::fixture_files::WriteFileBytes(dir / "edge_empty", Bytes());
  rolly::fixture_files::WriteFileBytes(dir / "edge_cut_short", ByteView(all).first(all.size() / 2));
  Bytes unknown = all;
  unknown[0] = 3;  // not a chunk this form has: nothing is read
  rolly::fixture_files::WriteFileBytes(dir / "edge_unknown_chunk", unknown);
}

// The fuzzer's input form gives back the chunks it was made of (keys implied: "" for GLOB, the
// map for WRLD, player 0's for PLYR), and reading stops at the first byte that does not begin a
// whole chunk.
TEST(ChunkInputTest, GivesBackItsChunksAndStopsAtTheFirstBadByte) {
  std::vector<world::WorldChunk> chunks(4);
  chunks[0] = {world::kGlobalChunk, "", Bytes{1, 2, 3}};
  chunks[1] = {world::kWorldChunk, "maps/m.json", Bytes(300, 7)};  // a size of two varint bytes
  chunks[2] = {world::kPlayerChunk, world::PlayerChunkKey(0), Bytes{}};
  chunks[3] = {world::kWorldChunk, "maps/m.json", Bytes{9}};
  const Bytes input = scene_internal::EncodeChunkInput(chunks);
  EXPECT_EQ(input.size(), (1 + 1 + 3) + (1 + 2 + 300) + (1 + 1) + (1 + 1 + 1u));
  EXPECT_EQ(scene_internal::DecodeChunkInput(input, "maps/m.json"), chunks);
  // Cut inside the last chunk, or a byte that names no chunk: what came before is read.
  std::vector<world::WorldChunk> first_three(chunks.begin(), chunks.begin() + 3);
  EXPECT_EQ(scene_internal::DecodeChunkInput(ByteView(input).first(input.size() - 1),
                                             "maps/m.json"),
            first_three);
  Bytes bad = input;
  bad[input.size() - 3] = 3;
  EXPECT_EQ(scene_internal::DecodeChunkInput(bad, "maps/m.json"), first_three);
  EXPECT_TRUE(scene_internal::DecodeChunkInput(Bytes(), "m").empty());
  // Chunks of other IDs are left out.
  std::vector<world::WorldChunk> other(1);
  other[0] = {world::ChunkId{'M', 'E', 'T', 'A'}, "", Bytes{1}};
  EXPECT_TRUE(scene_internal::EncodeChunkInput(other).empty());
}

}  // namespace
}  // namespace rolly::scene
