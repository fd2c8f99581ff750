// The status of a backend call that threw instead of answering: for the code that must still
// answer for it (the blocking forms of backend.h, the store on its workers), where an exception
// has no caller to reach or must not cross the public API. Internal to the store layer.
//
// Thread rules: any thread, inside a catch block.

#ifndef ROLLY_STORE_INTERNAL_THROWN_CALL_H_
#define ROLLY_STORE_INTERNAL_THROWN_CALL_H_

#include <fmt/format.h>

#include <exception>

#include "rolly/core/status.h"

namespace rolly::store_internal {

// StorageFailed naming the exception being handled: the call fails as one the backend answered
// StorageFailed (std::bad_alloc inside the backend, or a game's backend that throws). Call it
// only inside a catch block, which it reads by rethrowing.
inline Status ThrownCallStatus() {
  try {
    throw;
  } catch (const std::exception& e) {
    return StorageFailedError(fmt::format("the backend call threw: {}", e.what()));
  } catch (...) {
    return StorageFailedError("the backend call threw");
  }
}

}  // namespace rolly::store_internal

#endif  // ROLLY_STORE_INTERNAL_THROWN_CALL_H_
