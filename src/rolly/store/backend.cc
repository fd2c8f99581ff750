// Backend's wrappers: counting, once-only callbacks, and the promised statuses.

#include "rolly/store/backend.h"

#include <fmt/format.h>

#include <atomic>
#include <cassert>
#include <future>
#include <limits>
#include <type_traits>
#include <utility>

#include "rolly/store/internal/thrown_call.h"

namespace rolly::store {
namespace {

// Whether `s` is Ok or of one of the codes `allowed`.
bool Kept(const Status& s, std::span<const StatusCode> allowed) {
  if (s.ok()) return true;
  for (StatusCode c : allowed) {
    if (s.code() == c) return true;
  }
  return false;
}

// The answer `a` (a Status or a Result) as promised: kept when Kept, moved, so that an answer on
// a backend's thread short of memory still reaches its callback; otherwise StorageFailed naming
// it. When even that cannot be made (an allocation failing), `a` goes on as it is: a code the
// contract does not list is better than an answer lost.
template <typename A>
A Promised(A a, std::span<const StatusCode> allowed) {
  const Status* s;
  if constexpr (std::is_same_v<A, Status>) {
    s = &a;
  } else {
    s = &a.status();
  }
  if (Kept(*s, allowed)) return a;
  try {
    return A(StorageFailedError(fmt::format("backend answered {}", s->ToString())));
  } catch (...) {
    return a;
  }
}

constexpr StatusCode kWriteCodes[] = {StatusCode::kNoSpace, StatusCode::kStorageFailed,
                                      StatusCode::kSignedOut, StatusCode::kChanged};
constexpr StatusCode kReadCodes[] = {StatusCode::kNotFound, StatusCode::kStorageFailed,
                                     StatusCode::kSignedOut, StatusCode::kDamaged};
constexpr StatusCode kOtherCodes[] = {StatusCode::kStorageFailed, StatusCode::kSignedOut};

}  // namespace

// Ends the operation exactly once: calls the user's callback, then uncounts it.
class Backend::Tracker {
 public:
  explicit Tracker(Backend* backend) : backend_(backend) {}
  // True the first time only.
  bool Claim() { return !done_.exchange(true); }
  void Finish() { backend_->End(); }

 private:
  Backend* backend_;
  std::atomic<bool> done_{false};
};

Backend::Backend() : instance_id_([] {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1);
}()) {}

Backend::~Backend() = default;

void Backend::Begin() {
  std::lock_guard lock(mutex_);
  ++in_flight_;
}

void Backend::End() {
  std::lock_guard lock(mutex_);
  // Invariant: every End matches a Begin.
  assert(in_flight_ > 0);
  if (--in_flight_ == 0) idle_.notify_all();
}

void Backend::WaitUntilIdle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return in_flight_ == 0; });
}

