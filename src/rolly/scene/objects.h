// The scene's object model: the base classes a game built on the reference scene derives from
// (actors and their components, the game instance and its subsystems, the game mode and state,
// world subsystems, the map's script object, and a local player's controller, pawn and state).
//
// Each is a polymorphic class registered in a TypeRegistry by RegisterSceneTypes, so the scene can
// make objects by class name (TypeRegistry::CreateObject) and hand them to the world layer as
// world::Object values (TypeRegistry::DynamicClass). A game's classes derive from these, are
// default-constructible, and register with `.Base<Actor>()` (or the matching base). Only what saves
// is registered as a field: an actor's tags (kSaveGame) here; its transform, owner and attachment
// are saved by the world layer through world::ActorView and world::Host::Place, not as fields.
//
// An actor makes its default components in its constructor (Lamp makes its "Bulb"); the scene
// sets their owner, and notes each object's registered class, when it takes the actor in. Every
// object is owned by the scene (actors, globals, players) or by the game instance (its
// subsystems); game code holds plain pointers and must not keep them past the object's end
// (DestroyActor, a map change). Actors and components live in the scene's object pool (Pooled).
//
// Thread rules: game thread only, like the scene.

#ifndef ROLLY_SCENE_OBJECTS_H_
#define ROLLY_SCENE_OBJECTS_H_

#include <cstddef>
#include <memory>
#include <new>
#include <string_view>
#include <vector>

#include "rolly/core/guid.h"
#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"
#include "rolly/world/host.h"

namespace rolly::scene {

class Actor;

// The base of Actor and Component: `new` puts them in the scene's object pool, by size, as an
// engine's allocator does (scene/internal/object_pool.h). `delete` through a base pointer gives
// the pool the object's size through the virtual destructor. Objects larger than 2 KiB, classes
// aligned to more than 16 bytes, and every object under AddressSanitizer come from the general
// heap. Placement `new` works as usual; `new (std::nothrow)` is not offered (a failed
// constructor could not give its memory back to the pool without the size).
class Pooled {
 public:
  static void* operator new(std::size_t size);
  static void operator delete(void* p, std::size_t size) noexcept;
  static void* operator new(std::size_t size, std::align_val_t align);
  static void operator delete(void* p, std::size_t size, std::align_val_t align) noexcept;
  static void* operator new(std::size_t, void* where) noexcept { return where; }
  static void operator delete(void*, void*) noexcept {}
};

// Memory from where the objects come (Pooled), for what they point to that a save and a load
// read of every actor: its list of components, and the saved vectors of the scene's actors and
// components (an actor's tags; in the sample game, a chest's inventory and a character's items).
// From the pool, those of many actors share a few pages; from the general heap, each is one more
// line, and page, to wait for, wherever the heap had room when it was filled. An engine's arrays
// come from its own allocator the same way. Elements aligned to more than 16 bytes cannot use it.
template <typename T>
struct PooledList {
  using value_type = T;
  PooledList() = default;
  template <typename U>
  PooledList(const PooledList<U>&) noexcept {}  // NOLINT: allocators convert implicitly
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "the pool's slots align to 16");
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(Pooled::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { Pooled::operator delete(p, n * sizeof(T)); }
  friend bool operator==(PooledList, PooledList) { return true; }
};

// A vector whose elements come from the pool (PooledList). The reflection registers it as it does
// std::vector: a field of this type saves and loads as a vector.
template <typename T>
using PooledVector = std::vector<T, PooledList<T>>;

// A part of an actor, unique by name under it.
class Component : public Pooled {
 public:
  Component() = default;
  virtual ~Component() = default;
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;

  // Set by whoever makes the component (the actor's constructor or Scene::AddComponent).
  Name name;
  // The actor holding it; set by the scene as the actor is taken in.
  Actor* owner = nullptr;
  // The component as its registered class (class and address), set by the scene when it takes the
  // component in; empty for one it has not (the scene then looks the class up). An engine's
  // objects know their class; the scene's views read it here.
  world::Object registered;
};

// A thing in a level: placed by the map or spawned in play.
class Actor : public Pooled {
 public:
  Actor() = default;
  virtual ~Actor() = default;
  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;

