// Status and Result<T>: how every fallible call in Rolly Save reports what happened.
//
// A call that can fail returns a Status (or a Result<T> holding either a value or a failed
// Status). The set of codes is fixed and small; each code's number is permanent, because codes are
// written into slot indexes, logs and tools' exit reports. No exception crosses the public API.
//
// Thread rules: Status and Result are plain values; use them from any thread.

#ifndef ROLLY_CORE_STATUS_H_
#define ROLLY_CORE_STATUS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace rolly {

// The codes. Numbers never change and are never reused; a retired code keeps its comment.
enum class StatusCode : std::uint8_t {
  // Success.
  kOk = 0,
  // The slot, file or object asked for does not exist.
  kNotFound = 1,
  // Bytes failed a check: a checksum, a size, a bound, or a form this version would never write.
  // The message names the damaged part (prelude, header, directory, chunk N, record N).
  kDamaged = 2,
  // The data was written by a newer version and needs a newer reader: a minimum reader version
  // above this one, a chunk that must be understood, a codec this version lacks.
  kNewerVersion = 3,
  // The caller passed an argument the call cannot take (an empty name, a level out of range).
  kInvalidInput = 4,
  // The game's own data cannot be saved as it is (a value past a bound a load would refuse).
  kInvalidData = 5,
  // The storage failed to read or write (an I/O error, a failed fsync).
  kStorageFailed = 6,
  // The storage has no room for the write.
  kNoSpace = 7,
  // The call cannot run now because another one is running (a load is setting values).
  kBusy = 8,
  // The game asked for the call not to run now (a save block is in place).
  kBlocked = 9,
  // Only the authority (a server or standalone game) may make this call, not a client.
  kNotAuthority = 10,
  // The call was cancelled before it finished.
  kCancelled = 11,
  // What the call was about changed under it (a write found a newer version than expected).
  kChanged = 12,
  // The user the storage belongs to signed out; the operation did not run.
  kSignedOut = 13,
};

// The number of codes; every code is below this.
inline constexpr int kStatusCodeCount = 14;

// The code's name as written in docs and tools ("Damaged"); "Unknown" for a value out of range.
std::string_view StatusCodeName(StatusCode code);

// The outcome of a call: a code and, when not Ok, a message for people (logs, tools, setup
// messages). Compare codes in code, never messages. An Ok Status holds no allocation.
class [[nodiscard]] Status {
 public:
  // Ok.
  Status() = default;
  // A status of `code` with `message`. A message given with kOk is dropped.
  Status(StatusCode code, std::string_view message);

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  // The message; empty for Ok.
  std::string_view message() const {
    return rep_ ? std::string_view(rep_->message) : std::string_view();
  }
  // "Damaged: header checksum does not match", or "Ok".
  std::string ToString() const;

  // Marks the status as looked at, for call sites that may ignore a failure on purpose.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

inline Status OkStatus() { return Status(); }

// One constructor per code, each taking the message.
Status NotFoundError(std::string_view message);
Status DamagedError(std::string_view message);
Status NewerVersionError(std::string_view message);
Status InvalidInputError(std::string_view message);
Status InvalidDataError(std::string_view message);
Status StorageFailedError(std::string_view message);
Status NoSpaceError(std::string_view message);
Status BusyError(std::string_view message);
Status BlockedError(std::string_view message);
Status NotAuthorityError(std::string_view message);
Status CancelledError(std::string_view message);
Status ChangedError(std::string_view message);
Status SignedOutError(std::string_view message);

// Either a value of T or a failed Status. Reading the value of a failed Result is a programming
// error (asserted), never a way to learn about a failure: check ok() or status() first.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::decay_t<T>, Status>, "Result<Status> is not meaningful");

 public:
  // A failed result. `status` must not be Ok.
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Status(StatusCode::kInvalidInput, "Result made from Ok status");
  }
  // A result holding a value.
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  template <typename U,
            typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                        !std::is_same_v<std::decay_t<U>, T> &&
                                        !std::is_same_v<std::decay_t<U>, Status> &&
                                        !std::is_same_v<std::decay_t<U>, Result<T>>>>
  Result(U&& value) : value_(std::in_place, std::forward<U>(value)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  T&& value() && { return std::move(Checked()); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->Checked(); }
  T&& operator*() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->Checked(); }

 private:
  T& Checked();

  Status status_;
  std::optional<T> value_;
};

namespace core_internal {
[[noreturn]] void DieOnBadResultAccess(const Status& status);
}  // namespace core_internal

template <typename T>
T& Result<T>::Checked() {
  if (!value_.has_value()) core_internal::DieOnBadResultAccess(status_);
  return *value_;
}

}  // namespace rolly

// Returns the status of `expr` from the enclosing function when it is not Ok.
#define ROLLY_RETURN_IF_ERROR(expr)                         \
  do {                                                      \
    ::rolly::Status rolly_status_ = (expr);                 \
    if (!rolly_status_.ok()) return rolly_status_;          \
  } while (false)

#define ROLLY_STATUS_CONCAT_INNER_(a, b) a##b
#define ROLLY_STATUS_CONCAT_(a, b) ROLLY_STATUS_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (a Result<T>); on failure returns its status, otherwise moves the value
// into `lhs` (a declaration such as `auto x` or an existing variable).
#define ROLLY_ASSIGN_OR_RETURN(lhs, rexpr) \
  ROLLY_ASSIGN_OR_RETURN_IMPL_(ROLLY_STATUS_CONCAT_(rolly_result_, __LINE__), lhs, rexpr)
#define ROLLY_ASSIGN_OR_RETURN_IMPL_(result, lhs, rexpr) \
  auto result = (rexpr);                                 \
  if (!result.ok()) return result.status();              \
  lhs = std::move(result).value()

#endif  // ROLLY_CORE_STATUS_H_
