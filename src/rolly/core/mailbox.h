// Mailbox: how work done on other threads comes back to the game thread. Workers Post steps; the
// game thread runs them when it drains the mailbox, once a frame (the save system's Tick) or while
// it waits for something within a deadline (a flush at quit).
//
// Steps run on the thread that drains, in the order posted. A step may post further steps; those
// run in the same drain. A step may drain too (a callback that flushes): the steps run in the
// order posted all the same. A step that throws ends the drain with its exception; the steps
// after it stay queued for the next drain.
//
// Thread rules: Post from any thread. Drain and DrainUntil from the game thread only (one thread at
// a time).

#ifndef ROLLY_CORE_MAILBOX_H_
#define ROLLY_CORE_MAILBOX_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace rolly {

class Mailbox {
 public:
  using Clock = std::chrono::steady_clock;

  Mailbox() = default;
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Queues `step` to run on the game thread at its next drain.
  void Post(std::function<void()> step);

  // Runs every queued step, and the steps they post. Returns how many ran.
  std::size_t Drain();

  // Runs steps as they arrive until `done()` is true (checked after each drain) or `deadline`
  // passes. Returns whether `done()` became true.
  bool DrainUntil(const std::function<bool()>& done, Clock::time_point deadline);

  // Steps waiting to run.
  std::size_t pending() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable posted_;
  std::deque<std::function<void()>> steps_;
};

}  // namespace rolly

#endif  // ROLLY_CORE_MAILBOX_H_
