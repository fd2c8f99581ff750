// Store: saves, loads, deletes and lists slots on a backend so that nothing ever costs the last
// good save.
//
// Two copies. Every slot is kept in two files, copy a and copy b. A save goes to the copy that does
// not hold the newest valid save (newest by the header's sequence number, never by time), and until
// the backend reports the write durable that copy counts as damaged. A crash, a kill, a full disk
// or a torn write during a save therefore leaves the other copy, the last good save, untouched. A
// load takes the newest valid copy, falling back to the other and saying so in its result; when a
// copy cannot be read at all, the load fails rather than risk returning an older save. The first
// load or save of a slot reads and verifies both copies; after that the stores know them, and a
// load reads only the newest (verified in full, as always), reading both again when it is not what
// they knew.
//
// Order. Every file has one queue for the whole process (shared by every Store over the same
// backend object): saves, loads, deletes and copies of the same slot run one after another in the
// order asked, and call back in that order. Different slots run side by side. What the store knows
// of a slot's copies, and the slot index, are kept with the queue, so every Store over the same
// backend object sees the others' saves.
//
// Threads. The game thread asks; the game thread hears back. A save's chunks start compressing on
// a worker as soon as it is asked for; verifying, decoding and backend I/O run on workers and
// backend threads. A load that reads both of a slot's copies reads them at once when a second
// worker is free, so a backend sees those two reads in either order. Every callback runs on the
// game thread when it drains the mailbox (each frame, or inside Flush), never inside the call that
// asked. A call that throws (std::bad_alloc, an
// allocation failing on the game thread) made no request: its callback never runs, nothing waits
// for it, and the slot's other requests run as asked. (A save whose chunks could not be handed
// to a worker after it was queued calls back Cancelled instead.)
//
// A backend call that throws (std::bad_alloc inside the backend, or a game's backend that throws;
// the store calls it on workers and backend threads) is taken as one that answered StorageFailed,
// naming the exception: the operation calls back with that status, as for any failed call. A save
// whose write threw counts its copy as unknown, as after any failed write (read again before the
// next save), and the other copy, the last good save, is untouched.
//
// What the store's own work throws on a worker or a backend's thread (std::bad_alloc, an allocation
// failing there) is taken the same way, and so is what a Save's FileMaker throws: the operation
// calls back StorageFailed naming the exception, its queue moves on, and the store goes on. A save
// that fails so before its write is asked has written nothing and changed nothing of the slot's
// copies. Once the write is asked, only sealing the file (its checksums) can fail so: the write
// then gets a first piece of zeros, so its copy fails every check as after a torn write, the save
// calls back StorageFailed, and the other copy, the last good save, is untouched. A save whose slot
// index entry cannot be made once its write is durable still answers Ok: the index lags it until
// the slot's next save or delete. A delete that fails so may have removed the copy without the
// newest save, as when the backend fails it half way; an index write that fails so ends as a failed
// index write. Each operation's reply has its place in the mailbox made when it is asked
// (Mailbox::Made), so the reply itself is always delivered. One failure still ends otherwise:
// memory so short that the failure's own status (its message) cannot be allocated either; that
// second std::bad_alloc goes on, and off the game thread it ends the process.
//
// The slot index. Each prefix keeps a small index file (itself in two copies) with every slot's
// header fields, written through the same queues after each save and delete, so a slot list never
// reads whole saves. A missing or damaged index is rebuilt from the saves' headers. The index is a
// cache, written without fsync: after a crash it may lag the last save, and after a power cut the
// saves of the last moments (docs/storage.md says how far); loads never trust it, only the copies
// themselves.
//
// Thread rules: construct, call and destroy a Store on the game thread. The backend, the worker
// pool and the mailbox outlive it. Destroying a Store with operations running waits for them
// (without running their callbacks); flush first to hear how they ended.

#ifndef ROLLY_STORE_STORE_H_
#define ROLLY_STORE_STORE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rolly/core/mailbox.h"
#include "rolly/core/status.h"
#include "rolly/core/worker_pool.h"
#include "rolly/format/file.h"
#include "rolly/store/backend.h"
#include "rolly/store/file_name.h"

namespace rolly::store_internal {
struct SlotListAccess;
}  // namespace rolly::store_internal

