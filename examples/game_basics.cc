// Saving and loading a whole game through game::SaveSystem, with the reference scene as the
// host. The game's own classes (a torch with a flame component, a wallet subsystem) say which of
// their fields save; play changes them, spawns a torch and destroys a placed one; the game saves
// into a slot. A fresh game then starts on the same map, loads the slot, and finds everything as
// the first game left it.
//
// Usage: game_basics [FOLDER]   (default: saves/)
// Exits 0 when the loaded game matches the saved one, 1 otherwise.
//
// A game on its own engine writes a world::Host for it in place of the scene (docs/host.md), and
// its classes derive from its engine's; the registry, store and save system calls stay as here.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "rolly/core/mailbox.h"
#include "rolly/core/worker_pool.h"
#include "rolly/game/save_system.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/scene/objects.h"
#include "rolly/scene/scene.h"
#include "rolly/store/folder_backend.h"
#include "rolly/store/store.h"

namespace {

using rolly::Guid;
using rolly::Name;
using rolly::Result;
using rolly::Status;
using rolly::reflect::kSaveGame;

// --- The game's classes. Only the fields registered with kSaveGame save.

class Flame : public rolly::scene::Component {
 public:
  float height = 1;
};

class Torch : public rolly::scene::Actor {
 public:
  Torch() { AddDefaultComponent<Flame>("Flame"); }  // a default component, made with the torch
  bool lit = false;
  std::int32_t fuel = 100;
  Flame* flame() const { return static_cast<Flame*>(FindComponent(Name("Flame"))); }
};

class Wallet : public rolly::scene::Subsystem {  // lives with the game instance, across maps
 public:
  std::int32_t gold = 0;
};

Status RegisterGame(rolly::reflect::TypeRegistry& registry) {
  rolly::scene::RegisterSceneTypes(registry);  // the scene's bases first
  registry.Class<Flame>("Flame").Base<rolly::scene::Component>().Field("Height", &Flame::height,
                                                                       kSaveGame);
  registry.Class<Torch>("Torch")
      .Base<rolly::scene::Actor>()
      .Field("Lit", &Torch::lit, kSaveGame)
      .Field("Fuel", &Torch::fuel, kSaveGame);
  registry.Class<Wallet>("Wallet").Base<rolly::scene::Subsystem>().Field("Gold", &Wallet::gold,
                                                                         kSaveGame);
  return registry.Finish();
}

// The map: three torches placed with stable IDs (the identity a save finds them by).
constexpr std::string_view kMapPath = "maps/cave.json";
constexpr std::string_view kMap = R"({
  "name": "cave",
  "levels": [{"name": "Persistent"}],
  "game_instance": {"class": "GameInstance", "subsystems": ["Wallet"]},
  "actors": [
    {"class": "Torch", "id": "6d1e8f0a-3b7c-4f2e-9a51-0c4d2b7e8f11",
     "transform": {"translation": [0, 0, 0]}},
    {"class": "Torch", "id": "6d1e8f0a-3b7c-4f2e-9a51-0c4d2b7e8f12",
     "transform": {"translation": [4, 0, 0]}},
    {"class": "Torch", "id": "6d1e8f0a-3b7c-4f2e-9a51-0c4d2b7e8f13",
     "transform": {"translation": [8, 0, 0]}, "values": {"Fuel": 30}}
  ]
})";
const Guid kFirst = *Guid::Parse("6d1e8f0a-3b7c-4f2e-9a51-0c4d2b7e8f11");
const Guid kThird = *Guid::Parse("6d1e8f0a-3b7c-4f2e-9a51-0c4d2b7e8f13");

// Starts a game on the map (a game's own host would load its level here).
bool StartOnMap(rolly::scene::Scene& game) {
  game.AddMap(kMapPath, std::string(kMap));
  if (Status s = game.Start(kMapPath); !s.ok()) {
    std::fprintf(stderr, "starting the map: %s\n", s.ToString().c_str());
    return false;
  }
  return true;
}

// Prints a load's progress as the game's loading screen would show it.
class LoadScreen : public rolly::game::SaveEvents {
 public:
  void OnLoadProgress(std::string_view slot, rolly::game::LoadStage stage) override {
    std::printf("  loading \"%.*s\": %.*s\n", static_cast<int>(slot.size()), slot.data(),
                static_cast<int>(rolly::game::LoadStageName(stage).size()),
                rolly::game::LoadStageName(stage).data());
  }
};

