// BackendWrapper and FaultBackend: decorators over any Backend. BackendWrapper forwards every
// operation to a wrapped backend, as leveldb's EnvWrapper; FaultBackend is a BackendWrapper that
// breaks chosen operations on purpose, so a game can test its own handling of full disks, signed
// out users, lost and torn writes, damaged bytes, slow storage and answers from other threads.
// Part of the product, not a test hack.
//
// Faults are rules (FaultRule), each one small object: WHAT happens, and WHICH operations it hits.
//
// WHICH. A rule watches the operations it can apply to (see each fault), optionally only of one
// kind (On(Op::kWrite)); ReadPrefix counts as a read. It counts them from the moment it is added,
// starting at 1, and hits the Nth (Nth(n), default 1), or with FromThenOn() the Nth and every
// later one. Operations a rule cannot apply to are not counted by it.
//
// WHAT (the fault kinds, and the operations each applies to):
//   Fail(status)      any operation. It does not reach the wrapped backend; it answers `status`.
//                     A status outside the operation's promised set (backend.h) reaches the
//                     caller as StorageFailed, as from any backend: NotFound only for reads,
//                     NoSpace only for writes; StorageFailed and SignedOut for every operation.
//                     An Ok status is taken as StorageFailed.
//   LoseWrite()       writes. Answers Ok but never passes the write on: the wrapped backend keeps
//                     its old bytes (or no file), as after a disk that acknowledged a write from
//                     its cache and then lost power. This is the only form of "lost write" here;
//                     there is no later simulated crash (SimulatedFileSystem models those).
//   CutWrite(k)       writes. Passes on only the first k bytes (all of them when the write is
//                     shorter), then answers StorageFailed whatever the wrapped backend said: a
//                     write cut off after any step, leaving a short file a reader must refuse.
//   FlipBit(i)        writes and reads. Inverts bit i (bit i % 8 of byte i / 8) of the bytes
//                     written (the wrapped backend stores the damaged bytes, the answer is its
//                     own) or of the bytes read (the stored bytes stay intact). Bits past the end
//                     change nothing.
//   ZeroRange(o, n)   writes and reads. Sets bytes [o, o + n) to zero, clipped to the bytes' size,
//                     on the bytes written or read as FlipBit.
//   Delay(d)          any operation. The answer is delivered no sooner than d after the wrapped
//                     backend gave it, from the FaultBackend's own thread.
//   AnswerElsewhere() any operation. The answer is delivered from the FaultBackend's own thread
//                     instead of the thread the wrapped backend answered on.
//   Throw()           any operation. The call throws std::bad_alloc on the calling thread, as
//                     when an allocation fails inside a backend or a game's backend throws, and
//                     nothing reaches the wrapped backend. Backend's wrappers end the operation
//                     and hand the exception on to the caller; the callback never runs
//                     (backend.h). A write with a late front throws when it is asked, not when
//                     its front is set.
//
// When several rules hit one operation, all of them apply: a Throw wins over everything; then the
// first Fail added wins and nothing else matters; otherwise a LoseWrite wins over the damage; the
// smallest cut applies; damage rules apply in the order added; delays add up.
//
// Every callback still runs exactly once (never, after a Throw), and WaitUntilIdle waits for
// delayed answers too. Every operation, a write with a late front too, is counted and matched
// against the rules when it is asked.
//
// Thread rules: any thread may call, and may add or remove rules while operations run (a rule
// added during an operation applies from the next one). Answers without Delay or AnswerElsewhere
// come on the wrapped backend's thread; with them, on the FaultBackend's one delivery thread,
// ordered by the time each is due. Ownership: a wrapper does not own the wrapped backend, which
// must outlive it. Destroying a wrapper waits for its operations.

#ifndef ROLLY_STORE_FAULT_BACKEND_H_
#define ROLLY_STORE_FAULT_BACKEND_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "rolly/store/backend.h"

namespace rolly::store {

// Forwards every operation to `target`; override the Start functions to change some.
class BackendWrapper : public Backend {
 public:
  explicit BackendWrapper(Backend* target) : target_(target) {}
  ~BackendWrapper() override;

  Backend* target() const { return target_; }
  bool can_list() const override { return target_->can_list(); }

