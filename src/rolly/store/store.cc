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
#include <type_traits>
#include <utility>

#include "rolly/core/side_task.h"
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

// A backend call that must answer whatever happens: the store calls from workers and backend
// threads, where an exception has no caller to reach and ends the process, and an operation left
// unanswered would hold its queue, every flush and the store's closing for ever. Made in two
// steps: constructing it allocates everything it needs (an allocation failing throws there,
// before anything is asked), then Make asks the backend. `answer` runs once: with the backend's
// answer, or, when the call throws before the backend answered (std::bad_alloc inside the
// backend, or a game's backend that throws), inside Make with StorageFailed, as a failed call.
template <typename T>
class BackendCall {
 public:
  explicit BackendCall(std::function<void(T)> answer) : once_(std::make_shared<Once>()) {
    once_->answer = std::move(answer);
    callback_ = [once = once_](T value) {
      if (once->claimed.exchange(true)) return;
      try {
        once->answer(std::move(value));
      } catch (...) {
        once->answer_threw_on.store(std::this_thread::get_id());
        throw;
      }
    };
  }

  // `call` hands the backend the callback it is given. False when the call threw. Call once. A
  // backend that answers at once runs `answer` inside the call: what `answer` throws then is the
  // store's own failure, not the backend's, and goes on.
  template <typename Call>
  bool Make(Call call) {
    try {
      call(std::move(callback_));
      return true;
    } catch (...) {
      if (once_->answer_threw_on.load() == std::this_thread::get_id()) throw;
      Status threw = store_internal::ThrownCallStatus();
      // Already claimed: the backend answered before it threw, and that answer stands.
      if (!once_->claimed.exchange(true)) once_->answer(T(std::move(threw)));
      return false;
    }
  }

 private:
  struct Once {
    std::function<void(T)> answer;
    std::atomic<bool> claimed{false};
    std::atomic<std::thread::id> answer_threw_on{};
  };
  std::shared_ptr<Once> once_;
  std::function<void(T)> callback_;
};

// StorageFailed for the store's own work that threw (call only inside a catch block).
Status WorkThrew() { return store_internal::ThrownStatus("the store's work"); }

// What `work` returns, or, when it throws, StorageFailed naming the exception: for the store's
// own work on workers and backends' threads (an allocation failing there), where an exception has
// no caller to reach. When even that status cannot be made (memory is that short), the second
// exception goes on.
template <typename T, typename Work>
T Guarded(Work&& work) {
  return store_internal::AnswerOf<T>("the store's work", std::forward<Work>(work));
}

// What an operation's callback gets, handed from the thread that ends the operation to the game
// thread.
template <typename T>
struct Reply {
  std::function<void(T)> done;
  std::optional<T> result;
};

// One operation from its request to its callback, shared by every step of it. Made when the
// operation is asked (Store::Impl::Ask), with the mailbox step that will run its callback: the
// thread that ends the operation then only fills in the result and posts the step, and a step
// that cannot be taken (an allocation failing on a worker or a backend's thread) still finds what
// ends the operation, never a part of it moved into the step that failed.
template <typename T>
struct Operation {
  std::shared_ptr<Reply<T>> reply;
  // Runs the callback on the game thread, its place in the mailbox made ahead (posting it cannot
  // fail); empty once posted.
  Mailbox::Made step;
  // Ends the operation's turn on its queue, set when the turn comes (saves, listings and index
  // writes; the other operations run through RunInTurn, which keeps it itself).
  FileQueue::Finished finished;
};

// A copy read and checked: what it is, and its bytes and header when valid.
struct CheckedCopy {
  CopyInfo info;
  Bytes bytes;
  // What verifying `bytes` found (a valid copy), so that reading them checks nothing again. It
  // views `bytes`, whose buffer stays where it is when the copy is moved. A load's Read takes
  // the buffer over (its largest chunk left encoded keeps it instead of a copy); neither is used
  // again after that.
  std::optional<format::VerifiedBytes> verified;
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
  Result<format::VerifiedBytes> verified = format::VerifyForRead(*bytes, options);
  if (verified.ok() && verified->header().slot_name != slot) {
    verified = DamagedError(fmt::format("header: holds slot \"{}\"", verified->header().slot_name));
  }
  if (!verified.ok()) {
    c.info.state = StateOf(verified.status());
    c.info.why = verified.status();
    return c;
  }
  c.info.state = CopyState::kValid;
  c.info.sequence = verified->header().sequence;
  c.verified = std::move(verified).value();
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

// The status of the first copy that could not be read, or null when both were. Such a copy may
// hold the newest save, so no operation takes the other in its place (a load, a header read, a
// save choosing its target, a delete).
const Status* Unreadable(const Copies& c) {
  for (const CopyInfo* i : {&c.a, &c.b}) {
    if (i->state == CopyState::kFailed) return &i->why;
  }
  return nullptr;
}

// The status of a load that found no usable copy.
Status NoCopyStatus(const Copies& c) {
  const CopyInfo* infos[] = {&c.a, &c.b};
  if (c.a.state == CopyState::kMissing && c.b.state == CopyState::kMissing) {
    return NotFoundError("neither copy exists");
  }
  if (const Status* why = Unreadable(c)) return *why;
  const std::string detail =
      fmt::format("copy a {}{}{}; copy b {}{}{}", CopyStateName(c.a.state),
                  c.a.why.ok() ? "" : ": ", c.a.why.message(), CopyStateName(c.b.state),
                  c.b.why.ok() ? "" : ": ", c.b.why.message());
  for (const CopyInfo* i : infos) {
    if (i->state == CopyState::kNewer) return NewerVersionError(detail);
  }
  return DamagedError(detail);
}

// A save waiting for its chunks to be encoded and for its turn. The write starts once both have
// come, on the thread of the one that came last.
struct SaveJob {
  std::string slot;
  FileName name;  // copy a
  std::shared_ptr<Operation<Result<SaveInfo>>> op;
  std::uint16_t format_version = format::kFormatVersion;
  std::uint16_t min_reader_version = format::kMinReaderVersion;
  format::Header header;
  // Why the file could not be sealed once its write was asked (StartSave), which fails the save;
  // made ahead (PrepareSave, before the write is asked), as sealing fails only for want of memory.
  Status unsealed;
  Status seal_failed;