std::size_t Backend::in_flight() const {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

template <typename T, typename Start>
void Backend::Track(std::function<void(T)> done, std::span<const StatusCode> codes, Start start) {
  auto tracker = std::make_shared<Tracker>(this);
  std::function<void(T)> tracked = [tracker, codes, done = std::move(done)](T value) {
    if (!tracker->Claim()) return;
    // Uncounted even when the callback throws (an allocation failing in it): the exception goes
    // on to whoever answered, and the operation is over either way.
    struct Ends {
      Tracker& tracker;
      ~Ends() { tracker.Finish(); }
    } ends{*tracker};
    done(Promised(std::move(value), codes));
  };
  // Counted once nothing more can fail (an allocation above): a count raised before a throw
  // would never come down, and WaitUntilIdle would wait for ever.
  Begin();
  try {
    start(std::move(tracked));
  } catch (...) {
    // The Start function threw (an allocation failed on this thread) and dropped the callback,
    // or may still call it: the operation ends here, and a later call does nothing.
    if (tracker->Claim()) tracker->Finish();
    throw;
  }
}

void Backend::Write(const FileName& name, Bytes bytes, StatusCallback done) {
  Track(std::move(done), std::span(kWriteCodes),
        [&](StatusCallback tracked) { StartWrite(name, std::move(bytes), std::move(tracked)); });
}

void Backend::Write(const FileName& name, std::vector<Bytes> pieces, StatusCallback done) {
  Track(std::move(done), std::span(kWriteCodes), [&](StatusCallback tracked) {
    StartWritePieces(name, std::move(pieces), std::move(tracked));
  });
}

void Backend::StartWritePieces(const FileName& name, std::vector<Bytes> pieces,
                               StatusCallback done) {
  if (pieces.size() == 1) {
    StartWrite(name, std::move(pieces.front()), std::move(done));
    return;
  }
  std::size_t size = 0;
  for (const Bytes& piece : pieces) size += piece.size();
  Bytes bytes;
  bytes.reserve(size);
  for (const Bytes& piece : pieces) bytes.insert(bytes.end(), piece.begin(), piece.end());
  pieces.clear();
  StartWrite(name, std::move(bytes), std::move(done));
}

void LateFront::Set(Bytes bytes) {
  // Invariant: the front is exactly the size announced, set once.
  assert(bytes.size() == size_);
  std::function<void(Bytes)> fn;
  {
    std::lock_guard lock(mutex_);
    assert(!is_set_);
    is_set_ = true;
    if (when_set_) {
      fn = std::move(when_set_);
    } else {
      bytes_ = std::move(bytes);
    }
  }
  set_.notify_all();
  if (fn) fn(std::move(bytes));
}

void LateFront::Wait() {
  std::unique_lock lock(mutex_);
  set_.wait(lock, [this] { return is_set_; });
}

Bytes LateFront::Take() {
  std::unique_lock lock(mutex_);
  set_.wait(lock, [this] { return is_set_; });
  return std::move(bytes_);
}

void LateFront::WhenSet(std::function<void(Bytes)> fn) {
  {
    std::lock_guard lock(mutex_);
    if (!is_set_) {
      when_set_ = std::move(fn);
      return;
    }
  }
  fn(std::move(bytes_));
}

void Backend::Write(const FileName& name, std::shared_ptr<LateFront> front,
                    std::vector<Bytes> rest, StatusCallback done) {
  Track(std::move(done), std::span(kWriteCodes), [&](StatusCallback tracked) {
    StartWriteLateFront(name, std::move(front), std::move(rest), std::move(tracked));
  });
}

void Backend::StartWriteLateFront(const FileName& name, std::shared_ptr<LateFront> front,
                                  std::vector<Bytes> rest, StatusCallback done) {
  StartWhenFrontSet(
      *front,
      [this, name, rest = std::move(rest)](Bytes bytes, StatusCallback answer) mutable {
        rest.insert(rest.begin(), std::move(bytes));
        StartWritePieces(name, std::move(rest), std::move(answer));
      },
      std::move(done));
}

void Backend::StartWhenFrontSet(LateFront& front, std::function<void(Bytes, StatusCallback)> start,
                                StatusCallback done) {
  // The callback is held apart, so that a start that fails still answers. The closure does not
  // hold the front, which holds the closure until it is set.
  auto answer = std::make_shared<StatusCallback>(std::move(done));
  front.WhenSet([start = std::move(start), answer](Bytes bytes) mutable {
    try {
      start(std::move(bytes), [answer](Status s) { (*answer)(std::move(s)); });
    } catch (...) {
      (*answer)(StorageFailedError("the write could not start (out of memory)"));
    }
  });
}

void Backend::Read(const FileName& name, BytesCallback done) {
  ReadPrefix(name, std::numeric_limits<std::size_t>::max(), std::move(done));
}

void Backend::ReadPrefix(const FileName& name, std::size_t max_bytes, BytesCallback done) {
  Track(std::move(done), std::span(kReadCodes),
        [&](BytesCallback tracked) { StartRead(name, max_bytes, std::move(tracked)); });
}

void Backend::Exists(const FileName& name, ExistsCallback done) {
  Track(std::move(done), std::span(kOtherCodes),
        [&](ExistsCallback tracked) { StartExists(name, std::move(tracked)); });
}

void Backend::Delete(const FileName& name, StatusCallback done) {
  Track(std::move(done), std::span(kOtherCodes),
        [&](StatusCallback tracked) { StartDelete(name, std::move(tracked)); });
}

void Backend::List(ListCallback done) {
  Track(std::move(done), std::span(kOtherCodes),
        [&](ListCallback tracked) { StartList(std::move(tracked)); });
}

namespace {

// Runs `start` (a backend call given the callback) and waits for its answer. A call that throws
// (an allocation failing inside the backend, or a backend that throws) answers StorageFailed: the
// callers are workers and tools, where an exception would end the process or cross the public
// API. The answer is shared, not on this frame, and taken once: a backend that threw may still
// be calling back from another thread after this returns.
template <typename T, typename Start>
T Wait(Start start) {
  struct Answer {
    std::promise<T> promise;
    std::atomic<bool> given{false};
    void Give(T value) {
      if (!given.exchange(true)) promise.set_value(std::move(value));
    }
  };
  auto answer = std::make_shared<Answer>();
  std::future<T> future = answer->promise.get_future();
  try {
    start([answer](T value) { answer->Give(std::move(value)); });
  } catch (...) {
    answer->Give(T(store_internal::ThrownCallStatus()));
  }
  return future.get();
}

}  // namespace

Status WriteNow(Backend& backend, const FileName& name, Bytes bytes) {
  return Wait<Status>([&](StatusCallback cb) { backend.Write(name, std::move(bytes), std::move(cb)); });
}

Status WriteNow(Backend& backend, const FileName& name, std::vector<Bytes> pieces) {
  return Wait<Status>(
      [&](StatusCallback cb) { backend.Write(name, std::move(pieces), std::move(cb)); });
}

Result<Bytes> ReadNow(Backend& backend, const FileName& name) {
  return Wait<Result<Bytes>>([&](BytesCallback cb) { backend.Read(name, std::move(cb)); });
}

Result<Bytes> ReadPrefixNow(Backend& backend, const FileName& name, std::size_t max_bytes) {
  return Wait<Result<Bytes>>(
      [&](BytesCallback cb) { backend.ReadPrefix(name, max_bytes, std::move(cb)); });
}

Result<bool> ExistsNow(Backend& backend, const FileName& name) {
  return Wait<Result<bool>>([&](ExistsCallback cb) { backend.Exists(name, std::move(cb)); });
}

Status DeleteNow(Backend& backend, const FileName& name) {
  return Wait<Status>([&](StatusCallback cb) { backend.Delete(name, std::move(cb)); });
}

Result<std::vector<FileName>> ListNow(Backend& backend) {
  return Wait<Result<std::vector<FileName>>>([&](ListCallback cb) { backend.List(std::move(cb)); });
}

}  // namespace rolly::store
