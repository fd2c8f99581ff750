// BackendWrapper forwarding, and FaultBackend's rules, plan and delivery thread.

#include "rolly/store/fault_backend.h"

#include <algorithm>
#include <condition_variable>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace rolly::store {

// ---- BackendWrapper ----

BackendWrapper::~BackendWrapper() { WaitUntilIdle(); }

void BackendWrapper::StartWrite(const FileName& name, Bytes bytes, StatusCallback done) {
  target_->Write(name, std::move(bytes), std::move(done));
}

void BackendWrapper::StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) {
  target_->ReadPrefix(name, max_bytes, std::move(done));
}

void BackendWrapper::StartExists(const FileName& name, ExistsCallback done) {
  target_->Exists(name, std::move(done));
}

void BackendWrapper::StartDelete(const FileName& name, StatusCallback done) {
  target_->Delete(name, std::move(done));
}

void BackendWrapper::StartList(ListCallback done) { target_->List(std::move(done)); }

// ---- FaultRule ----

std::string_view OpName(Op op) {
  switch (op) {
    case Op::kWrite:
      return "Write";
    case Op::kRead:
      return "Read";
    case Op::kExists:
      return "Exists";
    case Op::kDelete:
      return "Delete";
    case Op::kList:
      return "List";
  }
  return "Unknown";
}

namespace {
FaultRule Make(FaultRule::Fault fault) {
  FaultRule rule;
  rule.fault = std::move(fault);
  return rule;
}
}  // namespace

FaultRule FaultRule::Fail(Status status) {
  if (status.ok()) status = StorageFailedError("injected failure");
  return Make(FailWith{std::move(status)});
}
FaultRule FaultRule::LoseWrite() { return Make(Lose{}); }
FaultRule FaultRule::CutWrite(std::size_t keep_bytes) { return Make(Cut{keep_bytes}); }
FaultRule FaultRule::FlipBit(std::size_t bit) { return Make(Flip{bit}); }
FaultRule FaultRule::ZeroRange(std::size_t offset, std::size_t size) {
  return Make(Zero{offset, size});
}
FaultRule FaultRule::Delay(std::chrono::nanoseconds delay) { return Make(Late{delay}); }
FaultRule FaultRule::AnswerElsewhere() { return Make(Elsewhere{}); }
FaultRule FaultRule::Throw() { return Make(Raise{}); }

FaultRule FaultRule::On(Op kind) const {
  FaultRule r = *this;
  r.only = kind;
  return r;
}

FaultRule FaultRule::Nth(std::uint64_t n) const {
  FaultRule r = *this;
  r.nth = std::max<std::uint64_t>(n, 1);
  return r;
}

FaultRule FaultRule::FromThenOn() const {
  FaultRule r = *this;
  r.from_then_on = true;
  return r;
}

bool FaultRule::CanApplyTo(Op kind) const {
  if (std::holds_alternative<Lose>(fault) || std::holds_alternative<Cut>(fault)) {
    return kind == Op::kWrite;
  }
  if (std::holds_alternative<Flip>(fault) || std::holds_alternative<Zero>(fault)) {
    return kind == Op::kWrite || kind == Op::kRead;
  }
  return true;
}

// ---- FaultBackend ----

// What the rules hitting one operation do to it.
struct FaultBackend::Plan {
  std::optional<Status> fail;
  bool lose = false;
  std::optional<std::size_t> cut;
  std::vector<FaultRule::Fault> damage;
  std::chrono::nanoseconds delay{0};
  bool elsewhere = false;
};

// One thread delivering answers when they are due, earliest first, ties in the order posted.
class FaultBackend::Courier {
 public:
  using Clock = std::chrono::steady_clock;

