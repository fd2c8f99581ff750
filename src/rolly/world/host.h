// The host interface: how Rolly Save sees a game's world without knowing its engine.
//
// An engine adapter (or the reference scene, src/rolly/scene/) implements Host; the world layer
// reads the world through it when it captures and changes the world through it when it applies.
// The host tells the world layer of the engine's moments through HostEvents, in the order an
// engine has them (docs/host.md walks through connecting an engine).
//
// Objects. Every object the library saves is an instance of a class registered in the game's
// TypeRegistry, handed over as an Object: its most derived registered class and its address as
// that class (TypeRegistry::DynamicClass gives both from a base pointer).
//
// Identity (never names, which are only hints for messages):
//   - placed actors: the stable ID their map gives them; restored in place;
//   - spawned actors: the ID given at spawn (the host keeps it for the actor's life); spawned again
//     on load with that ID;
//   - components: their name under their actor;
//   - globals: their role and class, or the name they were registered under (World::Register).
//
// Thread rules: every call is made on the game thread, and a Host is used by one World at a time.
// Views returned stay valid until the host's world next changes (a spawn, a destroy, a map change);
// the world layer never keeps them across frames.

#ifndef ROLLY_WORLD_HOST_H_
#define ROLLY_WORLD_HOST_H_

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rolly/core/guid.h"
#include "rolly/core/guid_map.h"
#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/reflect/value_types.h"

namespace rolly::world {

// A live object: its most derived registered class, and its address as that class.
struct Object {
  const reflect::ClassInfo* cls = nullptr;
  void* ptr = nullptr;
  explicit operator bool() const { return ptr != nullptr; }
};

// Whether an actor saves: with kWithSavedState when it or a component holds a saved field (a
// class whose plan is not empty, a save-extra hook); always; or never (nor its components).
enum class Saving { kWithSavedState, kAlways, kNever };

// What the host says of an actor.
struct ActorView {
  Guid id;
  Object object;
  // The level it belongs to (the persistent level's name for most actors).
  Name level;
  // Spawned in play (not placed by the map).
  bool spawned = false;
  Saving saving = Saving::kWithSavedState;
  // A local player's own pawn: saved with its player, never as an actor.
  bool player_pawn = false;
  reflect::Transformd transform;
  // The actor that owns it (none when none).
  Guid owner;
  // The actor it is attached to (none when none) and the socket it is attached at.
  Guid attach_parent;
  Name attach_socket;
};

struct ComponentView {
  // Unique under its actor.
  Name name;
  Object object;
};

// A global: the game instance, its subsystems, the game mode and state, world subsystems, the
// map's script object. `role` says which (one of the roles below); with the class it names the
// global across runs. The game instance and its subsystems outlive a map; the others are the map's.
inline constexpr std::string_view kRoleGameInstance = "GameInstance";
inline constexpr std::string_view kRoleSubsystem = "Subsystem";
inline constexpr std::string_view kRoleGameMode = "GameMode";
inline constexpr std::string_view kRoleGameState = "GameState";
inline constexpr std::string_view kRoleWorldSubsystem = "WorldSubsystem";
inline constexpr std::string_view kRoleLevelScript = "LevelScript";
struct GlobalView {
  Name role;
  Object object;
};

// A local player: its controller, its own pawn (may be empty) and its player state.
struct PlayerView {
  int index = 0;
  Object controller;
  Object pawn;
  // The pawn's actor ID, as VisitActors and FindActor know it (none when there is no pawn). A
  // load finds the pawn by it to keep its owner and attachment while setting its saved place;
  // left none with a pawn there, the load visits every actor to find the pawn instead.
  Guid pawn_id;
  Object player_state;
};

// Where an actor is put when a load sets it: transform, owner and attachment.
struct Placement {
  reflect::Transformd transform;
  Guid owner;
  Guid attach_parent;
  Name attach_socket;
};

// One actor for Host::BeginSpawns to spawn: BeginSpawn's arguments.
struct SpawnRequest {
  Name level;
  const reflect::ClassInfo* cls = nullptr;  // not null
  Guid id;
  reflect::Transformd transform;
};

class HostEvents;

class Host {
 public:
  virtual ~Host() = default;

