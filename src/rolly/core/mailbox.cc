// Mailbox: a locked queue, its steps taken off one at a time.

#include "rolly/core/mailbox.h"

#include <utility>

namespace rolly {

void Mailbox::Post(std::function<void()> step) {
  {
    std::lock_guard lock(mutex_);
    steps_.push_back(std::move(step));
  }
  posted_.notify_all();
}

std::size_t Mailbox::Drain() {
  // One step at a time off the shared queue: a step that throws leaves the rest queued, and a
  // drain inside a step (a callback that flushes) runs them in order, not ahead of the steps of
  // a batch taken out before it.
  std::size_t ran = 0;
  for (;;) {
    std::function<void()> step;
    {
      std::lock_guard lock(mutex_);
      if (steps_.empty()) return ran;
      step = std::move(steps_.front());
      steps_.pop_front();
    }
    step();
    ++ran;
  }
}

bool Mailbox::DrainUntil(const std::function<bool()>& done, Clock::time_point deadline) {
  for (;;) {
    Drain();
    if (done()) return true;
    std::unique_lock lock(mutex_);
    if (!posted_.wait_until(lock, deadline, [this] { return !steps_.empty(); })) {
      lock.unlock();
      return done();
    }
  }
}

std::size_t Mailbox::pending() const {
  std::lock_guard lock(mutex_);
  return steps_.size();
}

}  // namespace rolly
