// Store: per-file queues over a backend, the two-copy rule, and the slot index.
//
// Every operation is queued on its file's queue when asked (so the order asked is the order run),
// and does its work on a worker thread when its turn comes, where it may block on the backend.
// Writes (saves, the index) and listings do not block: a worker prepares a save's bytes and the
// backend's completion (on the backend's thread: bookkeeping and a post only) replies and ends the
// turn. Work that is short and needs no further read runs on the backend's thread too: an index
// write after a save's write, a listing's check of the index it has just read. So a save wakes no
// worker between its write and its index's, and a listing none at all. Results go back through
// the mailbox, posted before the queue moves on, so a file's callbacks run in the order asked.
// What the store knows of a file's copies (and the index's content) is kept with the file's queue,
// shared by every Store over the same backend object, and read and written only by operations in
// their turn, which run one at a time.

#include "rolly/store/store.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "rolly/store/internal/file_queue.h"
#include "rolly/store/internal/slot_index_codec.h"
#include "rolly/store/internal/thrown_call.h"

namespace rolly::store {
using store_internal::FileQueue;

namespace {

// The most of a copy or index file the store reads: a file's bound (docs/format.md, "Limits")
// and one byte, so a larger one is seen to be damaged without being read whole.
constexpr std::size_t kMaxReadBytes = format::kMaxFileSize + 1;

// What the store knows of one copy.
struct CopyInfo {
  CopyState state = CopyState::kMissing;
  std::uint64_t sequence = 0;
  std::uint64_t size = 0;
  Status why;  // when not valid
};

struct Copies {
  bool known = false;
  CopyInfo a;
  CopyInfo b;

  CopyInfo& Of(Copy c) { return c == Copy::kA ? a : b; }
  const CopyInfo& Of(Copy c) const { return c == Copy::kA ? a : b; }

  // The copy holding the newest valid save.
  std::optional<Copy> Newest() const {
    const bool va = a.state == CopyState::kValid, vb = b.state == CopyState::kValid;
    if (va && (!vb || a.sequence >= b.sequence)) return Copy::kA;
    if (vb) return Copy::kB;
    return std::nullopt;
  }
};

// What the stores over one backend object know of one slot file, kept with its queue.
struct SlotState {
  std::mutex mutex;
  Copies copies;
};

// The slot index as the stores over one backend object know it, kept with the index's queue: its
// SIDX bytes, checked when read and replaced by new bytes as changes come (no allocation per
// slot). They never change once made, so a listing shares them instead of copying.
struct IndexState {
  std::mutex mutex;
  bool loaded = false;
  std::shared_ptr<const Bytes> sidx;  // set once loaded
  Copies copies;
};

// Both index copies as read (copy a, copy b), whole or only their first bytes, handed from the
// backend's reads to the work that uses them.
struct IndexReads {
  std::optional<Result<Bytes>> bytes[2];
  bool whole[2] = {true, true};
};

// The first bytes of an index copy read to learn its sequence: its prelude and header (an index's
// header is a hundred bytes or so), and more when that is the whole file.
constexpr std::size_t kIndexHeadBytes = 4096;

// True when `head`, the first bytes of a copy, is too short for the header its prelude announces.
bool NeedsMoreThan(const Bytes& head) {
  const Result<format::Prelude> p = format::ReadPrelude(head);
  return p.ok() && p->header_end() > head.size();
}

// The state of type T kept with `queue`, made on first use. A queue holds one kind of file, so
// one type of state.
template <typename T>
T& StateOf(FileQueue& queue) {
  if (!queue.state()) queue.state() = std::make_shared<T>();
  return *static_cast<T*>(queue.state().get());
}

// Makes a backend call that must answer whatever happens: the store calls from workers and
// backend threads, where an exception has no caller to reach and ends the process, and an
// operation left unanswered would hold its queue, every flush and the store's closing for ever.
// `call` hands the backend the callback it is given. `answer` runs once: with the backend's
// answer, or, when the call throws before the backend answered (std::bad_alloc inside the
// backend, or a game's backend that throws), here with StorageFailed, as a failed call. False
// when the call threw. A backend that answers at once runs `answer` inside the call: what
// `answer` throws then is the store's own failure, not the backend's, and goes on.
template <typename T, typename Call>
bool CallBackend(Call call, std::function<void(T)> answer) {
  struct Once {
    std::function<void(T)> answer;
    std::atomic<bool> claimed{false};
    std::atomic<std::thread::id> answer_threw_on{};
  };
  auto once = std::make_shared<Once>();
  once->answer = std::move(answer);
  try {
    call(std::function<void(T)>([once](T value) {
      if (once->claimed.exchange(true)) return;
      try {
        once->answer(std::move(value));
      } catch (...) {
        once->answer_threw_on.store(std::this_thread::get_id());
        throw;
      }
    }));
    return true;
  } catch (...) {
    if (once->answer_threw_on.load() == std::this_thread::get_id()) throw;
    Status threw = store_internal::ThrownCallStatus();
    // Already claimed: the backend answered before it threw, and that answer stands.
    if (!once->claimed.exchange(true)) once->answer(T(std::move(threw)));
    return false;
  }
}

// A copy read and checked: what it is, and its bytes and header when valid.
struct CheckedCopy {
  CopyInfo info;
  Bytes bytes;
  format::Header header;
};

CopyState StateOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return CopyState::kValid;
    case StatusCode::kNotFound: return CopyState::kMissing;
    case StatusCode::kNewerVersion: return CopyState::kNewer;
    case StatusCode::kDamaged: return CopyState::kDamaged;
    default: return CopyState::kFailed;
  }
}

// Reads `name` whole (at most a file's bound and one byte: a larger file is damaged, not read
// into memory) and runs every check but decoding. A copy whose header names another slot is
// damaged: it is not this slot's save.
CheckedCopy CheckCopy(Backend& backend, const FileName& name, std::string_view slot,
                      const format::ReadOptions& options) {
  CheckedCopy c;
  Result<Bytes> bytes = ReadPrefixNow(backend, name, kMaxReadBytes);
  if (!bytes.ok()) {
    c.info.state = StateOf(bytes.status());
    c.info.why = bytes.status();
    return c;
  }
  c.info.size = bytes->size();
  Result<format::Header> header = format::Verify(*bytes, options);
  if (header.ok() && header->slot_name != slot) {
    header = DamagedError(fmt::format("header: holds slot \"{}\"", header->slot_name));
  }
  if (!header.ok()) {
    c.info.state = StateOf(header.status());
    c.info.why = header.status();
    return c;
  }
  c.info.state = CopyState::kValid;
  c.info.sequence = header->sequence;
  c.header = std::move(header).value();
  c.bytes = std::move(bytes).value();
  return c;
}

std::string_view CopyStateName(CopyState s) {
  switch (s) {
    case CopyState::kMissing: return "missing";
    case CopyState::kValid: return "valid";
    case CopyState::kDamaged: return "damaged";
    case CopyState::kNewer: return "newer";
    case CopyState::kFailed: return "unreadable";
  }
  return "unknown";
}