namespace rolly::store {

struct StoreOptions {
  // The name prefix of every file this store makes (see FileName).
  std::string prefix = "rolly";
  // How chunks are compressed.
  format::WriteOptions write;
  // Keep the slot index up to date. A store that only inspects turns it off: it then writes
  // nothing at all, and ListSlots reads the saves' headers.
  bool keep_index = true;
  // The game's own chunk IDs (format::ReadOptions::extra_known_chunks): a copy holding a
  // MustUnderstand chunk of one of them is valid. One whose MustUnderstand chunk nobody here
  // knows is a newer version's (NewerVersion).
  std::vector<format::ChunkId> known_chunks;
};

// What a save wrote.
struct SaveInfo {
  std::string slot;
  // The copy written and the sequence number it holds.
  Copy copy = Copy::kA;
  std::uint64_t sequence = 0;
  // Bytes written.
  std::uint64_t size = 0;
};

// The state of one copy as a load or a listing found it.
enum class CopyState : std::uint8_t {
  kMissing,  // no such file
  kValid,    // passes every check
  kDamaged,  // fails a check
  kNewer,    // written by a newer version this one cannot read
  kFailed,   // could not be read (StorageFailed, SignedOut)
};

struct LoadResult;

// How a load reads the copy it takes.
struct LoadOptions {
  // The copy's zstd chunks of at least this many decoded bytes are checked but left encoded
  // (format::ReadOptions::leave_encoded_from), for a caller that decodes them as it goes through
  // them (format::DecodeChunk). A frame that passes every check but fails part way through its
  // decoding is then found by that caller, not by the load, which takes the copy all the same:
  // such a caller loads again without this to have the other copy taken instead (as the load
  // takes it for a frame it decodes itself), and the store to know the copy damaged. Until then
  // the store holds that copy valid, as it holds a copy it verified but never decoded: its next
  // save goes to the other copy.
  std::uint64_t leave_encoded_from = format::kNeverLeaveEncoded;
  // Runs on the worker that read the copy, with what the load found, before the callback is
  // posted to the game thread; only for a load that found a copy. For work on the file that needs
  // no game thread (a save system checks the save's records here), so that it starts as the read
  // ends instead of at the game thread's next step. It may change the result (take a chunk's
  // bytes out of the file), and the callback gets it as it left it. The slot's turn is held while
  // it runs: the slot's next operation waits for it. What it throws fails the load with
  // StorageFailed naming the exception. It must not wait for the game thread.
  std::function<void(LoadResult&)> on_read;
};

// What a load found.
struct LoadResult {
  format::File file;
  // The copy the file came from.
  Copy copy = Copy::kA;
  // True when the other copy exists but is not valid (damaged, or a newer version's): the copy
  // taken may be the older save, since the one not taken may have held a newer one. (A copy that
  // could not be read fails the load instead.)
  bool recovered = false;
  // The state of the copy not taken, and why when not valid: as this load read it, or, when the
  // load read only the newest copy of a slot the stores knew, as they knew it (a copy damaged
  // behind their back since is found when a load needs it).
  CopyState other_state = CopyState::kMissing;
  Status other_status;
  // The size in bytes of the copy the file came from.
  std::uint64_t size = 0;
};

// The most metadata a listing carries for one slot. A slot index holds each slot's metadata up to
// this size, so that an index of every slot a prefix may hold stays under a file's bound; a
// larger one is left out of the index and of listings (SlotView::metadata_listed).
inline constexpr std::size_t kMaxListedMetadataSize = 4096;

// One slot as a listing found it. The strings and the metadata view the bytes of the SlotList
// the entry came from: they stay valid, unchanged, for as long as that list or any copy of it
// lives (copies share the bytes), and dangle once the last one is gone. To keep an entry longer,
// or to change it, copy it into a SlotInfo.
struct SlotView {
  std::string_view slot;
  std::string_view title;
  std::int64_t save_time_us = 0;
  std::uint64_t sequence = 0;
  std::uint32_t kind = 0;
  std::uint32_t game_data_version = 0;
  // The header's metadata when it is at most kMaxListedMetadataSize bytes. Larger metadata is not
  // listed: `metadata` is then empty and `metadata_listed` (below) false, and
  // Store::ReadNewestHeader reads it from the save.
  ByteView metadata;
  // Size of the copy a load would take.
  std::uint64_t size = 0;
  // The copy a load would take, and the state of each copy as last seen.
  Copy copy = Copy::kA;
  CopyState state_a = CopyState::kMissing;
  CopyState state_b = CopyState::kMissing;
  // True when the copy a load would not take exists but is not valid (LoadResult::recovered).
  bool recovered = false;
  // False when the slot's metadata is larger than a listing carries (see `metadata`).
  bool metadata_listed = true;
};

// One slot with its own copies of the strings and metadata: a SlotView kept past its list, or
// changed (the fields mean the same).
struct SlotInfo {
  SlotInfo() = default;
  explicit SlotInfo(const SlotView& view);

