// Mailbox: a locked queue swapped out whole at each drain.

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
  std::size_t ran = 0;
  for (;;) {
    std::deque<std::function<void()>> batch;
    {
      std::lock_guard lock(mutex_);
      batch.swap(steps_);
    }
    if (batch.empty()) return ran;
    for (auto& step : batch) {
      step();
      ++ran;
    }
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