 protected:
  void StartWrite(const FileName& name, Bytes bytes, StatusCallback done) override;
  void StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) override;
  void StartExists(const FileName& name, ExistsCallback done) override;
  void StartDelete(const FileName& name, StatusCallback done) override;
  void StartList(ListCallback done) override;

 private:
  Backend* const target_;
};

// The kinds of operation, for rules that watch only one.
enum class Op : std::uint8_t { kWrite, kRead, kExists, kDelete, kList };

std::string_view OpName(Op op);

// One fault and the operations it hits; see the file comment. Build one with a factory, then
// narrow it: FaultRule::Fail(NoSpaceError("full")).On(Op::kWrite).Nth(3).FromThenOn().
struct FaultRule {
  struct FailWith {
    Status status;
  };
  struct Lose {};
  struct Cut {
    std::size_t keep_bytes = 0;
  };
  struct Flip {
    std::size_t bit = 0;
  };
  struct Zero {
    std::size_t offset = 0;
    std::size_t size = 0;
  };
  struct Late {
    std::chrono::nanoseconds delay{0};
  };
  struct Elsewhere {};
  struct Raise {};
  using Fault = std::variant<FailWith, Lose, Cut, Flip, Zero, Late, Elsewhere, Raise>;

  static FaultRule Fail(Status status);
  static FaultRule LoseWrite();
  static FaultRule CutWrite(std::size_t keep_bytes);
  static FaultRule FlipBit(std::size_t bit);
  static FaultRule ZeroRange(std::size_t offset, std::size_t size);
  static FaultRule Delay(std::chrono::nanoseconds delay);
  static FaultRule AnswerElsewhere();
  static FaultRule Throw();

  // Copies of this rule watching only `kind`, hitting the `n`-th (from 1), or from then on.
  FaultRule On(Op kind) const;
  FaultRule Nth(std::uint64_t n) const;  // Nth(0) is taken as Nth(1)
  FaultRule FromThenOn() const;

  // Whether the fault can apply to `kind` at all (before On narrows it).
  bool CanApplyTo(Op kind) const;

  Fault fault;
  std::optional<Op> only;
  std::uint64_t nth = 1;
  bool from_then_on = false;
};

class FaultBackend : public BackendWrapper {
 public:
  using RuleId = std::uint64_t;

  explicit FaultBackend(Backend* target);
  ~FaultBackend() override;

  // Adds a rule; it counts operations started from now on.
  RuleId Add(FaultRule rule);
  // Removes a rule (nothing when there is none of that id).
  void Remove(RuleId id);
  // Removes every rule.
  void Clear();
  // How many operations the rule has hit so far (0 for an unknown id).
  std::uint64_t hits(RuleId id) const;
  // Operations started on this backend, of one kind or of all.
  std::uint64_t operations(std::optional<Op> kind = std::nullopt) const;

 protected:
  void StartWrite(const FileName& name, Bytes bytes, StatusCallback done) override;
  void StartRead(const FileName& name, std::size_t max_bytes, BytesCallback done) override;
  void StartExists(const FileName& name, ExistsCallback done) override;
  void StartDelete(const FileName& name, StatusCallback done) override;
  void StartList(ListCallback done) override;
  // Decides when the write is asked, so that a Throw reaches the caller (the thread that sets the
  // front has none to take it), then writes as Backend's default does once the front is set.
  void StartWriteLateFront(const FileName& name, std::shared_ptr<LateFront> front,
                           std::vector<Bytes> rest, StatusCallback done) override;

 private:
  struct Plan;
  class Courier;
  struct Entry {
    FaultRule rule;
    std::uint64_t seen = 0;
    std::uint64_t hits = 0;
  };

  // Counts the operation against every rule and gathers what the hitting ones do. Throws
  // std::bad_alloc when a Throw rule hits it.
  Plan Decide(Op kind);
  // A write, as `plan` says.
  void WriteAsPlanned(Plan plan, const FileName& name, Bytes bytes, StatusCallback done);
  // Runs `answer` now, or later on the courier's thread, as the plan says.
  void Deliver(const Plan& plan, std::function<void()> answer);

  mutable std::mutex mutex_;
  std::map<RuleId, Entry> rules_;
  RuleId next_id_ = 1;
  std::uint64_t counts_[5] = {};
  std::unique_ptr<Courier> courier_;
};

}  // namespace rolly::store

#endif  // ROLLY_STORE_FAULT_BACKEND_H_
