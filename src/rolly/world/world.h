// The world layer: saving a running world into record chunks and putting it back (docs/world.md).
//
// A World watches one Host (host.h). A save captures, one subject at a time (WorldCapture, so a
// later version can spread a capture over frames), into these record chunks:
//   - GLOB (key ""): the globals the host lists and the objects registered by name;
//   - WRLD (key: the map's path): the actors of every loaded level that save, in the host's order,
//     each followed by its components that save, then the placed actors destroyed in play
//     (tombstones);
//   - PLYR (key "Local:<index>"): each local player's controller, own pawn and player state.
// Records of objects that are not there now (a subsystem that is off, an actor or component of a
// class the game no longer registers, a player who is not playing) are kept from the last load or
// save and written back; so are the component records still waiting (below), the newest of each.
//
// A load checks every record of every chunk before anything changes (LoadedGame::Check: the
// structure check of docs/records.md against one budget, and every class a record needs), then
// applies in two passes: spawned actors the world lacks are spawned again (deferred: class, ID and
// transform first) and get their values; they finish spawning; then everything else gets its
// values; then transforms, owners and attachments; then the OnLoaded hooks, once. Placed actors
// held destroyed are removed first. A record whose object is of another class is not applied
// (ClassMismatch, reported). Component records whose component is not there wait until the host
// reports the component created; a later load drops them (its own records wait instead).
//
// Streamed levels and level memory (docs/world.md, "Streamed levels"): when the host reports a
// level about to be removed, the World captures that level's part of the map as a save would (its
// actors and their components, its placed actors destroyed in play as tombstones; pre-save hooks
// run, OnSaved hooks do not) and keeps the records in memory for that level. A save made while the
// level is out writes them in place of the held save's records of that level; when the level is
// added again they apply to it (before its begin play) and are dropped. Those whose component is
// not there wait as a load's do: a save writes them, and the level's next removal keeps them. A
// load drops all of them.
//
// Identity (host.h): actors by ID, components by name under their actor, globals by role and
// class, or by registered name; players by index. Every record's subject is a GUID: the actor's
// ID, or one derived from the identity (ids.h).
//
// Thread rules: a World and everything it hands out are used on the game thread only, but for
// two things: CapturedWorld::Make runs on any thread (once), and a WorldCapture may be
// destroyed on any thread once its save no longer needs it.

#ifndef ROLLY_WORLD_WORLD_H_
#define ROLLY_WORLD_WORLD_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>
#include <string>
#include <string_view>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/guid.h"
#include "rolly/core/guid_map.h"
#include "rolly/core/name.h"
#include "rolly/core/status.h"
#include "rolly/record/capture.h"
#include "rolly/record/record_codec.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/world/host.h"
#include "rolly/world/sections.h"

namespace rolly::world_internal {
struct LiveCaptures;
}  // namespace rolly::world_internal