// The status of a load that found no usable copy.
Status NoCopyStatus(const Copies& c) {
  const CopyInfo* infos[] = {&c.a, &c.b};
  if (c.a.state == CopyState::kMissing && c.b.state == CopyState::kMissing) {
    return NotFoundError("neither copy exists");
  }
  for (const CopyInfo* i : infos) {
    if (i->state == CopyState::kFailed) return i->why;
  }
  const std::string detail =
      fmt::format("copy a {}{}{}; copy b {}{}{}", CopyStateName(c.a.state),
                  c.a.why.ok() ? "" : ": ", c.a.why.message(), CopyStateName(c.b.state),
                  c.b.why.ok() ? "" : ": ", c.b.why.message());
  for (const CopyInfo* i : infos) {
    if (i->state == CopyState::kNewer) return NewerVersionError(detail);
  }
  return DamagedError(detail);
}

// A save waiting for its chunks to be encoded and for its turn.
struct SaveJob {
  std::string slot;
  FileName name;  // copy a
  std::uint16_t format_version = format::kFormatVersion;
  std::uint16_t min_reader_version = format::kMinReaderVersion;
  format::Header header;

  std::mutex mutex;
  std::optional<Result<format::EncodedChunks>> encoded;
  std::function<void(bool)> waiter;

  SaveJob(std::string s, FileName n) : slot(std::move(s)), name(std::move(n)) {}

  // Called on a worker thread.
  void SetEncoded(Result<format::EncodedChunks> r) {
    std::function<void(bool)> w;
    {
      std::lock_guard lock(mutex);
      encoded.emplace(std::move(r));
      w = std::move(waiter);
    }
    if (w) w(true);
  }
  // Runs `fn` once the chunks are encoded: at once when they are (`fn(false)`, on the calling
  // thread), else on the worker that encoded them (`fn(true)`).
  void WhenEncoded(std::function<void(bool)> fn) {
    {
      std::lock_guard lock(mutex);
      if (!encoded) {
        waiter = std::move(fn);
        return;
      }
    }
    fn(false);
  }
};

}  // namespace

