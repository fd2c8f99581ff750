// Status: names and messages of the codes.

#include "rolly/core/status.h"

#include <cstdio>
#include <cstdlib>

namespace rolly {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "Ok";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kDamaged: return "Damaged";
    case StatusCode::kNewerVersion: return "NewerVersion";
    case StatusCode::kInvalidInput: return "InvalidInput";
    case StatusCode::kInvalidData: return "InvalidData";
    case StatusCode::kStorageFailed: return "StorageFailed";
    case StatusCode::kNoSpace: return "NoSpace";
    case StatusCode::kBusy: return "Busy";
    case StatusCode::kBlocked: return "Blocked";
    case StatusCode::kNotAuthority: return "NotAuthority";
    case StatusCode::kCancelled: return "Cancelled";
    case StatusCode::kChanged: return "Changed";
    case StatusCode::kSignedOut: return "SignedOut";
  }
  return "Unknown";
}

Status::Status(StatusCode code, std::string_view message) {
  if (code != StatusCode::kOk) rep_.reset(new Rep{code, std::string(message)});
}

Status::Status(const Status& other)
    : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
  return *this;
}

std::string Status::ToString() const {
  std::string out(StatusCodeName(code()));
  if (!message().empty()) {
    out += ": ";
    out += message();
  }
  return out;
}

Status NotFoundError(std::string_view m) { return Status(StatusCode::kNotFound, m); }
Status DamagedError(std::string_view m) { return Status(StatusCode::kDamaged, m); }
Status NewerVersionError(std::string_view m) { return Status(StatusCode::kNewerVersion, m); }
Status InvalidInputError(std::string_view m) { return Status(StatusCode::kInvalidInput, m); }
Status InvalidDataError(std::string_view m) { return Status(StatusCode::kInvalidData, m); }
Status StorageFailedError(std::string_view m) { return Status(StatusCode::kStorageFailed, m); }
Status NoSpaceError(std::string_view m) { return Status(StatusCode::kNoSpace, m); }
Status BusyError(std::string_view m) { return Status(StatusCode::kBusy, m); }
Status BlockedError(std::string_view m) { return Status(StatusCode::kBlocked, m); }
Status NotAuthorityError(std::string_view m) { return Status(StatusCode::kNotAuthority, m); }
Status CancelledError(std::string_view m) { return Status(StatusCode::kCancelled, m); }
Status ChangedError(std::string_view m) { return Status(StatusCode::kChanged, m); }
Status SignedOutError(std::string_view m) { return Status(StatusCode::kSignedOut, m); }

namespace core_internal {
void DieOnBadResultAccess(const Status& status) {
  std::fprintf(stderr, "rolly: value of a failed Result read (%s)\n", status.ToString().c_str());
  std::abort();
}
}  // namespace core_internal

}  // namespace rolly
