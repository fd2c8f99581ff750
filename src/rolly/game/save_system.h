// SaveSystem: what a game talks to. Save(slot) captures the world on the game thread and hands the
// capture to the store, which makes the file, compresses and writes it on workers; Load(slot) reads and checks a save
// on workers, then opens its map (or keeps the current one) and sets every value on the game
// thread. Results and events reach the game when it calls Tick() each frame.
//
//   scene::Scene scene(registry);                      // or the game's own world::Host
//   store::FolderBackend backend(...); store::Store store(backend, workers, mailbox);
//   game::SaveSystem saves(store, scene, registry, mailbox, workers);
//   saves.Save("slot1", {.title = "Before the bridge"}, [](Result<game::SaveOutcome> r) {...});
//   ... each frame: saves.Tick();
//
// Gates: a call is refused, through its callback on a later Tick and changing nothing, when made
// off the game thread (InvalidInput), without a game world (InvalidInput), on a client
// (NotAuthority), with a slot name that is not 1 to 1,024 bytes of UTF-8 without NUL or that is
// reserved (names starting "rolly." belong to the library; InvalidInput), or while a load sets
// values or opens its map (Busy). A second load while one runs is Busy too.
//
// Statuses of Save: the gates', InvalidData (an object cannot be saved as it is: nothing is
// written and the slot keeps its previous save), then the store's (NoSpace, StorageFailed,
// SignedOut; NewerVersion when both copies hold a newer version's saves; Changed from a
// versioned backend). OnSaved hooks run only after the store reported the save written.
// Statuses of Load: the gates', the store's (NotFound, Damaged, NewerVersion, StorageFailed,
// SignedOut), Damaged or NewerVersion from the record check (nothing of the file applies), the
// host's OpenMap status when the saved map cannot be opened (NotFound for a map it lacks),
// Cancelled when CancelLoad stopped it.
//
// Events (SaveEvents), on the game thread: save finished; load started, progress (Reading,
// Loading Assets, Opening Map, Setting Values), then finished or cancelled, each before the
// load's callback runs (a load the callback starts has its events after). A load refused at once
// by a gate fires none: its callback alone answers.
//
// Make the save system when the game starts, before play changes the first map: its World learns
// a map's placed actors when they are initialized, which is how a save knows the ones destroyed
// in play (world.h).
//
// Thread rules: construct, call and destroy on the game thread (the thread that constructed it);
// the store, host, registry, mailbox and workers outlive it. Save captures on the game thread;
// the chunks are made from the capture on the store's worker (world::CapturedWorld). Destroying
// the system waits for chunks being made; a save whose chunks were not started by then writes
// nothing, and no callback of it runs. It then waits until the worker pool is idle, since the
// checks of loads and held saves it posted read its registry: a pool shared with long tasks of
// the game's delays it until they end too.
//
// An allocation that fails on a worker (checking a loaded save, or the save just written that the
// world will hold; making a save's chunks) ends that operation, not the process: the load calls
// back StorageFailed, a save calls back as its store does (store.h), and a save's held copy stays
// the one before (so the next save keeps the records of objects not there from it). Each such
// result's place in the mailbox is made when the work is asked (Mailbox::Made), so it always
// arrives.

#ifndef ROLLY_GAME_SAVE_SYSTEM_H_
#define ROLLY_GAME_SAVE_SYSTEM_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "rolly/core/mailbox.h"
#include "rolly/core/status.h"
#include "rolly/core/worker_pool.h"
#include "rolly/format/format_constants.h"
#include "rolly/reflect/type_registry.h"
#include "rolly/store/store.h"
#include "rolly/world/host.h"
#include "rolly/world/world.h"