  std::string slot;
  std::string title;
  std::int64_t save_time_us = 0;
  std::uint64_t sequence = 0;
  std::uint32_t kind = 0;
  std::uint32_t game_data_version = 0;
  Bytes metadata;
  std::uint64_t size = 0;
  Copy copy = Copy::kA;
  CopyState state_a = CopyState::kMissing;
  CopyState state_b = CopyState::kMissing;
  bool recovered = false;
  bool metadata_listed = true;
};

// The slots of one prefix as ListSlots found them, sorted by name (byte order), names unique.
//
// Ownership: the list holds the slot index's bytes in one read-only buffer and one array of
// SlotViews into it; nothing is allocated per slot. Copies share the buffer (a copy allocates
// only its array of views; a move allocates nothing), so the strings a SlotView holds stay valid
// while any copy of the list lives. A reference or iterator into a list lives as long as that
// list. A default-made or moved-from list is empty.
//
// Threads: a list never changes after ListSlots made it, so any thread may read it, and several
// may at once; it can be handed to a worker to build a slot screen.
class SlotList {
 public:
  using const_iterator = std::vector<SlotView>::const_iterator;

  SlotList() = default;
  SlotList(const SlotList&) = default;
  SlotList& operator=(const SlotList&) = default;
  SlotList(SlotList&& other) noexcept
      : bytes_(std::move(other.bytes_)), slots_(std::exchange(other.slots_, {})) {}
  SlotList& operator=(SlotList&& other) noexcept {
    bytes_ = std::move(other.bytes_);
    slots_ = std::exchange(other.slots_, {});
    return *this;
  }

  std::size_t size() const { return slots_.size(); }
  bool empty() const { return slots_.empty(); }
  // The i-th slot by name; i must be below size().
  const SlotView& operator[](std::size_t i) const { return slots_[i]; }
  const_iterator begin() const { return slots_.begin(); }
  const_iterator end() const { return slots_.end(); }

  // The slot named exactly `slot`, or nullptr (a binary search).
  const SlotView* Find(std::string_view slot) const;

 private:
  friend struct ::rolly::store_internal::SlotListAccess;

  // What every view of slots_ points into; shared with copies, never written.
  std::shared_ptr<const Bytes> bytes_;
  std::vector<SlotView> slots_;
};

class Store {
 public:
  using SaveCallback = std::function<void(Result<SaveInfo>)>;
  using LoadCallback = std::function<void(Result<LoadResult>)>;
  using ListCallback = std::function<void(Result<SlotList>)>;
  using HeaderCallback = std::function<void(Result<format::Header>)>;
  // Makes a save's file on a worker (Save of a FileMaker).
  using FileMaker = std::function<Result<format::File>()>;

