// WorkerPool: a fixed set of threads that run posted tasks, for the work that must stay off the
// game thread (encoding, compression, checksums, verifying, I/O).
//
// Tasks run in the order posted when the pool has one thread; with more, in any order. A task must
// not touch live game objects: it works on data handed to it, and hands results back through a
// Mailbox. (Two exceptions, with their own rules in docs/world.md, "Threads": a save's capture
// helper reads saved values while the game thread is inside World::BeginCapture, and a load's
// apply helper sets them while the game thread is inside the apply; each call returns once its
// helper is done.)
// Destroying the pool runs every task already posted, then joins the threads.
//
// Thread rules: Post and WaitUntilIdle may be called from any thread, including from a task
// (WaitUntilIdle not from a task of the same pool, which would wait for itself).

#ifndef ROLLY_CORE_WORKER_POOL_H_
#define ROLLY_CORE_WORKER_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rolly {

class WorkerPool {
 public:
  // Starts `threads` threads (at least one).
  explicit WorkerPool(std::size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task` to run on a worker thread.
  void Post(std::function<void()> task);
  // Blocks until every task posted so far (and any they posted) has finished.
  void WaitUntilIdle();
  std::size_t thread_count() const { return threads_.size(); }

 private:
  void Run();

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> tasks_;
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace rolly

#endif  // ROLLY_CORE_WORKER_POOL_H_
