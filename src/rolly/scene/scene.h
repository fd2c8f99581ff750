// Scene: the reference host. A small scene graph (maps read from JSON files, levels, actors with
// components, tags and transforms, globals and local players) that implements world::Host, so
// every feature of Rolly Save runs, is tested and is demonstrated without an engine.
//
//   reflect::TypeRegistry registry;
//   scene::RegisterSceneTypes(registry);
//   scene::RegisterSampleGame(registry);          // or the game's own classes
//   if (!registry.Finish().ok()) ...
//   scene::Scene scene(registry);
//   Status s = scene.Start("maps/sample.json");   // game instance, then the map
//   Result<scene::Actor*> a = scene.SpawnActor(Name("Pickup"), Name(), {});
//
// Map files. A map is a JSON object (docs/host.md gives every key):
//   {"name": "village",
//    "levels": [{"name": "Persistent"}, {"name": "Cellar", "loaded": false}],
//    "game_instance": {"class": "GameInstance", "subsystems": ["QuestLog"]},
//    "game_mode": "SampleGameMode", "game_state": {"class": "SampleGameState",
//    "values": {"Day": 2}}, "world_subsystems": [], "level_script": "LevelScript",
//    "players": [{"controller": "SamplePlayerController", "pawn": "SamplePawn",
//                 "player_state": "SamplePlayerState", "transform": {...}}],
//    "actors": [{"class": "Door", "id": "<8-4-4-4-12 GUID>", "level": "Persistent",
//                "transform": {"translation": [x, y, z], "rotation": [x, y, z, w],
//                              "scale": [x, y, z]},
//                "tags": ["Front"], "saving": "WithSavedState" | "Always" | "Never",
//                "values": {"Open": true, "State": "Locked", "Inventory": [{...}]},
//                "components": [{"name": "Bulb", "class": "LampComponent", "values": {}}],
//                "owner": "<GUID>", "attach": {"parent": "<GUID>", "socket": "Hand"}}]}
// The first level is the persistent one; the others are sublevels, loaded with the map unless
// "loaded" is false (AddLevel loads them later). Objects are given as a class name or as
// {"class": ..., "values": {...}}. Values are set through the registry's descriptors, by field
// name: booleans, numbers (integers must be JSON integers in range), strings, names, enums by
// value name, structs as objects, vectors/arrays/sets as arrays, maps as objects (keys parsed as
// the key type) or as arrays of [key, value], optionals (null empties), the math types as arrays
// of numbers (a transform as the object above), colours as [r, g, b(, a)], GUIDs as text,
// owned objects as {"class": ..., field: value...}, references to actors as their ID.
//
// Errors: NotFound for a map that is neither added (AddMap) nor a readable file; InvalidInput for
// a map that does not read (not JSON, a missing or mistyped key, an unknown class or one that is
// not an actor/component/..., a bad or duplicate ID, an unknown field, a value of the wrong JSON
// type), naming the map, the actor (its ID) and the field. A map that fails leaves the world as
// it was: the new world is built aside and swapped in only once it is complete.
//
// The moments (world::HostEvents), in order: OpenMap builds the world, then calls
// OnActorsInitialized (no actor began play yet; a load applies here), then BeginPlay on every
// actor in creation order, then OnBeginPlay. AddLevel makes the level's actors, calls
// OnLevelAdded, then begins their play; RemoveLevel calls OnLevelRemoved, then takes the level
// out of the loaded ones (a spawn into it from an EndPlay is refused), then ends and destroys its
// actors.
// AddComponent on an actor that finished spawning calls OnComponentCreated.
//
// Thread rules: the game thread only. Pointers to actors, components and globals stay valid until
// the object is destroyed (DestroyActor, RemoveLevel, a map change; the game instance and its
// subsystems live until the next Start or the scene's end).

#ifndef ROLLY_SCENE_SCENE_H_
#define ROLLY_SCENE_SCENE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <unordered_set>
#include <vector>

#include "rolly/core/guid.h"
#include "rolly/core/guid_map.h"
#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"
#include "rolly/scene/objects.h"
#include "rolly/world/host.h"

