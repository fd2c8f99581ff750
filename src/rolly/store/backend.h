// Backend: the one interface every byte of save storage goes through. A backend stores whole
// files under FileNames: folder files by default, memory for tests and memory slots, a
// fault-injecting wrapper for testing error handling, and database backends for cloud saves.
//
// Each operation completes exactly once through its callback, with only the statuses it promises:
//
//   Write   Ok, NoSpace, StorageFailed, SignedOut, Changed (Changed only from backends that
//           compare versions). Ok means the bytes are durable: they survive a crash, a kill or a
//           power cut from then on (a backend may name files it keeps only as caches, as the
//           folder backend does slot indexes). Any other status means the file holds its old
//           bytes, nothing a reader accepts (a torn write fails its checksums), or possibly the
//           new bytes whole: on a backend over a network whose connection dropped at the commit,
//           or on the folder backend when the file was renamed into place but the folder's sync
//           then failed; never a mix that passes. (The store reads such a copy again before it
//           writes either copy.)
//   Read    Ok, NotFound, StorageFailed, SignedOut, Damaged (Damaged only from backends that
//           check a hash of their own, when the bytes do not match it). Ok gives every byte.
//   ReadPrefix  as Read; Ok gives at most `max_bytes` bytes from the start (fewer when the file
//           is shorter), for headers.
//   Exists  Ok (true or false), StorageFailed, SignedOut.
//   Delete  Ok (also when there was no such file), StorageFailed, SignedOut.
//   List    Ok, StorageFailed, SignedOut; only names made by FileName's rules, in sorted order.
//           A backend that cannot list answers StorageFailed and says so in can_list().
//
// A status outside an operation's set, from a backend's own code, is reported as StorageFailed
// naming it. Operations are counted from the call until the callback returns, so WaitUntilIdle can
// wait for every one. A call that throws (an allocation failing on the calling thread, or a
// backend's own code that throws) leaves nothing counted, and its callback does not run after the
// throw. A callback that throws ends its operation all the same; its exception goes on to the code
// that answered (for a backend that answers at once, the caller). The store, and the blocking
// forms below, take a call that throws as one that answered StorageFailed: what a backend's call
// throws never ends one of the store's threads nor reaches the game through the store.
//
// Thread rules: every call may be made from any thread. Callbacks run on the backend's own
// threads (or the caller's, for a backend that completes at once): they must be quick and must not
// touch game objects; the store hands results to the game thread through its mailbox. A backend
// must outlive its operations: destroy it only after WaitUntilIdle.

#ifndef ROLLY_STORE_BACKEND_H_
#define ROLLY_STORE_BACKEND_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "rolly/core/bytes.h"
#include "rolly/core/status.h"
#include "rolly/store/file_name.h"

namespace rolly::store {

using StatusCallback = std::function<void(Status)>;
using BytesCallback = std::function<void(Result<Bytes>)>;
using ExistsCallback = std::function<void(Result<bool>)>;
using ListCallback = std::function<void(Result<std::vector<FileName>>)>;

// The first piece of a write, given after the write was asked: its size is fixed then, its bytes
// come later, once, from any thread. A save's prelude holds a checksum of every byte after it, so
// the store hands the chunks' bytes over first and the prelude once its checksum is computed.
class LateFront {
 public:
  explicit LateFront(std::size_t size) : size_(size) {}
  LateFront(const LateFront&) = delete;
  LateFront& operator=(const LateFront&) = delete;

  std::size_t size() const { return size_; }
  // Gives the bytes, exactly size() of them. Call exactly once.
  void Set(Bytes bytes);
  // Blocks until Set has run.
  void Wait();
  // Takes the bytes; blocks until Set has run. Call at most once.
  Bytes Take();
  // Runs `fn` with the bytes once they are set: at once, on this thread, when they are; else on
  // the thread that sets them, after Set has let go of its lock. Call at most once, and not with
  // Take.
  void WhenSet(std::function<void(Bytes)> fn);