  Courier() : thread_([this] { Run(); }) {}
  ~Courier() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    thread_.join();
  }

  void Post(Clock::time_point due, std::function<void()> answer) {
    {
      std::lock_guard lock(mutex_);
      queue_.emplace(std::make_pair(due, next_++), std::move(answer));
    }
    ready_.notify_all();
  }

 private:
  void Run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (queue_.empty()) {
        if (stopping_) return;  // everything posted has been delivered
        ready_.wait(lock);
        continue;
      }
      auto first = queue_.begin();
      if (first->first.first > Clock::now()) {
        ready_.wait_until(lock, first->first.first);
        continue;
      }
      std::function<void()> answer = std::move(first->second);
      queue_.erase(first);
      lock.unlock();
      answer();
      answer = nullptr;  // drop captures (the operation's tracker) outside the lock
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::map<std::pair<Clock::time_point, std::uint64_t>, std::function<void()>> queue_;
  std::uint64_t next_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members above exist
};

namespace {

void Damage(const std::vector<FaultRule::Fault>& damage, Bytes& bytes) {
  for (const FaultRule::Fault& f : damage) {
    if (const auto* flip = std::get_if<FaultRule::Flip>(&f)) {
      if (flip->bit / 8 < bytes.size()) {
        bytes[flip->bit / 8] ^= static_cast<std::uint8_t>(1u << (flip->bit % 8));
      }
    } else if (const auto* zero = std::get_if<FaultRule::Zero>(&f)) {
      const std::size_t begin = std::min(zero->offset, bytes.size());
      const std::size_t end = begin + std::min(zero->size, bytes.size() - begin);
      std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                bytes.begin() + static_cast<std::ptrdiff_t>(end), std::uint8_t{0});
    }
  }
}

}  // namespace

FaultBackend::FaultBackend(Backend* target)
    : BackendWrapper(target), courier_(std::make_unique<Courier>()) {}

FaultBackend::~FaultBackend() {
  // Before the courier goes: delayed answers are operations still in flight.
  WaitUntilIdle();
}

FaultBackend::RuleId FaultBackend::Add(FaultRule rule) {
  std::lock_guard lock(mutex_);
  const RuleId id = next_id_++;
  rules_.emplace(id, Entry{std::move(rule)});
  return id;
}

void FaultBackend::Remove(RuleId id) {
  std::lock_guard lock(mutex_);
  rules_.erase(id);
}

void FaultBackend::Clear() {
  std::lock_guard lock(mutex_);
  rules_.clear();
}

std::uint64_t FaultBackend::hits(RuleId id) const {
  std::lock_guard lock(mutex_);
  auto it = rules_.find(id);
  return it == rules_.end() ? 0 : it->second.hits;
}

std::uint64_t FaultBackend::operations(std::optional<Op> kind) const {
  std::lock_guard lock(mutex_);
  if (kind) return counts_[static_cast<int>(*kind)];
  std::uint64_t total = 0;
  for (std::uint64_t c : counts_) total += c;
  return total;
}

FaultBackend::Plan FaultBackend::Decide(Op kind) {
  Plan plan;
  bool raise = false;
  {
    std::lock_guard lock(mutex_);
    ++counts_[static_cast<int>(kind)];
    for (auto& [id, entry] : rules_) {
      const FaultRule& rule = entry.rule;
      if (!rule.CanApplyTo(kind) || (rule.only && *rule.only != kind)) continue;
      ++entry.seen;
      const bool hit = entry.seen == rule.nth || (rule.from_then_on && entry.seen >= rule.nth);
      if (!hit) continue;
      ++entry.hits;
      const FaultRule::Fault& f = rule.fault;
      if (const auto* fail = std::get_if<FaultRule::FailWith>(&f)) {
        if (!plan.fail) plan.fail = fail->status;
      } else if (std::holds_alternative<FaultRule::Lose>(f)) {
        plan.lose = true;
      } else if (const auto* cut = std::get_if<FaultRule::Cut>(&f)) {
        plan.cut = std::min(plan.cut.value_or(cut->keep_bytes), cut->keep_bytes);
      } else if (const auto* late = std::get_if<FaultRule::Late>(&f)) {
        plan.delay += late->delay;
      } else if (std::holds_alternative<FaultRule::Elsewhere>(f)) {
        plan.elsewhere = true;
      } else if (std::holds_alternative<FaultRule::Raise>(f)) {
        raise = true;
      } else {
        plan.damage.push_back(f);
      }
    }
  }
  // Out of the Start function, as an allocation failing in a backend: Backend's wrappers end the
  // operation and hand the exception to the caller.
  if (raise) throw std::bad_alloc();
  return plan;
}

