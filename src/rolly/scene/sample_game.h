// The sample game: a few classes of a small game built on the reference scene (doors, chests,
// lamps, characters, crates, pickups, a quest log, game and player state), the maps it plays on
// and a seeded, scripted stretch of play. The demo runs it; the world, game and scene tests save
// and load it. The actors' saved vectors are PooledVectors: their elements sit in the scene's
// pool, beside those of the other actors, as an engine's arrays sit in its allocator's.
//
//   reflect::TypeRegistry registry;
//   scene::RegisterSceneTypes(registry);
//   scene::RegisterSampleGame(registry);
//   registry.Finish();
//   scene::Scene scene(registry);
//   scene.AddMap("maps/big.json", scene::BuildSampleMap(10000, 7));
//   scene.Start("maps/big.json");                 // or the shipped scene::kSampleMapPath
//   scene::PlaySample(scene, 500, 7);             // changes every class
//
// Thread rules: the game thread, like the scene.

#ifndef ROLLY_SCENE_SAMPLE_GAME_H_
#define ROLLY_SCENE_SAMPLE_GAME_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"
#include "rolly/scene/objects.h"
#include "rolly/scene/scene.h"

namespace rolly::scene {

enum class DoorState : std::uint8_t { kClosed = 0, kOpen = 1, kLocked = 2 };

// A struct held by value in chests and inventories.
struct ItemStack {
  Name item;
  std::int32_t count = 0;
  float durability = 1;
  friend bool operator==(const ItemStack&, const ItemStack&) = default;
};

// Saved: "Open", "State" (DoorState "Closed"/"Open"/"Locked"), "LockCode".
class Door : public Actor {
 public:
  bool open = false;
  DoorState state = DoorState::kClosed;
  std::int32_t lock_code = 0;
};

// Saved: "Inventory".
class Chest : public Actor {
 public:
  PooledVector<ItemStack> inventory;
};

// A lamp's default component "Bulb". Saved: "Flicker", "Broken".
class LampComponent : public Component {
 public:
  float flicker = 0;
  bool broken = false;
};

// Saved: "On", "Color", "Intensity". Makes its "Bulb" (LampComponent) when constructed.
class Lamp : public Actor {
 public:
  Lamp();
  bool on = false;
  reflect::Color color{1, 1, 1, 1};
  float intensity = 1;
};

// A character's default "Inventory", and the "Backpack" play adds. Saved: "Items", "Capacity".
class InventoryComponent : public Component {
 public:
  PooledVector<ItemStack> items;
  std::int32_t capacity = 8;
};

// Saved: "Health", "Name", "Friend" and "Target" (references to other characters), "Level".
// Makes its "Inventory" (InventoryComponent) when constructed.
class Character : public Actor {
 public:
  Character();
  float health = 100;
  std::string name;
  Character* friend_character = nullptr;
  Character* target = nullptr;
  std::int32_t experience_level = 1;
};

// Saved: "Hits". Play destroys crates.
class Crate : public Actor {
 public:
  std::int32_t hits = 0;
};

// Spawned in play and attached to characters. Saved: "Value", "Kind".
class Pickup : public Actor {
 public:
  std::int32_t value = 0;
  Name kind;
};

// Owned by a Quest. Saved: "Item", "Gold".
class QuestReward {
 public:
  virtual ~QuestReward() = default;
  Name item;
  std::int32_t gold = 0;
};

// Owned by the QuestLog. Saved: "Id", "Step", "Done", "Reward" (owned).
class Quest {
 public:
  virtual ~Quest() = default;
  Name id;
  std::int32_t step = 0;
  bool done = false;
  std::unique_ptr<QuestReward> reward;
};

// A game-instance subsystem holding owned quests. Saved: "Quests".
class QuestLog : public Subsystem {
 public:
  // The quest with `id`, or null.
  Quest* Find(Name id) const;
  std::vector<std::unique_ptr<Quest>> quests;
};

// Saved: "Difficulty".
class SampleGameMode : public GameMode {
 public:
  std::int32_t difficulty = 1;
};

// Saved: "TimeOfDay", "Day".
class SampleGameState : public GameState {
 public:
  float time_of_day = 8;
  std::int32_t day = 1;
};

// Saved: "ControlRotation".
class SamplePlayerController : public PlayerController {
 public:
  reflect::Rotatord control_rotation;
};

// The local player's own pawn. Saved: "Stamina".
class SamplePawn : public Pawn {
 public:
  float stamina = 100;
};

// Saved: "Score", "Gold".
class SamplePlayerState : public PlayerState {
 public:
  std::int32_t score = 0;
  std::int32_t gold = 0;
};

// Registers the classes above (under their C++ names), the DoorState enum and the ItemStack
// struct. RegisterSceneTypes must have run on `registry`; call Finish() after.
void RegisterSampleGame(reflect::TypeRegistry& registry);

// The shipped sample map (maps/sample.json) is BuildSampleMap(kSampleMapActors, kSampleMapSeed).
inline constexpr const char* kSampleMapPath = "maps/sample.json";
inline constexpr int kSampleMapActors = 40;
inline constexpr std::uint64_t kSampleMapSeed = 1;

// The JSON text of a sample map with `actors` placed actors (doors, chests, lamps, characters and
// crates, the first five one of each; about one in twelve in the "Cellar" sublevel, which is not
// loaded at the start; some lamps attached to doors and chests owned by characters), the globals
// (game instance with a QuestLog, SampleGameMode, SampleGameState, a LevelScript) and one local
// player. The same text for the same arguments, on every platform.
std::string BuildSampleMap(int actors, std::uint64_t seed);

// A seeded, scripted stretch of `steps` steps of play on a scene running a sample map. Step i does
// action i % 10: a door changes state; an item moves between chests; a lamp toggles (and its
// bulb flickers); a character is damaged and its friend and target set; a crate is hit (every
// second hit destroys it); a pickup is spawned and attached to (and owned by) a character; a quest
// is added with a reward or advanced; the game state's clock advances; the player's state, pawn
// and controller change; a character gets a "Backpack" component in play or an item in it. So any
// ten steps change every class. The same changes for the same seed and world (spawned actors get
// random IDs). InvalidInput without a running sample map.
Status PlaySample(Scene& scene, int steps, std::uint64_t seed);

}  // namespace rolly::scene

#endif  // ROLLY_SCENE_SAMPLE_GAME_H_