class Store::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(Backend& backend, WorkerPool& workers, Mailbox& mailbox, StoreOptions options)
      : backend_(backend), workers_(workers), mailbox_(mailbox), options_(std::move(options)) {
    read_options_.extra_known_chunks = options_.known_chunks;
    // A load hands the File to the game and never writes it back: no need to keep stored bytes.
    read_options_.keep_stored = false;
  }

  const StoreOptions& options() const { return options_; }
  std::size_t pending() const { return pending_.load(); }

  // --- Bookkeeping --------------------------------------------------------------------------

  // Counts an operation from its request until its callback ran.
  void Begin() {
    pending_.fetch_add(1);
    BeginWork();
  }
  // An operation a request on the game thread counted (kOperation: Begin), or one more piece
  // of its work (kPiece: BeginWork), until the request hands it on to a reply or a queue. A
  // request that throws before then (an allocation failing) uncounts it, so that Flush and
  // closing do not wait for work that never started.
  class Counted {
   public:
    enum Kind { kOperation, kPiece };
    Counted(Impl& impl, Kind kind) : impl_(&impl), kind_(kind) {
      if (kind == kOperation) {
        impl.Begin();
      } else {
        impl.BeginWork();
      }
    }
    Counted(const Counted&) = delete;
    Counted& operator=(const Counted&) = delete;
    ~Counted() {
      if (impl_ == nullptr) return;
      if (kind_ == kOperation) impl_->pending_.fetch_sub(1);
      impl_->End();
    }
    void HandedOn() { impl_ = nullptr; }

   private:
    Impl* impl_;
    Kind kind_;
  };
  // Counts one more queued piece of work of an operation (each piece calls End).
  void BeginWork() {
    std::lock_guard lock(mutex_);
    ++in_flight_;
  }

  // Posts `value` for `done` to the game thread; the operation ends there when it runs.
  template <typename T>
  void Reply(std::function<void(T)> done, T value) {
    std::weak_ptr<Impl> weak = weak_from_this();
    mailbox_.Post([weak, done = std::move(done), value = std::move(value)]() mutable {
      std::shared_ptr<Impl> self = weak.lock();
      if (!self || self->closed_.load()) return;
      self->pending_.fetch_sub(1);
      if (done) done(std::move(value));
    });
  }

  // The operation's work is done: its reply is posted and its queue has moved on.
  void End() {
    std::lock_guard lock(mutex_);
    if (--in_flight_ == 0) idle_.notify_all();
  }

  // Replies to an operation refused before it reached a queue.
  template <typename T>
  void Refuse(std::function<void(T)> done, T value) {
    Reply(std::move(done), std::move(value));
    End();
  }

  // Ends a queued operation on its worker: posts nothing itself; lets its queue move on and lets
  // go of it (so a closed store holds no queue, and no knowledge of the files, any more).
  void Finish(FileQueue::Finished& finished) {
    finished();
    finished = nullptr;
    End();
  }

  // Blocks until every operation has done its work (its reply may still wait in the mailbox),
  // then stops replies from reaching callbacks and lets go of the queues.
  void Close() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return in_flight_ == 0; });
    closed_.store(true);
    queues_.clear();
  }

  std::shared_ptr<FileQueue> QueueOf(std::string_view base) {
    std::lock_guard lock(mutex_);
    auto it = queues_.find(std::string(base));
    if (it != queues_.end()) return it->second;
    auto queue = store_internal::QueueFor(backend_.instance_id(), base);
    queues_.emplace(std::string(base), queue);
    return queue;
  }

  // Queues `work` (which replies) on `base`'s queue; at its turn it runs on a worker. `finished`
  // moves from step to step, so no step still holds the queue once the work is done (a store that
  // closes must let go of every queue: what a queue knows dies with its last holder).
  // `work` moves from step to step too, never copied: it holds the caller's callback until it
  // replies, and a copy destroyed on a worker would destroy what the callback owns there, off the
  // game thread (each operation's work moves the callback into its Reply).
  void RunInTurn(std::string_view base, std::function<void()> work) {
    auto self = shared_from_this();
    QueueOf(base)->Enqueue([self, work = std::move(work)](FileQueue::Finished finished) mutable {
      self->workers_.Post(
          [self, work = std::move(work), finished = std::move(finished)]() mutable {
            work();
            self->Finish(finished);
          });
    });
  }
  // Queues the write of `job` on its slot's queue. At its turn, once the chunks are encoded, a
  // worker lays the file out (the worker that encoded them, when the turn came first) and hands it
  // to the backend; the backend's completion replies to `done` and moves the queue on, so no
  // thread waits for the write and no worker wakes between the write and the reply.
  void EnqueueWrite(std::shared_ptr<SaveJob> job, std::function<void(Result<SaveInfo>)> done) {
    auto self = shared_from_this();
    QueueOf(job->name.base())
        ->Enqueue([self, job, done = std::move(done)](FileQueue::Finished finished) mutable {
          // The caller's callback is moved along, never copied: a copy destroyed on a worker
          // would destroy what the callback owns there, off the game thread.
          job->WhenEncoded([self, job, done = std::move(done),
                            finished = std::move(finished)](bool on_worker) mutable {
            auto start = [self, job, done = std::move(done),
                          finished = std::move(finished)]() mutable {
              self->StartSave(job, std::move(done), std::move(finished));
            };
            if (on_worker) {
              start();
            } else {
              self->workers_.Post(std::move(start));
            }
          });
        });
  }

  // --- Copies of a slot (called only by that slot's queue operations) --------------------------

  Copies GetCopies(const FileName& name) {
    SlotState& state = StateOf<SlotState>(*QueueOf(name.base()));
    std::lock_guard lock(state.mutex);
    return state.copies;
  }
  // A copy that could not be read may hold anything: what is known is forgotten then, and the
  // next operation reads both copies again.
  void SetCopies(const FileName& name, Copies c) {
    if (c.a.state == CopyState::kFailed || c.b.state == CopyState::kFailed) c.known = false;
    SlotState& state = StateOf<SlotState>(*QueueOf(name.base()));
    std::lock_guard lock(state.mutex);
    state.copies = std::move(c);
  }

  // What the stores know of the slot's copies, reading and checking both when no store over this
  // backend has yet (or a read failed since).
  Copies KnownCopies(const FileName& name, std::string_view slot) {
    Copies c = GetCopies(name);
    if (c.known) return c;
    const FileName a = name.copy() == Copy::kA ? name : name.Other();
    c.a = CheckCopy(backend_, a, slot, read_options_).info;
    c.b = CheckCopy(backend_, a.Other(), slot, read_options_).info;
    c.known = true;
    SetCopies(name, c);
    return c;
  }

  // --- Operations ---------------------------------------------------------------------------

  // A save laid out and about to be written: what FinishSave needs once the backend answers.
  struct PlannedSave {
    Copies copies;
    Copy target = Copy::kA;
    std::uint64_t sequence = 0;
    std::uint64_t size = 0;
  };

  // Chooses the copy to write and lays the file out as pieces, unsealed (worker only; may read both
  // copies).
  Result<PlannedSave> PlanSave(SaveJob& job, format::FilePieces* pieces_out) {
    if (!job.encoded->ok()) return job.encoded->status();
    Copies c = KnownCopies(job.name, job.slot);
    // A copy that could not be read may hold the newest save, or a sequence above the other's:
    // writing either copy could cost the last good save or hide this one behind an older one.
    for (const CopyInfo* i : {&c.a, &c.b}) {
      if (i->state == CopyState::kFailed) return i->why;
    }
    if (c.a.state == CopyState::kNewer && c.b.state == CopyState::kNewer) {
      return NewerVersionError("both copies hold saves of a newer version");
    }
    // Never the copy with the newest valid save; never a newer version's save while the other
    // copy can take the write.
    Copy target = Copy::kA;
    if (c.a.state == CopyState::kNewer) {
      target = Copy::kB;
    } else if (c.b.state == CopyState::kNewer) {
      target = Copy::kA;
    } else if (auto newest = c.Newest()) {
      target = OtherCopy(*newest);
    }
    std::uint64_t sequence = 1;
    if (auto newest = c.Newest()) sequence = c.Of(*newest).sequence + 1;
    job.header.slot_name = job.slot;
    job.header.sequence = sequence;
    // The file as pieces, the chunks' bytes moved rather than copied into one buffer, its
    // checksums not yet computed (StartSave seals it while the backend writes the chunks).
    Result<format::FilePieces> pieces = format::LayOutEncodedPieces(
        job.format_version, job.min_reader_version, job.header, std::move(**job.encoded));
    if (!pieces.ok()) return pieces.status();
    const std::uint64_t size = pieces->size;
    *pieces_out = *std::move(pieces);

    // Until the backend answers, the target counts as damaged.
    c.Of(target) = CopyInfo{CopyState::kDamaged, 0, 0, DamagedError("a save to it did not finish")};
    SetCopies(job.name, c);
    return PlannedSave{c, target, sequence, size};
  }

  // Runs a save at its turn (worker only): plans it, then writes it; the reply and the end of the
  // turn come from the backend's completion (quick: bookkeeping and a post to the mailbox).
  void StartSave(const std::shared_ptr<SaveJob>& job, std::function<void(Result<SaveInfo>)> done,
                 FileQueue::Finished finished) {
    format::FilePieces laid_out;
    Result<PlannedSave> plan = PlanSave(*job, &laid_out);
    if (!plan.ok()) {
      Reply(std::move(done), Result<SaveInfo>(plan.status()));
      Finish(finished);
      return;
    }
    const FileName target_name = job->name.copy() == plan->target ? job->name : job->name.Other();
    // The chunks' bytes go to the backend at once, and the checksums (each chunk's, then the
    // directory's and the file's) are computed here while the backend writes them; the first
    // piece follows. The backend keeps the chunks' bytes until it has the first piece, and
    // answers after.
    std::vector<Bytes>& pieces = laid_out.pieces;
    Bytes first = std::move(pieces.front());
    pieces.erase(pieces.begin());
    const std::vector<ByteView> rest(pieces.begin(), pieces.end());
    auto front = std::make_shared<LateFront>(first.size());
    auto self = shared_from_this();
    const bool asked = CallBackend<Status>(
        [&](StatusCallback answer) {
          backend_.Write(target_name, front, std::move(pieces), std::move(answer));
        },
        [self, job, plan = *std::move(plan), done = std::move(done),
         finished = std::move(finished)](Status written) mutable {
          bool index_write = false;
          Result<SaveInfo> info = self->FinishSave(*job, std::move(plan), written, &index_write);
          // The reply first: the index write's layout, which may run right here, need not hold
          // it up. The change is noted and the write counted already, so a listing or a flush
          // asked from the callback sees both.
          self->Reply(std::move(done), std::move(info));
          if (index_write) self->EnqueueIndexWrite();
          self->Finish(finished);
        });
    // A write that threw has failed already, as any failed write, and started nothing (Backend's
    // contract). The backend may have let go of the chunks' bytes, so the file is not sealed; the
    // front is set all the same, unsealed, so that nothing is left waiting on it.
    if (asked) format::SealFilePieces(first, rest, laid_out.late_checksums);
    front->Set(std::move(first));
  }

  // Records what the backend answered for a planned save. `index_write` is set when the caller
  // must queue the index write noted (EnqueueIndexWrite).
  Result<SaveInfo> FinishSave(SaveJob& job, PlannedSave plan, const Status& written,
                              bool* index_write) {
    Copies& c = plan.copies;
    if (!written.ok()) {
      // The copy may hold its old bytes, nothing valid, or (over a network) the new save: it is
      // unknown until read again, so the next operation reads both copies first.
      c.Of(plan.target).state = CopyState::kFailed;
      c.Of(plan.target).why = written;
      SetCopies(job.name, c);
      return written;
    }
    c.Of(plan.target) = CopyInfo{CopyState::kValid, plan.sequence, plan.size, Status()};
    SetCopies(job.name, c);
    *index_write = NoteSlot(job.slot, SlotInfoOf(job.slot, job.header, c, plan.target, plan.size));
    return SaveInfo{job.slot, plan.target, plan.sequence, plan.size};
  }

  Result<LoadResult> LoadNewest(const FileName& name, std::string_view slot) {
    const FileName a = name.copy() == Copy::kA ? name : name.Other();
    CheckedCopy copies[2] = {CheckCopy(backend_, a, slot, read_options_),
                             CheckCopy(backend_, a.Other(), slot, read_options_)};
    Copies c;
    c.known = true;
    c.a = copies[0].info;
    c.b = copies[1].info;
    // A copy that could not be read may hold the newest save: the other may be older, and the
    // next save, made from it, would outrank the newer one. The load fails as a save does then
    // (PlanSave); LoadCopy reads one copy on purpose.
    for (const CopyInfo* i : {&c.a, &c.b}) {
      if (i->state != CopyState::kFailed) continue;
      const Status why = i->why;
      SetCopies(name, c);
      return why;
    }
    // The newest valid copy first; a copy that fails to decode is damaged after all.
    for (int attempt = 0; attempt < 2; ++attempt) {
      const std::optional<Copy> newest = c.Newest();
      if (!newest) break;
      CheckedCopy& chosen = copies[static_cast<int>(*newest)];
      Result<format::File> file = format::Read(chosen.bytes, read_options_);
      if (!file.ok()) {
        c.Of(*newest).state = StateOf(file.status());
        c.Of(*newest).why = file.status();
        continue;
      }
      SetCopies(name, c);
      const CopyInfo& other = c.Of(OtherCopy(*newest));
      LoadResult result;
      result.file = std::move(file).value();
      result.copy = *newest;
      result.size = chosen.info.size;
      result.other_state = other.state;
      result.other_status = other.why;
      result.recovered =
          other.state != CopyState::kValid && other.state != CopyState::kMissing;
      return result;
    }
    SetCopies(name, c);
    return NoCopyStatus(c);
  }

  Result<LoadResult> LoadOne(const FileName& name, std::string_view slot) {
    CheckedCopy copy = CheckCopy(backend_, name, slot, read_options_);
    if (copy.info.state != CopyState::kValid) {
      if (copy.info.state == CopyState::kMissing) return NotFoundError("the copy does not exist");
      return copy.info.why;
    }
    ROLLY_ASSIGN_OR_RETURN(format::File file, format::Read(copy.bytes, read_options_));
    LoadResult result;
    result.file = std::move(file);
    result.copy = name.copy();
    result.size = copy.info.size;
    return result;
  }

  Result<format::Header> NewestHeader(const FileName& name, std::string_view slot) {
    const Copies c = KnownCopies(name, slot);
    // As a load (LoadNewest): a copy that could not be read may hold the newest save, so the
    // other copy's header is not given in its place.
    for (const CopyInfo* i : {&c.a, &c.b}) {
      if (i->state == CopyState::kFailed) return i->why;
    }
    const std::optional<Copy> newest = c.Newest();
    if (!newest) return NoCopyStatus(c);
    const FileName chosen = name.copy() == *newest ? name : name.Other();
    ROLLY_ASSIGN_OR_RETURN(Bytes prelude, ReadPrefixNow(backend_, chosen, format::kPreludeSize));
    ROLLY_ASSIGN_OR_RETURN(const format::Prelude p, format::ReadPrelude(prelude));
    ROLLY_ASSIGN_OR_RETURN(Bytes head, ReadPrefixNow(backend_, chosen, p.header_end()));
    return format::ReadHeader(head);
  }

  Status DeleteBoth(const FileName& name, std::string_view slot) {
    // The older copy first, so a crash between the two leaves the newest save, never an older one
    // brought back: which one that is is read first when no store knows yet. A copy that could
    // not be read may be the newest, so nothing is deleted then.
    const Copies known = KnownCopies(name, slot);
    for (const CopyInfo* i : {&known.a, &known.b}) {
      if (i->state == CopyState::kFailed) return i->why;
    }
    const std::optional<Copy> newest = known.Newest();
    const FileName first = name.copy() == newest ? name.Other() : name;
    // Whatever happens now, what was known is stale until both are gone.
    SetCopies(name, Copies());
    ROLLY_RETURN_IF_ERROR(DeleteNow(backend_, first));
    ROLLY_RETURN_IF_ERROR(DeleteNow(backend_, first.Other()));
    Copies c;
    c.known = true;
    SetCopies(name, c);
    if (NoteSlot(std::string(slot), std::nullopt)) EnqueueIndexWrite();
    return OkStatus();
  }

  // --- The slot index -----------------------------------------------------------------------

  static SlotInfo SlotInfoOf(const std::string& slot, const format::Header& h, const Copies& c,
                             Copy copy, std::uint64_t size) {
    SlotInfo s;
    s.slot = slot;
    s.title = h.title;
    s.save_time_us = h.save_time_us;
    s.sequence = h.sequence;
    s.kind = h.kind;
    s.game_data_version = h.game_data_version;
    s.metadata_listed = h.metadata.size() <= kMaxListedMetadataSize;
    if (s.metadata_listed) s.metadata = h.metadata;
    s.size = size;
    s.copy = copy;
    s.state_a = c.a.state;
    s.state_b = c.b.state;
    const CopyState other = c.Of(OtherCopy(copy)).state;
    s.recovered = other != CopyState::kValid && other != CopyState::kMissing;
    return s;
  }

  // Records a slot's new entry (or its removal) for the index. True when no index write is queued
  // yet: one is then counted as an operation (so a flush waits for it), and the caller must queue
  // it with EnqueueIndexWrite before its own operation ends. Otherwise the write already queued
  // takes this change too.
  bool NoteSlot(const std::string& slot, std::optional<SlotInfo> info) {
    {
      std::lock_guard lock(mutex_);
      index_changes_[slot] = std::move(info);
      if (!options_.keep_index || index_write_queued_) return false;
      index_write_queued_ = true;
    }
    Begin();
    return true;
  }

  // Queues the index write NoteSlot counted.
  void EnqueueIndexWrite() {
    auto self = shared_from_this();
    auto index_a = FileName::ForIndex(options_.prefix, Copy::kA);
    // As RunInTurn, but the write's completion ends the turn (no worker waits for it). When the
    // index is known and small, its turn lays it out at once, on the thread that moved the queue
    // on (mostly the backend's, right after the save's write): no worker is woken between a save's
    // write and its index's. Otherwise a worker does, which may have to read the index first.
    QueueOf(index_a->base())->Enqueue([self](FileQueue::Finished finished) {
      if (self->IndexWriteIsQuick()) {
        self->StartIndexWrite(std::move(finished));
        return;
      }
      self->workers_.Post([self, finished = std::move(finished)]() mutable {
        self->StartIndexWrite(std::move(finished));
      });
    });
  }

  // Whether the next index write needs no read and little work (index queue only).
  bool IndexWriteIsQuick() {
    IndexState& index = Index();
    std::lock_guard index_lock(index.mutex);
    return index.loaded && index.copies.known && index.sidx->size() <= kQuickIndexBytes;
  }

  // The index's state, kept with the index's queue (index queue only).
  IndexState& Index() {
    return StateOf<IndexState>(*QueueOf(FileName::ForIndex(options_.prefix, Copy::kA)->base()));
  }

  static std::vector<SlotInfo> Listed(const std::map<std::string, SlotInfo>& slots) {
    std::vector<SlotInfo> out;
    out.reserve(slots.size());
    for (const auto& [slot, info] : slots) out.push_back(info);
    return out;
  }

  // Lists the slots at the index queue's turn (any thread; quick). When the index must be read
  // first, both copies' first bytes are asked for at once, from here; once both are in, the
  // newest copy is read whole on the backend's own thread, and that read's completion checks it
  // and replies there too: the listing wakes no worker. A worker finishes instead when the
  // completion runs on the game thread (`asker`: a backend that answers at once), when the index
  // is large, or when anything more must be read (a damaged copy, a rebuild).
  void StartList(std::function<void(Result<SlotList>)> done, std::thread::id asker,
                 FileQueue::Finished finished) {
    auto self = shared_from_this();
    bool read = false;
    if (options_.keep_index) {
      IndexState& index = Index();
      std::lock_guard index_lock(index.mutex);
      read = !index.loaded;
    }
    if (!read) {
      workers_.Post([self, done = std::move(done), finished = std::move(finished)]() mutable {
        self->Reply(std::move(done), *self->CurrentIndex(nullptr, true));
        self->Finish(finished);
      });
      return;
    }
    struct Pending {
      IndexReads reads;
      std::atomic<int> left{2};
      std::function<void(Result<SlotList>)> done;
      FileQueue::Finished finished;
    };
    auto pending = std::make_shared<Pending>();
    pending->done = std::move(done);
    pending->finished = std::move(finished);
    // Both copies are in (whole, or their first bytes when the newest was read whole).
    auto complete = [self, pending, asker]() {
      std::size_t size = 0;
      for (const auto& r : pending->reads.bytes) size = std::max(size, r->ok() ? (*r)->size() : 0);
      if (std::this_thread::get_id() != asker && size <= kQuickIndexBytes) {
        std::optional<Result<SlotList>> listed = self->CurrentIndex(&pending->reads, false);
        if (listed) {
          self->Reply(std::move(pending->done), std::move(*listed));
          self->Finish(pending->finished);
          return;
        }
      }
      self->workers_.Post([self, pending] {
        self->Reply(std::move(pending->done), *self->CurrentIndex(&pending->reads, true));
        self->Finish(pending->finished);
      });
    };
    const FileName a = *FileName::ForIndex(options_.prefix, Copy::kA);
    auto head = [self, pending, a, complete](int i) {
      return [self, pending, a, complete, i](Result<Bytes> r) {
        IndexReads& reads = pending->reads;
        reads.whole[i] = !r.ok() || r->size() < kIndexHeadBytes;
        reads.bytes[i].emplace(std::move(r));
        if (pending->left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        // Both first bytes are in (quick from here: two headers).
        std::optional<Copy> newest;
        if (!(reads.bytes[0]->ok() && NeedsMoreThan(**reads.bytes[0])) &&
            !(reads.bytes[1]->ok() && NeedsMoreThan(**reads.bytes[1]))) {
          Copies c;
          c.a = IndexHeaderInfo(*reads.bytes[0]);
          c.b = IndexHeaderInfo(*reads.bytes[1]);
          newest = c.Newest();
        }
        if (!newest || reads.whole[static_cast<int>(*newest)]) {
          complete();
          return;
        }
        const int n = static_cast<int>(*newest);
        // On the backend's thread: a call that throws answers StorageFailed (CallBackend).
        CallBackend<Result<Bytes>>(
            [&](BytesCallback answer) {
              self->backend_.ReadPrefix(n == 0 ? a : a.Other(), kMaxReadBytes, std::move(answer));
            },
            [pending, complete, n](Result<Bytes> whole) {
              pending->reads.bytes[n].emplace(std::move(whole));
              pending->reads.whole[n] = true;
              complete();
            });
      };
    };
    // The turn may run on a worker or a backend's thread (the operation before it moved the
    // queue on): a read whose call throws answers StorageFailed, as one that failed.
    for (int i = 0; i < 2; ++i) {
      CallBackend<Result<Bytes>>(
          [&](BytesCallback answer) {
            backend_.ReadPrefix(i == 0 ? a : a.Other(), kIndexHeadBytes, std::move(answer));
          },
          head(i));
    }
  }

  // The index as it stands, changes applied, as a SlotList (index queue only). `reads`: both index
  // copies, when already read. With `may_block` false (on the backend's thread, which must not wait
  // for the backend), nullopt when more must be read or rebuilt: nothing is changed then, and a
  // worker must call again with `may_block`, which never gives nullopt.
  std::optional<Result<SlotList>> CurrentIndex(IndexReads* reads, bool may_block) {
    if (!options_.keep_index) {
      if (!may_block) return std::nullopt;
      // Nothing kept: the saves' headers, read afresh, already hold every change.
      {
        std::lock_guard lock(mutex_);
        index_changes_.clear();
      }
      Result<std::map<std::string, SlotInfo>> slots = RebuildIndex();
      if (!slots.ok()) return Result<SlotList>(slots.status());
      Bytes sidx;
      store_internal::EncodeSlotIndex(Listed(*slots), &sidx);
      return store_internal::MakeSlotList(std::make_shared<const Bytes>(std::move(sidx)));
    }
    IndexState& index = Index();
    std::lock_guard index_lock(index.mutex);
    std::optional<SlotList> listed;
    const std::optional<Status> updated = UpdateIndex(index, reads, may_block, &listed);
    if (!updated) return std::nullopt;
    if (!updated->ok()) return Result<SlotList>(*updated);
    if (listed) return Result<SlotList>(std::move(*listed));
    return store_internal::MakeSlotList(index.sidx);
  }

  // Loads the index once (from the backend, or rebuilt from the saves' headers), then applies the
  // changes noted since (index queue only, `index.mutex` held). Bytes read are checked by listing
  // them into `listed` when given (one pass for a listing), which is left empty when there was
  // nothing to read or changes were applied. With `may_block` false, nullopt (and nothing loaded)
  // when loading needs more than `reads`.
  std::optional<Status> UpdateIndex(IndexState& index, IndexReads* reads, bool may_block,
                                    std::optional<SlotList>* listed = nullptr) {
    if (!index.loaded) {
      std::optional<Result<Bytes>> read = ReadIndex(index, reads, may_block);
      if (!read) return std::nullopt;
      std::shared_ptr<const Bytes> sidx;
      if (read->ok()) {
        sidx = std::make_shared<const Bytes>(std::move(*read).value());
        Status checked;
        if (listed != nullptr) {
          Result<SlotList> list = store_internal::MakeSlotList(sidx);
          checked = list.status();
          if (list.ok()) listed->emplace(std::move(list).value());
        } else {
          checked = store_internal::CheckSlotIndex(*sidx);
        }
        if (!checked.ok()) sidx.reset();
      }
      if (!sidx) {
        if (!may_block) return std::nullopt;  // a rebuild lists and reads the backend
        Result<std::map<std::string, SlotInfo>> slots = RebuildIndex();
        if (!slots.ok()) return slots.status();
        Bytes rebuilt;
        store_internal::EncodeSlotIndex(Listed(*slots), &rebuilt);
        sidx = std::make_shared<const Bytes>(std::move(rebuilt));
      }
      index.sidx = std::move(sidx);
      index.loaded = true;
    }
    std::map<std::string, std::optional<SlotInfo>> changes;
    {
      std::lock_guard lock(mutex_);
      changes.swap(index_changes_);
    }
    if (changes.empty()) return OkStatus();
    if (listed != nullptr) listed->reset();
    Bytes merged;
    // index.sidx was checked when read, or made by this code: the merge fails only when it would
    // list more slots than an index may. The changes are then kept for a later merge (a delete
    // may bring the count back under the bound), newer ones noted meanwhile first.
    const Status s = store_internal::MergeSlotIndex(*index.sidx, changes, &merged);
    if (!s.ok()) {
      std::lock_guard lock(mutex_);
      index_changes_.merge(changes);
      return s;
    }
    index.sidx = std::make_shared<const Bytes>(std::move(merged));
    return OkStatus();
  }

  // Reads both index copies (side by side, one hand-off; or takes `reads`, both already read) and
  // returns the SIDX bytes of the newest valid one, entries not yet checked. The copies' headers
  // say which is newest; only that one is checked whole (and the other if it fails), which picks
  // the same copy as checking both and writes to the same one. With `may_block` false, nullopt
  // when another read is needed.
  std::optional<Result<Bytes>> ReadIndex(IndexState& index, IndexReads* reads, bool may_block) {
    const Result<FileName> index_a = FileName::ForIndex(options_.prefix, Copy::kA);
    if (!index_a.ok()) return Result<Bytes>(index_a.status());
    const FileName a = *index_a;
    const FileName names[2] = {a, a.Other()};
    IndexReads read_here;
    if (reads == nullptr) {
      assert(may_block);
      ReadBothNow(a, a.Other(), read_here.bytes);
      reads = &read_here;
    }
    auto& bytes = reads->bytes;
    // A copy read only in part, whose header goes on past what was read, is read whole.
    for (int i = 0; i < 2; ++i) {
      if (!reads->whole[i] && (*bytes[i]).ok() && NeedsMoreThan(**bytes[i])) {
        if (!may_block) return std::nullopt;
        bytes[i].emplace(ReadPrefixNow(backend_, names[i], kMaxReadBytes));
        reads->whole[i] = true;
      }
    }
    Copies& known = index.copies;
    known.known = true;
    known.a = IndexHeaderInfo(*bytes[0]);
    known.b = IndexHeaderInfo(*bytes[1]);
    for (int attempt = 0; attempt < 2; ++attempt) {
      const std::optional<Copy> newest = known.Newest();
      if (!newest) break;
      const int n = static_cast<int>(*newest);
      if (!reads->whole[n]) {
        if (!may_block) return std::nullopt;
        bytes[n].emplace(ReadPrefixNow(backend_, names[n], kMaxReadBytes));
        reads->whole[n] = true;
      }
      // On the backend's thread (may_block false) a listing decodes no more than a quick index
      // holds; an index that decodes to more (compressed, by another writer) goes to a worker.
      format::ReadOptions options = read_options_;
      if (!may_block) options.decode_at_most = kQuickIndexBytes;
      Result<format::File> file = (*bytes[n]).ok() ? format::Read(**bytes[n], options)
                                                   : Result<format::File>((*bytes[n]).status());
      if (!may_block && file.status().code() == StatusCode::kInvalidInput) return std::nullopt;
      Status why = file.status();
      if (file.ok()) {
        // An index file: of kind index, holding one SIDX chunk, of key "" (docs/storage.md).
        // Another file under an index's name is damaged, as its other copy or a rebuild serve.
        format::Chunk* sidx = nullptr;
        int found = 0;
        for (format::Chunk& chunk : file->chunks) {
          if (chunk.id() != format::kSlotIndexChunk) continue;
          ++found;
          sidx = &chunk;
        }
        if (file->header.kind == static_cast<std::uint32_t>(format::SaveKind::kIndex) &&
            found == 1 && sidx->key().empty()) {
          return Result<Bytes>(sidx->TakeData());  // its entries are checked by the caller
        }
        why = DamagedError(fmt::format(
            "slot index: the file is of kind {} and holds {} SIDX chunks{}", file->header.kind,
            found, found == 1 && !sidx->key().empty() ? " of a key" : ""));
      }
      known.Of(*newest).state = StateOf(why);
      known.Of(*newest).why = why;
    }
    return Result<Bytes>(NoCopyStatus(known));
  }

  // What an index copy's prelude and header say of it (the rest is checked when it is read).
  static CopyInfo IndexHeaderInfo(const Result<Bytes>& bytes) {
    CopyInfo info;
    if (!bytes.ok()) {
      info.state = StateOf(bytes.status());
      info.why = bytes.status();
      return info;
    }
    const Result<format::Prelude> prelude = format::ReadPrelude(*bytes);
    Result<format::Header> header =
        prelude.ok() ? format::ReadHeader(*bytes) : Result<format::Header>(prelude.status());
    if (header.ok() && !header->slot_name.empty()) {
      header = DamagedError(fmt::format("header: holds slot \"{}\"", header->slot_name));
    }
    if (!header.ok()) {
      info.state = StateOf(header.status());
      info.why = header.status();
      return info;
    }
    info.state = CopyState::kValid;
    info.sequence = header->sequence;
    info.size = prelude->file_size;  // `bytes` may be the first bytes only
    return info;
  }

  // Reads two files at once and waits for both: the backend may run them side by side, or back to
  // back without waking this thread in between.
  void ReadBothNow(const FileName& first, const FileName& second,
                   std::optional<Result<Bytes>> (&out)[2]) {
    struct Wait {
      std::mutex mutex;
      std::condition_variable cv;
      int left = 2;
    } wait;
    auto reader = [&wait, &out](int i) {
      return [&wait, &out, i](Result<Bytes> r) {
        std::lock_guard lock(wait.mutex);
        out[i].emplace(std::move(r));
        --wait.left;
        wait.cv.notify_one();
      };
    };
    // A read whose call throws answers StorageFailed (CallBackend), so both always answer.
    const auto read = [this](const FileName& name) {
      return [this, &name](BytesCallback answer) {
        backend_.ReadPrefix(name, kMaxReadBytes, std::move(answer));
      };
    };
    CallBackend<Result<Bytes>>(read(first), reader(0));
    try {
      CallBackend<Result<Bytes>>(read(second), reader(1));
    } catch (...) {
      // The second read could not be asked (an allocation of the store's own failed). The first
      // read's callback refers to this frame: it answers before the frame is gone.
      std::unique_lock lock(wait.mutex);
      wait.cv.wait(lock, [&wait] { return wait.left <= 1; });
      throw;
    }
    std::unique_lock lock(wait.mutex);
    wait.cv.wait(lock, [&wait] { return wait.left == 0; });
  }

  // The header of slot copy `name` from its first bytes only, and (`size`) the file size its
  // prelude records. Damaged when the header names no slot, or a slot whose copy is not `name`
  // (a file renamed or copied by hand: it is not that slot's save), as CheckCopy refuses it.
  Result<format::Header> ReadSlotHeader(const FileName& name, std::uint64_t* size) {
    ROLLY_ASSIGN_OR_RETURN(Bytes prelude, ReadPrefixNow(backend_, name, format::kPreludeSize));
    ROLLY_ASSIGN_OR_RETURN(const format::Prelude p, format::ReadPrelude(prelude));
    ROLLY_ASSIGN_OR_RETURN(Bytes head, ReadPrefixNow(backend_, name, p.header_end()));
    ROLLY_ASSIGN_OR_RETURN(format::Header h, format::ReadHeader(head));
    const Result<FileName> own = FileName::ForSlot(options_.prefix, h.slot_name, name.copy());
    if (h.slot_name.empty() || !own.ok() || !(*own == name)) {
      return DamagedError(fmt::format("header: holds slot \"{}\"", h.slot_name));
    }
    *size = p.file_size;
    return h;
  }

  // Rebuilds the index from the saves' headers (prelude and header of each copy only). A copy
  // that cannot be read fails the rebuild with its status (StorageFailed, SignedOut).
  Result<std::map<std::string, SlotInfo>> RebuildIndex() {
    std::map<std::string, SlotInfo> out;
    if (!backend_.can_list()) return out;
    ROLLY_ASSIGN_OR_RETURN(const std::vector<FileName> names, ListNow(backend_));
    for (const FileName& name : names) {
      if (name.kind() != FileKind::kSlot || name.prefix() != options_.prefix ||
          name.copy() != Copy::kA) {
        continue;
      }
      struct Seen {
        CopyState state = CopyState::kMissing;
        format::Header header;
        std::uint64_t size = 0;
      } seen[2];
      const FileName both[2] = {name, name.Other()};
      for (int i = 0; i < 2; ++i) {
        Result<format::Header> h = ReadSlotHeader(both[i], &seen[i].size);
        // A copy that could not be read may hold the slot's newest save: a rebuild without it
        // would list the slot wrongly, or not at all, and be kept. It fails instead, keeping
        // nothing, and the next listing tries again.
        if (StateOf(h.status()) == CopyState::kFailed) return h.status();
        seen[i].state = StateOf(h.status());
        if (h.ok()) seen[i].header = std::move(h).value();
      }
      Copies c;
      c.a.state = seen[0].state;
      c.a.sequence = seen[0].header.sequence;
      c.b.state = seen[1].state;
      c.b.sequence = seen[1].header.sequence;
      const std::optional<Copy> newest = c.Newest();
      if (!newest) continue;
      const auto& chosen = seen[static_cast<int>(*newest)];
      if (chosen.header.slot_name.empty()) continue;
      out[chosen.header.slot_name] =
          SlotInfoOf(chosen.header.slot_name, chosen.header, c, *newest, chosen.size);
    }
    // Files listed only as copy b.
    for (const FileName& name : names) {
      if (name.kind() != FileKind::kSlot || name.prefix() != options_.prefix ||
          name.copy() != Copy::kB ||
          std::find(names.begin(), names.end(), name.Other()) != names.end()) {
        continue;
      }
      std::uint64_t size = 0;
      Result<format::Header> h = ReadSlotHeader(name, &size);
      if (StateOf(h.status()) == CopyState::kFailed) return h.status();
      if (!h.ok()) continue;
      Copies c;
      c.b = CopyInfo{CopyState::kValid, h->sequence, size, Status()};
      out[h->slot_name] = SlotInfoOf(h->slot_name, *h, c, Copy::kB, size);
    }
    if (out.size() > store_internal::kMaxIndexedSlots) {
      return store_internal::TooManySlots(out.size());
    }
    return out;
  }

  // Writes the index with the changes noted so far, at the index queue's turn (on a worker, or on
  // any thread when IndexWriteIsQuick). The backend's completion records the copy written,
  // replies and ends the turn.
  void StartIndexWrite(FileQueue::Finished finished) {
    {
      std::lock_guard lock(mutex_);
      index_write_queued_ = false;
    }
    Copy target = Copy::kA;
    std::uint64_t sequence = 0;
    Result<Bytes> bytes = PlanIndexWrite(&target, &sequence);
    if (!bytes.ok()) {
      Reply(std::function<void(Status)>(), bytes.status());
      Finish(finished);
      return;
    }
    const FileName a = *FileName::ForIndex(options_.prefix, Copy::kA);
    const std::uint64_t size = bytes->size();
    auto self = shared_from_this();
    // A write that throws answers StorageFailed: the target copy stays damaged, as after any
    // failed write, and the next index write goes to it again.
    CallBackend<Status>(
        [&](StatusCallback answer) {
          backend_.Write(target == Copy::kA ? a : a.Other(), std::move(bytes).value(),
                         std::move(answer));
        },
        [self, target, sequence, size, finished = std::move(finished)](Status written) mutable {
          if (written.ok()) {
            IndexState& index = self->Index();
            std::lock_guard index_lock(index.mutex);
            index.copies.Of(target) = CopyInfo{CopyState::kValid, sequence, size, Status()};
          }
          self->Reply(std::function<void(Status)>(), std::move(written));
          self->Finish(finished);
        });
  }

  // The index file to write, with every change noted so far, and the copy it goes to (counted as
  // damaged until the write is done) with its sequence.
  Result<Bytes> PlanIndexWrite(Copy* target, std::uint64_t* sequence) {
    ROLLY_ASSIGN_OR_RETURN(const FileName a, FileName::ForIndex(options_.prefix, Copy::kA));
    IndexState& index = Index();
    std::lock_guard index_lock(index.mutex);
    ROLLY_RETURN_IF_ERROR(*UpdateIndex(index, nullptr, true));
    Copies& known = index.copies;
    if (!known.known) {
      known.known = true;
      known.a = CheckCopy(backend_, a, "", read_options_).info;
      known.b = CheckCopy(backend_, a.Other(), "", read_options_).info;
    }
    format::File file;
    file.header.kind = static_cast<std::uint32_t>(format::SaveKind::kIndex);
    const std::optional<Copy> newest = known.Newest();
    file.header.sequence = newest ? known.Of(*newest).sequence + 1 : 1;
    file.chunks.emplace_back(format::kSlotIndexChunk, "", Bytes(*index.sidx));
    // Stored, never compressed: a listing then reads it without decompressing anything.
    format::WriteOptions write = options_.write;
    write.compress = false;
    ROLLY_ASSIGN_OR_RETURN(Bytes bytes, format::Write(file, write));
    *target = newest ? OtherCopy(*newest) : Copy::kA;
    *sequence = file.header.sequence;
    known.Of(*target) = CopyInfo{CopyState::kDamaged, 0, 0, Status()};
    return bytes;
  }

  Backend& backend_;
  WorkerPool& workers_;
  Mailbox& mailbox_;
  const StoreOptions options_;
  // How copies are checked and read: the game's chunk IDs known (options_.known_chunks), stored
  // bytes not kept.
  format::ReadOptions read_options_;

 private:
  std::atomic<std::size_t> pending_{0};
  std::atomic<bool> closed_{false};

  std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t in_flight_ = 0;
  std::map<std::string, std::shared_ptr<FileQueue>> queues_;
  std::map<std::string, std::optional<SlotInfo>> index_changes_;
  bool index_write_queued_ = false;
};