  // The world layer's listener for the moments below; null stops them. Set by World.
  virtual void SetEvents(HostEvents* events) = 0;

  // --- The world
  // Whether a game world is running (a save or load needs one).
  virtual bool HasWorld() const = 0;
  // Whether this process has authority over the world (a client does not: NotAuthority).
  virtual bool IsAuthority() const = 0;
  // The path of the current map ("maps/village.json"); saves name it, a map load opens it.
  virtual std::string CurrentMap() const = 0;
  // The levels loaded now, the persistent level first.
  virtual std::vector<Name> Levels() const = 0;

  // --- Reading the world (capture)
  virtual void ListGlobals(std::vector<GlobalView>* out) = 0;
  // Calls `visit` with each actor of `level` (the view lives for the call only). A save writes
  // actors in the order visited, levels in Levels() order, so a host that visits in a stable order
  // writes the same bytes for the same world; visiting them in the order they sit in memory makes
  // the capture faster. The world is not changed from inside `visit`. A visitor rather than a
  // list: a save of 100,000 actors then never holds 100,000 views at once.
  // While a save visits, a worker may read the saved values of the actors and components visited
  // before (World::BeginCapture's helper: their saved fields, the strings' and vectors' contents,
  // and the dynamic class of each object a reference points to): neither call may change them,
  // nor wait for a task of the worker pool the save system was given (the helper may hold its
  // only thread until the listing ends).
  virtual void VisitActors(Name level, const std::function<void(const ActorView&)>& visit) = 0;
  virtual void ListComponents(const ActorView& actor, std::vector<ComponentView>* out) = 0;
  // Each local player, with its pawn's actor ID when it has a pawn (a load finds the pawn by it;
  // a host that leaves it none makes the load visit every actor to find the pawn).
  virtual void ListPlayers(std::vector<PlayerView>* out) = 0;
  // The actor with `id`, if the world has it; false otherwise. `out` is filled as VisitActors
  // fills a view, with the actor's placement (transform, owner, attachment) as it is now: a load
  // does not place again an actor whose view shows it where the save has it (PlaceAll).
  virtual bool FindActor(Guid id, ActorView* out) = 0;
  // FindActor for many IDs in one call: calls `found(k, view)` once for each k of `ids`, in
  // order, with the actor with ids[k] (the view lives for the call only; keep what is needed of
  // it) or null when the world has none: the same answers as FindActor. A load finds every saved
  // actor this way, so a host whose look-ups wait on memory may overlap them (look up the next
  // IDs while handing over this one). `found` may make the reading calls (ListComponents...); it
  // does not change the world. The default calls FindActor for each ID. (A load ignores an answer
  // out of that order and takes each actor not answered in order as not there, reporting it.)
  virtual void FindActors(std::span<const Guid> ids,
                          const std::function<void(std::size_t k, const ActorView* view)>& found) {
    for (std::size_t k = 0; k < ids.size(); ++k) {
      ActorView view;
      found(k, FindActor(ids[k], &view) ? &view : nullptr);
    }
  }

