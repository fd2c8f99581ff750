// FileQueue: runs asynchronous operations on one file one after another, in the order asked, and
// the process-wide registry that gives every file one queue. Internal to the store layer.
//
// An operation is started with a `finished` function it must call exactly once, from any thread,
// when it is done; the next operation starts then. An operation that finishes inside its own
// start does not recurse: the queue runs the next one in a loop. What a turn needs besides the
// operation is made by Enqueue, which throws (an allocation failing) before queueing anything:
// the queue itself allocates nothing to start a turn, on whichever thread moves it on. An
// operation whose start throws must not have handed `finished` on: its turn ends with the throw,
// the operations after it still run, and the call that ran it (Enqueue, or the `finished` of the
// operation before) rethrows the first such exception. (The store's operations do not throw from
// their start off the game thread, where that call has no caller to reach: they answer instead.)
//
// Thread rules: Enqueue from any thread.

#ifndef ROLLY_STORE_INTERNAL_FILE_QUEUE_H_
#define ROLLY_STORE_INTERNAL_FILE_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>

namespace rolly::store_internal {

class FileQueue : public std::enable_shared_from_this<FileQueue> {
 public:
  using Finished = std::function<void()>;
  using Op = std::function<void(Finished finished)>;

  void Enqueue(Op op);

  // What the file's users keep with it for as long as the queue lives (the store: what it knows of
  // the file's copies), shared by every one of them. Null until one sets it. Touch it only from
  // an operation in its turn.
  std::shared_ptr<void>& state() { return state_; }

 private:
  struct Turn;
  // An operation waiting for its turn, with what the turn needs (made by Enqueue).
  struct Entry {
    Op op;
    std::shared_ptr<Turn> turn;
    Finished finished;
  };

  void Pump();

  std::mutex mutex_;
  std::deque<Entry> ops_;
  bool running_ = false;
  std::shared_ptr<void> state_;
};

// The queue of file `base` on the backend object numbered `owner` (Backend::instance_id), shared
// by everything in the process that asks for the same pair while any holder keeps it.
std::shared_ptr<FileQueue> QueueFor(std::uint64_t owner, std::string_view base);

}  // namespace rolly::store_internal

#endif  // ROLLY_STORE_INTERNAL_FILE_QUEUE_H_