namespace rolly::scene {

// A local player as the scene holds it. The pawn is an actor of the persistent level (null when
// the player has none).
struct LocalPlayer {
  int index = 0;
  PlayerController* controller = nullptr;
  Pawn* pawn = nullptr;
  PlayerState* player_state = nullptr;
};

class Scene : public world::Host {
 public:
  // `registry` holds RegisterSceneTypes' classes and the game's, Finish()ed; it must outlive the
  // scene. The scene starts without a world (HasWorld() false) and with authority.
  explicit Scene(const reflect::TypeRegistry& registry);
  ~Scene() override;
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;

  // --- world::Host (see host.h for each call's contract)
  void SetEvents(world::HostEvents* events) override { events_ = events; }
  bool HasWorld() const override { return world_ != nullptr; }
  bool IsAuthority() const override { return authority_; }
  std::string CurrentMap() const override;
  std::vector<Name> Levels() const override;
  void ListGlobals(std::vector<world::GlobalView>* out) override;
  void VisitActors(Name level,
                   const std::function<void(const world::ActorView&)>& visit) override;
  void ListComponents(const world::ActorView& actor,
                      std::vector<world::ComponentView>* out) override;
  void ListPlayers(std::vector<world::PlayerView>* out) override;
  bool FindActor(Guid id, world::ActorView* out) override;
  // Looks the IDs up a few ahead of the one handed over (their table slots, then their actors),
  // so the cache misses of 100,000 look-ups overlap.
  void FindActors(
      std::span<const Guid> ids,
      const std::function<void(std::size_t k, const world::ActorView* view)>& found) override;
  Result<world::ActorView> BeginSpawn(Name level, const reflect::ClassInfo& cls, Guid id,
                                      const reflect::Transformd& transform) override;
  // Asks for the ID table's slot of the spawn a few ahead of the one made (a spawn checks that
  // its ID is free, a random slot of the table), so the cache misses of many spawns overlap.
  void BeginSpawns(std::span<const world::SpawnRequest> requests,
                   const std::function<void(std::size_t k, const Result<world::ActorView>& result)>&
                       spawned) override;
  void FinishSpawn(Guid id) override;
  void DestroyActor(Guid id) override;
  // Destroys every actor of `ids` there is, in one pass over the world (a load removing many
  // placed actors, or game code destroying many at once).
  void DestroyActors(const std::vector<Guid>& ids) override;
  void Place(Guid id, const world::Placement& placement) override;
  // Looks the actors up as FindActors does, a few ahead of the one placed.
  void PlaceAll(std::span<const std::pair<Guid, world::Placement>> placements) override;
  // Builds the map at `map` (see the header comment); makes the game instance too when there is
  // none yet. On failure the current world stays as it was. Keeps the game instance and its
  // subsystems; ends play of and destroys everything else of the old world first.
  Status OpenMap(std::string_view map) override;
  // OpenMap, without the placed actors of the loaded levels whose IDs `leave_out` holds (see
  // Host::OpenMapWithout): a reference field of the map's values that names one is left empty,
  // and an owner or attachment naming one none. On success, each actor left out is added to
  // `left_out` before the moments are called; on failure nothing is added.
  Status OpenMapWithout(std::string_view map, const GuidSet& leave_out,
                        GuidSet* left_out) override;

  // --- Running a game
  // The first map of a game: ends any world and game instance, makes the map's game instance and
  // its subsystems, then opens the map as OpenMap does. On failure the scene stays as it was.
  Status Start(std::string_view map);
  // Makes `map_path` name a map held in memory (`json` is its text): OpenMap and Start find it
  // before looking for a file. Replaces an earlier text under the same path.
  void AddMap(std::string_view map_path, std::string json);
  // Whether this process has authority (default true); a client scene says false.
  void SetAuthority(bool authority) { authority_ = authority; }
  // Where the IDs of actors spawned in play (SpawnActor) and of a map's player pawns come from:
  // Guid::Random() by default, or `source` (empty: the default again). A test or fuzzer that must
  // repeat exactly gives its own. Each ID must be new to the world: an ID taken makes the spawn,
  // or the map, fail with InvalidInput "AlreadyExists", and the none ID with InvalidInput (an ID
  // is asked for each spawn tried, so one that fails uses one up).
  void SetIdSource(std::function<Guid()> source) { id_source_ = std::move(source); }