// A game runs Tick once a frame and goes on with its frame; this program has no frames, so it
// flushes: Tick until every save and load asked for has called back, or the deadline passes.
bool WaitForCallbacks(rolly::game::SaveSystem& saves) {
  return saves.Flush(std::chrono::steady_clock::now() + std::chrono::seconds(30)).ok();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string folder = argc > 1 ? argv[1] : "saves";

  rolly::reflect::TypeRegistry registry;
  if (Status s = RegisterGame(registry); !s.ok()) {
    std::fprintf(stderr, "registering the game: %s\n", s.ToString().c_str());
    return 1;
  }
  // Once for the whole game: the workers, the game thread's mailbox, where saves go.
  rolly::WorkerPool workers(2);
  rolly::Mailbox mailbox;
  rolly::store::FolderBackend backend(folder);
  rolly::store::Store store(backend, workers, mailbox);

  Guid spawned_id;
  {
    // The first game: start the map, make the save system before play changes anything (it
    // notes the map's placed actors when it is made, which is how a save knows the ones play
    // destroyed), then play.
    rolly::scene::Scene game(registry);
    if (!StartOnMap(game)) return 1;
    rolly::game::SaveSystem saves(store, game, registry, mailbox, workers);

    Torch* first = game.FindActorAs<Torch>(kFirst);
    Wallet* wallet = game.GetSubsystem<Wallet>();
    if (first == nullptr || wallet == nullptr) {
      std::fprintf(stderr, "the map lacks the first torch or the wallet\n");
      return 1;
    }
    first->lit = true;
    first->fuel = 60;
    first->flame()->height = 2.5f;
    game.DestroyActor(kThird);  // burnt out: the save keeps it as destroyed
    rolly::reflect::Transformd where;
    where.translation = {2, 1, 0};
    Result<Torch*> dropped = game.SpawnActor<Torch>(Name(), where);
    if (!dropped.ok()) {
      std::fprintf(stderr, "spawning: %s\n", dropped.status().ToString().c_str());
      return 1;
    }
    (*dropped)->lit = true;
    spawned_id = (*dropped)->id;
    wallet->gold = 120;

    bool saved = false;
    saves.Save("Slot 1", {.title = "In the cave"}, [&saved](Result<rolly::game::SaveOutcome> r) {
      // On the game thread, once the save is durable (or failed, the slot's last save intact).
      if (!r.ok()) {
        std::fprintf(stderr, "save failed: %s\n", r.status().ToString().c_str());
        return;
      }
      saved = true;
      std::printf("saved \"Slot 1\": %zu records, capture %.3f ms on the game thread, %llu "
                  "bytes in copy %c\n",
                  r->records, std::chrono::duration<double, std::milli>(r->capture_time).count(),
                  static_cast<unsigned long long>(r->info.size),
                  rolly::store::CopyLetter(r->info.copy));
    });
    if (!WaitForCallbacks(saves) || !saved) return 1;
  }

  // A fresh game on the same map: the torches are as the map made them until the load.
  rolly::scene::Scene game(registry);
  if (!StartOnMap(game)) return 1;
  LoadScreen screen;  // made before the save system, so that it outlives it
  rolly::game::SaveSystem saves(store, game, registry, mailbox, workers);
  saves.SetEvents(&screen);

  bool loaded = false;
  saves.Load("Slot 1", {.map = rolly::game::MapChoice::kOpenSavedMap},
             [&loaded](Result<rolly::game::LoadOutcome> r) {
               if (!r.ok()) {  // nothing of the save applied: the world is as it was
                 std::fprintf(stderr, "load failed: %s\n", r.status().ToString().c_str());
                 return;
               }
               loaded = true;
               std::printf("loaded map \"%s\": %zu records applied, %zu spawned, %zu removed\n",
                           r->map.c_str(), r->report.applied, r->report.spawned,
                           r->report.removed);
             });
  if (!WaitForCallbacks(saves) || !loaded) return 1;

  // What the first game left, found again.
  const Torch* first = game.FindActorAs<Torch>(kFirst);
  const Torch* dropped = game.FindActorAs<Torch>(spawned_id);
  const Wallet* wallet = game.GetSubsystem<Wallet>();
  const bool same = first != nullptr && first->lit && first->fuel == 60 &&
                    first->flame()->height == 2.5f && game.FindActor(kThird) == nullptr &&
                    dropped != nullptr && dropped->lit && dropped->transform.translation.x == 2 &&
                    wallet != nullptr && wallet->gold == 120;
  std::printf("first torch %s, fuel %d, flame %.1f; third torch %s; dropped torch %s; gold %d\n",
              first && first->lit ? "lit" : "out", first ? first->fuel : -1,
              first ? first->flame()->height : 0.0f,
              game.FindActor(kThird) ? "still there" : "gone", dropped ? "back" : "missing",
              wallet ? wallet->gold : -1);
  std::printf("%s\n", same ? "the loaded game matches the saved one"
                           : "the loaded game differs from the saved one");
  return same ? 0 : 1;
}