void FaultBackend::Deliver(const Plan& plan, std::function<void()> answer) {
  if (!plan.elsewhere && plan.delay.count() <= 0) {
    answer();
    return;
  }
  courier_->Post(Courier::Clock::now() + plan.delay, std::move(answer));
}

void FaultBackend::StartWrite(const FileName& name, Bytes bytes, StatusCallback done) {
  WriteAsPlanned(Decide(Op::kWrite), name, std::move(bytes), std::move(done));
}

void FaultBackend::StartWriteLateFront(const FileName& name, std::shared_ptr<LateFront> front,
                                       std::vector<Bytes> rest, StatusCallback done) {
  Plan plan = Decide(Op::kWrite);
  // The rest as Backend's default: the pieces joined once the front is set.
  StartWhenFrontSet(
      *front,
      [this, plan = std::move(plan), name, rest = std::move(rest)](Bytes bytes,
                                                                   StatusCallback answer) mutable {
        for (const Bytes& piece : rest) bytes.insert(bytes.end(), piece.begin(), piece.end());
        rest.clear();
        WriteAsPlanned(std::move(plan), name, std::move(bytes), std::move(answer));
      },
      std::move(done));
}

void FaultBackend::WriteAsPlanned(Plan plan, const FileName& name, Bytes bytes,
                                  StatusCallback done) {
  if (plan.fail) {
    Deliver(plan, [done = std::move(done), s = *plan.fail] { done(s); });
    return;
  }
  if (plan.lose) {
    Deliver(plan, [done = std::move(done)] { done(OkStatus()); });
    return;
  }
  Damage(plan.damage, bytes);
  const std::optional<std::size_t> cut = plan.cut;
  if (cut && *cut < bytes.size()) bytes.resize(*cut);
  BackendWrapper::StartWrite(
      name, std::move(bytes),
      [this, plan = std::move(plan), cut, done = std::move(done)](Status s) {
        if (cut) {
          s = StorageFailedError(fmt::format("injected: write cut after {} bytes", *cut));
        }
        Deliver(plan, [done, s = std::move(s)] { done(s); });
      });
}

void FaultBackend::StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) {
  Plan plan = Decide(Op::kRead);
  if (plan.fail) {
    Deliver(plan, [done = std::move(done), s = *plan.fail] { done(s); });
    return;
  }
  BackendWrapper::StartRead(
      name, max_bytes, [this, plan = std::move(plan), done = std::move(done)](Result<Bytes> r) {
        if (r.ok()) Damage(plan.damage, *r);
        Deliver(plan, [done, r = std::move(r)] { done(r); });
      });
}

void FaultBackend::StartExists(const FileName& name, ExistsCallback done) {
  Plan plan = Decide(Op::kExists);
  if (plan.fail) {
    Deliver(plan, [done = std::move(done), s = *plan.fail] { done(s); });
    return;
  }
  BackendWrapper::StartExists(
      name, [this, plan = std::move(plan), done = std::move(done)](Result<bool> r) {
        Deliver(plan, [done, r = std::move(r)] { done(r); });
      });
}

void FaultBackend::StartDelete(const FileName& name, StatusCallback done) {
  Plan plan = Decide(Op::kDelete);
  if (plan.fail) {
    Deliver(plan, [done = std::move(done), s = *plan.fail] { done(s); });
    return;
  }
  BackendWrapper::StartDelete(
      name, [this, plan = std::move(plan), done = std::move(done)](Status s) {
        Deliver(plan, [done, s = std::move(s)] { done(s); });
      });
}

void FaultBackend::StartList(ListCallback done) {
  Plan plan = Decide(Op::kList);
  if (plan.fail) {
    Deliver(plan, [done = std::move(done), s = *plan.fail] { done(s); });
    return;
  }
  BackendWrapper::StartList(
      [this, plan = std::move(plan), done = std::move(done)](Result<std::vector<FileName>> r) {
        Deliver(plan, [done, r = std::move(r)] { done(r); });
      });
}

}  // namespace rolly::store