SlotInfo::SlotInfo(const SlotView& view)
    : slot(view.slot),
      title(view.title),
      save_time_us(view.save_time_us),
      sequence(view.sequence),
      kind(view.kind),
      game_data_version(view.game_data_version),
      metadata(view.metadata.begin(), view.metadata.end()),
      size(view.size),
      copy(view.copy),
      state_a(view.state_a),
      state_b(view.state_b),
      recovered(view.recovered),
      metadata_listed(view.metadata_listed) {}

const SlotView* SlotList::Find(std::string_view slot) const {
  const auto before = [](const SlotView& s, std::string_view name) { return s.slot < name; };
  const auto it = std::lower_bound(slots_.begin(), slots_.end(), slot, before);
  return it != slots_.end() && it->slot == slot ? &*it : nullptr;
}

Store::Store(Backend& backend, WorkerPool& workers, Mailbox& mailbox, StoreOptions options)
    : impl_(std::make_shared<Impl>(backend, workers, mailbox, std::move(options))) {}

Store::~Store() { impl_->Close(); }

const StoreOptions& Store::options() const { return impl_->options(); }

std::size_t Store::pending() const { return impl_->pending(); }

void Store::Save(std::string_view slot, format::File file, SaveCallback done) {
  auto given = std::make_shared<format::File>(std::move(file));
  Save(
      slot, [given]() -> Result<format::File> { return std::move(*given); }, std::move(done));
}

