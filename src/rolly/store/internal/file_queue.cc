// FileQueue: a deque and a running flag; a trampoline keeps synchronous operations from recursing.

#include "rolly/store/internal/file_queue.h"

#include <exception>
#include <map>
#include <string>
#include <utility>

namespace rolly::store_internal {

// Shared between one operation and its `finished`: whether the start has returned, whether the
// operation finished, and the queue to move on (set when the turn starts).
struct FileQueue::Turn {
  std::mutex mutex;
  bool starting = true;
  bool finished = false;
  std::shared_ptr<FileQueue> queue;
};

void FileQueue::Enqueue(Op op) {
  Entry entry{std::move(op), std::make_shared<Turn>(), nullptr};
  entry.finished = [turn = entry.turn] {
    {
      std::lock_guard lock(turn->mutex);
      turn->finished = true;
      if (turn->starting) return;  // Pump's loop runs the next operation
    }
    turn->queue->Pump();
  };
  {
    std::lock_guard lock(mutex_);
    ops_.push_back(std::move(entry));
    if (running_) return;
    running_ = true;
  }
  Pump();
}

void FileQueue::Pump() {
  std::exception_ptr failed;
  for (;;) {
    Entry entry;
    {
      std::lock_guard lock(mutex_);
      if (ops_.empty()) {
        running_ = false;
        break;
      }
      entry = std::move(ops_.front());
      ops_.pop_front();
    }
    entry.turn->queue = shared_from_this();
    bool waits = false;
    try {
      entry.op(std::move(entry.finished));
      std::lock_guard lock(entry.turn->mutex);
      entry.turn->starting = false;
      waits = !entry.turn->finished;  // `finished` will pump when the operation ends
    } catch (...) {
      // The operation could not start (an allocation failed on this thread): its turn ends here,
      // the operations after it still run, and the first failure goes to the caller.
      if (!failed) failed = std::current_exception();
    }
    if (waits) break;
  }
  if (failed) std::rethrow_exception(failed);
}

std::shared_ptr<FileQueue> QueueFor(std::uint64_t owner, std::string_view base) {
  static std::mutex* mutex = new std::mutex;
  static auto* queues = new std::map<std::pair<std::uint64_t, std::string>, std::weak_ptr<FileQueue>>;
  std::lock_guard lock(*mutex);
  // Drop entries nobody holds any more, so the registry stays as small as the files in use.
  if (queues->size() > 64) {
    for (auto it = queues->begin(); it != queues->end();) {
      it = it->second.expired() ? queues->erase(it) : std::next(it);
    }
  }
  std::weak_ptr<FileQueue>& entry = (*queues)[{owner, std::string(base)}];
  std::shared_ptr<FileQueue> queue = entry.lock();
  if (!queue) {
    queue = std::make_shared<FileQueue>();
    entry = queue;
  }
  return queue;
}

}  // namespace rolly::store_internal