 private:
  const std::size_t size_;
  std::mutex mutex_;
  std::condition_variable set_;
  bool is_set_ = false;
  Bytes bytes_;
  std::function<void(Bytes)> when_set_;
};

class Backend {
 public:
  virtual ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  void Write(const FileName& name, Bytes bytes, StatusCallback done);
  // Writes the concatenation of `pieces` (a gather write): the same file, statuses and counting
  // as Write of the concatenated bytes. A backend that can write pieces as they are (the folder
  // backend appends each in turn) never copies them into one buffer; any other concatenates them
  // first. The pieces are taken over; empty pieces and no pieces at all are allowed.
  void Write(const FileName& name, std::vector<Bytes> pieces, StatusCallback done);
  // Writes `front`'s bytes followed by the concatenation of `rest`: the same file, statuses and
  // counting as Write of those pieces. The backend may write `rest` (at its place in the file)
  // before the front is set, and keeps `rest` alive and unchanged until then, so the caller may
  // read its bytes (to checksum them) until it sets the front. The caller must set the front, and
  // no answer comes before it did. A backend that cannot write out of order waits for the front
  // and writes the pieces (the default); the folder backend writes `rest` meanwhile.
  void Write(const FileName& name, std::shared_ptr<LateFront> front, std::vector<Bytes> rest,
             StatusCallback done);
  void Read(const FileName& name, BytesCallback done);
  void ReadPrefix(const FileName& name, std::size_t max_bytes, BytesCallback done);
  void Exists(const FileName& name, ExistsCallback done);
  void Delete(const FileName& name, StatusCallback done);
  void List(ListCallback done);

  // Whether List works on this backend.
  virtual bool can_list() const { return true; }

  // Blocks until every operation started so far has called back.
  void WaitUntilIdle();
  // Operations started and not yet called back.
  std::size_t in_flight() const;
  // A number no other backend object of this process has had, or will have: what the store keys
  // its per-file queues by (an address could be reused by a later backend).
  std::uint64_t instance_id() const { return instance_id_; }

 protected:
  Backend();

  // The operations a backend implements. Each must call `done` exactly once, on any thread, or
  // throw (an allocation failing) without having called it and without having started anything:
  // nothing of an operation that threw may happen after the throw (a write writes nothing, as the
  // store counts the copy free to write again). The wrappers then end the operation, and a later
  // call of `done` does nothing. The wrappers above have already counted the
  // operation and will filter the status.
  virtual void StartWrite(const FileName& name, Bytes bytes, StatusCallback done) = 0;
  virtual void StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) = 0;
  virtual void StartExists(const FileName& name, ExistsCallback done) = 0;
  virtual void StartDelete(const FileName& name, StatusCallback done) = 0;
  virtual void StartList(ListCallback done) = 0;
  // Writes the concatenation of `pieces`, with StartWrite's contract. The default concatenates
  // them and calls StartWrite (no copy for a single piece); a backend that can write pieces
  // without joining them overrides it.
  virtual void StartWritePieces(const FileName& name, std::vector<Bytes> pieces,
                                StatusCallback done);
  // Writes `front` then `rest`, with the Write contract above. The default waits for the front
  // (WhenSet; nothing blocks) and calls StartWritePieces on the thread that set it.
  virtual void StartWriteLateFront(const FileName& name, std::shared_ptr<LateFront> front,
                                   std::vector<Bytes> rest, StatusCallback done);
  // For a StartWriteLateFront that waits for the front: once `front` is set, runs
  // `start(its bytes, done)` on the thread that set it. That thread (a worker setting the front)
  // has no caller to hand an exception to, so a `start` that throws answers StorageFailed instead
  // (an answer given already stands: the wrappers take one).
  static void StartWhenFrontSet(LateFront& front, std::function<void(Bytes, StatusCallback)> start,
                                StatusCallback done);

 private:
  class Tracker;
  void Begin();
  void End();
  // Counts an operation and runs `start` with the callback to hand its Start function: it runs
  // `done` once, with a failure outside `codes` turned into StorageFailed, then uncounts the
  // operation. When `start` throws, the operation is uncounted then and the callback does nothing
  // if it is still called.
  template <typename T, typename Start>
  void Track(std::function<void(T)> done, std::span<const StatusCode> codes, Start start);

  const std::uint64_t instance_id_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t in_flight_ = 0;
};

// Blocking forms of the operations, for tools and tests (never on the game thread). A call that
// throws answers StorageFailed naming the exception, as if the backend had answered it.
Status WriteNow(Backend& backend, const FileName& name, Bytes bytes);
Status WriteNow(Backend& backend, const FileName& name, std::vector<Bytes> pieces);
Result<Bytes> ReadNow(Backend& backend, const FileName& name);
Result<Bytes> ReadPrefixNow(Backend& backend, const FileName& name, std::size_t max_bytes);
Result<bool> ExistsNow(Backend& backend, const FileName& name);
Status DeleteNow(Backend& backend, const FileName& name);
Result<std::vector<FileName>> ListNow(Backend& backend);

}  // namespace rolly::store

#endif  // ROLLY_STORE_BACKEND_H_