void Store::Save(std::string_view slot, FileMaker make, SaveCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, Copy::kA);
  if (!name.ok()) {
    impl_->Refuse(std::move(done), Result<SaveInfo>(name.status()));
    request.HandedOn();
    return;
  }
  auto job = std::make_shared<SaveJob>(std::string(slot), *name);
  auto self = impl_;
  // The encoding's task is made before the write is queued, so nothing after the queueing can
  // fail for want of memory but the post itself (below).
  std::function<void()> encode = [self, job, make = std::move(make)]() mutable {
    Result<format::File> file =
        make ? make() : Result<format::File>(InvalidInputError("no file to save"));
    make = nullptr;
    if (!file.ok()) {
      job->SetEncoded(file.status());
      return;
    }
    job->format_version = file->format_version;
    job->min_reader_version = file->min_reader_version;
    job->header = std::move(file->header);
    job->SetEncoded(format::EncodeChunks(std::move(file->chunks), self->options().write));
  };
  // The write is queued before the encoding is posted: when the slot's turn comes at once, the
  // worker that encodes then goes on to write (one hand-off), where the other order let a quick
  // worker finish before the turn was taken, and the turn then woke a second worker.
  self->EnqueueWrite(job, std::move(done));
  request.HandedOn();
  // The file is made and compressed now, before the slot's turn. The job's header and versions
  // are set before SetEncoded publishes the job (under its lock) to the turn that reads them.
  try {
    self->workers_.Post(std::move(encode));
  } catch (...) {
    // The write is queued and waits for the chunks: it fails instead of waiting for ever, and
    // its callback says so.
    job->SetEncoded(CancelledError("out of memory"));
  }
}

