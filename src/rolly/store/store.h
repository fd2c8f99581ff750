// Store: saves, loads, deletes and lists slots on a backend so that nothing ever costs the last
// good save.
//
// Two copies. Every slot is kept in two files, copy a and copy b. A save goes to the copy that does
// not hold the newest valid save (newest by the header's sequence number, never by time), and until
// the backend reports the write durable that copy counts as damaged. A crash, a kill, a full disk
// or a torn write during a save therefore leaves the other copy, the last good save, untouched. A
// load reads and verifies both copies and takes the newest valid one, falling back to the other and
// saying so in its result.
//
// Order. Every file has one queue for the whole process (shared by every Store over the same
// backend object): saves, loads, deletes and copies of the same slot run one after another in the
// order asked, and call back in that order. Different slots run side by side. What the store knows
// of a slot's copies, and the slot index, are kept with the queue, so every Store over the same
// backend object sees the others' saves.
//
// Threads. The game thread asks; the game thread hears back. A save's chunks start compressing on
// a worker as soon as it is asked for; verifying, decoding and backend I/O run on workers and
// backend threads. Every callback runs on the game thread when it drains the mailbox (each frame,
// or inside Flush), never inside the call that asked.
//
// The slot index. Each prefix keeps a small index file (itself in two copies) with every slot's
// header fields, written through the same queues after each save and delete, so a slot list never
// reads whole saves. A missing or damaged index is rebuilt from the saves' headers. The index may
// lag one save behind a crash; loads never trust it, only the copies themselves.
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
#include <vector>

#include "rolly/core/mailbox.h"
#include "rolly/core/status.h"
#include "rolly/core/worker_pool.h"
#include "rolly/format/file.h"
#include "rolly/store/backend.h"
#include "rolly/store/file_name.h"

namespace rolly::store {

struct StoreOptions {
  // The name prefix of every file this store makes (see FileName).
  std::string prefix = "rolly";
  // How chunks are compressed.
  format::WriteOptions write;
  // Keep the slot index up to date. A store that only inspects turns it off: it then writes
  // nothing at all, and ListSlots reads the saves' headers.
  bool keep_index = true;
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

// What a load found.
struct LoadResult {
  format::File file;
  // The copy the file came from.
  Copy copy = Copy::kA;
  // True when the copy with the higher sequence could not be used and the other one was taken.
  bool recovered = false;
  // The state of the copy not taken, and why when not valid.
  CopyState other_state = CopyState::kMissing;
  Status other_status;
};

// One slot as the index lists it.
struct SlotInfo {
  std::string slot;
  std::string title;
  std::int64_t save_time_us = 0;
  std::uint64_t sequence = 0;
  std::uint32_t kind = 0;
  std::uint32_t game_data_version = 0;
  Bytes metadata;
  // Size of the copy a load would take.
  std::uint64_t size = 0;
  // The copy a load would take, and the state of each copy as last seen.
  Copy copy = Copy::kA;
  CopyState state_a = CopyState::kMissing;
  CopyState state_b = CopyState::kMissing;
  // True when the newest save was damaged and a load would take the older copy.
  bool recovered = false;
};

class Store {
 public:
  using SaveCallback = std::function<void(Result<SaveInfo>)>;
  using LoadCallback = std::function<void(Result<LoadResult>)>;
  using ListCallback = std::function<void(Result<std::vector<SlotInfo>>)>;
  using HeaderCallback = std::function<void(Result<format::Header>)>;

  Store(Backend& backend, WorkerPool& workers, Mailbox& mailbox, StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Saves `file` into `slot`. The store sets the header's slot name and sequence number (one above
  // the newest valid copy); chunks start compressing on a worker at once, and the write runs at the
  // slot's turn. `done` gets the SaveInfo once the backend reports the bytes durable, or:
  //   InvalidInput   the slot name or the file breaks a rule (docs/format.md, FileName);
  //   NoSpace, StorageFailed, SignedOut, Changed   the backend's answer; the other copy is intact.
  //                  StorageFailed and SignedOut also when a copy could not be read to choose
  //                  the copy to write (nothing is written then: the unread copy may hold the
  //                  newest save);
  //   NewerVersion   both copies hold saves of a newer version (nothing is written).
  void Save(std::string_view slot, format::File file, SaveCallback done);

  // Loads the newest valid copy of `slot`. `done` gets the file and which copy it came from, or:
  //   NotFound       neither copy exists;
  //   Damaged        no copy is valid (the message names each copy's damage);
  //   NewerVersion   the newest copy needs a newer version, and the other is not valid;
  //   StorageFailed, SignedOut   the backend could not read;
  //   InvalidInput   the slot name breaks a rule.
  void Load(std::string_view slot, LoadCallback done);

  // Reads one copy as it is, writing nothing (for inspectors and tools). Statuses as Load.
  void LoadCopy(std::string_view slot, Copy copy, LoadCallback done);

  // The header of the newest valid copy, read from both copies' first bytes (never from the index,
  // which may lag a crash). Statuses as Load.
  void ReadNewestHeader(std::string_view slot, HeaderCallback done);

  // Deletes both copies of `slot` and its index entry. Ok also when the slot did not exist;
  // StorageFailed or SignedOut from the backend; InvalidInput for a bad name.
  void Delete(std::string_view slot, std::function<void(Status)> done);

  // Copies the newest valid save of `from` into `to` as a new save of `to` (runs in both slots'
  // order). Statuses as Load for reading `from`, then as Save.
  void CopySlot(std::string_view from, std::string_view to, SaveCallback done);

  // Every slot of this store's prefix, sorted by name, from the slot index (rebuilt from the saves'
  // headers when missing or damaged, listing the backend), as of the saves and deletes that have
  // finished: the list runs on the index's own queue, not after saves still running on their
  // slots'. StorageFailed or SignedOut when the index cannot be read nor rebuilt.
  void ListSlots(ListCallback done);

  // Runs the mailbox until every operation asked before the call has called back, or `deadline`
  // passes. Ok when everything finished; Busy naming how many are still running otherwise. For a
  // game that is quitting (kQuitFlush) or going to the background (kBackgroundFlush).
  Status Flush(Mailbox::Clock::time_point deadline);
  Status FlushFor(std::chrono::milliseconds budget) {
    return Flush(Mailbox::Clock::now() + budget);
  }

  // Operations asked and not yet called back.
  std::size_t pending() const;

  const StoreOptions& options() const;

  static constexpr std::chrono::milliseconds kQuitFlush{10000};
  static constexpr std::chrono::milliseconds kBackgroundFlush{3000};

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace rolly::store

#endif  // ROLLY_STORE_STORE_H_
