// Checksum over xxHash's XXH3-64, used header-only so the library links nothing for it.

#include "rolly/core/checksum.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fmt/format.h>

namespace rolly {

Checksum::Checksum() : bits_(XXH3_64bits(nullptr, 0)) {}

Checksum Checksum::Of(ByteView bytes) {
  return Checksum(XXH3_64bits(bytes.data(), bytes.size()));
}

std::string Checksum::ToHex() const { return fmt::format("{:016x}", bits_); }

struct ChecksumBuilder::State {
  XXH3_state_t xxh;
};

ChecksumBuilder::ChecksumBuilder() : state_(std::make_unique<State>()) {
  XXH3_64bits_reset(&state_->xxh);
}

ChecksumBuilder::~ChecksumBuilder() = default;

ChecksumBuilder& ChecksumBuilder::Add(ByteView bytes) {
  XXH3_64bits_update(&state_->xxh, bytes.data(), bytes.size());
  return *this;
}

Checksum ChecksumBuilder::Finish() const {
  return Checksum::FromBits(XXH3_64bits_digest(&state_->xxh));
}

}  // namespace rolly