void Store::Load(std::string_view slot, LoadCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, Copy::kA);
  if (!name.ok()) {
    impl_->Refuse(std::move(done), Result<LoadResult>(name.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  self->RunInTurn(name->base(),
                  [self, name = *name, slot = std::string(slot), done = std::move(done)]() mutable {
                    self->Reply(std::move(done), self->LoadNewest(name, slot));
                  });
  request.HandedOn();
}

void Store::LoadCopy(std::string_view slot, Copy copy, LoadCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, copy);
  if (!name.ok()) {
    impl_->Refuse(std::move(done), Result<LoadResult>(name.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  self->RunInTurn(name->base(),
                  [self, name = *name, slot = std::string(slot), done = std::move(done)]() mutable {
                    self->Reply(std::move(done), self->LoadOne(name, slot));
                  });
  request.HandedOn();
}

void Store::ReadNewestHeader(std::string_view slot, HeaderCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, Copy::kA);
  if (!name.ok()) {
    impl_->Refuse(std::move(done), Result<format::Header>(name.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  self->RunInTurn(name->base(),
                  [self, name = *name, slot = std::string(slot), done = std::move(done)]() mutable {
                    self->Reply(std::move(done), self->NewestHeader(name, slot));
                  });
  request.HandedOn();
}

void Store::Delete(std::string_view slot, std::function<void(Status)> done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, Copy::kA);
  if (!name.ok()) {
    impl_->Refuse(std::move(done), name.status());
    request.HandedOn();
    return;
  }
  auto self = impl_;
  self->RunInTurn(name->base(),
                  [self, name = *name, slot = std::string(slot), done = std::move(done)]() mutable {
                    self->Reply(std::move(done), self->DeleteBoth(name, slot));
                  });
  request.HandedOn();
}

void Store::CopySlot(std::string_view from, std::string_view to, SaveCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  Result<FileName> from_name = FileName::ForSlot(impl_->options().prefix, from, Copy::kA);
  Result<FileName> to_name = FileName::ForSlot(impl_->options().prefix, to, Copy::kA);
  if (!from_name.ok() || !to_name.ok()) {
    impl_->Refuse(std::move(done),
                 Result<SaveInfo>(from_name.ok() ? to_name.status() : from_name.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  auto job = std::make_shared<SaveJob>(std::string(to), *to_name);
  // The read runs at `from`'s turn and hands the chunks over; the write waits at `to`'s turn.
  // Each ends as a piece of work.
  Impl::Counted read(*self, Impl::Counted::kPiece);
  self->RunInTurn(from_name->base(), [self, job, name = *from_name, slot = std::string(from)] {
    Result<LoadResult> loaded = self->LoadNewest(name, slot);
    if (!loaded.ok()) {
      job->SetEncoded(loaded.status());
      return;
    }
    job->format_version = loaded->file.format_version;
    job->min_reader_version = loaded->file.min_reader_version;
    job->header = std::move(loaded->file.header);
    job->SetEncoded(format::EncodeChunks(std::move(loaded->file.chunks), self->options().write));
  });
  read.HandedOn();
  // If the write cannot be queued, the read (queued already) still runs and ends its piece.
  self->EnqueueWrite(job, std::move(done));
  request.HandedOn();
}

void Store::ListSlots(ListCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  Result<FileName> index = FileName::ForIndex(impl_->options().prefix, Copy::kA);
  if (!index.ok()) {
    impl_->Refuse(std::move(done), Result<SlotList>(index.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  const std::thread::id asker = std::this_thread::get_id();
  self->QueueOf(index->base())
      ->Enqueue([self, done = std::move(done), asker](FileQueue::Finished finished) mutable {
        self->StartList(std::move(done), asker, std::move(finished));
      });
  request.HandedOn();
}

Status Store::Flush(Mailbox::Clock::time_point deadline) {
  Impl& impl = *impl_;
  Mailbox& mailbox = impl.mailbox_;
  for (;;) {
    mailbox.Drain();
    const std::size_t left = impl.pending();
    if (left == 0) return OkStatus();
    const Mailbox::Clock::time_point now = Mailbox::Clock::now();
    if (now >= deadline) break;
    // Poll a moment before sleeping: a sleeping thread can take tens of microseconds to wake (an
    // idle CPU of a virtual machine took ~40), and what a flush waits for often comes in quick
    // succession (a save's reply, then its index write's).
    const Mailbox::Clock::time_point poll_end = std::min(deadline, now + kFlushPoll);
    while (mailbox.pending() == 0 && Mailbox::Clock::now() < poll_end) std::this_thread::yield();
    if (mailbox.pending() > 0) continue;
    // Asleep until one of this store's operations has called back (or the deadline), then poll
    // again.
    mailbox.DrainUntil([&impl, left] { return impl.pending() < left; }, deadline);
  }
  return BusyError(fmt::format("{} operations still running at the flush's deadline",
                               impl.pending()));
}

}  // namespace rolly::store