  // --- Changing the world (apply)
  // Spawns an actor of `cls` with `id` in `level`, deferred: it exists and its default components
  // too, but it has not begun play; FinishSpawn ends the spawn. InvalidInput for a class the host
  // cannot spawn; AlreadyExists (InvalidInput) when an actor has the ID.
  virtual Result<ActorView> BeginSpawn(Name level, const reflect::ClassInfo& cls, Guid id,
                                       const reflect::Transformd& transform) = 0;
  // BeginSpawn for many actors in one call: spawns each of `requests` in order and, right after
  // spawning requests[k], calls `spawned(k, result)` with what BeginSpawn returns for it: once
  // for each k, in order, on this thread, before returning. The view in `result` lives until
  // that call of `spawned` returns, and `requests` for this call only. A load spawns every actor
  // it brings back this way, so a host whose spawn waits on memory may overlap them (ask for the
  // table slots of the next IDs while spawning this one). `spawned` may make the reading calls
  // (ListComponents...); it does not change the world. The default calls BeginSpawn for each.
  // (A load ignores an answer out of order or past the end and takes each actor not answered
  // for in order as not spawned, keeping its record and reporting it; one answered with a view
  // out of order only, it destroys again.)
  virtual void BeginSpawns(
      std::span<const SpawnRequest> requests,
      const std::function<void(std::size_t k, const Result<ActorView>& result)>& spawned) {
    for (std::size_t k = 0; k < requests.size(); ++k) {
      const SpawnRequest& r = requests[k];
      spawned(k, BeginSpawn(r.level, *r.cls, r.id, r.transform));
    }
  }
  virtual void FinishSpawn(Guid id) = 0;
  // Destroys the actor with `id` (a no-op when there is none). Before the world's begin play an
  // actor destroyed runs no begin or end play.
  virtual void DestroyActor(Guid id) = 0;
  // Destroys each actor of `ids` there is. A host whose destroy walks the world (to let go of
  // references) does it once for all; the default destroys one at a time. During a load's call,
  // one of the save system's workers may be busy making the load's own tables (it reads nothing
  // of the host's, and waits for nothing).
  virtual void DestroyActors(const std::vector<Guid>& ids) {
    for (Guid id : ids) DestroyActor(id);
  }
  // Sets the transform, owner and attachment of the actor with `id` (a no-op when there is none).
  virtual void Place(Guid id, const Placement& placement) = 0;
  // Place for each of `placements`, in order. A load places this way, in one call, every actor it
  // spawned again, each local player's pawn, and every other actor it found whose saved placement
  // is not the one its view (FindActors') reported: a transform other bit for bit, or another
  // owner, attachment or socket. An actor found where the save has it is not placed, so what the
  // load's own calls do to its placement afterwards (a setter, an end or begin play) stays. The
  // found actors come first, in the order found, so a host whose look-ups wait on memory may
  // overlap them as FindActors does. Placing an actor must not move another: on a host whose
  // attached actors follow their parent, an attached actor's transform is the one relative to its
  // parent, in its view and in Place, so that one left in place stays where the save has it when
  // its parent is placed. The default calls Place for each.
  virtual void PlaceAll(std::span<const std::pair<Guid, Placement>> placements) {
    for (const auto& [id, placement] : placements) Place(id, placement);
  }

  // --- Maps
  // Tears the world down and builds `map`, calling the HostEvents moments in order: actors
  // initialized (values are set then, before begin play), then begin play. NotFound for a map
  // the game does not have.
  virtual Status OpenMap(std::string_view map) = 0;
  // OpenMap, building `map` without those of its placed actors whose IDs `leave_out` holds, and
  // adding the ID of each it left out to `left_out` before it reports the map's actors
  // initialized. A load that opens its saved map passes the placed actors the save holds
  // destroyed, which it would otherwise destroy at that moment: a host that leaves them out
  // spares making them and destroying them (for a host whose destroy walks the world to let go of
  // references, most of what removing them costs). An actor left out is as one destroyed before
  // begin play: references to it in the map are left empty, and an owner or attachment naming it
  // none. The default builds the whole map and leaves `left_out` as it was; the load then
  // destroys those actors itself.
  virtual Status OpenMapWithout(std::string_view map, const GuidSet& leave_out,
                                GuidSet* left_out) {
    (void)leave_out;
    (void)left_out;
    return OpenMap(map);
  }
};

// The engine's moments, which the host reports to the world layer (World implements this).
class HostEvents {
 public:
  virtual ~HostEvents() = default;
  // The map's actors exist and none has begun play.
  virtual void OnActorsInitialized() = 0;
  // Every actor of the map began play.
  virtual void OnBeginPlay() = 0;
  // A streamed level was added to the world: its actors exist and have not begun play yet (the
  // host begins their play right after this returns). OnLevelRemoved: a level is about to be
  // removed (its actors still exist).
  virtual void OnLevelAdded(Name level) = 0;
  virtual void OnLevelRemoved(Name level) = 0;
  // A component was created on an actor after the actor spawned (a component made in play).
  virtual void OnComponentCreated(Guid actor, const ComponentView& component) = 0;
};

}  // namespace rolly::world

#endif  // ROLLY_WORLD_HOST_H_