  // Spawns an actor of class `cls` (a registered class deriving from Actor) in play, with a new
  // ID (random, or SetIdSource's), in `level` (none: the persistent level), and begins its play
  // at once when the world began play. InvalidInput for an unknown or non-actor class, a level
  // not loaded, or no world.
  Result<Actor*> SpawnActor(Name cls, Name level, const reflect::Transformd& transform);
  Result<Actor*> SpawnActor(const reflect::ClassInfo& cls, Name level,
                            const reflect::Transformd& transform);
  template <typename T>
  Result<T*> SpawnActor(Name level = Name(), const reflect::Transformd& transform = {}) {
    const reflect::ClassInfo* cls = registry_.FindClass<T>();
    if (cls == nullptr) return InvalidInputError("SpawnActor: class not registered");
    Result<Actor*> a = SpawnActor(*cls, level, transform);
    if (!a.ok()) return a.status();
    return static_cast<T*>(*a);
  }

  // Makes a component of class `cls` (a registered Component class) named `name` on the actor
  // with `actor`; when the actor finished spawning, calls HostEvents::OnComponentCreated.
  // NotFound for no such actor; InvalidInput for a bad class or a name the actor already has.
  Result<Component*> AddComponent(Guid actor, Name name, Name cls);
  // Attaches `child` to `parent` at `socket`; a none parent detaches. NotFound for an unknown
  // actor; InvalidInput for an attachment to itself or one that would make a cycle.
  Status Attach(Guid child, Guid parent, Name socket = Name());
  // Sets the owner of `actor` (none clears it). NotFound for an unknown actor.
  Status SetOwner(Guid actor, Guid owner);
  // Loads the map's sublevel `level`: makes its actors, calls OnLevelAdded, then begins their
  // play. NotFound for a level the map does not have; InvalidInput when it is loaded.
  Status AddLevel(Name level);
  // Calls OnLevelRemoved, then ends play of and destroys every actor of sublevel `level`
  // (spawned ones too). NotFound when it is not loaded; InvalidInput for the persistent level.
  Status RemoveLevel(Name level);

  // --- Looking at the world (tests, the demo, the sample game)
  const reflect::TypeRegistry& registry() const { return registry_; }
  // The actor with `id`, or null.
  Actor* FindActor(Guid id) const;
  template <typename T>
  T* FindActorAs(Guid id) const {
    return dynamic_cast<T*>(FindActor(id));
  }
  // Calls `fn` for every actor, in creation order. `fn` must not spawn or destroy actors (the
  // actors are one array, which that would change under the walk).
  void ForEachActor(const std::function<void(Actor&)>& fn) const;
  std::size_t ActorCount() const;
  // The persistent level's name (none without a world).
  Name PersistentLevel() const;
  // The map's levels, loaded or not, the persistent level first.
  std::vector<Name> MapLevels() const;
  GameInstance* game_instance() const { return game_instance_.get(); }
  GameMode* game_mode() const;
  GameState* game_state() const;
  LevelScript* level_script() const;
  const std::vector<std::unique_ptr<WorldSubsystem>>& world_subsystems() const;
  const std::vector<LocalPlayer>& players() const;
  // Whether the world's begin play ran.
  bool HasBegunPlay() const;
  // The first game-instance subsystem / world subsystem that is a T, or null.
  template <typename T>
  T* GetSubsystem() const {
    if (!game_instance_) return nullptr;
    for (const auto& s : game_instance_->subsystems)
      if (auto* t = dynamic_cast<T*>(s.get())) return t;
    return nullptr;
  }
  template <typename T>
  T* GetWorldSubsystem() const {
    for (const auto& s : world_subsystems())
      if (auto* t = dynamic_cast<T*>(s.get())) return t;
    return nullptr;
  }