namespace rolly::world {

using ChunkId = std::array<char, 4>;
inline constexpr ChunkId kGlobalChunk = {'G', 'L', 'O', 'B'};
inline constexpr ChunkId kWorldChunk = {'W', 'R', 'L', 'D'};
inline constexpr ChunkId kPlayerChunk = {'P', 'L', 'Y', 'R'};

// One record chunk of a save, as the world layer makes and reads them.
struct WorldChunk {
  ChunkId id{};
  std::string key;
  Bytes payload;
  // For a chunk whose bytes are not in `payload` (left empty) but come as LoadedGame::Check
  // checks them: `fill` writes its `fill_size` bytes, front to back, while its records are
  // checked (a chunk decoded as it is checked: record::CheckedPayload::CheckWhileFilled).
  std::uint64_t fill_size = 0;
  record::CheckedPayload::Fill fill = nullptr;
  // Two chunks with fills are equal when the rest is: a function is not compared.
  friend bool operator==(const WorldChunk& a, const WorldChunk& b) {
    return a.id == b.id && a.key == b.key && a.payload == b.payload &&
           a.fill_size == b.fill_size && !a.fill == !b.fill;
  }
};

// What a load did, for the game's log and for tests.
struct ApplyReport {
  // Records whose values were set.
  std::size_t applied = 0;
  // Spawned actors the world lacked, spawned again.
  std::size_t spawned = 0;
  // Placed actors the save holds destroyed, removed (each once).
  std::size_t removed = 0;
  // Records whose object is not there now, kept for the next save.
  std::size_t kept = 0;
  // Component records waiting for their component to be created.
  std::size_t waiting = 0;
  // Records not applied because their object is of another class (ClassMismatch).
  std::size_t class_mismatches = 0;
  // One line per value skipped, record kept or mismatch, naming the object: at most
  // record::Applier::kMaxMessages of them (a file can ask for millions), the rest counted in
  // messages_dropped.
  std::vector<std::string> messages;
  std::size_t messages_dropped = 0;
};

// What the World did with a streamed level's records (World::SetLevelListener), for the game's log
// and for tests.
struct LevelReport {
  enum class Event : std::uint8_t {
    // The level is being removed and its records are remembered (`records` of them).
    kRemembered,
    // The level is being removed and its capture failed (`status`): nothing is remembered, so the
    // changes play made to it since the last save or load are lost; its next add applies the held
    // save's records, as if it had never left.
    kNotRemembered,
    // The level was added and records applied to its actors before their begin play: those the
    // level remembered (`from_memory`) or the held save's; `apply` says what they did.
    kApplied,
  };
  Event event = Event::kRemembered;
  Name level;
  // kNotRemembered: InvalidData when an object of the level cannot be saved as it is (a value a
  // load would refuse, a name over 1,024 bytes, a bound of the file's budget passed).
  // kApplied: what applying the level's records returned (Ok, or the first refusal; `apply` has
  // the details). Ok for kRemembered.
  Status status;
  std::size_t records = 0;
  bool from_memory = false;
  ApplyReport apply;
};

class World;

// A save's records, checked whole and kept as their bytes (record::CheckedPayload): what a load
// applies, and what the next save keeps records from. Made by Check; immutable afterwards.
class LoadedGame {
 public:
  // Decodes and checks `chunks` (GLOB, WRLD, PLYR; others are refused as InvalidInput) against
  // one file budget and `registry`: Damaged or NewerVersion as CheckedPayload::Check says, naming
  // the chunk. With `post` (a worker pool's Post), a large chunk's records are checked in two
  // halves, one on a thread `post` hands its task to (CheckedPayload::Check), with the same result.
  // A chunk with a fill is filled here, on the calling thread, while that thread checks what has
  // arrived (CheckedPayload::CheckWhileFilled); when its fill fails, Check returns the fill's
  // status as it is.
  static Result<std::shared_ptr<const LoadedGame>> Check(
      std::vector<WorldChunk> chunks, const reflect::TypeRegistry& registry,
      const record::CheckedPayload::Post& post = {});

  // The map the WRLD chunk belongs to (empty when the save has no world chunk).
  const std::string& map() const { return map_; }
  // The records of each chunk, by chunk ID and key.
  struct Chunk {
    ChunkId id{};
    std::string key;
    // Checked whole; records are read in place and decoded when applied.
    record::CheckedPayload payload;
    // Of a WRLD chunk Check made: its actor records held destroyed (tombstones), by index, in
    // order. (Empty in a chunk made otherwise: nothing relies on it but a map opened for a load,
    // which leaves those actors out when the host can.)
    std::vector<std::uint32_t> destroyed;
    // Of a WRLD chunk Check made: how many of its actor records are of actors spawned in play (and
    // not destroyed), at most, and never more than its records (a check that gave up splitting,
    // a half having failed, and checked the records again in order may count some twice). An
    // apply reserves its list of actors to spawn again by it. (0 in a chunk made otherwise.)
    std::size_t spawned = 0;
  };
  const std::vector<Chunk>& chunks() const { return chunks_; }
  const Chunk* Find(ChunkId id, std::string_view key) const;

 private:
  std::string map_;
  std::vector<Chunk> chunks_;
};

// A finished capture's records, made into chunks off the game thread. WorldCapture::Detach takes
// them out of the capture (quick, on the game thread); Make writes the records of the chunks the
// steps copied (record::ObjectCopies), then joins them into chunks with the records a save keeps
// of objects not there now (level memory, the component records waiting when the capture listed
// its subjects, and the save the World holds, in that order: the first of a subject wins). Make
// touches no game object, no host and no World: it may run on any thread while the game plays,
// once. The registry of the World it came from must outlive it. Move-only.
class CapturedWorld {
 public:
  CapturedWorld(CapturedWorld&&) noexcept;
  CapturedWorld& operator=(CapturedWorld&&) noexcept;
  ~CapturedWorld();