  // Called once when the actor begins play (the world's begin play, or at once for an actor
  // spawned in a world that already began), and once when it ends play (destroyed, its level
  // removed, its map torn down) if it began. Overrides need not call the base.
  virtual void BeginPlay() {}
  virtual void EndPlay() {}

  // The component named `name`, or null.
  Component* FindComponent(Name component_name) const;
  // Adds a component made by the caller (in a constructor: a default component). Returns it.
  template <typename T>
  T* AddDefaultComponent(std::string_view component_name) {
    auto c = std::make_unique<T>();
    c->name = Name(component_name);
    c->owner = this;
    T* raw = c.get();
    components.push_back(std::move(c));
    return raw;
  }

  // Identity: the map's stable ID for a placed actor, the ID given at spawn otherwise.
  Guid id;
  Name level;
  bool spawned = false;
  world::Saving saving = world::Saving::kWithSavedState;
  // Saved (kSaveGame) as "Tags".
  PooledVector<Name> tags;
  reflect::Transformd transform;
  Guid owner_id;
  Guid attach_parent;
  Name attach_socket;
  PooledVector<std::unique_ptr<Component>> components;
  bool begun_play = false;
  // Between the scene's BeginSpawn and FinishSpawn.
  bool deferred = false;
  // The actor as its registered class, set by the scene when it makes the actor (as
  // Component::registered).
  world::Object registered;
};

// The object that lives for the whole game, across maps; owns the game-instance subsystems.
class Subsystem;
class GameInstance {
 public:
  GameInstance() = default;
  virtual ~GameInstance() = default;
  GameInstance(const GameInstance&) = delete;
  GameInstance& operator=(const GameInstance&) = delete;
  std::vector<std::unique_ptr<Subsystem>> subsystems;
};

// A game-instance subsystem: lives as long as its game instance.
class Subsystem {
 public:
  Subsystem() = default;
  virtual ~Subsystem() = default;
  Subsystem(const Subsystem&) = delete;
  Subsystem& operator=(const Subsystem&) = delete;
};

// A subsystem of the current world: made with each map, gone with it.
class WorldSubsystem {
 public:
  WorldSubsystem() = default;
  virtual ~WorldSubsystem() = default;
  WorldSubsystem(const WorldSubsystem&) = delete;
  WorldSubsystem& operator=(const WorldSubsystem&) = delete;
};

// The rules of the current map (one per world).
class GameMode {
 public:
  GameMode() = default;
  virtual ~GameMode() = default;
  GameMode(const GameMode&) = delete;
  GameMode& operator=(const GameMode&) = delete;
};

// The shared state of the current map's game (one per world).
class GameState {
 public:
  GameState() = default;
  virtual ~GameState() = default;
  GameState(const GameState&) = delete;
  GameState& operator=(const GameState&) = delete;
};

// The map's own script object (a Level Blueprint's counterpart; one per world).
class LevelScript {
 public:
  LevelScript() = default;
  virtual ~LevelScript() = default;
  LevelScript(const LevelScript&) = delete;
  LevelScript& operator=(const LevelScript&) = delete;
};

// A local player's controller.
class PlayerController {
 public:
  PlayerController() = default;
  virtual ~PlayerController() = default;
  PlayerController(const PlayerController&) = delete;
  PlayerController& operator=(const PlayerController&) = delete;
};

// An actor a player (or the game) controls. A local player's own pawn is listed with
// world::ActorView::player_pawn set.
class Pawn : public Actor {};

// A local player's state (score, name...).
class PlayerState {
 public:
  PlayerState() = default;
  virtual ~PlayerState() = default;
  PlayerState(const PlayerState&) = delete;
  PlayerState& operator=(const PlayerState&) = delete;
};

// Registers the classes above in `registry` under their C++ names ("Actor", "Component",
// "GameInstance", "Subsystem", "WorldSubsystem", "GameMode", "GameState", "LevelScript",
// "PlayerController", "Pawn", "PlayerState"), Actor with its "Tags" field (kSaveGame). Call
// before registering a game's classes and before registry.Finish(); mistakes go to the
// registry's status, as every registration's do.
void RegisterSceneTypes(reflect::TypeRegistry& registry);

}  // namespace rolly::scene

#endif  // ROLLY_SCENE_OBJECTS_H_
