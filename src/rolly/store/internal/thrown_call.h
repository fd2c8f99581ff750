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

}  // namespace rolly::store_internal

#endif  // ROLLY_STORE_INTERNAL_THROWN_CALL_H_
