// Mailbox: a locked queue of nodes, each a step with its link, taken off one at a time.

#include "rolly/core/mailbox.h"

#include <utility>

namespace rolly {

struct Mailbox::Node {
  std::function<void()> step;
  std::unique_ptr<Node> next;
};

Mailbox::Made::Made() = default;
Mailbox::Made::Made(std::function<void()> step) : node_(std::make_unique<Node>()) {
  node_->step = std::move(step);
}
Mailbox::Made::Made(Made&&) noexcept = default;
Mailbox::Made& Mailbox::Made::operator=(Made&&) noexcept = default;
Mailbox::Made::~Made() = default;

Mailbox::Mailbox() = default;

Mailbox::~Mailbox() {
  // Unlinked one by one: a long queue destroyed through its links would recurse as deep.
  while (head_) head_ = std::move(head_->next);
}

void Mailbox::Post(std::function<void()> step) { Post(Made(std::move(step))); }

void Mailbox::Post(Made step) noexcept {
  if (!step.node_) return;
  {
    std::lock_guard lock(mutex_);
    Node* node = step.node_.get();
    if (tail_ == nullptr) {
      head_ = std::move(step.node_);
    } else {
      tail_->next = std::move(step.node_);
    }
    tail_ = node;
    ++size_;
  }
  posted_.notify_all();
}

std::unique_ptr<Mailbox::Node> Mailbox::Take() {
  std::lock_guard lock(mutex_);
  if (!head_) return nullptr;
  std::unique_ptr<Node> node = std::move(head_);
  head_ = std::move(node->next);
  if (!head_) tail_ = nullptr;
  --size_;
  return node;
}

std::size_t Mailbox::Drain() {
  // One step at a time off the shared queue: a step that throws leaves the rest queued, and a
  // drain inside a step (a callback that flushes) runs them in order, not ahead of the steps of
  // a batch taken out before it.
  std::size_t ran = 0;
  while (std::unique_ptr<Node> node = Take()) {
    node->step();
    ++ran;
  }
  return ran;
}

bool Mailbox::DrainUntil(const std::function<bool()>& done, Clock::time_point deadline) {
  for (;;) {
    Drain();
    if (done()) return true;
    std::unique_lock lock(mutex_);
    if (!posted_.wait_until(lock, deadline, [this] { return head_ != nullptr; })) {
      lock.unlock();
      return done();
    }
  }
}

std::size_t Mailbox::pending() const {
  std::lock_guard lock(mutex_);
  return size_;
}

}  // namespace rolly
