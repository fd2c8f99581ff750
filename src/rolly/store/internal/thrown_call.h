// The status of a call that threw instead of answering: for the code that must still answer for
// it (the blocking forms of backend.h, the store on its workers and backends' threads), where an
// exception has no caller to reach or must not cross the public API. Internal to the store layer.
//
// Thread rules: any thread, inside a catch block.

#ifndef ROLLY_STORE_INTERNAL_THROWN_CALL_H_
#define ROLLY_STORE_INTERNAL_THROWN_CALL_H_

#include <fmt/format.h>

#include <exception>
#include <string_view>
#include <utility>

#include "rolly/core/status.h"

namespace rolly::store_internal {

// StorageFailed saying that `what` threw, naming the exception being handled. Call it only
// inside a catch block, which it reads by rethrowing. Making the status allocates: when that
// fails too, it throws std::bad_alloc.
inline Status ThrownStatus(std::string_view what) {
  try {
    throw;
  } catch (const std::exception& e) {
    return StorageFailedError(fmt::format("{} threw: {}", what, e.what()));
  } catch (...) {
    return StorageFailedError(fmt::format("{} threw", what));
  }
}

// The status of a backend call that threw: the call fails as one the backend answered
// StorageFailed (std::bad_alloc inside the backend, or a game's backend that throws).
inline Status ThrownCallStatus() { return ThrownStatus("the backend call"); }

// What `work()` returns, or, when it throws, StorageFailed saying that `what` threw (ThrownStatus)
// as a T, after `thrown()` ran: for work on a thread where an exception has no caller to reach
// (a worker, a backend's own thread). When even that status cannot be made, the second exception
// goes on.
template <typename T, typename Work, typename Thrown>
T AnswerOf(std::string_view what, Work&& work, Thrown&& thrown) {
  try {
    return work();
  } catch (...) {
    thrown();
    return T(ThrownStatus(what));
  }
}
template <typename T, typename Work>
T AnswerOf(std::string_view what, Work&& work) {
  return AnswerOf<T>(what, std::forward<Work>(work), [] {});
}

}  // namespace rolly::store_internal

#endif  // ROLLY_STORE_INTERNAL_THROWN_CALL_H_