  struct MapData;  // a parsed map (scene.cc)
  struct World;    // the running world (scene.cc)

 private:
  // The actor with each of `ids`, in order: `each(k, actor)` with the actor with ids[k], or null
  // when the world has none (FindActors' and PlaceAll's look-ups). With `components`, the
  // components of the actors a few ahead are asked into cache too, for a caller that lists them.
  // A template (defined and used in scene.cc only): `each` runs for every actor of a load, and
  // through a std::function it cost a call more each time.
  template <typename Each>
  void LookUpActors(std::span<const Guid> ids, bool components, Each&& each);
  // The placed actors an OpenMapWithout leaves out, and those it left out so far.
  struct LeaveOut {
    explicit LeaveOut(const GuidSet& leave_out) : ids(leave_out) {}
    const GuidSet& ids;
    std::vector<Guid> left;
  };
  Status OpenMapImpl(std::string_view map, bool fresh_game, const GuidSet* leave_out = nullptr,
                     GuidSet* left_out = nullptr);
  Result<std::string> ReadMapText(std::string_view map) const;
  // A new actor's ID (SetIdSource).
  Guid NewId() const { return id_source_ ? id_source_() : Guid::Random(); }
  Result<Actor*> MakeActor(World& world, const reflect::ClassInfo& cls, Guid id, Name level,
                           const reflect::Transformd& transform, bool spawned);
  // Makes the placed actors of `level` in `world` and sets their values; references to actors
  // are set when `resolve_references` (a check of a level not loaded yet leaves them). With
  // `leave_out`, its actors are not made (each noted in it), and references, owners and
  // attachments naming them are left empty.
  Status BuildLevelActors(World& world, Name level, bool resolve_references = true,
                          LeaveOut* leave_out = nullptr);
  void TearDown();
  void BeginPlayOf(Actor& actor);
  void EndAndDestroy(Actor& actor);
  void DestroyMany(const std::vector<Guid>& ids);
  // Every actor, those in `gone` too (actors and their components by address, scene.cc's
  // GoneKey; `gone_ids` the actors' IDs), lets go of those: attachments, owners and reference
  // fields to the actors or their components (its components' fields too), in one walk of the
  // actors; globals' references too. So the destructors of those going see their references to
  // each other cleared.
  void ClearReferencesTo(const GuidSet& gone, const GuidSet& gone_ids);
  world::ActorView ViewOf(const Actor& actor) const;
  world::Object ObjectOf(const reflect::ClassInfo& static_class, const void* object) const;
  // The object as its registered class: as noted when the scene took it in, else looked up.
  world::Object ObjectOf(const Actor& actor) const;
  world::Object ObjectOf(const Component& component) const;
  // The actor a view's object is (null for an object of a class that is not an actor's).
  Actor* ActorOf(const world::Object& object);

  const reflect::TypeRegistry& registry_;
  const reflect::ClassInfo* actor_class_;  // null when RegisterSceneTypes did not run
  const reflect::ClassInfo* component_class_;
  world::HostEvents* events_ = nullptr;
  bool authority_ = true;
  std::function<Guid()> id_source_;  // empty: Guid::Random()
  std::unique_ptr<GameInstance> game_instance_;
  std::unique_ptr<World> world_;
  std::map<std::string, std::string, std::less<>> added_maps_;
  // Reference fields per class (offset from the class's start, descriptor), found once.
  std::unordered_map<const reflect::ClassInfo*,
                     std::vector<std::pair<std::uint32_t, const reflect::Type*>>>
      ref_fields_;
  // ActorOf's offsets from an object of a class to its Actor part, for the classes met last (16
  // slots by the class's address): most views ask, and the registry's walk up the bases takes
  // longer.
  struct ActorOffset {
    const reflect::ClassInfo* cls = nullptr;
    std::ptrdiff_t offset = 0;
  };
  ActorOffset actor_offsets_[16];
};

}  // namespace rolly::scene

#endif  // ROLLY_SCENE_SCENE_H_