  // The chunks: captured records, then the kept ones. InvalidData when a copied subject cannot
  // be saved as it is (an enum number without a name, a bound of the chunk's tables; the message
  // names the subject as Step's do) or a kept record does not fit the file's bounds. Call once.
  Result<std::vector<WorldChunk>> Make();

 private:
  friend class WorldCapture;
  struct Rep;
  explicit CapturedWorld(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

// A save in progress: the subjects to capture, listed when it began, captured one at a time.
//
// A chunk whose subjects are all of plain classes (record::ObjectCopies says which: no texts,
// maps, sets, optionals, owned objects, instanced structs or property bags, among other rules)
// is captured in two halves: a step copies its subject's saved fields (and names the objects its
// references point to), and CapturedWorld::Make writes the records from the copies, off the game
// thread, locating those objects among the subjects.
// Any other chunk's records are written by the steps. The files are the same either way. What a
// copy cannot see (an enum number without a name, a bound of the chunk's tables) is refused by
// Make, once every step ran: the save fails with the same status and message naming the subject,
// though a later subject's refusal found by a step, if any, is the one reported.
//
// Begun with a helper (World::BeginCapture), the world chunk's actors and components are copied
// on the helper's thread while the game thread lists the rest, and BeginCapture returns once that
// thread is done: the first Step passes every subject it copied at once. It copies only while the
// game thread is inside BeginCapture, and only plain classes without OnPreSave, OnSaved or
// save-extra hooks, in the world chunk, up to the first subject that is not one; the steps
// capture the others as without a helper. The files, statuses and messages are the same, as long
// as the pre-save hooks of objects a global owns (which run in the global's step, after the
// copies) change nothing but what that global owns.
class WorldCapture {
 public:
  ~WorldCapture();
  WorldCapture(const WorldCapture&) = delete;
  WorldCapture& operator=(const WorldCapture&) = delete;

  std::size_t total() const { return total_; }
  std::size_t captured() const { return next_; }
  bool done() const { return next_ >= total(); }
  // Captures (or copies) the next subject, running its pre-save hooks; at the first subject a
  // helper copied, passes every one it copied. InvalidData when the subject cannot be saved as it
  // is (the whole save then fails and writes nothing); what a copy does not show, Make refuses.
  Status Step();
  // Captures every subject left.
  Status Run();
  // Takes the captured records (and the copies and sections Make writes records from) out, for
  // CapturedWorld::Make to make into chunks (on a worker). Call once, when done(): InvalidInput
  // otherwise. The capture keeps what RunSavedHooks and Forget need.
  Result<CapturedWorld> Detach();
  // Detach, then Make, here: the chunks. Call once, when done().
  Result<std::vector<WorldChunk>> Finish();
  // After the write succeeded: OnSaved on the objects captured that the game still has. Right
  // before a subject's hooks run it is looked up again by its identity (an actor by ID, a
  // component by name under its actor, a global by role, a registered object by name, a player
  // part by index and part) and must be the same object (address and class); one the game
  // destroyed or let go of meanwhile is skipped, as is every subject of a level removed or a map
  // left since the capture (registered objects and the game instance's globals outlive a map).
  // Objects owned through a saved field are not looked up: a game that replaces one while a save
  // is written keeps the old one alive until the save's callback. After a failed write: Forget.
  void RunSavedHooks();
  void Forget();
  // Where this capture began among its World's captures and level memory, for World::SetHeld:
  // `capture` counts the World's captures begun, this one included; `level_memory` is the level
  // memory generation it began at (the memory taken up to it is in its save).
  struct Mark {
    std::uint64_t capture = 0;
    std::uint64_t level_memory = 0;
  };
  Mark mark() const { return mark_; }

 private:
  friend class World;
  friend class CapturedWorld;
  struct Subject;
  struct ChunkState;
  class Links;
  class Helper;
  // A component record waiting for its component (World::WaitingComponent): `game` keeps the
  // bytes it is read from.
  struct Waiting {
    std::shared_ptr<const LoadedGame> game;
    const LoadedGame::Chunk* chunk = nullptr;
    std::size_t record = 0;
    Guid actor;
  };
  explicit WorldCapture(World& world);
  // Lists the subjects; with `helper`, has the world chunk's copied on another thread meanwhile.
  void Gather(const record::CheckedPayload::Post& helper);
  // Step's work, once it found a subject left and no error from the listing. Inlined into Step
  // and Run.
  [[gnu::always_inline]] inline Status StepOne();
  // Notes a subject whose capture remembered objects for OnSaved (RunSavedHooks finds it again).
  [[gnu::noinline]] void NoteHooked(ChunkState& c, const Subject& s,
                                    const record::EncodedSections& sections);
  // Whether the subject of `h` is still there, as itself (RunSavedHooks).
  struct Hooked;
  bool StillThere(const Hooked& h);
  // A capture of `level` (only_level_): adds to `out` the objects outside the level that a save
  // lists, by address (Links::AddressKey), with the subject IDs it gives them, in stages listed as
  // references need them (Links::SetOutside): 0, the globals, registered objects and players'
  // parts; 1, the other levels' actors and their components (a walk of the world).
  static constexpr int kOutsideStages = 2;
  static void ListOutsideLevel(World& world, Name level, int stage, GuidMap<Guid>* out);
  // Marks the hooked subjects `gone` picks as gone (a level removed, another map opened).
  void NoteGone(const std::function<bool(const Hooked&)>& gone);

  World& world_;
  std::shared_ptr<world_internal::LiveCaptures> live_;
  std::vector<Subject> subjects_;
  std::vector<std::unique_ptr<ChunkState>> chunks_;
  std::unique_ptr<Links> links_;
  // The chunk writers charge it; it goes with them (Detach).
  std::unique_ptr<record::FileBudget> budget_;
  std::size_t total_ = 0;
  std::size_t next_ = 0;
  // The world sections of every subject, encoded when it was listed (Subject::section_block), in
  // blocks; those before the current step's are let go of, unless a chunk is copied (Make needs
  // them then).
  std::vector<ByteSink> section_blocks_;
  std::size_t sections_freed_ = 0;
  // Which classes can be copied, asked as subjects are listed (each chunk copies into its own
  // record::ObjectCopies, which a helper may be using meanwhile).
  std::unique_ptr<record::ObjectCopies> classes_;
  bool copied_ = false;
  // The subjects a helper copied while the capture listed (none when begin == end): the world
  // chunk's, in order, each of a class without hooks.
  std::size_t helped_begin_ = 0;
  std::size_t helped_end_ = 0;
  Status gather_error_;
  bool detached_ = false;
  // A level's capture for level memory (World::OnLevelRemoved): only that level's actors,
  // components and tombstones, and the held save's records of it a save would keep. None: a save.
  Name only_level_;
  Mark mark_;
  // The component records waiting for their component when the subjects were listed (a load's,
  // or a level memory's once the level came back): Make writes those whose component it did not
  // capture, ahead of the held save's older ones.
  std::vector<Waiting> waiting_;
};

class World : public HostEvents {
 public:
  // `host` and `registry` outlive the World. Sets itself as the host's event listener. Make it
  // before the first map opens (or at least before play destroys anything): the placed actors a
  // save holds as destroyed are those it saw when their map's actors were initialized and no
  // longer finds.
  World(Host& host, const reflect::TypeRegistry& registry);
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Host& host() { return host_; }
  const reflect::TypeRegistry& registry() const { return registry_; }

  // Registers `object` as a global saved under `name` (1 to 1,024 bytes): InvalidInput for an
  // empty or long name or a null object, AlreadyExists-like InvalidInput for a name taken. A
  // record waiting for that name applies at once.
  Status Register(Name name, Object object);
  void Unregister(Name name);

  // Starts a save of the world as it is now: lists the subjects (WorldCapture). With `helper` (a
  // worker pool's Post: it must hand the task to another thread and return without waiting for
  // it), the world chunk's plain subjects are copied on that thread while this call lists the
  // rest, reading their saved values there; this call returns only once that thread let go of
  // them, and copies them itself when the task had not started (a busy pool makes it wait on no
  // one; a task run on this thread does nothing). Not when a global or registered object has an
  // OnPreSave or save-extra hook: its step runs it after the listing, and it may change actors.
  // The capture is the same either way, and so is its end when a copy throws (an allocation
  // failing): the exception leaves this call, on this thread, whichever thread copied.
  std::unique_ptr<WorldCapture> BeginCapture(const record::CheckedPayload::Post& helper = {});

  // Applies a checked save to the world as it is (the current map's actors get the values; a
  // save of another map applies its globals and players only). Busy while another apply runs.
  // Drops level memory and the component records still waiting, from an earlier load or a level's
  // memory: the loaded save's state replaces them.
  Status Apply(std::shared_ptr<const LoadedGame> game, ApplyReport* report);
  // For a load that opens the saved map: `game` applies when the host next reports the map's
  // actors initialized (before begin play); `starting` runs right before, `done` right after.
  void ApplyAtActorsInitialized(std::shared_ptr<const LoadedGame> game,
                                std::function<void()> starting,
                                std::function<void(Status, ApplyReport)> done);
  // Has every later apply (a load's, a streamed level's) share its second pass with `helper`'s
  // thread (a worker pool's Post: it hands the task to another thread; it may also run it at
  // once, or wait for it) when the records it found to set and the actors it spawns again number
  // at least `at_least` (decided once, before the host removes actors): both threads set the
  // values of records that need none of the game's code, and this thread then sets those that
  // do, in record order (docs/world.md, "Threads"). Such an apply also has that thread make the
  // tables the passes read while the host removes the actors the save holds destroyed; and a
  // load's apply of a save of at least `at_least` records posts `helper` an empty task as it
  // starts, so that a thread long idle is awake by the time it is offered that work. The report
  // is the same either way, and so is the world as long as the game's setters and save-extra
  // hooks change only their own object: such a record's code runs after the records set beside
  // it, later ones included. An empty `helper`: every apply on this thread alone (the default).
  void SetApplyHelper(record::CheckedPayload::Post helper,
                      std::size_t at_least = kApplyBesideAtLeast) {
    apply_helper_ = std::move(helper);
    apply_beside_at_least_ = at_least;
  }
  // The fewest records a second pass shares with the apply helper: below it, the hand-off would
  // cost more than it takes off.
  static constexpr std::size_t kApplyBesideAtLeast = 2048;

  // Opens `map` through the host for the apply waiting (ApplyAtActorsInitialized), leaving out
  // of it the placed actors that apply's save holds destroyed when the host can
  // (Host::OpenMapWithout): the apply then has none of them to destroy, reports them removed as
  // it would have, and the next capture holds them destroyed. Host::OpenMap when no apply waits
  // or its save holds none destroyed on `map`. Returns the host's status.
  Status OpenMapForApply(std::string_view map);
  // Drops an apply waiting for the map (a load cancelled before its map opened).
  void CancelPendingApply();
  bool applying() const { return applying_; }

  // The save the world holds records from (the newest one loaded or saved); null at first.
  const std::shared_ptr<const LoadedGame>& held() const { return held_; }
  // Holds `game` from now on, as a load does: a save whose capture began before this call is
  // not held after it (below).
  void SetHeld(std::shared_ptr<const LoadedGame> game);
  // The save a capture wrote, once written: held from now on, and the level memory taken up to
  // the capture's mark is dropped (the save holds it); memory of a level removed after the
  // capture began stays. False, and nothing changes, when the held save is newer: that of a
  // capture begun after this one (saves to different slots finish in any order), or of a load
  // or SetHeld(game) after this capture began. Holding the older save would bring back what the
  // newer one replaced.
  bool SetHeld(std::shared_ptr<const LoadedGame> game, WorldCapture::Mark mark);

  // --- Streamed levels and level memory (docs/world.md, "Streamed levels")
  // OnLevelRemoved captures the level's part of the map into level memory (on a host with
  // authority: a client keeps none), replacing what an earlier removal of it kept; a capture that
  // fails keeps nothing (LevelReport kNotRemembered). The placed actors of a level removed are not
  // destroyed for the next save. A save writes each remembered level's records instead of the
  // held save's of that level (tombstones too). OnLevelAdded applies the level's memory, else the
  // held save's records of the level, and drops the memory. Apply (a load of either map choice)
  // and a map opening (OnActorsInitialized) drop all of it.
  //
  // `listener` hears each removal's and each add's outcome (LevelReport), on the game thread,
  // from inside OnLevelRemoved and OnLevelAdded: it must not add or remove levels. Null: none.
  void SetLevelListener(std::function<void(const LevelReport&)> listener) {
    level_listener_ = std::move(listener);
  }
  // Whether level memory holds records of `level`.
  bool RemembersLevel(Name level) const;

  // HostEvents.
  void OnActorsInitialized() override;
  void OnBeginPlay() override;
  void OnLevelAdded(Name level) override;
  void OnLevelRemoved(Name level) override;
  void OnComponentCreated(Guid actor, const ComponentView& component) override;

 private:
  friend class WorldCapture;
  // Each global, registered object and local player's part there is now that a save lists (a
  // global's or part's class holds state), with the subject ID a capture derives for it.
  void VisitNamedSubjects(const std::function<void(Guid, Object)>& each);
  class Applier;
  class SubjectsNow;
  class LateLinks;
  struct WaitingComponent;

  // The placed actors the map made, by ID: what a save holds as destroyed when they are gone.
  // Returns how many it noted.
  std::uint32_t NotePlacedActors(Name level);
  // Notes the placed actors the host left out of the map (left_out_) as NotePlacedActors notes
  // those it made, after them in each level's order (`noted`: each level and how many its visit
  // noted), from the pending apply's save; sets left_out_noted_.
  void NoteLeftOut(const std::vector<std::pair<Name, std::uint32_t>>& noted);
  // Level memory (docs/world.md, "Streamed levels").
  struct LevelMemory {
    Name level;
    // level_memory_clock_ when it was taken.
    std::uint64_t generation = 0;
    // One WRLD chunk of the current map: the level's records.
    std::shared_ptr<const LoadedGame> records;
  };
  void RememberLevel(Name level);
  // The memory of `level`, taken out of level memory (null when there is none).
  std::shared_ptr<const LoadedGame> TakeLevelMemory(Name level);
  void Notify(const LevelReport& report);

  // Sizes of the last capture, so the next one reserves its buffers once, and whether its world
  // chunk was copied (a helper is not asked to copy one the last capture found is not).
  struct CaptureHint {
    std::size_t actors = 0;
    std::size_t subjects = 0;
    bool world_not_copied = false;
  };

  Host& host_;
  const reflect::TypeRegistry& registry_;
  CaptureHint capture_hint_;
  std::map<Name, Object> registered_;
  // Placed actors of the loaded levels (ID, class name, level), one per ID, in slots that keep
  // their place: a level added or removed changes only its own actors' entries. A free slot's ID
  // is none (its index is in placed_free_).
  struct PlacedActor {
    Guid id;
    Name cls;
    Name level;
    // Its place in its level's visit when noted: a save writes the level's tombstones in that
    // order, whichever slot streaming gave each.
    std::uint32_t order = 0;
  };
  std::vector<PlacedActor> placed_;
  std::vector<std::uint32_t> placed_free_;
  // While OpenMapForApply's host call runs: the placed actors the host reports it left out, and
  // how many of those NoteLeftOut noted (the apply's count of actors removed).
  GuidSet left_out_;
  std::size_t left_out_noted_ = 0;
  // How many of each loaded level's placed actors are of classes that hold saved state: the room
  // the first capture of a World reserves.
  std::map<Name, std::size_t> placed_saving_;
  // Each placed actor's slot, by ID.
  GuidMap<std::uint32_t> placed_index_;
  std::shared_ptr<const LoadedGame> held_;
  // Each component record of the held save's world chunks by its subject ID, with the actor and
  // name it names (views of the held save's bytes): made the first time a reference by ID finds
  // nothing else (SubjectsNow), dropped when the held save changes.
  const GuidMap<ComponentSection>& HeldComponents();
  std::unique_ptr<GuidMap<ComponentSection>> held_components_;
  // Captures begun (BeginCapture), and the count the held save stands at: its capture's number,
  // or, for a load or SetHeld(game), the count when it was held.
  std::uint64_t captures_begun_ = 0;
  std::uint64_t held_at_ = 0;
  // Applies begun (a load's, a streamed level's), numbering them.
  std::uint64_t applies_ = 0;
  // The captures alive now (a save keeps its capture until the write ends, for OnSaved): a level
  // removed meanwhile makes them forget its objects. Shared with the captures, so one that
  // outlives the World finds the list still there.
  std::shared_ptr<world_internal::LiveCaptures> live_captures_;
  std::shared_ptr<const LoadedGame> pending_;
  std::function<void()> pending_starting_;
  std::function<void(Status, ApplyReport)> pending_done_;
  std::vector<std::unique_ptr<WaitingComponent>> waiting_;
  bool applying_ = false;
  record::CheckedPayload::Post apply_helper_;
  std::size_t apply_beside_at_least_ = kApplyBesideAtLeast;
  std::vector<LevelMemory> level_memory_;
  std::uint64_t level_memory_clock_ = 0;
  std::function<void(const LevelReport&)> level_listener_;
};

}  // namespace rolly::world

#endif  // ROLLY_WORLD_WORLD_H_