namespace rolly::game {

struct SaveOptions {
  // Shown in slot lists.
  std::string title;
  format::SaveKind kind = format::SaveKind::kManual;
};

enum class MapChoice : std::uint8_t {
  // Tear the world down and build the saved map; values are set before its begin play.
  kOpenSavedMap,
  // Set the values into the world as it is.
  kKeepCurrentMap,
};

struct LoadOptions {
  MapChoice map = MapChoice::kOpenSavedMap;
};

enum class LoadStage : std::uint8_t { kReading, kLoadingAssets, kOpeningMap, kSettingValues };
std::string_view LoadStageName(LoadStage stage);

struct SaveOutcome {
  store::SaveInfo info;
  // Records captured, and the time the capture took on the game thread.
  std::size_t records = 0;
  std::chrono::nanoseconds capture_time{0};
  // From the call to the store's report that the bytes are durable.
  std::chrono::nanoseconds total_time{0};
};

struct LoadOutcome {
  world::ApplyReport report;
  std::string map;
  // The copy the file came from, and whether the other copy exists but is not valid, so this one
  // may be the older save (store::LoadResult::recovered).
  store::Copy copy = store::Copy::kA;
  bool recovered = false;
  // Reading and checking (workers), and setting values (game thread).
  std::chrono::nanoseconds read_time{0};
  std::chrono::nanoseconds apply_time{0};
};

// The save system's events. Every method runs on the game thread; the defaults do nothing.
class SaveEvents {
 public:
  virtual ~SaveEvents() = default;
  virtual void OnSaveFinished(std::string_view slot, const Status& status) {
    (void)slot, (void)status;
  }
  virtual void OnLoadStarted(std::string_view slot) { (void)slot; }
  virtual void OnLoadProgress(std::string_view slot, LoadStage stage) { (void)slot, (void)stage; }
  virtual void OnLoadFinished(std::string_view slot, const Status& status) {
    (void)slot, (void)status;
  }
  virtual void OnLoadCancelled(std::string_view slot) { (void)slot; }
};

class SaveSystem {
 public:
  using SaveCallback = std::function<void(Result<SaveOutcome>)>;
  using LoadCallback = std::function<void(Result<LoadOutcome>)>;

  SaveSystem(store::Store& store, world::Host& host, const reflect::TypeRegistry& registry,
             Mailbox& mailbox, WorkerPool& workers);
  ~SaveSystem();
  SaveSystem(const SaveSystem&) = delete;
  SaveSystem& operator=(const SaveSystem&) = delete;

  // Null stops events. The listener outlives the save system or is unset first.
  void SetEvents(SaveEvents* events) { events_ = events; }
  world::World& world() { return *world_; }

  void Save(std::string_view slot, const SaveOptions& options, SaveCallback done);
  void Load(std::string_view slot, const LoadOptions& options, LoadCallback done);
  // Stops the running load before its map opens: its callback gets Cancelled and OnLoadCancelled
  // runs, on a later Tick. InvalidInput when no load runs; Busy once its map is opening or its
  // values are being set.
  Status CancelLoad();
  bool loading() const { return load_ != nullptr; }

  // Runs the results and events that arrived; call once per frame on the game thread.
  void Tick();
  // Drives Tick until every save and load asked for has ended, or `deadline` passes (then Busy,
  // as Store::Flush). A game that quits or goes to the background calls it with its bound.
  Status Flush(Mailbox::Clock::time_point deadline);

 private:
  struct LoadState;
  struct Makers;
  Status Gate(std::string_view slot, bool is_save) const;
  void Fail(std::function<void()> step);
  void Progress(LoadStage stage);
  void FinishLoad(Result<LoadOutcome> result);
  // Reads the running load's slot and checks it on the worker that read it (the store's
  // LoadOptions::on_read), then goes on with the load at the next Tick. With
  // `decode_while_checking`, the store leaves the large world chunks encoded and the check
  // decodes them (reading again without, should one not decode).
  void Read(LoadState* state, bool decode_while_checking);
  struct EndLoadOnThrow;
  using CheckedGame = Result<std::shared_ptr<const world::LoadedGame>>;
  // Checks the chunks `chunks` gives (world::LoadedGame::Check) on a worker, then runs `then` with
  // the result at a Tick, unless the system is gone; counted in worker_jobs_ meanwhile.
  void CheckOnWorker(std::function<std::vector<world::WorldChunk>()> chunks,
                     std::function<void(CheckedGame)> then);

  store::Store& store_;
  world::Host& host_;
  const reflect::TypeRegistry& registry_;
  Mailbox& mailbox_;
  WorkerPool& workers_;
  std::unique_ptr<world::World> world_;
  SaveEvents* events_ = nullptr;
  std::thread::id game_thread_;
  std::unique_ptr<LoadState> load_;
  int saves_running_ = 0;
  // Work posted to workers whose results have not reached the mailbox yet.
  std::shared_ptr<int> worker_jobs_;
  // The saves' chunks being made on the store's worker (they read the registry): the destructor
  // waits for them, and those not started by then make nothing.
  std::shared_ptr<Makers> makers_;
};

}  // namespace rolly::game

#endif  // ROLLY_GAME_SAVE_SYSTEM_H_
