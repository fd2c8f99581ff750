// Mailbox: how work done on other threads comes back to the game thread. Workers Post steps; the
// game thread runs them when it drains the mailbox, once a frame (the save system's Tick) or while
// it waits for something within a deadline (a flush at quit).
//
// Steps run on the thread that drains, in the order posted. A step may post further steps; those
// run in the same drain. A step may drain too (a callback that flushes): the steps run in the
// order posted all the same. A step that throws ends the drain with its exception; the steps
// after it stay queued for the next drain.
//
// Posting a std::function allocates the step's place in the queue, and throws std::bad_alloc
// when that fails. A step made ahead (Made) holds its place already: posting it allocates nothing
// and never throws, so a worker that must answer whatever happens makes the step while it can
// still fail (on the thread that asked for the work) and only posts it at the end.
//
// Thread rules: Post from any thread. Drain and DrainUntil from the game thread only (one thread at
// a time). A Made is used by one thread at a time.

#ifndef ROLLY_CORE_MAILBOX_H_
#define ROLLY_CORE_MAILBOX_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

namespace rolly {

class Mailbox {
  struct Node;

 public:
  using Clock = std::chrono::steady_clock;

  // A step with its place in a queue made ahead. Empty once posted (or moved from).
  class Made {
   public:
    Made();
    // Makes the place (may throw std::bad_alloc).
    explicit Made(std::function<void()> step);
    Made(Made&&) noexcept;
    Made& operator=(Made&&) noexcept;
    ~Made();
    explicit operator bool() const { return node_ != nullptr; }

   private:
    friend class Mailbox;
    std::unique_ptr<Node> node_;
  };

  Mailbox();
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;
  // Steps still queued are destroyed without running.
  ~Mailbox();

  // Queues `step` to run on the game thread at its next drain.
  void Post(std::function<void()> step);
  // Queues a step made ahead; an empty one (posted already) is ignored. Allocates nothing.
  void Post(Made step) noexcept;

  // Runs every queued step, and the steps they post. Returns how many ran.
  std::size_t Drain();

  // Runs steps as they arrive until `done()` is true (checked after each drain) or `deadline`
  // passes. Returns whether `done()` became true.
  bool DrainUntil(const std::function<bool()>& done, Clock::time_point deadline);

  // Steps waiting to run.
  std::size_t pending() const;

 private:
  // Takes the first queued step, or null.
  std::unique_ptr<Node> Take();

  mutable std::mutex mutex_;
  std::condition_variable posted_;
  // The queue, first to last, linked through Node::next (each owned by the one before; the
  // first by head_).
  std::unique_ptr<Node> head_;
  Node* tail_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace rolly

#endif  // ROLLY_CORE_MAILBOX_H_