  std::mutex mutex;
  std::optional<Result<format::EncodedChunks>> encoded;
  bool turn_waits = false;  // the turn came first, and waits for the chunks

  SaveJob(std::string s, FileName n, std::shared_ptr<Operation<Result<SaveInfo>>> o)
      : slot(std::move(s)), name(std::move(n)), op(std::move(o)) {}

  // Sets the chunks, or the status of their failure (any thread). True when the turn came first:
  // the caller then starts the write, on its own thread.
  bool SetEncoded(Result<format::EncodedChunks> r) {
    std::lock_guard lock(mutex);
    encoded.emplace(std::move(r));
    return turn_waits;
  }
  // At the write's turn, once op->finished is set: true when the chunks are in, and the caller
  // starts the write; else SetEncoded's caller will.
  bool TurnCame() {
    std::lock_guard lock(mutex);
    turn_waits = !encoded;
    return !turn_waits;
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

  // The operation for a request's callback `done`, its step made ready (see Operation). Throws when
  // an allocation fails: a request then throws before it is handed on (no request was made).
  template <typename T>
  std::shared_ptr<Operation<T>> Ask(std::function<void(T)> done) {
    auto op = std::make_shared<Operation<T>>();
    op->reply = std::make_shared<Reply<T>>();
    op->reply->done = std::move(done);
    op->step = Mailbox::Made([weak = weak_from_this(), reply = op->reply] {
      // The callback and its result are let go of here, on the game thread, run or not.
      std::function<void(T)> callback = std::move(reply->done);
      std::optional<T> result = std::move(reply->result);
      std::shared_ptr<Impl> self = weak.lock();
      if (!self || self->closed_.load()) return;
      self->pending_.fetch_sub(1);
      if (callback) callback(std::move(*result));
    });
    return op;
  }

  // Posts `value` for the operation's callback (any thread; never throws); the operation ends
  // on the game thread when it runs. The step was made when the operation was asked, so posting
  // it allocates nothing. Only the first answer counts: a second finds the step posted.
  template <typename T>
  void Answer(Operation<T>& op, T value) {
    if (!op.step) return;
    op.reply->result.emplace(std::move(value));
    mailbox_.Post(std::move(op.step));
  }

  // Answers a queued operation and ends its turn (any thread; never throws).
  template <typename T>
  void Complete(Operation<T>& op, T value, FileQueue::Finished& finished) {
    Answer(op, std::move(value));
    Finish(finished);
  }

  // Completes a queued operation with StorageFailed naming the exception being handled (call only
  // inside a catch block): a step of the store's own that could not be taken (an allocation
  // failing). When even that status cannot be made, the second exception goes on.
  template <typename T>
  void CompleteThrown(Operation<T>& op, FileQueue::Finished& finished) {
    Complete(op, T(WorkThrew()), finished);
  }

  // The operation's work is done: its reply is posted and its queue has moved on.
  void End() {
    std::lock_guard lock(mutex_);
    if (--in_flight_ == 0) idle_.notify_all();
  }

  // Replies to an operation refused before it reached a queue (on the game thread, inside the
  // request).
  template <typename T>
  void Refuse(Operation<T>& op, T value) {
    op.reply->result.emplace(std::move(value));
    mailbox_.Post(std::move(op.step));
    End();
  }

  // Ends a queued operation on its worker: posts nothing itself; lets its queue move on and lets
  // go of it (so a closed store holds no queue, and no knowledge of the files, any more).
  void Finish(FileQueue::Finished& finished) {
    // Let go of before it runs: should what it starts throw into a catch that finishes this
    // operation again, that finds nothing to run.
    if (!finished) return;
    FileQueue::Finished f = std::exchange(finished, nullptr);
    struct Ends {
      Impl& impl;
      ~Ends() { impl.End(); }
    } ends{*this};
    f();
  }

  // Blocks until every operation has done its work (its reply may still wait in the mailbox),
  // then stops replies from reaching callbacks and lets go of the queues.
  void Close() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return in_flight_ == 0; });
    closed_.store(true);
    queues_.clear();
  }

  // The queue of file `base`. Finding one already known allocates nothing.
  std::shared_ptr<FileQueue> QueueOf(std::string_view base) {
    std::lock_guard lock(mutex_);
    auto it = queues_.find(base);
    if (it != queues_.end()) return it->second;
    auto queue = store_internal::QueueFor(backend_.instance_id(), base);
    queues_.emplace(std::string(base), queue);
    return queue;
  }

  // Queues `work` on `base`'s queue. At its turn `work` runs on a worker, where it may block on
  // the backend; `deliver` gets what it returns, and the turn ends. When no worker can be had at
  // the turn, or `work` throws (an allocation failing), `deliver` gets StorageFailed naming it
  // instead. `deliver` must not throw, and must be quick then: it runs on whichever thread moved
  // the queue on, a backend's maybe. Everything the turn needs is made here, so a failure at the
  // turn still finds `deliver` and the turn's end.
  template <typename Work, typename Deliver>
  void RunInTurn(std::string_view base, Work work, Deliver deliver) {
    using T = std::invoke_result_t<Work&>;
    struct Turn {
      Work work;
      Deliver deliver;
      FileQueue::Finished finished;
    };
    auto turn = std::make_shared<Turn>(Turn{std::move(work), std::move(deliver), nullptr});
    auto self = shared_from_this();
    QueueOf(base)->Enqueue([self, turn](FileQueue::Finished finished) {
      turn->finished = std::move(finished);
      try {
        self->workers_.Post([self, turn] {
          turn->deliver(Guarded<T>(turn->work));
          self->Finish(turn->finished);
        });
      } catch (...) {
        turn->deliver(T(WorkThrew()));
        self->Finish(turn->finished);
      }
    });
  }
  // RunInTurn for an operation that answers what `work` returns.
  template <typename T, typename Work>
  void AnswerInTurn(std::string_view base, std::shared_ptr<Operation<T>> op, Work work) {
    auto self = shared_from_this();
    RunInTurn(base, std::move(work), [self, op](T value) { self->Answer(*op, std::move(value)); });
  }
  // Queues the write of `job` on its slot's queue. At its turn, once the chunks are encoded, a
  // worker lays the file out (the worker that encoded them, when the turn came first) and hands it
  // to the backend; the backend's completion replies and moves the queue on, so no thread waits
  // for the write and no worker wakes between the write and the reply.
  void EnqueueWrite(const std::shared_ptr<SaveJob>& job) {
    auto self = shared_from_this();
    QueueOf(job->name.base())->Enqueue([self, job](FileQueue::Finished finished) {
      job->op->finished = std::move(finished);
      if (!job->TurnCame()) return;  // the encoding starts the write
      try {
        self->workers_.Post([self, job] { self->StartSave(job); });
      } catch (...) {
        // Nothing is written, and nothing of the copies was touched.
        self->CompleteThrown(*job->op, job->op->finished);
      }
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

  // Makes the save's file with `make` and encodes its chunks (on a worker, as soon as the save is
  // asked for). What `make` throws fails the save with StorageFailed naming it, as does what the
  // store's own work throws here (an allocation failing): nothing is written then.
  Result<format::EncodedChunks> MakeAndEncode(SaveJob& job, Store::FileMaker& make) {
    return Guarded<Result<format::EncodedChunks>>([&]() -> Result<format::EncodedChunks> {
      if (!make) return InvalidInputError("no file to save");
      std::optional<Result<format::File>> file;
      try {
        file.emplace(make());
      } catch (...) {
        file.emplace(store_internal::ThrownStatus("the file maker"));
      }
      make = nullptr;  // what it holds is let go of before the chunks are encoded
      if (!file->ok()) return file->status();
      job.format_version = (*file)->format_version;
      job.min_reader_version = (*file)->min_reader_version;
      job.header = std::move((*file)->header);
      return format::EncodeChunks(std::move((*file)->chunks), options_.write);
    });
  }

  // Chooses the copy to write and lays the file out as pieces, unsealed (worker only; may read both
  // copies).
  Result<PlannedSave> PlanSave(SaveJob& job, format::FilePieces* pieces_out) {
    if (!job.encoded->ok()) return job.encoded->status();
    Copies c = KnownCopies(job.name, job.slot);
    // A copy that could not be read may hold the newest save, or a sequence above the other's:
    // writing either copy could cost the last good save or hide this one behind an older one.
    if (const Status* why = Unreadable(c)) return *why;
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
    return PlannedSave{std::move(c), target, sequence, size};
  }

  // A save's write, ready to be asked for: the file's first piece (its front, set once the
  // checksums are computed) and the rest, and the call with its completion.
  struct SaveWrite {
    std::optional<FileName> target;
    Bytes first;
    std::vector<Bytes> pieces;
    std::vector<ByteView> rest;  // views of `pieces`, which the backend keeps until the front
    std::vector<format::LateChecksum> late_checksums;
    std::shared_ptr<LateFront> front;
    std::optional<BackendCall<Status>> call;
  };

  // Plans a save and makes everything its write needs (worker only). The copy to write is counted
  // damaged last: until then, what fails (an allocation) has written nothing and changed nothing.
  Status PrepareSave(const std::shared_ptr<SaveJob>& job, std::optional<SaveWrite>* out) {
    format::FilePieces laid_out;
    job->seal_failed =
        StorageFailedError("the store's work threw: the save's checksums could not be computed");
    ROLLY_ASSIGN_OR_RETURN(PlannedSave plan, PlanSave(*job, &laid_out));
    SaveWrite& w = out->emplace();
    w.target = job->name.copy() == plan.target ? job->name : job->name.Other();
    // The chunks' bytes go to the backend at once, and the checksums (each chunk's, then the
    // directory's and the file's) are computed while the backend writes them; the first piece
    // follows. The backend keeps the chunks' bytes until it has the first piece, and answers
    // after.
    w.first = std::move(laid_out.pieces.front());
    laid_out.pieces.erase(laid_out.pieces.begin());
    w.pieces = std::move(laid_out.pieces);
    w.rest.assign(w.pieces.begin(), w.pieces.end());
    w.late_checksums = std::move(laid_out.late_checksums);
    w.front = std::make_shared<LateFront>(w.first.size());
    // Until the backend answers, the target counts as damaged.
    plan.copies.Of(plan.target) =
        CopyInfo{CopyState::kDamaged, 0, 0, DamagedError("a save to it did not finish")};
    Copies marked = plan.copies;
    auto self = shared_from_this();
    w.call.emplace([self, job, plan = std::move(plan)](Status written) mutable {
      std::shared_ptr<Operation<Status>> index_write;
      Result<SaveInfo> info =
          self->FinishSave(*job, std::move(plan), std::move(written), &index_write);
      // The reply first: the index write's layout, which may run right here, need not hold it
      // up. The change is noted and the write counted already, so a listing or a flush asked
      // from the callback sees both.
      self->Answer(*job->op, std::move(info));
      if (index_write) self->EnqueueIndexWrite(std::move(index_write));
      self->Finish(job->op->finished);
    });
    SetCopies(job->name, std::move(marked));  // throws only before it changes anything
    return OkStatus();
  }

  // Runs a save at its turn: plans it, then writes it; the reply and the end of the turn come from
  // the backend's completion (quick: bookkeeping and a post to the mailbox). On a worker; or, for
  // a save whose chunks failed (it reads nothing), on the thread that learned of it last.
  void StartSave(const std::shared_ptr<SaveJob>& job) {
    std::optional<SaveWrite> write;
    Status ready = Guarded<Status>([&] { return PrepareSave(job, &write); });
    if (!ready.ok()) {
      Complete(*job->op, Result<SaveInfo>(std::move(ready)), job->op->finished);
      return;
    }
    SaveWrite& w = *write;
    const bool asked = w.call->Make([&](StatusCallback answer) {
      backend_.Write(*w.target, w.front, std::move(w.pieces), std::move(answer));
    });
    // A write that threw has failed already, as any failed write, and started nothing (Backend's
    // contract). The backend may have let go of the chunks' bytes, so the file is not sealed; the
    // front is set all the same, unsealed, so that nothing is left waiting on it.
    if (asked) {
      try {
        format::SealFilePieces(w.first, w.rest, w.late_checksums);
      } catch (...) {
        // Sealing allocates (a chunk's checksum), and failed. The write is asked and waits for
        // its front: it gets one of zeros, which no reader takes, so the copy fails its checks
        // as a torn write's would, and the save fails (FinishSave) with the status made ahead.
        std::fill(w.first.begin(), w.first.end(), std::uint8_t{0});
        job->unsealed = std::move(job->seal_failed);
      }
    }
    w.front->Set(std::move(w.first));
  }

  // Records what the backend answered for a planned save (on the backend's thread; never
  // throws). `index_write` is set to the index write the caller must queue (EnqueueIndexWrite).
  Result<SaveInfo> FinishSave(SaveJob& job, PlannedSave plan, Status written,
                              std::shared_ptr<Operation<Status>>* index_write) {
    Copies& c = plan.copies;
    if (written.ok() && !job.unsealed.ok()) written = std::move(job.unsealed);
    if (!written.ok()) {
      // The copy may hold its old bytes, nothing valid, or (over a network) the new save: it is
      // unknown until read again, so the next operation reads both copies first (SetCopies
      // forgets what is known).
      c.Of(plan.target).state = CopyState::kFailed;
      SetCopies(job.name, std::move(c));
      return written;
    }
    c.Of(plan.target) = CopyInfo{CopyState::kValid, plan.sequence, plan.size, Status()};
    try {
      *index_write =
          NoteSlot(job.slot, SlotInfoOf(job.slot, job.header, c, plan.target, plan.size));
    } catch (...) {
      // The entry could not be made (an allocation failing): the save is durable all the same,
      // and the index lags it until the slot's next save or delete, as a cache may.
    }
    SetCopies(job.name, std::move(c));
    return SaveInfo{std::move(job.slot), plan.target, plan.sequence, plan.size};
  }

  // The newest valid copy of the slot. When the stores know both copies (an earlier load or save
  // of the slot read or wrote them), only the newest is read: it is checked in full as always,
  // and the other stays as known. Anything but that copy, valid, with the sequence known, and
  // decoding, means the knowledge no longer holds (a copy damaged or changed since, or a frame
  // that does not decode), and both copies are read as when nothing is known.
  Result<LoadResult> LoadNewest(const FileName& name, std::string_view slot,
                                const LoadOptions& options = {}) {
    const Copies known = GetCopies(name);
    if (const std::optional<Copy> newest = known.known ? known.Newest() : std::nullopt) {
      const FileName chosen_name = name.copy() == *newest ? name : name.Other();
      CheckedCopy chosen = CheckCopy(backend_, chosen_name, slot, read_options_);
      if (chosen.info.state == CopyState::kValid &&
          chosen.info.sequence == known.Of(*newest).sequence) {
        format::ReadOptions read = read_options_;
        read.leave_encoded_from = options.leave_encoded_from;
        Result<format::File> file =
            format::Read(*chosen.verified, std::move(chosen.bytes), read);
        if (file.ok()) return Loaded(known, *newest, std::move(file).value(), chosen.info.size);
      }
    }
    return LoadBoth(name, slot, options);
  }

  // What a load returns: `file`, of `taken`, whose size is `size`; the other copy as `c` has it.
  static LoadResult Loaded(const Copies& c, Copy taken, format::File file, std::uint64_t size) {
    const CopyInfo& other = c.Of(OtherCopy(taken));
    LoadResult result;
    result.file = std::move(file);
    result.copy = taken;
    result.size = size;
    result.other_state = other.state;
    result.other_status = other.why;
    result.recovered = other.state != CopyState::kValid && other.state != CopyState::kMissing;
    return result;
  }

  // LoadNewest reading and checking both copies, and noting what it found of them.
  Result<LoadResult> LoadBoth(const FileName& name, std::string_view slot,
                              const LoadOptions& options) {
    const FileName a = name.copy() == Copy::kA ? name : name.Other();
    // Copy B is read and verified on another worker meanwhile, when one is free (SideTask).
    CheckedCopy copies[2];
    {
      SideTask b([this](std::function<void()> task) { workers_.Post(std::move(task)); },
                 [&] { copies[1] = CheckCopy(backend_, a.Other(), slot, read_options_); });
      copies[0] = CheckCopy(backend_, a, slot, read_options_);
      b.Join();
    }
    Copies c;
    c.known = true;
    c.a = copies[0].info;
    c.b = copies[1].info;
    // A copy that could not be read may hold the newest save: the other may be older, and the
    // next save, made from it, would outrank the newer one. The load fails as a save does then
    // (PlanSave); LoadCopy reads one copy on purpose.
    if (const Status* unreadable = Unreadable(c)) {
      const Status why = *unreadable;
      SetCopies(name, c);
      return why;
    }
    // The newest valid copy first; a copy that fails to decode is damaged after all.
    for (int attempt = 0; attempt < 2; ++attempt) {
      const std::optional<Copy> newest = c.Newest();
      if (!newest) break;
      CheckedCopy& chosen = copies[static_cast<int>(*newest)];
      format::ReadOptions read = read_options_;
      read.leave_encoded_from = options.leave_encoded_from;
      // The copy's bytes go to the File (each copy is read at most once).
      Result<format::File> file = format::Read(*chosen.verified, std::move(chosen.bytes), read);
      if (!file.ok()) {
        c.Of(*newest).state = StateOf(file.status());
        c.Of(*newest).why = file.status();
        continue;
      }
      SetCopies(name, c);
      return Loaded(c, *newest, std::move(file).value(), chosen.info.size);
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
    ROLLY_ASSIGN_OR_RETURN(format::File file,
                           format::Read(*copy.verified, std::move(copy.bytes), read_options_));
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
    if (const Status* why = Unreadable(c)) return *why;
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
    if (const Status* why = Unreadable(known)) return *why;
    const std::optional<Copy> newest = known.Newest();
    const FileName first = name.copy() == newest ? name.Other() : name;
    // Whatever happens now, what was known is stale until both are gone.
    SetCopies(name, Copies());
    ROLLY_RETURN_IF_ERROR(DeleteNow(backend_, first));
    ROLLY_RETURN_IF_ERROR(DeleteNow(backend_, first.Other()));
    // Both are gone: the delete is done, whatever the bookkeeping below meets.
    try {
      Copies c;
      c.known = true;
      SetCopies(name, c);
      if (auto write = NoteSlot(std::string(slot), std::nullopt)) {
        EnqueueIndexWrite(std::move(write));
      }
    } catch (...) {
      // An allocation failed: the copies stay unknown (read again by the next operation), and the
      // index lags the delete until the slot's next save or delete, as a cache may.
    }
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

  // Records a slot's new entry (or its removal) for the index; throws (an allocation failing) only
  // before it records anything. When no index write is queued yet, one is counted as an
  // operation (so a flush waits for it) and returned: the caller must queue it with
  // EnqueueIndexWrite before its own operation ends. Otherwise (nullptr) the write already
  // queued takes this change too; so does the next one, when this one could not be counted.
  std::shared_ptr<Operation<Status>> NoteSlot(const std::string& slot,
                                              std::optional<SlotInfo> info) {
    {
      std::lock_guard lock(mutex_);
      index_changes_[slot] = std::move(info);
      if (!options_.keep_index || index_write_queued_) return nullptr;
      index_write_queued_ = true;
    }
    std::shared_ptr<Operation<Status>> write;
    try {
      write = Ask(std::function<void(Status)>());
    } catch (...) {
      std::lock_guard lock(mutex_);
      index_write_queued_ = false;
      return nullptr;
    }
    Begin();
    return write;
  }

  // Queues the index write NoteSlot counted. As RunInTurn, but the write's completion ends the
  // turn (no worker waits for it). When the index is known and small, its turn lays it out at
  // once, on the thread that moved the queue on (mostly the backend's, right after the save's
  // write): no worker is woken between a save's write and its index's. Otherwise a worker does,
  // which may have to read the index first. A write that cannot be queued (an allocation
  // failing) ends uncounted: the changes wait for the next one. Never throws, but when memory is
  // so short that a failure's status cannot be made (store.h).
  void EnqueueIndexWrite(std::shared_ptr<Operation<Status>> write) {
    auto self = shared_from_this();
    std::shared_ptr<std::atomic<bool>> started;
    try {
      started = std::make_shared<std::atomic<bool>>(false);
      QueueOf(FileName::ForIndex(options_.prefix, Copy::kA)->base())
          ->Enqueue([self, write, started](FileQueue::Finished finished) {
            started->store(true);
            write->finished = std::move(finished);
            try {
              if (self->IndexWriteIsQuick()) {
                self->StartIndexWrite(write);
                return;
              }
              self->workers_.Post([self, write] { self->StartIndexWrite(write); });
            } catch (...) {
              self->CompleteThrown(*write, write->finished);
            }
          });
    } catch (...) {
      // Started already: the queue ran it here, then another operation's start threw (only when
      // its failure's status could not be made either, memory that short), which goes on.
      if (started && started->load()) throw;
      {
        std::lock_guard lock(mutex_);
        index_write_queued_ = false;
      }
      Answer(*write, OkStatus());
      End();
    }
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
  // is large, or when anything more must be read (a damaged copy, a rebuild). Never throws: a
  // step that cannot be taken (an allocation failing) ends the listing with StorageFailed.
  void StartList(const std::shared_ptr<Operation<Result<SlotList>>>& op, std::thread::id asker) {
    auto self = shared_from_this();
    struct Pending {
      IndexReads reads;
      std::atomic<int> left{2};
    };
    // Lists on a worker, from the reads `pending` holds (nullptr: none made).
    const auto on_worker = [self, op](std::shared_ptr<Pending> pending) {
      return [self, op, pending] {
        Result<SlotList> listed = Guarded<Result<SlotList>>(
            [&] { return *self->CurrentIndex(pending ? &pending->reads : nullptr, true); });
        self->Complete(*op, std::move(listed), op->finished);
      };
    };
    std::shared_ptr<Pending> pending;
    std::optional<BackendCall<Result<Bytes>>> heads[2];
    std::optional<FileName> a, b;
    try {
      bool read = false;
      if (options_.keep_index) {
        IndexState& index = Index();
        std::lock_guard index_lock(index.mutex);
        read = !index.loaded;
      }
      if (!read) {
        workers_.Post(on_worker(nullptr));
        return;
      }
      pending = std::make_shared<Pending>();
      // Both copies are in (whole, or their first bytes when the newest was read whole).
      auto complete = [self, op, pending, asker, on_worker]() {
        try {
          std::size_t size = 0;
          for (const auto& r : pending->reads.bytes) {
            size = std::max(size, r->ok() ? (*r)->size() : 0);
          }
          if (std::this_thread::get_id() != asker && size <= kQuickIndexBytes) {
            std::optional<Result<SlotList>> listed = self->CurrentIndex(&pending->reads, false);
            if (listed) {
              self->Complete(*op, std::move(*listed), op->finished);
              return;
            }
          }
          self->workers_.Post(on_worker(pending));
        } catch (...) {
          self->CompleteThrown(*op, op->finished);
        }
      };
      a = *FileName::ForIndex(options_.prefix, Copy::kA);
      b = a->Other();
      auto head = [self, op, pending, a = *a, b = *b, complete](int i) {
        return [self, op, pending, a, b, complete, i](Result<Bytes> r) {
          IndexReads& reads = pending->reads;
          reads.whole[i] = !r.ok() || r->size() < kIndexHeadBytes;
          reads.bytes[i].emplace(std::move(r));
          if (pending->left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
          // Both first bytes are in (quick from here: two headers).
          int n = 0;
          std::optional<BackendCall<Result<Bytes>>> whole;
          try {
            std::optional<Copy> newest;
            if (!(reads.bytes[0]->ok() && NeedsMoreThan(**reads.bytes[0])) &&
                !(reads.bytes[1]->ok() && NeedsMoreThan(**reads.bytes[1]))) {
              Copies c;
              c.a = IndexHeaderInfo(*reads.bytes[0]);
              c.b = IndexHeaderInfo(*reads.bytes[1]);
              newest = c.Newest();
            }
            if (newest && !reads.whole[static_cast<int>(*newest)]) {
              n = static_cast<int>(*newest);
              whole.emplace([pending, complete, n](Result<Bytes> bytes) {
                pending->reads.bytes[n].emplace(std::move(bytes));
                pending->reads.whole[n] = true;
                complete();
              });
            }
          } catch (...) {
            self->CompleteThrown(*op, op->finished);
            return;
          }
          if (!whole) {
            complete();
            return;
          }
          // On the backend's thread: a call that throws answers StorageFailed (BackendCall).
          whole->Make([&](BytesCallback answer) {
            self->backend_.ReadPrefix(n == 0 ? a : b, kMaxReadBytes, std::move(answer));
          });
        };
      };
      for (int i = 0; i < 2; ++i) heads[i].emplace(head(i));
    } catch (...) {
      CompleteThrown(*op, op->finished);
      return;
    }
    // The turn may run on a worker or a backend's thread (the operation before it moved the
    // queue on): a read whose call throws answers StorageFailed, as one that failed.
    for (int i = 0; i < 2; ++i) {
      heads[i]->Make([&](BytesCallback answer) {
        backend_.ReadPrefix(i == 0 ? *a : *b, kIndexHeadBytes, std::move(answer));
      });
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
    // index.sidx was checked when read, or made by this code: the merge fails only when it would
    // list more slots than an index may, or throws when an allocation fails. The changes are then
    // kept for a later merge (a delete may bring the count back under the bound), newer ones
    // noted meanwhile first.
    const auto keep = [this, &changes] {
      std::lock_guard lock(mutex_);
      index_changes_.merge(changes);
    };
    Status s;
    try {
      Bytes merged;
      s = store_internal::MergeSlotIndex(*index.sidx, changes, &merged);
      if (s.ok()) index.sidx = std::make_shared<const Bytes>(std::move(merged));
    } catch (...) {
      keep();
      throw;
    }
    if (!s.ok()) keep();
    return s;
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
    // A read whose call throws answers StorageFailed (BackendCall), so both always answer. Both
    // calls are made ready first: once the first is asked, nothing of the store's own can fail
    // but making the second's status when its call throws.
    BackendCall<Result<Bytes>> calls[2] = {BackendCall<Result<Bytes>>(reader(0)),
                                           BackendCall<Result<Bytes>>(reader(1))};
    calls[0].Make([&](BytesCallback answer) {
      backend_.ReadPrefix(first, kMaxReadBytes, std::move(answer));
    });
    try {
      calls[1].Make([&](BytesCallback answer) {
        backend_.ReadPrefix(second, kMaxReadBytes, std::move(answer));
      });
    } catch (...) {
      // The second read's failure could not be made into a status (memory that short). The
      // first read's callback refers to this frame: it answers before the frame is gone.
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
  // any thread when IndexWriteIsQuick; never throws). The backend's completion records the copy
  // written, replies and ends the turn. A write that cannot be made ready (an allocation failing)
  // ends as a failed index write: the changes are in the index the store lists, and the next
  // index write writes them.
  void StartIndexWrite(const std::shared_ptr<Operation<Status>>& write) {
    {
      std::lock_guard lock(mutex_);
      index_write_queued_ = false;
    }
    Bytes bytes;
    std::optional<FileName> name;
    std::optional<BackendCall<Status>> call;
    Status ready = Guarded<Status>([&]() -> Status {
      Copy target = Copy::kA;
      std::uint64_t sequence = 0;
      ROLLY_ASSIGN_OR_RETURN(bytes, PlanIndexWrite(&target, &sequence));
      const FileName a = *FileName::ForIndex(options_.prefix, Copy::kA);
      name = target == Copy::kA ? a : a.Other();
      // Kept with the index's queue, which this turn holds until it ends.
      IndexState* index = &Index();
      const std::uint64_t size = bytes.size();
      auto self = shared_from_this();
      call.emplace([self, write, index, target, sequence, size](Status written) {
        if (written.ok()) {
          std::lock_guard index_lock(index->mutex);
          index->copies.Of(target) = CopyInfo{CopyState::kValid, sequence, size, Status()};
        }
        self->Complete(*write, std::move(written), write->finished);
      });
      return OkStatus();
    });
    if (!ready.ok()) {
      Complete(*write, std::move(ready), write->finished);
      return;
    }
    // A write that throws answers StorageFailed: the target copy stays damaged, as after any
    // failed write, and the next index write goes to it again.
    call->Make(
        [&](StatusCallback answer) { backend_.Write(*name, std::move(bytes), std::move(answer)); });
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
  std::map<std::string, std::shared_ptr<FileQueue>, std::less<>> queues_;
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
  auto op = impl_->Ask(std::move(done));
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, Copy::kA);
  if (!name.ok()) {
    impl_->Refuse(*op, Result<SaveInfo>(name.status()));
    request.HandedOn();
    return;
  }
  auto job = std::make_shared<SaveJob>(std::string(slot), *name, op);
  auto self = impl_;
  // The encoding's task is made before the write is queued, so nothing after the queueing can
  // fail for want of memory but the post itself (below). The job's header and versions are set
  // before SetEncoded publishes the job (under its lock) to the turn that reads them.
  std::function<void()> encode = [self, job, make = std::move(make)]() mutable {
    Result<format::EncodedChunks> encoded = self->MakeAndEncode(*job, make);
    make = nullptr;
    if (job->SetEncoded(std::move(encoded))) self->StartSave(job);
  };
  // Made ahead too: the answer should the post below fail.
  Status not_posted =
      StorageFailedError("the store's work threw: the encoding could not be handed to a worker");
  // The write is queued before the encoding is posted: when the slot's turn comes at once, the
  // worker that encodes then goes on to write (one hand-off), where the other order let a quick
  // worker finish before the turn was taken, and the turn then woke a second worker.
  self->EnqueueWrite(job);
  request.HandedOn();
  // The file is made and compressed now, before the slot's turn.
  try {
    self->workers_.Post(std::move(encode));
  } catch (...) {
    // The write is queued and waits for the chunks: it fails instead of waiting for ever, and
    // its callback says so (at once when the turn waits already: a failed save reads nothing).
    if (job->SetEncoded(std::move(not_posted))) self->StartSave(job);
  }
}

void Store::Load(std::string_view slot, LoadCallback done) {
  Load(slot, LoadOptions{}, std::move(done));
}

void Store::Load(std::string_view slot, const LoadOptions& options, LoadCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  auto op = impl_->Ask(std::move(done));
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, Copy::kA);
  if (!name.ok()) {
    impl_->Refuse(*op, Result<LoadResult>(name.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  self->AnswerInTurn(name->base(), op, [self, name = *name, slot = std::string(slot), options] {
    Result<LoadResult> read = self->LoadNewest(name, slot, options);
    if (!read.ok() || !options.on_read) return read;
    return store_internal::AnswerOf<Result<LoadResult>>("the load's on_read", [&] {
      options.on_read(*read);
      return std::move(read);
    });
  });
  request.HandedOn();
}

void Store::LoadCopy(std::string_view slot, Copy copy, LoadCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  auto op = impl_->Ask(std::move(done));
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, copy);
  if (!name.ok()) {
    impl_->Refuse(*op, Result<LoadResult>(name.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  self->AnswerInTurn(name->base(), op, [self, name = *name, slot = std::string(slot)] {
    return self->LoadOne(name, slot);
  });
  request.HandedOn();
}

void Store::ReadNewestHeader(std::string_view slot, HeaderCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  auto op = impl_->Ask(std::move(done));
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, Copy::kA);
  if (!name.ok()) {
    impl_->Refuse(*op, Result<format::Header>(name.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  self->AnswerInTurn(name->base(), op, [self, name = *name, slot = std::string(slot)] {
    return self->NewestHeader(name, slot);
  });
  request.HandedOn();
}

void Store::Delete(std::string_view slot, std::function<void(Status)> done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  auto op = impl_->Ask(std::move(done));
  Result<FileName> name = FileName::ForSlot(impl_->options().prefix, slot, Copy::kA);
  if (!name.ok()) {
    impl_->Refuse(*op, name.status());
    request.HandedOn();
    return;
  }
  auto self = impl_;
  self->AnswerInTurn(name->base(), op, [self, name = *name, slot = std::string(slot)] {
    return self->DeleteBoth(name, slot);
  });
  request.HandedOn();
}

void Store::CopySlot(std::string_view from, std::string_view to, SaveCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  auto op = impl_->Ask(std::move(done));
  Result<FileName> from_name = FileName::ForSlot(impl_->options().prefix, from, Copy::kA);
  Result<FileName> to_name = FileName::ForSlot(impl_->options().prefix, to, Copy::kA);
  if (!from_name.ok() || !to_name.ok()) {
    impl_->Refuse(*op, Result<SaveInfo>(from_name.ok() ? to_name.status() : from_name.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  auto job = std::make_shared<SaveJob>(std::string(to), *to_name, op);
  // The read runs at `from`'s turn and hands the chunks over; the write waits at `to`'s turn.
  // Each ends as a piece of work.
  Impl::Counted read(*self, Impl::Counted::kPiece);
  self->RunInTurn(
      from_name->base(),
      [self, job, name = *from_name, slot = std::string(from)]() -> Result<format::EncodedChunks> {
        ROLLY_ASSIGN_OR_RETURN(LoadResult loaded, self->LoadNewest(name, slot));
        job->format_version = loaded.file.format_version;
        job->min_reader_version = loaded.file.min_reader_version;
        job->header = std::move(loaded.file.header);
        return format::EncodeChunks(std::move(loaded.file.chunks), self->options().write);
      },
      // When the write's turn waits already, it starts here: on the read's worker, or, for a read
      // that failed, wherever its turn failed (a failed save reads nothing).
      [self, job](Result<format::EncodedChunks> encoded) {
        if (job->SetEncoded(std::move(encoded))) self->StartSave(job);
      });
  read.HandedOn();
  // If the write cannot be queued, the read (queued already) still runs and ends its piece.
  self->EnqueueWrite(job);
  request.HandedOn();
}

void Store::ListSlots(ListCallback done) {
  Impl::Counted request(*impl_, Impl::Counted::kOperation);
  auto op = impl_->Ask(std::move(done));
  Result<FileName> index = FileName::ForIndex(impl_->options().prefix, Copy::kA);
  if (!index.ok()) {
    impl_->Refuse(*op, Result<SlotList>(index.status()));
    request.HandedOn();
    return;
  }
  auto self = impl_;
  const std::thread::id asker = std::this_thread::get_id();
  self->QueueOf(index->base())->Enqueue([self, op, asker](FileQueue::Finished finished) {
    op->finished = std::move(finished);
    self->StartList(op, asker);
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