  Store(Backend& backend, WorkerPool& workers, Mailbox& mailbox, StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Saves `file` into `slot`. The store sets the header's slot name and sequence number (one above
  // the newest valid copy); chunks start compressing on a worker at once, and the write runs at the
  // slot's turn. `done` gets the SaveInfo once the backend reports the bytes durable, or:
  //   InvalidInput   the slot name or the file breaks a rule (docs/format.md, FileName);
  //   NoSpace, StorageFailed, SignedOut, Changed   the backend's answer; the other copy is intact.
  //                  StorageFailed also when the backend's call threw, or the store's own work
  //                  on a worker failed (an allocation; see Threads above). StorageFailed and
  //                  SignedOut also when a copy could not be read to choose the copy to write
  //                  (nothing is written then: the unread copy may hold the newest save);
  //   NewerVersion   both copies hold saves of a newer version (nothing is written).
  void Save(std::string_view slot, format::File file, SaveCallback done);
  // As Save of a File, but the file is made by `make`, once, on a worker, right before its chunks
  // are encoded: what need not run on the game thread (joining a world capture's records into
  // chunks, world::CapturedWorld::Make) runs there, while the save keeps its place in the slot's
  // order from this call. `make` must touch nothing the game changes meanwhile; it is destroyed on
  // a worker (or before Save returns, when the slot name is refused). When it fails, the save
  // fails with its status and nothing is written. When it throws, the save fails with
  // StorageFailed naming the exception ("the file maker threw: ..."), nothing is written and the
  // slot's copies are as they were, as when it fails. Statuses as Save of a File, and those of
  // `make`.
  void Save(std::string_view slot, FileMaker make, SaveCallback done);

  // Loads the newest valid copy of `slot`. Both copies are read and verified unless the stores
  // over this backend object know them (a save or load of the slot before); then only the copy
  // they know as the newest is read, verified in full, and both are read after all when it is
  // not that save or fails. `done` gets the file and which copy it came from, or:
  //   NotFound       neither copy exists;
  //   Damaged        no copy is valid (the message names each copy's damage);
  //   NewerVersion   the newest copy needs a newer version, and the other is not valid;
  //   StorageFailed, SignedOut   the backend could not read a copy (either one: the copy not
  //                  read may hold the newest save, so the other is not returned in its place);
  //   InvalidInput   the slot name breaks a rule.
  void Load(std::string_view slot, LoadCallback done);
  // As Load, reading the copy taken as `options` say.
  void Load(std::string_view slot, const LoadOptions& options, LoadCallback done);

  // Reads one copy as it is, writing nothing (for inspectors and tools). Statuses as Load.
  void LoadCopy(std::string_view slot, Copy copy, LoadCallback done);

  // The header of the newest valid copy, read from that copy (never from the index, which may lag
  // a crash); which copy that is, the store reads from both copies when it does not know yet.
  // Statuses as Load: a copy that could not be read gives its status, rather than the other
  // copy's header in its place.
  void ReadNewestHeader(std::string_view slot, HeaderCallback done);

  // Deletes both copies of `slot` and its index entry, the one without the newest save first (read
  // first when no store knows which). Ok also when the slot did not exist; StorageFailed or
  // SignedOut from the backend, nothing deleted when a copy could not be read; InvalidInput for a
  // bad name.
  void Delete(std::string_view slot, std::function<void(Status)> done);

  // Copies the newest valid save of `from` into `to` as a new save of `to` (runs in both slots'
  // order). Statuses as Load for reading `from`, then as Save.
  void CopySlot(std::string_view from, std::string_view to, SaveCallback done);

  // Every slot of this store's prefix, sorted by name, from the slot index (rebuilt from the saves'
  // headers when missing or damaged, listing the backend), as of the saves and deletes that have
  // finished: the list runs on the index's own queue, not after saves still running on their
  // slots'. `done` gets a SlotList that owns its bytes (see SlotList: the views in it live as long
  // as the list), or StorageFailed or SignedOut when the index can be neither read nor rebuilt
  // (a rebuild that cannot read a save's copy keeps nothing: the next listing tries again).
  // StorageFailed also while the prefix holds more than 65,536 slots, the most an index lists
  // (saves and loads go on; a delete brings the listing back). A copy whose header holds another
  // slot's name is not listed.
  // The index is read and checked on the backend's thread when it answers on a thread other than
  // the caller's and the index is small (at most kQuickIndexBytes), else on a worker.
  void ListSlots(ListCallback done);

  // Runs the mailbox until every operation asked before the call has called back, or `deadline`
  // passes. Ok when everything finished; Busy naming how many are still running otherwise. For a
  // game that is quitting (kQuitFlush) or going to the background (kBackgroundFlush). Each time
  // it has run everything that arrived, it polls the mailbox for up to kFlushPoll before it
  // sleeps: a sleeping thread can take tens of microseconds to wake, and the callbacks a flush
  // waits for often come close together. So a flush keeps its thread busy for up to that long
  // per callback it waits for, never past `deadline`.
  Status Flush(Mailbox::Clock::time_point deadline);
  Status FlushFor(std::chrono::milliseconds budget) {
    return Flush(Mailbox::Clock::now() + budget);
  }

  // Operations asked and not yet called back.
  std::size_t pending() const;

  const StoreOptions& options() const;

  static constexpr std::chrono::milliseconds kQuitFlush{10000};
  static constexpr std::chrono::milliseconds kBackgroundFlush{3000};
  // How long Flush polls before it sleeps, each time it has run everything that arrived.
  static constexpr std::chrono::microseconds kFlushPoll{100};
  // The largest slot index a listing checks on the backend's own thread, and that an index write
  // lays out there after a save (some 3,000 slots with a title and a hundred bytes of metadata
  // each): quicker than waking a worker, and short enough not to hold up the backend's other
  // work. A larger one goes to a worker.
  static constexpr std::size_t kQuickIndexBytes = 512 * 1024;

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace rolly::store

#endif  // ROLLY_STORE_STORE_H_
