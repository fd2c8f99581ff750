// SideTask: a claim flag decides who runs the work; a mutex and a condition variable let the owner
// wait for a worker that claimed it.

#include "rolly/core/side_task.h"

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace rolly {

// Held by the owner and by the posted task, which may run after the owner is gone (when the owner
// claimed the work back): it then touches nothing else.
struct SideTask::Shared {
  std::function<void()> work;
  const std::thread::id owner = std::this_thread::get_id();
  std::atomic<bool> claimed{false};
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::exception_ptr thrown;  // what the work threw on the worker

  void Wait() {
    std::unique_lock lock(mutex);
    done_cv.wait(lock, [this] { return done; });
  }
};

SideTask::SideTask(const Post& post, std::function<void()> work)
    : shared_(std::make_shared<Shared>()) {
  shared_->work = std::move(work);
  if (!post) return;
  std::function<void()> task = [shared = shared_] {
    // A post that runs the task at once, on the owner, leaves the work to Join.
    if (std::this_thread::get_id() == shared->owner) return;
    if (shared->claimed.exchange(true, std::memory_order_acq_rel)) return;
    try {
      shared->work();
    } catch (...) {
      shared->thrown = std::current_exception();
    }
    {
      std::lock_guard lock(shared->mutex);
      shared->done = true;
    }
    shared->done_cv.notify_all();
  };
  try {
    post(std::move(task));
  } catch (...) {
    // Not offered: Join runs the work here (a task queued before the throw finds it claimed).
  }
}

SideTask::~SideTask() {
  if (!ended_) Withdraw();
}

bool SideTask::Join() {
  assert(!ended_ && "a SideTask is joined or withdrawn once");
  ended_ = true;
  if (!shared_->claimed.exchange(true, std::memory_order_acq_rel)) {
    shared_->work();
    return false;
  }
  shared_->Wait();
  if (shared_->thrown) std::rethrow_exception(shared_->thrown);
  return true;
}

void SideTask::Withdraw() {
  assert(!ended_ && "a SideTask is joined or withdrawn once");
  ended_ = true;
  if (shared_->claimed.exchange(true, std::memory_order_acq_rel)) shared_->Wait();
}

}  // namespace rolly
