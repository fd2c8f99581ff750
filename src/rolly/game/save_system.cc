#include "rolly/game/save_system.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "rolly/core/utf8.h"
#include "rolly/record/record_codec.h"

namespace rolly::game {
namespace {

using Clock = std::chrono::steady_clock;

// World chunks of at least this many decoded bytes are decoded on the worker that checks them,
// as their records are checked (CheckedPayload::CheckWhileFilled); smaller ones by the store.
constexpr std::uint64_t kDecodeWhileCheckingFrom = record::CheckedPayload::kSplitBytes;

// Where a check hands half of a large chunk's records: another of the workers. (The worker
// checking takes the half back itself when none is free, so a busy pool makes it wait on no one.)
record::CheckedPayload::Post PostTo(WorkerPool& workers) {
  return [&workers](std::function<void()> task) { workers.Post(std::move(task)); };
}

constexpr std::size_t kMaxSlotName = 1024;
// This library's version as a header holds it: major << 16 | minor << 8 | patch (the CMake
// project's version, given by src/rolly/CMakeLists.txt).
constexpr std::uint32_t kLibraryVersion =
    (ROLLY_VERSION_MAJOR << 16) | (ROLLY_VERSION_MINOR << 8) | ROLLY_VERSION_PATCH;
constexpr std::string_view kReservedPrefix = "rolly.";

bool IsWorldChunk(const format::Chunk& c) {
  const format::ChunkId id = c.id();  // view() points into the ID: keep it alive
  return id.view() == "GLOB" || id.view() == "WRLD" || id.view() == "PLYR";
}

std::int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string_view LoadStageName(LoadStage stage) {
  switch (stage) {
    case LoadStage::kReading:
      return "Reading";
    case LoadStage::kLoadingAssets:
      return "Loading Assets";
    case LoadStage::kOpeningMap:
      return "Opening Map";
    case LoadStage::kSettingValues:
      return "Setting Values";
  }
  return "?";
}

struct SaveSystem::Makers {
  std::mutex mutex;
  std::condition_variable idle;
  int running = 0;
  bool closed = false;
};

struct SaveSystem::LoadState {
  std::string slot;
  LoadOptions options;
  LoadCallback done;
  LoadStage stage = LoadStage::kReading;
  bool cancelled = false;
  Clock::time_point started;
};

SaveSystem::SaveSystem(store::Store& store, world::Host& host,
                       const reflect::TypeRegistry& registry, Mailbox& mailbox,
                       WorkerPool& workers)
    : store_(store), host_(host), registry_(registry), mailbox_(mailbox), workers_(workers),
      world_(std::make_unique<world::World>(host, registry)),
      game_thread_(std::this_thread::get_id()), worker_jobs_(std::make_shared<int>(0)),
      makers_(std::make_shared<Makers>()) {
  // A load's second pass sets values on a worker too (docs/world.md, "Threads").
  world_->SetApplyHelper(PostTo(workers_));
}

SaveSystem::~SaveSystem() {
  // A save's chunks still being made read the registry, which need only outlive this system.
  {
    std::unique_lock lock(makers_->mutex);
    makers_->closed = true;
    makers_->idle.wait(lock, [this] { return makers_->running == 0; });
  }
  // Results still on their way find the system gone: they check this token.
  worker_jobs_.reset();
  workers_.WaitUntilIdle();
}

Status SaveSystem::Gate(std::string_view slot, bool is_save) const {
  if (std::this_thread::get_id() != game_thread_) {
    return InvalidInputError("called off the game thread");
  }
  if (!host_.HasWorld()) return InvalidInputError("there is no game world");
  if (!host_.IsAuthority()) return NotAuthorityError("a client does not save or load");
  if (slot.empty() || slot.size() > kMaxSlotName || !IsValidUtf8(slot) ||
      slot.find('\0') != std::string_view::npos) {
    return InvalidInputError("a slot name is 1 to 1,024 bytes of UTF-8 without NUL");
  }
  if (slot.substr(0, kReservedPrefix.size()) == kReservedPrefix) {
    return InvalidInputError("slot names starting \"rolly.\" are kept for the library");
  }
  if (world_->applying() ||
      (load_ != nullptr && load_->stage >= LoadStage::kOpeningMap)) {
    return BusyError("a load is setting values");
  }
  if (!is_save && load_ != nullptr) return BusyError("a load is running");
  return OkStatus();
}

void SaveSystem::Fail(std::function<void()> step) { mailbox_.Post(std::move(step)); }

void SaveSystem::Save(std::string_view slot, const SaveOptions& options, SaveCallback done) {
  Status gate = Gate(slot, true);
  std::string name(slot);
  if (!gate.ok()) {
    Fail([this, done = std::move(done), gate, name, alive = std::weak_ptr<int>(worker_jobs_)] {
      if (alive.expired()) return;
      if (done) done(gate);
      if (events_) events_->OnSaveFinished(name, gate);
    });
    return;
  }
  const Clock::time_point started = Clock::now();
  std::unique_ptr<world::WorldCapture> capture = world_->BeginCapture(PostTo(workers_));
  Status captured = capture->Run();
  Result<world::CapturedWorld> detached =
      captured.ok() ? capture->Detach() : Result<world::CapturedWorld>(captured);
  SaveOutcome outcome;
  outcome.records = capture->captured();
  outcome.capture_time = Clock::now() - started;
  if (!detached.ok()) {
    capture->Forget();
    Status s = detached.status();
    Fail([this, done = std::move(done), s, name, alive = std::weak_ptr<int>(worker_jobs_)] {
      if (alive.expired()) return;
      if (done) done(s);
      if (events_) events_->OnSaveFinished(name, s);
    });
    return;
  }
  format::Header header;
  header.title = options.title;
  header.kind = static_cast<std::uint32_t>(options.kind);
  header.save_time_us = NowMicros();
  header.record_version = record::kRecordFormatVersion;
  header.library_version = kLibraryVersion;
  // The chunks are made on the store's worker, and kept for the held save once the write
  // succeeded: joining the records, keeping those of absent objects and compressing them are not
  // the game thread's work. Each is encoded there from the bytes kept (CompressChunk reads them in
  // place, at the store's write options), so a chunk that compresses holds its compressed bytes
  // only, not a second copy of the records.
  auto made = std::make_shared<world::CapturedWorld>(*std::move(detached));
  auto saved = std::make_shared<std::vector<world::WorldChunk>>();
  auto make = [made, saved, header = std::move(header), write = store_.options().write,
               makers = makers_]() -> Result<format::File> {
    {
      std::lock_guard lock(makers->mutex);
      if (makers->closed) return CancelledError("the save system was destroyed");
      ++makers->running;
    }
    // Uncounted however Make ends: it may throw (an allocation failing; the store answers the
    // save StorageFailed), and the save system's destructor waits for the count to come down.
    struct Uncount {
      Makers& makers;
      ~Uncount() {
        std::lock_guard lock(makers.mutex);
        if (--makers.running == 0) makers.idle.notify_all();
      }
    };
    Result<std::vector<world::WorldChunk>> made_chunks = [&] {
      const Uncount uncount{*makers};
      return made->Make();
    }();
    ROLLY_ASSIGN_OR_RETURN(std::vector<world::WorldChunk> chunks, std::move(made_chunks));
    format::File file;
    file.header = header;
    for (world::WorldChunk& c : chunks) {
      auto id = format::ChunkId::FromBytes(reinterpret_cast<const std::uint8_t*>(c.id.data()));
      ROLLY_ASSIGN_OR_RETURN(format::Chunk chunk,
                             format::CompressChunk(*id, c.key, c.payload, write));
      file.chunks.push_back(std::move(chunk));
      saved->push_back(std::move(c));
    }
    return file;
  };
  // Level memory taken before this capture began is in the file; memory of a level removed since
  // is not, and stays when the file becomes the held save. A save whose capture began before the
  // held save's (or a load's) is not held: see World::SetHeld.
  const world::WorldCapture::Mark capture_mark = capture->mark();
  std::shared_ptr<world::WorldCapture> held_capture(std::move(capture));
  store::Store::SaveCallback finished =
      [this, done = std::move(done), name, outcome, started, held_capture, saved,
       capture_mark, alive = std::weak_ptr<int>(worker_jobs_)](
          Result<store::SaveInfo> info) mutable {
        if (alive.expired()) return;
        --saves_running_;
        if (!info.ok()) {
          held_capture->Forget();
          if (done) done(info.status());
          if (events_) events_->OnSaveFinished(name, info.status());
          return;
        }
        held_capture->RunSavedHooks();
        // The world holds what this save wrote, so the next one keeps the same records.
        // Decoding it again runs on a worker.
        // Should that not be asked for (an allocation failing), the world keeps the save it held:
        // the callback below still runs.
        try {
          CheckOnWorker([saved] { return std::move(*saved); },
                        [this, capture_mark](CheckedGame game) {
                          if (game.ok() && load_ == nullptr) {
                            world_->SetHeld(std::move(*game), capture_mark);
                          }
                        });
        } catch (const std::bad_alloc&) {
        }
        outcome.info = std::move(*info);
        outcome.total_time = Clock::now() - started;
        if (done) done(std::move(outcome));
        if (events_) events_->OnSaveFinished(name, OkStatus());
      };
  // Counted once nothing but the store's Save is left that may fail for want of memory.
  ++saves_running_;
  try {
    store_.Save(name, store::Store::FileMaker(std::move(make)), std::move(finished));
  } catch (...) {
    // The save was not made (an allocation failed on this thread): nothing will call back, and
    // its capture is forgotten as a failed save's is.
    --saves_running_;
    held_capture->Forget();
    throw;
  }
}

void SaveSystem::CheckOnWorker(std::function<std::vector<world::WorldChunk>()> chunks,
                               std::function<void(CheckedGame)> then) {
  // The step that ends the job is made here, on the game thread, where an allocation failing
  // throws to the caller: the worker only fills the result in and posts the step.
  struct Job {
    std::optional<CheckedGame> game;
    bool threw = false;  // checking threw (an allocation failed): the status is made at the step
  };
  auto job = std::make_shared<Job>();
  auto step = std::make_shared<Mailbox::Made>([job, then = std::move(then),
                                               alive = std::weak_ptr<int>(worker_jobs_)] {
    auto token = alive.lock();
    if (!token) return;
    --*token;
    then(job->threw ? CheckedGame(StorageFailedError(
                          "checking the save on a worker threw (an allocation failed)"))
                    : std::move(*job->game));
  });
  workers_.Post([this, job, chunks = std::move(chunks), step = std::move(step)] {
    try {
      job->game = world::LoadedGame::Check(chunks(), registry_, PostTo(workers_));
    } catch (...) {
      job->game.reset();
      job->threw = true;
    }
    mailbox_.Post(std::move(*step));  // (its place was made: this allocates nothing)
  });
  // Counted once posted (the step that uncounts it runs on this thread, later).
  ++*worker_jobs_;
}

void SaveSystem::Progress(LoadStage stage) {
  if (load_ == nullptr) return;
  load_->stage = stage;
  if (events_) events_->OnLoadProgress(load_->slot, stage);
}

// The event first, then the callback: a load the callback starts then has its events after this
// one's end.
void SaveSystem::FinishLoad(Result<LoadOutcome> result) {
  std::unique_ptr<LoadState> load = std::move(load_);
  if (load == nullptr) return;
  const Status s = result.status();
  if (events_) {
    if (s.code() == StatusCode::kCancelled) {
      events_->OnLoadCancelled(load->slot);
    } else {
      events_->OnLoadFinished(load->slot, s);
    }
  }
  if (load->done) load->done(std::move(result));
}

// Should the game or the host throw while a load is the running one (a listener, OpenMap, a hook,
// an allocation), the exception leaves the call that runs it and the load ends there: nothing
// stays armed to apply to a later map, and saves and loads are not Busy for good. Its callback
// and end event do not run.
struct SaveSystem::EndLoadOnThrow {
  SaveSystem* system;
  const LoadState* state;
  const int exceptions = std::uncaught_exceptions();
  ~EndLoadOnThrow() {
    if (std::uncaught_exceptions() <= exceptions || system->load_.get() != state) return;
    system->world_->CancelPendingApply();
    system->load_.reset();
  }
};

void SaveSystem::Load(std::string_view slot, const LoadOptions& options, LoadCallback done) {
  Status gate = Gate(slot, false);
  std::string name(slot);
  if (!gate.ok()) {
    // Answered by its callback alone: a load refused never started, and the events of the load
    // running (a second Load is Busy) are that load's.
    Fail([done = std::move(done), gate, alive = std::weak_ptr<int>(worker_jobs_)] {
      if (alive.expired()) return;
      if (done) done(gate);
    });
    return;
  }
  load_ = std::make_unique<LoadState>();
  load_->slot = name;
  load_->options = options;
  load_->done = std::move(done);
  load_->started = Clock::now();
  LoadState* state = load_.get();
  EndLoadOnThrow ends_if_call_throws{this, state};
  if (events_) events_->OnLoadStarted(name);
  Progress(LoadStage::kReading);
  Read(state, true);
}

void SaveSystem::Read(LoadState* state, bool decode_while_checking) {
  // Every record is checked on the worker that read the copy, as soon as the read ends (the
  // store's LoadOptions::on_read): the check does not wait for a Tick to be asked for. Nothing
  // changes until it passed. A chunk the store left encoded is decoded there, while its records
  // are checked as they arrive.
  struct Checked {
    std::optional<CheckedGame> game;  // none: the read failed, or the check threw
    bool undecodable = false;  // a frame that passed every check of the read does not decode
  };
  auto checked = std::make_shared<Checked>();
  store::LoadOptions options;
  if (decode_while_checking) options.leave_encoded_from = kDecodeWhileCheckingFrom;
  options.on_read = [checked, registry = &registry_,
                     workers = &workers_](store::LoadResult& read) {
    std::vector<world::WorldChunk> chunks;
    for (format::Chunk& c : read.file.chunks) {
      if (!IsWorldChunk(c) || !(c.is_decoded() || c.is_left_encoded())) continue;
      world::WorldChunk w;
      std::copy_n(c.id().view().data(), 4, w.id.begin());
      w.key = c.key();
      if (c.is_decoded()) {
        w.payload = c.TakeData();
      } else {
        w.fill_size = c.decoded_size();
        // (The check fills it before on_read returns, while `c` is the store's to change.)
        w.fill = [&c, checked](std::span<std::uint8_t> out,
                               const std::function<void(std::size_t)>& arrived) {
          Status s = format::DecodeChunk(c, out, arrived);
          checked->undecodable = !s.ok();
          c.set_data(Bytes());  // its stored bytes are needed no more
          return s;
        };
      }
      chunks.push_back(std::move(w));
    }
    checked->game = world::LoadedGame::Check(std::move(chunks), *registry, PostTo(*workers));
  };
  store_.Load(state->slot, options, [this, state, checked, alive = std::weak_ptr<int>(worker_jobs_),
                                     slot = state->slot](Result<store::LoadResult> read) {
    if (alive.expired()) return;
    // A frame that passed every check of the read but does not decode: the slot is read again,
    // the store decoding, so that it takes the other copy instead when that one is valid, as a
    // load always did, and knows the copy damaged for the saves after. So it is read again also
    // for a load cancelled meanwhile (which ends at that read's answer), or gone.
    if (load_.get() != state) {
      if (read.ok() && checked->undecodable) store_.Load(slot, [](Result<store::LoadResult>) {});
      return;
    }
    EndLoadOnThrow ends_if_step_throws{this, state};
    if (read.ok() && checked->undecodable) return Read(state, false);
    if (state->cancelled) return FinishLoad(CancelledError("the load was cancelled"));
    if (!read.ok()) return FinishLoad(read.status());
    // (A load that found a copy ran on_read: what it threw failed the load with StorageFailed.)
    if (!checked->game) return FinishLoad(StorageFailedError("the save was read but not checked"));
    CheckedGame game = std::move(*checked->game);
    if (!game.ok()) return FinishLoad(game.status());
    LoadOutcome outcome;
    outcome.copy = read->copy;
    outcome.recovered = read->recovered;
    outcome.map = (*game)->map();
    outcome.read_time = Clock::now() - state->started;
    Progress(LoadStage::kLoadingAssets);
    if (state->cancelled) return FinishLoad(CancelledError("the load was cancelled"));
    const bool open = state->options.map == MapChoice::kOpenSavedMap && !outcome.map.empty();
    if (!open) {
      Progress(LoadStage::kSettingValues);
      const Clock::time_point applying = Clock::now();
      Status s = world_->Apply(std::move(*game), &outcome.report);
      outcome.apply_time = Clock::now() - applying;
      if (!s.ok()) return FinishLoad(s);
      return FinishLoad(std::move(outcome));
    }
    Progress(LoadStage::kOpeningMap);
    auto result = std::make_shared<std::optional<Result<LoadOutcome>>>();
    auto applying = std::make_shared<Clock::time_point>();
    world_->ApplyAtActorsInitialized(
        std::move(*game),
        [this, applying] {
          *applying = Clock::now();
          Progress(LoadStage::kSettingValues);
        },
        [outcome, result, applying](Status s, world::ApplyReport report) mutable {
          outcome.report = std::move(report);
          outcome.apply_time = Clock::now() - *applying;
          if (s.ok()) {
            *result = Result<LoadOutcome>(std::move(outcome));
          } else {
            *result = Result<LoadOutcome>(s);
          }
        });
    Status opened = world_->OpenMapForApply(outcome.map);
    world_->CancelPendingApply();
    if (!opened.ok()) return FinishLoad(opened);
    if (!result->has_value()) {
      return FinishLoad(NotFoundError("the map " + outcome.map +
                                      " opened without reporting its actors initialized"));
    }
    FinishLoad(std::move(**result));
  });
}

Status SaveSystem::CancelLoad() {
  if (load_ == nullptr) return InvalidInputError("no load is running");
  if (load_->stage >= LoadStage::kOpeningMap) return BusyError("the load's map is opening");
  if (load_->cancelled) return OkStatus();
  load_->cancelled = true;
  return OkStatus();
}

void SaveSystem::Tick() { mailbox_.Drain(); }

Status SaveSystem::Flush(Mailbox::Clock::time_point deadline) {
  bool ended = mailbox_.DrainUntil(
      [this] { return saves_running_ == 0 && load_ == nullptr && *worker_jobs_ == 0; }, deadline);
  return ended ? OkStatus() : BusyError("saves or loads were still running at the deadline");
}

}  // namespace rolly::game
